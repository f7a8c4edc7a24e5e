import HealthModel

/// The data-quality measures of the report (Pipelines/report/DATA.md, "quality") over the
/// statistics' merged sample streams, in one pass in start order per type:
///
/// - `overlapping`: samples of positive length sharing a positive stretch of time with a
///   positive-length sample of another source name. In start order a sample overlaps an earlier
///   one of another source when that source's latest end so far lies after its start; a sample
///   not yet known to overlap waits in its source's pending ends until another source's sample
///   starts, which settles every pending one (end after that start: overlapping; otherwise it never
///   can be, since later samples start later still).
/// - `counted`: per source name, how much of its summed value counts in the merged sums — the
///   priority merge of the `sum` option (`PrioritySumSweep`), an instant counting whole.
///
/// Memory: per type and source a few numbers and the pending ends, pruned as they expire.
final class ReportQuality: StatisticsStreamObserver {
  struct Stream {
    var overlapping = 0
    /// Per source index.
    var latestEnd: [Int64]
    var pending: [[Int64]]
    var pruneAt: [Int]
    var merge: PrioritySumSweep?
    var total: [Double]
    var counted: [Double]
  }

  /// Per type short name, after `end()`.
  private(set) var overlapping: [String: Int] = [:]
  /// Per type short name and source name: (total, counted), for cumulative types.
  private(set) var shares: [String: [String: (total: Double, counted: Double)]] = [:]

  private var types: [String] = []
  private var sourceNames: [String] = []
  private var groupSource: [Int] = []
  private var groupRanks: [Int32] = []
  /// By rank position: the source index of the group holding it.
  private var rankSource: [Int] = []
  private var streams: [Stream] = []

  func begin(types: [String], groupSources: [String], groupRanks: [Int32]) {
    self.types = types
    self.groupRanks = groupRanks
    var index: [String: Int] = [:]
    sourceNames = []
    groupSource = groupSources.map { name in
      if let known = index[name] { return known }
      index[name] = sourceNames.count
      sourceNames.append(name)
      return sourceNames.count - 1
    }
    rankSource = [Int](repeating: 0, count: groupRanks.count)
    for (group, rank) in groupRanks.enumerated() { rankSource[Int(rank)] = groupSource[group] }
    let count = sourceNames.count
    streams = types.map { type in
      let cumulative = SampleTypeInfo(identifier: "HKQuantityTypeIdentifier" + type).aggregation?.isCumulative ?? false
      return Stream(
        latestEnd: [Int64](repeating: .min, count: count), pending: [[Int64]](repeating: [], count: count),
        pruneAt: [Int](repeating: 64, count: count), merge: cumulative ? PrioritySumSweep() : nil,
        total: [Double](repeating: 0, count: count), counted: [Double](repeating: 0, count: count))
    }
  }

  func observe(stream: Int32, start: Int64, end: Int64, value: Double, group: Int32) {
    let source = groupSource[Int(group)]
    streams[Int(stream)].observe(
      start: start, end: end, value: value, source: source, rank: groupRanks[Int(group)], rankSource: rankSource)
  }

  func end() {
    for (index, type) in types.enumerated() {
      streams[index].finishMerge(rankSource: rankSource)
      overlapping[type] = streams[index].overlapping
      if streams[index].merge != nil {
        var perSource: [String: (total: Double, counted: Double)] = [:]
        for (source, name) in sourceNames.enumerated()
        where streams[index].total[source] != 0 || streams[index].counted[source] != 0 {
          perSource[name] = (streams[index].total[source], streams[index].counted[source])
        }
        shares[type] = perSource
      }
    }
    streams = []
  }
}

extension ReportQuality.Stream {
  mutating func observe(start: Int64, end: Int64, value: Double, source: Int, rank: Int32, rankSource: [Int]) {
    if merge != nil {
      total[source] += value
      if end > start {
        advanceMerge(to: start, rankSource: rankSource)
        merge!.add(start: start, end: end, value: value, rank: rank)
      } else {
        counted[source] += value
      }
    }
    guard end > start else { return }
    var overlapsEarlier = false
    for other in latestEnd.indices where other != source {
      if latestEnd[other] > start { overlapsEarlier = true }
      if !pending[other].isEmpty {
        for pendingEnd in pending[other] where pendingEnd > start { overlapping += 1 }
        pending[other].removeAll(keepingCapacity: true)
      }
    }
    if overlapsEarlier {
      overlapping += 1
    } else {
      pending[source].append(end)
      if pending[source].count >= pruneAt[source] {
        pending[source].removeAll { $0 <= start }
        pruneAt[source] = Swift.max(64, pending[source].count * 2)
      }
    }
    latestEnd[source] = Swift.max(latestEnd[source], end)
  }

  mutating func advanceMerge(to limit: Int64, rankSource: [Int]) {
    // Swapped out, not copied: the closure cannot reach `self` while `merge` is being mutated.
    var counted: [Double] = []
    swap(&counted, &self.counted)
    merge!.advance(to: limit) { pieceStart, pieceEnd, sample in
      counted[rankSource[Int(sample.rank)]] +=
        sample.value * Double(pieceEnd - pieceStart) / Double(sample.end - sample.start)
    }
    swap(&counted, &self.counted)
  }

  mutating func finishMerge(rankSource: [Int]) {
    if merge != nil { advanceMerge(to: .max, rankSource: rankSource) }
  }
}
