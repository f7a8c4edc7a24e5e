import HealthModel

/// The three sample types the workout stage needs, copied out of the record stream: records come
/// before workouts in real exports, in no time order, so they are kept until the end of the parse.
///
/// HeartRate can be millions of samples: they spill to disk as sorted runs (`SampleSpill`, a
/// bounded buffer) and are swept once, in time order, against the workouts' windows at the end,
/// so memory does not grow with them. Stroke and swimming distance samples are few and stay in
/// memory with what a length needs.
struct WorkoutSampleIndex {
  /// Heart rate over one workout's window: mean, minimum, maximum of the samples starting in it.
  struct HeartRateSummary: Equatable {
    var average: Double
    var minimum: Double
    var maximum: Double
  }

  /// A workout's `[start, end]`, in epoch seconds.
  struct Window: Hashable {
    var start: Int64
    var end: Int64
  }

  /// One `SwimmingStrokeCount` sample: one length.
  struct StrokeSample {
    var start: Int64
    var end: Int64
    var strokes: Double
    var source: Int32
    /// `HKSwimmingStrokeStyle` as written (raw value text), nil when absent.
    var style: String?
    /// `HKSWOLFScore` of the sample, when it has one.
    var swolf: Double?
  }

  /// One `DistanceSwimming` sample, in m.
  struct DistanceSample {
    var start: Int64
    var end: Int64
    var meters: Double
    var source: Int32
  }

  /// Heart-rate samples until `summarizeHeartRate`; nil when the stage was built without a
  /// transaction to spill into (then they are not kept).
  private let heartRateSpill: SampleSpill?
  private var heartRateSummaries: [Window: HeartRateSummary] = [:]
  private(set) var strokes: [StrokeSample] = []
  private(set) var distances: [DistanceSample] = []
  /// The longest distance sample, to bound the search for those overlapping a workout.
  private(set) var longestDistance: Int64 = 0
  private var isSorted = false

  /// The type ids of the kept types (-1 until one is seen), and how many heart-rate samples
  /// lay in a workout's or a split's window: what the workouts' outputs used.
  private(set) var heartRateType: Int32 = -1
  private(set) var strokeType: Int32 = -1
  private(set) var swimDistanceType: Int32 = -1
  private(set) var heartRateUsed = 0

  /// Heart-rate records held in memory before a sorted run goes to disk (40 bytes each).
  static let heartRateBuffer = 131_072

  init(transaction: OutputTransaction?, heartRateBuffer: Int = Self.heartRateBuffer) {
    heartRateSpill = transaction.map {
      SampleSpill(capacity: heartRateBuffer, transaction: $0, scratchName: "workout-heart-rate")
    }
  }

  private enum Role: UInt8 {
    case unknown, none, heartRate, strokeCount, distanceSwimming
  }

  /// Role per interned type id, worked out once per type (`consume` runs for every record).
  private var roles: [Role] = []
  private var metadataRoles: [Int32: MetadataRole] = [:]

  private enum MetadataRole {
    case none, strokeStyle, swolf
  }

  mutating func add(_ sample: borrowing Sample, catalog: SampleCatalog) {
    let type = Int(sample.type)
    guard type >= 0 else { return }
    if type >= roles.count { roles.append(contentsOf: repeatElement(.unknown, count: type - roles.count + 1)) }
    if roles[type] == .unknown {
      switch catalog.typeInfo(sample.type).shortName {
      case "HeartRate": roles[type] = .heartRate
      case "SwimmingStrokeCount": roles[type] = .strokeCount
      case "DistanceSwimming": roles[type] = .distanceSwimming
      default: roles[type] = .none
      }
    }
    switch roles[type] {
    case .unknown, .none: return
    case .heartRate:
      guard sample.value.isFinite else { return }
      heartRateType = sample.type
      heartRateSpill?.append(
        SpillRecord(
          start: sample.start.seconds, end: sample.start.seconds, value: sample.value,
          created: SpillRecord.missingCreation, stream: 0, group: 0))
    case .strokeCount:
      guard sample.value.isFinite else { return }
      strokeType = sample.type
      var style: String?
      var swolf: Double?
      for index in 0..<sample.metadata.count {
        switch metadataRole(sample.metadata.key(at: index), catalog: catalog) {
        case .strokeStyle where style == nil:
          style = String(decoding: sample.metadata.value(at: index), as: UTF8.self)
        case .swolf where swolf == nil:
          swolf = DecimalParser.parse(sample.metadata.value(at: index))
        default: break
        }
      }
      strokes.append(
        StrokeSample(
          start: sample.start.seconds, end: sample.end.seconds, strokes: sample.value, source: sample.source,
          style: style, swolf: swolf))
    case .distanceSwimming:
      // Only a length unit gives metres; anything else cannot be shared out as distance.
      guard sample.value.isFinite, catalog.unitConversion(sample.rawUnit)?.canonicalUnit == "m" else { return }
      swimDistanceType = sample.type
      distances.append(
        DistanceSample(
          start: sample.start.seconds, end: sample.end.seconds, meters: sample.value, source: sample.source))
      longestDistance = max(longestDistance, sample.end.seconds - sample.start.seconds)
    }
  }

  private mutating func metadataRole(_ key: Int32, catalog: SampleCatalog) -> MetadataRole {
    if let known = metadataRoles[key] { return known }
    let role: MetadataRole
    switch catalog.metadataKey(key) {
    case "HKSwimmingStrokeStyle": role = .strokeStyle
    case "HKSWOLFScore": role = .swolf
    default: role = .none
    }
    metadataRoles[key] = role
    return role
  }

  /// Sorts everything once; ties are broken on every field so the order never depends on
  /// the sort algorithm.
  mutating func sort() {
    guard !isSorted else { return }
    isSorted = true
    strokes.sort { a, b in
      if a.start != b.start { return a.start < b.start }
      if a.end != b.end { return a.end < b.end }
      if a.strokes != b.strokes { return a.strokes < b.strokes }
      return a.source < b.source
    }
    distances.sort { a, b in
      if a.start != b.start { return a.start < b.start }
      if a.end != b.end { return a.end < b.end }
      if a.meters != b.meters { return a.meters < b.meters }
      return a.source < b.source
    }
  }

  /// Sweeps the spilled heart-rate samples once, in start order (ties by value), against the
  /// windows: each sample counts for every window whose `[start, end]` holds its start. Workouts
  /// seldom overlap, so the set of open windows stays tiny.
  mutating func summarizeHeartRate(for windows: [Window]) throws(OutputError) {
    guard let spill = heartRateSpill, !windows.isEmpty else { return }
    let ordered = Array(Set(windows)).sorted { ($0.start, $0.end) < ($1.start, $1.end) }
    var sums = [Double](repeating: 0, count: ordered.count)
    var counts = [Int](repeating: 0, count: ordered.count)
    var minimums = [Double](repeating: .infinity, count: ordered.count)
    var maximums = [Double](repeating: -.infinity, count: ordered.count)
    var open: [Int] = []
    var next = 0
    let merge = try spill.merged()
    while let record = try merge.next() {
      let time = record.start
      while next < ordered.count && ordered[next].start <= time {
        open.append(next)
        next += 1
      }
      if open.isEmpty {
        if next == ordered.count { break }
        continue
      }
      // Start times only grow: a window that ended before this sample is done for good.
      open.removeAll { ordered[$0].end < time }
      if !open.isEmpty { heartRateUsed += 1 }
      for index in open {
        sums[index] += record.value
        counts[index] += 1
        minimums[index] = min(minimums[index], record.value)
        maximums[index] = max(maximums[index], record.value)
      }
    }
    for (index, window) in ordered.enumerated() where counts[index] > 0 {
      heartRateSummaries[window] = HeartRateSummary(
        average: sums[index] / Double(counts[index]), minimum: minimums[index], maximum: maximums[index])
    }
  }

  /// Heart rate over the samples whose start lies in `[start, end]`: arithmetic mean, minimum,
  /// maximum (the heart-rate fallback of `workouts.csv`); nil when there are none. Call
  /// `summarizeHeartRate` first.
  func heartRate(from start: Int64, through end: Int64) -> HeartRateSummary? {
    heartRateSummaries[Window(start: start, end: end)]
  }

  /// Stroke samples whose start lies in `[start, end)`, in start order.
  func strokes(from start: Int64, before end: Int64) -> ArraySlice<StrokeSample> {
    let lower = Self.firstIndex(in: strokes, where: { $0.start >= start })
    let upper = Self.firstIndex(in: strokes, where: { $0.start >= end })
    return lower < upper ? strokes[lower..<upper] : []
  }

  /// Distance samples that overlap `[start, end]` or lie in it, in start order.
  func distances(overlapping start: Int64, _ end: Int64) -> [DistanceSample] {
    let lower = Self.firstIndex(in: distances, where: { $0.start >= start - longestDistance })
    let upper = Self.firstIndex(in: distances, where: { $0.start > end })
    guard lower < upper else { return [] }
    return distances[lower..<upper].filter { $0.end >= start }
  }

  /// How many stroke and swimming-distance samples lie in (or overlap) one of `windows`: those a
  /// workout's laps and distance can use. Call `sort` first.
  func swimSamplesUsed(in windows: [Window]) -> (strokes: Int, distances: Int) {
    let ordered = windows.sorted { ($0.start, $0.end) < ($1.start, $1.end) }
    var latestEnd = Int64.min
    // Per window in start order, the latest end so far: a sample is inside one when some window
    // starting at or before it ends at or after it.
    let reaches = ordered.map { window -> Window in
      latestEnd = max(latestEnd, window.end)
      return Window(start: window.start, end: latestEnd)
    }
    func covered(_ start: Int64, _ end: Int64) -> Bool {
      let index = Self.firstIndex(in: reaches, where: { $0.start > end }) - 1
      return index >= 0 && reaches[index].end >= start
    }
    return (strokes.count { covered($0.start, $0.start) }, distances.count { covered($0.start, $0.end) })
  }

  /// Binary search: the first index whose element satisfies `predicate`, which must be false
  /// for a prefix of `array` and true for the rest.
  private static func firstIndex<T>(in array: [T], where predicate: (T) -> Bool) -> Int {
    var low = 0
    var high = array.count
    while low < high {
      let mid = (low + high) >> 1
      if predicate(array[mid]) { high = mid } else { low = mid + 1 }
    }
    return low
  }
}
