import HealthModel

/// One job's pass over its type's samples in start order: bucket rows filled as samples arrive,
/// written as soon as no later sample can change them.
///
/// Every option is a sweep, so a bucket is final once the stream has passed its end (a later
/// sample starts at or after that instant and cannot reach back). Rows wait in a dictionary
/// ordered by a heap of (bucket, source); only the rows still open are held — those reached by
/// samples that have not ended — so memory follows the buckets written, never the samples read.
///
/// Which buckets have data: a row is written when one of the job's options has data there.
/// `avg`, `min`, `max`, `count`, `mostRecent`, `mostRecentTime` have data in a bucket where a
/// sample starts; `sum`, `duration`, `twavg` where a sample starts or which a sample overlaps for
/// a positive time. A value that cannot be computed in a written row is empty.
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
  private var order = StatisticsHeap<RowKey>()
  private let wantsStarts: Bool
  private let wantsOverlaps: Bool
  private let wantsSum: Bool
  private let wantsMergedSum: Bool
  private let wantsDuration: Bool
  private let wantsTwavg: Bool
  private var sweep = PrioritySumSweep()
  /// duration: per source, the end of the union of the intervals seen so far.
  private var frontiers: [Int64]
  private var holds: [Holds]
  /// Sources whose `holds` may still hand out time.
  private var holding: [Int32] = []
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
    bucket = StatisticsBucket(start: Instant(seconds: 0), end: Instant(seconds: 0), source: nil, values: [])
    bucket.values.reserveCapacity(job.options.count)
    wantsStarts = job.options.contains { $0.dependsOnStartsOnly }
    wantsOverlaps = job.options.contains { !$0.dependsOnStartsOnly }
    wantsSum = job.options.contains(.sum)
    wantsMergedSum = wantsSum && !job.separateBySource
    wantsDuration = job.options.contains(.duration)
    wantsTwavg = job.options.contains(.twavg)
    let sourceSlots = job.separateBySource ? max(sourceNames.count, 1) : 1
    frontiers = [Int64](repeating: .min, count: sourceSlots)
    holds = [Holds](repeating: Holds(), count: sourceSlots)
  }

  /// Adds the next sample of the stream (start order).
  func add(_ record: SpillRecord) throws(OutputError) {
    let start = record.start
    let end = record.end
    let source = job.separateBySource ? groupSources[Int(record.group)] : 0
    advance(to: start)
    let bucket = buckets.index(containing: start)
    try flush(before: bucket)
    let key = RowKey(bucket: bucket, source: source)

    if wantsStarts {
      let rank = groupRanks[Int(record.group)]
      update(key) { row in
        row.hasStart = true
        row.count += 1
        row.total += record.value
        row.minimum = Swift.min(row.minimum, record.value)
        row.maximum = Swift.max(row.maximum, record.value)
        if !row.hasRecent || Self.isMoreRecent(record, rank: rank, than: row) {
          row.hasRecent = true
          row.recentStart = start
          row.recentEnd = end
          row.recentCreated = record.created
          row.recentRank = rank
          row.recentValue = record.value
        }
      }
    }
    guard wantsOverlaps else { return }
    if end > start {
      forEachBucket(from: start, to: end, source: source) { row, _ in row.touched = true }
    } else {
      update(key) { $0.touched = true }
    }
    if wantsSum {
      if end == start {
        // An instant counts whole in the bucket of its instant and is never merged away.
        update(key) { $0.sum += record.value }
      } else if job.separateBySource {
        let length = Double(end - start)
        let value = record.value
        forEachBucket(from: start, to: end, source: source) { row, seconds in
          row.sum += value * Double(seconds) / length
        }
      } else {
        sweep.add(start: start, end: end, value: record.value, rank: groupRanks[Int(record.group)])
      }
    }
    if wantsDuration {
      let frontier = frontiers[Int(source)]
      let from = Swift.max(start, frontier)
      if end > from {
        forEachBucket(from: from, to: end, source: source) { row, seconds in row.duration += seconds }
      }
      frontiers[Int(source)] = Swift.max(frontier, end)
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

  /// Hands out every remaining bucket.
  func finish() throws(OutputError) {
    advance(to: .max)
    try flush(before: .max)
  }

  /// The tie-break for `mostRecent` (Pipelines/README.md, "Interval statistics"): latest start,
  /// then latest end, then latest creation (none counts as earliest), then the higher-priority
  /// group, then the larger value.
  private static func isMoreRecent(_ record: SpillRecord, rank: Int32, than row: Row) -> Bool {
    if record.start != row.recentStart { return record.start > row.recentStart }
    if record.end != row.recentEnd { return record.end > row.recentEnd }
    if record.created != row.recentCreated { return record.created > row.recentCreated }
    if rank != row.recentRank { return rank < row.recentRank }
    return record.value > row.recentValue
  }

  /// Hands out everything that happens before `limit`: merged-sum pieces and twavg holding.
  private func advance(to limit: Int64) {
    if wantsMergedSum {
      sweep.advance(to: limit) { pieceStart, pieceEnd, sample in
        let length = Double(sample.end - sample.start)
        forEachBucket(from: pieceStart, to: pieceEnd, source: 0) { row, seconds in
          row.sum += sample.value * Double(seconds) / length
        }
      }
    }
    if wantsTwavg && !holding.isEmpty {
      var index = 0
      while index < holding.count {
        let slot = Int(holding[index])
        let from = holds[slot].from
        var open = false
        if from < limit {
          for (value, cap) in zip(holds[slot].values, holds[slot].caps) where cap > from {
            let upto = Swift.min(limit, cap)
            forEachBucket(from: from, to: upto, source: holding[index]) { row, seconds in
              row.weighted += value * Double(seconds)
              row.weight += Double(seconds)
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
  }

  /// Calls `body` with the row of every bucket that `[from, to)` overlaps and the seconds of overlap.
  @inline(__always) private func forEachBucket(
    from: Int64, to: Int64, source: Int32, _ body: (inout Row, Int64) -> Void
  ) {
    var t = from
    var bucket = buckets.index(containing: from)
    while t < to {
      let upper = Swift.min(buckets.end(bucket), to)
      update(RowKey(bucket: bucket, source: source)) { body(&$0, upper - t) }
      t = upper
      bucket += 1
    }
  }

  @inline(__always) private func update(_ key: RowKey, _ body: (inout Row) -> Void) {
    if let index = rows.index(forKey: key) {
      body(&rows.values[index])
    } else {
      var row = Row()
      body(&row)
      rows[key] = row
      order.push(key)
    }
  }

  /// Writes the rows of buckets before `bucket` (all of them are final), in (bucket, source) order.
  private func flush(before bucket: Int64) throws(OutputError) {
    while let key = order.min, key.bucket < bucket {
      order.popMin()
      let row = rows.removeValue(forKey: key)!
      guard (wantsStarts && row.hasStart) || (wantsOverlaps && row.touched) else { continue }
      try write(key, row)
    }
  }

  private func write(_ key: RowKey, _ row: Row) throws(OutputError) {
    bucket.start = Instant(seconds: buckets.start(key.bucket))
    bucket.end = Instant(seconds: buckets.start(key.bucket + 1))
    bucket.source = job.separateBySource ? sourceNames[Int(key.source)] : nil
    bucket.values.removeAll(keepingCapacity: true)
    for option in job.options {
      switch option {
      case .sum: bucket.values.append(.number(row.sum))
      case .avg: bucket.values.append(.number(row.count > 0 ? row.total / Double(row.count) : nil))
      case .twavg: bucket.values.append(.number(row.weight > 0 ? row.weighted / row.weight : nil))
      case .min: bucket.values.append(.number(row.count > 0 ? row.minimum : nil))
      case .max: bucket.values.append(.number(row.count > 0 ? row.maximum : nil))
      case .count: bucket.values.append(.count(Int64(row.count)))
      case .mostRecent: bucket.values.append(.number(row.hasRecent ? row.recentValue : nil))
      case .mostRecentTime: bucket.values.append(.instant(row.hasRecent ? Instant(seconds: row.recentStart) : nil))
      case .duration: bucket.values.append(.count(row.duration))
      }
    }
    try emit(bucket)
  }
}

/// One finished bucket of a statistics query: the values a row of its table holds, computed and
/// not yet formatted.
struct StatisticsBucket {
  /// Bucket `k` is `[start, end)`.
  var start: Instant
  var end: Instant
  /// With `separateBySource`: the source's name.
  var source: String?
  /// One per option of the query, in the order it asked for them.
  var values: [StatisticsValue]
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
