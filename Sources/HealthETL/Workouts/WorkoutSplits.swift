import HealthModel

/// One row of `workout_splits.csv` (Pipelines/docs/workouts.md, "Splits").
public struct WorkoutSplit: Sendable, Equatable {
  /// `distance`, `distance_scaled`, `route`, `route_scaled` or `watch`.
  public var from: String
  /// `km` or `mi`; nil for a Segment chain of neither length.
  public var unit: String?
  /// 1-based, in time order.
  public var split: Int
  /// Epoch seconds (fractional: a boundary between two points is interpolated).
  public var start: Double
  public var end: Double
  public var distanceMeters: Double?
  /// Seconds of `[start, end)` not paused.
  public var movingSeconds: Double
  public var heartRateAverage: Double?
  public var heartRateMaximum: Double?
  public var elevationChangeMeters: Double?
  public var elevationGainMeters: Double?
  public var elevationLossMeters: Double?
  /// A row that stands for no split (`from` = `none (…)`): the workout's every series was too fast
  /// for its activity, and this row says why; its split figures are empty.
  public var standsForNone = false

  public var elapsedSeconds: Double { end - start }

  /// The one row of a workout none of whose series gave splits, each too fast for its activity
  /// (Pipelines/docs/workouts.md, "Splits"): `from` says why, `start`/`end` are the workout's.
  static func none(why reasons: [String], start: Double, end: Double) -> WorkoutSplit {
    var row = WorkoutSplit(
      from: "none (" + reasons.joined(separator: "; ") + ")", unit: nil, split: 0, start: start, end: max(start, end),
      distanceMeters: nil, movingSeconds: 0)
    row.standsForNone = true
    return row
  }

  /// Moving seconds per unit; nil without a unit or distance.
  public var paceSeconds: Double? {
    guard let length = unit.flatMap(SplitUnit.init(rawValue:))?.meters, let distanceMeters, distanceMeters > 0,
      movingSeconds > 0
    else {
      return nil
    }
    return movingSeconds / distanceMeters * length
  }

  /// m/s over the moving time.
  public var speed: Double? {
    guard let distanceMeters, movingSeconds > 0 else { return nil }
    return distanceMeters / movingSeconds
  }

  /// The HeartRate window of the split: the samples whose whole-second start lies in
  /// `[start, end)`, as the closed window of `WorkoutSampleIndex`.
  var heartRateWindow: WorkoutSampleIndex.Window? {
    guard !standsForNone else { return nil }
    let first = Int64(start.rounded(.up))
    let last = Int64(end.rounded(.up)) - 1
    return last >= first ? WorkoutSampleIndex.Window(start: first, end: last) : nil
  }
}

/// The two split lengths.
enum SplitUnit: String, CaseIterable {
  case km, mi

  var meters: Double { self == .km ? 1000 : 1609.344 }
}

/// Which workouts get splits, and from which distance type.
enum SplitEligibility {
  /// Runs, walks and hikes measure `DistanceWalkingRunning`; rides `DistanceCycling`.
  static func distanceStream(_ activityType: String) -> Int32? {
    switch activityType {
    case "HKWorkoutActivityTypeRunning", "HKWorkoutActivityTypeWalking", "HKWorkoutActivityTypeHiking": return 0
    case "HKWorkoutActivityTypeCycling": return 1
    default: return nil
    }
  }

  /// The workout's pauses: `pause`/`resume` and `motionPaused`/`motionResumed` events of the
  /// workout itself (its activities repeat them).
  static func pauses(_ workout: WorkoutElement) -> PauseIntervals {
    var manual: [(pauses: Bool, time: Double)] = []
    var motion: [(pauses: Bool, time: Double)] = []
    let prefix = WorkoutRowBuilder.eventPrefix
    for event in workout.events {
      guard let date = event.date else { continue }
      let time = Double(date.seconds)
      switch event.type {
      case prefix + "Pause": manual.append((true, time))
      case prefix + "Resume": manual.append((false, time))
      case prefix + "MotionPaused": motion.append((true, time))
      case prefix + "MotionResumed": motion.append((false, time))
      default: break
      }
    }
    return PauseIntervals(manual: manual, motion: motion, workoutEnd: Double(workout.end.seconds))
  }
}

/// The distance samples splits need, kept while the export streams: `DistanceWalkingRunning`
/// and `DistanceCycling` spill to disk as sorted runs (like the statistics' samples) and are
/// swept at the end against the workouts that want splits.
struct WorkoutDistanceSamples {
  private let spill: SampleSpill?
  /// Whether any distance sample was kept: without one, no workout's splits come from samples.
  var isEmpty: Bool { (spill?.count ?? 0) == 0 }
  /// Per interned type: -2 not looked at yet, -1 not a distance type, else the stream.
  private var streams: [Int32] = []
  /// The spilled samples' priority groups, as the statistics rank theirs.
  private var groups = SourceGroups()
  /// Per stream: the type id of its samples (-1 until one is seen).
  private(set) var streamTypes: [Int32] = [-1, -1]

  static let buffer = 65_536

  init(transaction: OutputTransaction?) {
    spill = transaction.map { SampleSpill(capacity: Self.buffer, transaction: $0, scratchName: "workout-distance") }
  }

  mutating func add(_ sample: borrowing Sample, catalog: SampleCatalog) {
    guard let spill else { return }
    let type = Int(sample.type)
    guard type >= 0 else { return }
    if type >= streams.count { streams.append(contentsOf: repeatElement(-2, count: type - streams.count + 1)) }
    if streams[type] == -2 {
      switch catalog.typeInfo(sample.type).shortName {
      case "DistanceWalkingRunning": streams[type] = 0
      case "DistanceCycling": streams[type] = 1
      default: streams[type] = -1
      }
    }
    let stream = streams[type]
    guard stream >= 0, sample.value.isFinite, sample.value >= 0,
      catalog.unitConversion(sample.rawUnit)?.canonicalUnit == "m"
    else { return }
    streamTypes[Int(stream)] = sample.type
    spill.append(
      SpillRecord(
        start: sample.start.seconds, end: max(sample.start.seconds, sample.end.seconds), value: sample.value,
        created: SpillRecord.missingCreation, stream: stream, group: groups.group(of: sample, catalog: catalog)))
  }

  /// One workout that wants splits from distance samples.
  struct Request {
    var index: Int
    var stream: Int32
    var start: Int64
    var end: Int64
    var sourceName: String
    /// The workout's own distance (`distance_m`), which the splits add up to.
    var distanceMeters: Double?
    var pauses: PauseIntervals
  }

  /// The splits of each request (Pipelines/docs/workouts.md, "Splits"): the distance samples
  /// overlapping `[start, end)`, each clipped to it pro rata by time, merged like the statistics'
  /// `sum` — the workout's own source ranked first, then by source priority — and scaled to the
  /// workout's distance when it has one. A sample faster than `RoutePointFilter.fastestSpeed`
  /// over its span (at least 1 s) takes no part, and a series that scaling makes that fast gives no
  /// splits. Two sweeps: the first sums each merged series, the second cuts it.
  ///
  /// `used` counts, per stream, the samples that took part in a workout's series.
  func splits(
    for requests: consuming [Request], catalog: SampleCatalog, priority: SourcePriority, used: inout [Int]
  ) throws(OutputError) -> [Int: [WorkoutSplit]] {
    guard let spill, !requests.isEmpty else { return [:] }
    var ordered = requests
    ordered.sort { ($0.stream, $0.start, $0.index) < ($1.stream, $1.start, $1.index) }
    let positions = groups.rankPositions(priority, catalog: catalog)
    let names = groups.sourceNames(catalog)

    var totals = [Double](repeating: 0, count: ordered.count)
    var fastest = [Double](repeating: 0, count: ordered.count)
    var seen = [Bool](repeating: false, count: ordered.count)
    try sweep(spill, ordered, positions: positions, names: names, again: true, taken: { used[Int($0)] += 1 }) {
      request, from, to, meters in
      totals[request] += meters
      fastest[request] = max(fastest[request], meters / max(1, to - from))
      seen[request] = true
    }
    var factors = [Double](repeating: 1, count: ordered.count)
    for (position, request) in ordered.enumerated() {
      if let distance = request.distanceMeters, distance > 0, totals[position] > 0 {
        factors[position] = distance / totals[position]
      }
      // Scaled up to the workout's distance, a series covering only part of it would move faster
      // than a person: the workout then takes its splits from its route, or has none.
      if fastest[position] * factors[position] > RoutePointFilter.fastestSpeed { seen[position] = false }
    }
    var accumulators: [[SplitAccumulator]] = ordered.indices.map { position in
      seen[position]
        ? SplitUnit.allCases.map { SplitAccumulator(unit: $0.meters, pauses: ordered[position].pauses) } : []
    }
    try sweep(spill, ordered, positions: positions, names: names, again: false) { request, from, to, meters in
      for index in accumulators[request].indices {
        accumulators[request][index].add(time: from, step: 0, elevation: nil)
        accumulators[request][index].add(time: to, step: meters * factors[request], elevation: nil)
      }
    }
    var result: [Int: [WorkoutSplit]] = [:]
    for (position, request) in ordered.enumerated() where seen[position] {
      let scaled = request.distanceMeters.map { abs($0 - totals[position]) > Self.scaledTolerance } ?? false
      var splits: [WorkoutSplit] = []
      for (unit, index) in zip(SplitUnit.allCases, accumulators[position].indices) {
        for measure in accumulators[position][index].finish() {
          splits.append(WorkoutSplit(measure, from: scaled ? "distance_scaled" : "distance", unit: unit))
        }
      }
      if !splits.isEmpty { result[request.index] = splits }
    }
    return result
  }

  /// A series that differs from the workout's distance by more than this (m) says it was scaled.
  static let scaledTolerance = 1.0

  /// One pass over the spilled samples, handing each request's merged series to `visit` in time
  /// order: `(request position, from, to, metres)`, the metres spread evenly over `[from, to]`
  /// (`from == to`: a sample at one instant, counted whole).
  private func sweep(
    _ spill: SampleSpill, _ ordered: [Request], positions: [Int32], names: [String], again: Bool,
    taken: (Int32) -> Void = { _ in }, visit: (Int, Double, Double, Double) -> Void
  ) throws(OutputError) {
    struct Open {
      var request: Int
      var merge = PrioritySumSweep()
    }
    // The winning samples of one piece come together, as one share.
    func advance(_ entry: inout Open, to limit: Int64) {
      let request = entry.request
      entry.merge.advance(to: limit) { from, to, winner in
        visit(request, Double(from), Double(to), winner.share(from: from, to: to))
      }
    }
    var open: [Open] = []
    var next = 0
    let merge = try spill.merged(again: again)
    while let record = try merge.next() {
      // Requests of an earlier stream, or that ended before this sample, are complete.
      var kept: [Open] = []
      for var entry in open {
        let request = ordered[entry.request]
        if request.stream != record.stream || request.end <= record.start {
          advance(&entry, to: .max)
        } else {
          kept.append(entry)
        }
      }
      open = kept
      // Requests this sample reaches open (a sample that started earlier may overlap them).
      while next < ordered.count
        && (ordered[next].stream < record.stream
          || (ordered[next].stream == record.stream
            && (ordered[next].start < record.end || ordered[next].start <= record.start)))
      {
        if ordered[next].stream == record.stream && ordered[next].end > record.start {
          open.append(Open(request: next))
        }
        next += 1
      }
      if open.isEmpty && next == ordered.count { break }
      guard record.value <= RoutePointFilter.fastestSpeed * Double(max(1, record.end - record.start)) else {
        continue
      }
      var took = false
      defer { if took { taken(record.stream) } }
      for position in open.indices {
        let request = ordered[open[position].request]
        // The workout's own series ranks ahead of every other source's.
        let own = names[Int(record.group)] == request.sourceName
        let rank = positions[Int(record.group)] + (own ? 0 : Int32(positions.count))
        if record.end > record.start {
          let start = max(record.start, request.start)
          let end = min(record.end, request.end)
          guard end > start else { continue }
          took = true
          advance(&open[position], to: start)
          open[position].merge.add(
            start: start, end: end, value: record.value * Double(end - start) / Double(record.end - record.start),
            rank: rank)
        } else {
          guard record.start >= request.start, record.start < request.end else { continue }
          took = true
          advance(&open[position], to: record.start)
          visit(open[position].request, Double(record.start), Double(record.start), record.value)
        }
      }
    }
    for var entry in open { advance(&entry, to: .max) }
  }
}

extension WorkoutSplit {
  init(_ measure: SplitMeasure, from: String, unit: SplitUnit?) {
    var change: Double?
    if let start = measure.elevationStart, let end = measure.elevationEnd { change = end - start }
    self.init(
      from: from, unit: unit?.rawValue, split: measure.index, start: measure.start, end: measure.end,
      distanceMeters: measure.distanceMeters, movingSeconds: measure.movingSeconds, elevationChangeMeters: change,
      elevationGainMeters: measure.elevationGainMeters, elevationLossMeters: measure.elevationLossMeters)
  }
}

/// The splits the Watch recorded: the workout's `Segment` events (Pipelines/docs/workouts.md, "Splits").
enum WatchSplits {
  /// A run's Segment events form chains — each segment starting where the previous one ended,
  /// within 2 s once pauses between them are left out, a segment whose duration leaves out a pause
  /// inside it spanning to its successor (`WatchSplitChains.acrossPauses`) — one chain per unit the Watch split by (a run in the real fixtures carries a
  /// kilometre chain and a mile chain, interleaved). A chain is `km` or `mi` when its number of
  /// segments is the workout's distance in that unit, rounded up or down; with two chains, the
  /// one with more segments (as many: the shorter first segment) is `km`. Every segment but a chain's last covers one unit; the last
  /// covers what remains of the workout's distance. Without a distance or a unit, distance is
  /// unknown.
  static func splits(_ workout: WorkoutElement, distanceMeters: Double?, pauses: PauseIntervals) -> [WorkoutSplit] {
    var segments: [(start: Double, end: Double)] = []
    for event in workout.events where event.type == WorkoutRowBuilder.segmentEventType {
      guard let date = event.date,
        let seconds = event.duration.flatMap({ duration in
          ExactDecimal(duration.text).flatMap { WorkoutUnits.convert($0, unit: duration.unit, to: .time) }
        }), seconds > 0
      else { continue }
      segments.append((Double(date.seconds), Double(date.seconds) + seconds))
    }
    guard !segments.isEmpty else { return [] }
    segments.sort { $0.start != $1.start ? $0.start < $1.start : $0.end < $1.end }
    let chains = WatchSplitChains.chains(of: WatchSplitChains.acrossPauses(segments, pauses: pauses), pauses: pauses)
      .chains
    func fits(_ count: Int, _ unit: SplitUnit) -> Bool {
      guard let distanceMeters, distanceMeters > 0 else { return false }
      let units = distanceMeters / unit.meters
      return count == Int(units.rounded(.down)) || count == Int(units.rounded(.up))
    }
    var units = chains.map { chain -> SplitUnit? in
      let km = fits(chain.count, .km)
      let mi = fits(chain.count, .mi)
      return km && !mi ? .km : mi && !km ? .mi : nil
    }
    if chains.count == 2 {
      // The kilometre chain has more segments, or — as many — the shorter first one.
      let firstIsKm =
        chains[0].count != chains[1].count
        ? chains[0].count > chains[1].count
        : chains[0][0].end - chains[0][0].start < chains[1][0].end - chains[1][0].start
      let (km, mi) = firstIsKm ? (0, 1) : (1, 0)
      if fits(chains[km].count, .km), fits(chains[mi].count, .mi) {
        units = firstIsKm ? [.km, .mi] : [.mi, .km]
      }
    }
    var splits: [WorkoutSplit] = []
    let order = chains.indices.sorted { (units[$0]?.rawValue ?? "z", $0) < (units[$1]?.rawValue ?? "z", $1) }
    for index in order {
      let unit = units[index]
      for (position, segment) in chains[index].enumerated() {
        var distance: Double?
        if let unit, let distanceMeters {
          let isLast = position == chains[index].count - 1
          let remaining = distanceMeters - Double(position) * unit.meters
          distance = isLast ? min(unit.meters, max(0, remaining)) : unit.meters
        }
        splits.append(
          WorkoutSplit(
            from: "watch", unit: unit?.rawValue, split: position + 1, start: segment.start, end: segment.end,
            distanceMeters: distance,
            movingSeconds: max(
              0, segment.end - segment.start - pauses.pausedSeconds(from: segment.start, to: segment.end))
          ))
      }
    }
    return splits
  }
}
