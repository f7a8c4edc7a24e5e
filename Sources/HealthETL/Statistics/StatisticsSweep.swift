import HealthModel

/// One job's pass over its type's samples in start order: bucket rows filled as samples arrive,
/// written as soon as no later sample can change them.
///
/// Every option is a sweep, so a bucket is final once the stream has passed its end (a later
/// sample starts at or after that instant and cannot reach back). What a sample contributes at
/// its start (`avg`, `min`, `max`, `count`, `mostRecent`, and an instant's `sum`) goes to its
/// bucket at once; what it contributes over time (`sum` pro rata, `duration`, `twavg` holding,
/// and the coverage that makes a bucket a row) is handed out lazily, bucket by bucket, as the
/// stream advances, and each bucket is written as soon as the stream has passed its end. So the
/// rows held are those of the bucket the stream is in — never one row per bucket a long sample
/// reaches, however long it is — and the buckets between two samples that nothing reaches are
/// skipped, not visited.
///
/// Which buckets have data: a row is written when one of the job's options has data there.
/// `avg`, `min`, `max`, `count`, `mostRecent`, `mostRecentTime` have data in a bucket where a
/// sample starts; `sum`, `duration`, `twavg` where a sample starts or which a sample overlaps for
/// a positive time. A value that cannot be computed in a written row is empty.
///
/// Floating-point sums are order-sensitive, so every row receives the same terms in the same
/// order whenever they are handed out: a pro-rata share is always one sample's whole overlap with
/// one bucket, and the pieces of the merged sum and of twavg holding are cut only at sample
/// boundaries and at bucket boundaries, which split no bucket's share.
final class StatisticsSweep {
  struct RowKey: Comparable, Hashable {
    var bucket: Int64
    /// Source ordinal (by name) with `separateBySource`, else 0.
    var source: Int32

    static func < (a: RowKey, b: RowKey) -> Bool {
      a.bucket != b.bucket ? a.bucket < b.bucket : a.source < b.source
    }
  }

  struct Row {
    /// A sample starts in the bucket.
    var hasStart = false
    /// A sample starts in or overlaps the bucket.
    var touched = false
    var sum = 0.0
    var count = 0
    var total = 0.0
    var minimum = Double.infinity
    var maximum = -Double.infinity
    /// twavg: Σ value × seconds held, Σ seconds held.
    var weighted = 0.0
    var weight = 0.0
    var duration: Int64 = 0
    var hasRecent = false
    var recentStart: Int64 = 0
    var recentEnd: Int64 = 0
    var recentCreated: Int64 = 0
    var recentRank: Int32 = 0
    var recentValue = 0.0
  }

  /// The samples of one source (or of all) that started at the same instant and hold their values
  /// (twavg) until a later start of that source, at most to their caps.
  struct Holds {
    var start = Int64.min
    /// Holding is handed out up to here.
    var from = Int64.min
    var values: [Double] = []
    var caps: [Int64] = []
  }

  /// `[from, to)`, empty when `from >= to`.
  struct Coverage {
    var from = Int64.min
    var to = Int64.min
  }

  /// A sample summed on its own source, pro rata over the buckets it overlaps.
  struct Spread {
    var end: Int64
    var value: Double
    var length: Double
    var source: Int32
    /// The next bucket to receive its share.
    var next: Int64
  }

  /// How long a discrete sample holds its value for `twavg` when no later sample comes sooner.
  static let maximumHoldSeconds: Int64 = 600

  let job: StatisticsQuery
  private var buckets: CalendarBuckets
  private let groupRanks: [Int32]
  private let groupSources: [Int32]
  private let sourceNames: [String]
  /// Receives each finished bucket, in (bucket, source) order.
  private let emit: (borrowing StatisticsBucket) throws(OutputError) -> Void
  private var rows: [RowKey: Row] = [:]
  /// The row `update` found last and where it is: consecutive samples mostly fall in one bucket,
  /// and hashing the key for each of them was a tenth of the statistics' finish. Any insertion or
  /// removal moves rows, so it forgets the position.
  private var lastKey = RowKey(bucket: .min, source: -1)
  private var lastIndex: Dictionary<RowKey, Row>.Index?
  private var order = MergeHeap<RowKey>()
  private let wantsStarts: Bool
  private let wantsOverlaps: Bool
  private let wantsSum: Bool
  private let wantsMergedSum: Bool
  private let wantsDuration: Bool
  private let wantsTwavg: Bool
  private var sweep = PrioritySumSweep()
  /// Per source: the part of the union of its samples' intervals not yet handed out (`duration`,
  /// and which buckets a sample overlaps).
  private var coverage: [Coverage]
  /// Sources whose `coverage` is not empty.
  private var covering: [Int32] = []
  /// `sum` with `separateBySource`: samples with buckets still to come, in arrival order.
  private var spreads: [Spread] = []
  private var holds: [Holds]
  /// Sources whose `holds` may still hand out time.
  private var holding: [Int32] = []
  /// Everything before this bucket has been handed out and written.
  private var openBucket = Int64.min
  /// Whether every option looks only at where samples start and sources are merged: then only
  /// the bucket the stream is in has a row, kept here instead of in `rows` (heart rate per
  /// minute is such a job, and the dictionary and heap per row were most of its sweep).
  private let startsOnly: Bool
  /// With `startsOnly`: the bucket the stream is in and its row; `Int64.min` before the first.
  private var currentBucket = Int64.min
  private var currentRow = Row()
  /// The bucket handed to `emit`, reused so a row allocates nothing.
  private var bucket: StatisticsBucket

  /// - Parameters:
  ///   - groupRanks: per group, its position by source priority (0 = highest priority).
  ///   - groupSources: per group, its source's position in source-name order.
  ///   - sourceNames: source names in that order.
  init(
    job: StatisticsQuery, rules: ZoneRules, groupRanks: [Int32], groupSources: [Int32], sourceNames: [String],
    emit: @escaping (borrowing StatisticsBucket) throws(OutputError) -> Void
  ) {
    self.job = job
    buckets = CalendarBuckets(interval: job.interval, anchor: job.anchor, rules: rules)
    self.groupRanks = groupRanks
    self.groupSources = groupSources
    self.sourceNames = sourceNames
    self.emit = emit
    bucket = StatisticsBucket(
      start: Instant(seconds: 0), end: Instant(seconds: 0), source: nil, options: job.options, row: Row())
    wantsStarts = job.options.contains { $0.dependsOnStartsOnly }
    wantsOverlaps = job.options.contains { !$0.dependsOnStartsOnly }
    wantsSum = job.options.contains(.sum)
    wantsMergedSum = wantsSum && !job.separateBySource
    wantsDuration = job.options.contains(.duration)
    wantsTwavg = job.options.contains(.twavg)
    startsOnly = wantsStarts && !wantsOverlaps && !job.separateBySource
    let sourceSlots = job.separateBySource ? max(sourceNames.count, 1) : 1
    coverage = [Coverage](repeating: Coverage(), count: sourceSlots)
    holds = [Holds](repeating: Holds(), count: sourceSlots)
  }

  /// Adds the next sample of the stream (start order).
  func add(_ record: SpillRecord) throws(OutputError) {
    if startsOnly { return try addStart(record) }
    let start = record.start
    let end = record.end
    let source = job.separateBySource ? groupSources[Int(record.group)] : 0
    try advance(to: start)
    let bucket = buckets.index(containing: start)
    try flush(before: bucket)
    let key = RowKey(bucket: bucket, source: source)

    if wantsStarts {
      let rank = groupRanks[Int(record.group)]
      update(key) { row in Self.countStart(record, rank: rank, in: &row) }
    }
    guard wantsOverlaps else { return }
    if end > start {
      // `advance(to: start)` has handed out the coverage up to here.
      let slot = Int(source)
      if coverage[slot].to <= start {
        coverage[slot] = Coverage(from: start, to: end)
        covering.append(source)
      } else if end > coverage[slot].to {
        coverage[slot].to = end
      }
    } else {
      update(key) { $0.touched = true }
    }
    if wantsSum {
      if end == start {
        // An instant counts whole in the bucket of its instant and is never merged away.
        update(key) { $0.sum += record.value }
      } else if job.separateBySource {
        // Its share of this bucket now, of the later ones as the stream reaches them.
        let length = Double(end - start)
        let value = record.value
        let upper = Swift.min(buckets.end(bucket), end)
        update(key) { $0.sum += value * Double(upper - start) / length }
        if end > upper {
          spreads.append(Spread(end: end, value: value, length: length, source: source, next: bucket + 1))
        }
      } else {
        sweep.add(start: start, end: end, value: record.value, rank: groupRanks[Int(record.group)])
      }
    }
    if wantsTwavg {
      let slot = Int(source)
      if holds[slot].start != start {
        // `advance(to: start)` has handed out the previous group up to here, where it stops.
        if holds[slot].start == .min || holds[slot].values.isEmpty { holding.append(source) }
        holds[slot].start = start
        holds[slot].from = start
        holds[slot].values.removeAll(keepingCapacity: true)
        holds[slot].caps.removeAll(keepingCapacity: true)
      }
      holds[slot].values.append(record.value)
      holds[slot].caps.append(start + Swift.max(Self.maximumHoldSeconds, end - start))
    }
  }

  /// `add` when only starts count, sources merged: a sample's bucket is never before the one the
  /// stream is in, so that bucket's row is written as soon as a sample starts in a later one.
  /// The same terms reach a row in the same order as through `rows`.
  private func addStart(_ record: SpillRecord) throws(OutputError) {
    let bucket = buckets.index(containing: record.start)
    if bucket != currentBucket {
      if currentBucket != .min { try write(RowKey(bucket: currentBucket, source: 0), currentRow) }
      currentBucket = bucket
      currentRow = Row()
    }
    Self.countStart(record, rank: groupRanks[Int(record.group)], in: &currentRow)
  }

  /// What a sample adds to the bucket it starts in.
  @inline(__always) private static func countStart(_ record: SpillRecord, rank: Int32, in row: inout Row) {
    row.hasStart = true
    row.count += 1
    row.total += record.value
    row.minimum = Swift.min(row.minimum, record.value)
    row.maximum = Swift.max(row.maximum, record.value)
    if !row.hasRecent || isMoreRecent(record, rank: rank, than: row) {
      row.hasRecent = true
      row.recentStart = record.start
      row.recentEnd = record.end
      row.recentCreated = record.created
      row.recentRank = rank
      row.recentValue = record.value
    }
  }

  /// Rows held, waiting for their bucket to close (tests watch it stay small).
  var openRows: Int { startsOnly ? (currentBucket == .min ? 0 : 1) : rows.count }

  /// Hands out every remaining bucket.
  func finish() throws(OutputError) {
    if startsOnly {
      if currentBucket != .min { try write(RowKey(bucket: currentBucket, source: 0), currentRow) }
      currentBucket = .min
      return
    }
    try advance(to: .max)
    try flush(before: .max)
  }

  /// The tie-break for `mostRecent` (Pipelines/docs/statistics.md, "Interval statistics"): latest start,
  /// then latest end, then latest creation (none counts as earliest), then the higher-priority
  /// group, then the larger value.
  private static func isMoreRecent(_ record: SpillRecord, rank: Int32, than row: Row) -> Bool {
    if record.start != row.recentStart { return record.start > row.recentStart }
    if record.end != row.recentEnd { return record.end > row.recentEnd }
    if record.created != row.recentCreated { return record.created > row.recentCreated }
    if rank != row.recentRank { return rank < row.recentRank }
    return record.value > row.recentValue
  }

  /// Hands out everything that happens before `limit` (a sample's start, or `Int64.max` at the
  /// end), bucket by bucket, writing each bucket the stream has passed. A bucket nothing reaches
  /// is skipped.
  private func advance(to limit: Int64) throws(OutputError) {
    let last = limit == .max ? Int64.max : buckets.index(containing: limit)
    while openBucket < last {
      guard let bucket = nextPendingBucket(), bucket < last else {
        openBucket = last
        break
      }
      handOut(bucket, upTo: buckets.end(bucket))
      try flush(before: bucket + 1)
      openBucket = bucket + 1
    }
    if last != .max { handOut(last, upTo: limit) }
  }

  /// The earliest bucket that has something not yet handed out, nil when nothing has.
  private func nextPendingBucket() -> Int64? {
    var earliest = Int64.max
    if wantsMergedSum, let from = sweep.pendingFrom { earliest = from }
    for source in covering { earliest = Swift.min(earliest, coverage[Int(source)].from) }
    for source in holding {
      let hold = holds[Int(source)]
      if hold.caps.contains(where: { $0 > hold.from }) { earliest = Swift.min(earliest, hold.from) }
    }
    var bucket = earliest == .max ? Int64.max : buckets.index(containing: earliest)
    for spread in spreads { bucket = Swift.min(bucket, spread.next) }
    return bucket == .max ? nil : bucket
  }

  /// Hands out what happens in `bucket` before `limit` (at most the bucket's end), and the whole
  /// bucket's share of the samples summed by source. Everything before the bucket is out already.
  private func handOut(_ bucket: Int64, upTo limit: Int64) {
    if wantsMergedSum {
      sweep.advance(to: limit) { pieceStart, pieceEnd, winner in
        update(RowKey(bucket: bucket, source: 0)) { row in row.sum += winner.share(from: pieceStart, to: pieceEnd) }
      }
    }
    var index = 0
    while index < covering.count {
      let slot = Int(covering[index])
      let from = coverage[slot].from
      let upto = Swift.min(coverage[slot].to, limit)
      if from < upto {
        update(RowKey(bucket: bucket, source: covering[index])) { row in
          row.touched = true
          row.duration += upto - from
        }
        coverage[slot].from = upto
      }
      if coverage[slot].from < coverage[slot].to {
        index += 1
      } else {
        covering.swapAt(index, covering.count - 1)
        covering.removeLast()
      }
    }
    if !spreads.isEmpty { handOutSpreads(bucket) }
    if wantsTwavg && !holding.isEmpty { handOutHolding(bucket, upTo: limit) }
  }

  /// Each sample summed by source that reaches `bucket` adds its share of the whole bucket, in
  /// arrival order (the order the bucket's other terms came in).
  private func handOutSpreads(_ bucket: Int64) {
    let lower = buckets.start(bucket)
    let upper = buckets.end(bucket)
    var finished = false
    for index in spreads.indices where spreads[index].next == bucket {
      let spread = spreads[index]
      let upto = Swift.min(spread.end, upper)
      update(RowKey(bucket: bucket, source: spread.source)) { row in
        row.sum += spread.value * Double(upto - lower) / spread.length
      }
      spreads[index].next = bucket + 1
      if spread.end <= upper { finished = true }
    }
    if finished { spreads.removeAll { $0.end <= upper } }
  }

  /// twavg: every holding source's values, held up to `limit` or their caps.
  private func handOutHolding(_ bucket: Int64, upTo limit: Int64) {
    var index = 0
    while index < holding.count {
      let slot = Int(holding[index])
      let from = holds[slot].from
      var open = false
      if from < limit {
        for (value, cap) in zip(holds[slot].values, holds[slot].caps) where cap > from {
          let seconds = Double(Swift.min(limit, cap) - from)
          update(RowKey(bucket: bucket, source: holding[index])) { row in
            row.weighted += value * seconds
            row.weight += seconds
          }
          if cap > limit { open = true }
        }
        holds[slot].from = limit
      } else {
        open = true
      }
      if open {
        index += 1
      } else {
        holds[slot].values.removeAll(keepingCapacity: true)
        holds[slot].caps.removeAll(keepingCapacity: true)
        holding.swapAt(index, holding.count - 1)
        holding.removeLast()
      }
    }
  }

  @inline(__always) private func update(_ key: RowKey, _ body: (inout Row) -> Void) {
    if key == lastKey, let index = lastIndex {
      body(&rows.values[index])
    } else if let index = rows.index(forKey: key) {
      lastKey = key
      lastIndex = index
      body(&rows.values[index])
    } else {
      var row = Row()
      body(&row)
      rows[key] = row
      lastIndex = nil
      order.push(key)
    }
  }

  /// Writes the rows of buckets before `bucket` (all of them are final), in (bucket, source) order.
  private func flush(before bucket: Int64) throws(OutputError) {
    while let key = order.min, key.bucket < bucket {
      order.popMin()
      let row = rows.removeValue(forKey: key)!
      lastIndex = nil
      guard (wantsStarts && row.hasStart) || (wantsOverlaps && row.touched) else { continue }
      try write(key, row)
    }
  }

  private func write(_ key: RowKey, _ row: Row) throws(OutputError) {
    bucket.start = Instant(seconds: buckets.start(key.bucket))
    bucket.end = Instant(seconds: buckets.start(key.bucket + 1))
    bucket.source = job.separateBySource ? sourceNames[Int(key.source)] : nil
    bucket.row = row
    try emit(bucket)
  }
}

extension StatisticsSweep.Row {
  /// The value of `option` in the bucket this row gathered.
  @inline(__always) func value(of option: StatisticsOption) -> StatisticsValue {
    switch option {
    case .sum: .number(sum)
    case .avg: .number(count > 0 ? total / Double(count) : nil)
    case .twavg: .number(weight > 0 ? weighted / weight : nil)
    case .min: .number(count > 0 ? minimum : nil)
    case .max: .number(count > 0 ? maximum : nil)
    case .count: .count(Int64(count))
    case .mostRecent: .number(hasRecent ? recentValue : nil)
    case .mostRecentTime: .instant(hasRecent ? Instant(seconds: recentStart) : nil)
    case .duration: .count(duration)
    }
  }
}

/// One finished bucket of a statistics query: what its sweep gathered, from which each option's
/// value is computed when a column or a reader asks for it (building a list of the values for
/// every row was a sixth of what writing the row cost the main thread).
struct StatisticsBucket {
  /// Bucket `k` is `[start, end)`.
  var start: Instant
  var end: Instant
  /// With `separateBySource`: the source's name.
  var source: String?
  /// The query's options, in the order it asked for them.
  let options: [StatisticsOption]
  var row: StatisticsSweep.Row

  /// The value of the query's option at `index`.
  @inline(__always) func value(at index: Int) -> StatisticsValue { row.value(of: options[index]) }
}

/// The value of one statistics option in one bucket.
enum StatisticsValue: Equatable {
  /// `sum`, `avg`, `twavg`, `min`, `max`, `mostRecent`; nil when it cannot be computed there.
  case number(Double?)
  /// `count`, `duration` (seconds).
  case count(Int64)
  /// `mostRecentTime`.
  case instant(Instant?)
}
