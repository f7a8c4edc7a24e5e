import HealthModel

/// The data-quality measures of the report (Pipelines/report/DATA.md, "quality") over the
/// statistics' merged sample streams, in one pass in start order per type:
///
/// - `overlapping`: samples of positive length sharing a positive stretch of time with a
///   positive-length sample of another source name. In start order a sample overlaps an earlier
///   one of another source when that source's latest end so far lies after its start; a sample
///   not yet known to overlap waits among the pending ends until another source's sample starts,
///   which settles every pending one (end after that start: overlapping; otherwise it never can
///   be, since later samples start later still).
/// - `counted`: per source name, how much of its summed value counts in the merged sums — the
///   priority merge of the `sum` option (`PrioritySumSweep`), an instant counting whole.
///
/// Cost per sample is the same whatever the number of sources: "another source's latest end" is
/// the latest end overall unless that one is the sample's own source, so two ends per type
/// answer it; and since a sample of another source settles all pending ends, they are only ever
/// one source's. Memory: per type a few numbers and the pending ends (pruned as they expire),
/// and per (type, source) pair that occurs two sums — never types × sources.
final class ReportQuality: StatisticsStreamObserver {
  /// The types a statistics mart will show it, told before the parse.
  private(set) var observedTypes: Set<String> = []

  func willObserve(types: [String]) { observedTypes = Set(types) }

  struct Stream {
    var overlapping = 0
    var latestEnds = LatestEnds()
    /// The source whose samples `pending` holds.
    var pendingSource = -1
    var pending: [Int64] = []
    var pruneAt = 64
    var merge: PrioritySumSweep?
  }

  /// The latest end so far of each source, reduced to what the overlap test asks: the latest end
  /// of any source other than a given one.
  struct LatestEnds {
    private var leader = -1
    private var leaderEnd = Int64.min
    /// The latest end among the sources other than `leader`.
    private var runnerUpEnd = Int64.min

    func latest(otherThan source: Int) -> Int64 { source == leader ? runnerUpEnd : leaderEnd }

    mutating func record(_ end: Int64, of source: Int) {
      if source == leader {
        leaderEnd = Swift.max(leaderEnd, end)
      } else if end > leaderEnd {
        runnerUpEnd = leaderEnd
        leader = source
        leaderEnd = end
      } else {
        runnerUpEnd = Swift.max(runnerUpEnd, end)
      }
    }
  }

  /// One source's summed value in a merged type, and how much of it counts.
  struct Share {
    var source: String
    var total: Double
    var counted: Double
  }

  /// Per type short name, after `end()`.
  private(set) var overlapping: [String: Int] = [:]
  /// Per cumulative type's short name: its sources in the order the stream met them.
  private(set) var shares: [String: [Share]] = [:]

  private var types: [String] = []
  private var sourceNames: [String] = []
  private var groupSource: [Int] = []
  private var groupRanks: [Int32] = []
  /// By rank position: the source index of the group holding it.
  private var rankSource: [Int] = []
  private var streams: [Stream] = []
  /// Numbers the (stream, source) pairs of merged types; `totals` and `counted` by that number.
  private var sumIndex = PairIndex()
  private var totals: [Double] = []
  private var counted: [Double] = []

  func begin(types: [String], groupSources: [String], groupRanks: [Int32]) {
    self.types = types
    self.groupRanks = groupRanks
    var index: [String: Int] = [:]
    index.reserveCapacity(groupSources.count)
    sourceNames = []
    groupSource = groupSources.map { name in
      if let known = index[name] { return known }
      index[name] = sourceNames.count
      sourceNames.append(name)
      return sourceNames.count - 1
    }
    rankSource = [Int](repeating: 0, count: groupRanks.count)
    for (group, rank) in groupRanks.enumerated() { rankSource[Int(rank)] = groupSource[group] }
    streams = types.map { type in
      let cumulative = SampleTypeInfo(identifier: "HKQuantityTypeIdentifier" + type).aggregation?.isCumulative ?? false
      return Stream(merge: cumulative ? PrioritySumSweep() : nil)
    }
  }

  func observe(stream: Int32, start: Int64, end: Int64, value: Double, group: Int32) {
    let source = groupSource[Int(group)]
    let index = Int(stream)
    if streams[index].merge != nil {
      totals[sumSlot(stream: stream, source: source)] += value
      if end > start {
        advanceMerge(stream: stream, to: start)
        streams[index].merge!.add(start: start, end: end, value: value, rank: groupRanks[Int(group)])
      } else {
        counted[sumSlot(stream: stream, source: source)] += value
      }
    }
    guard end > start else { return }
    streams[index].countOverlaps(start: start, end: end, source: source)
  }

  func end() {
    for (index, type) in types.enumerated() where streams[index].merge != nil {
      advanceMerge(stream: Int32(index), to: .max)
      shares[type] = []
    }
    for slot in 0..<sumIndex.count where totals[slot] != 0 || counted[slot] != 0 {
      let (stream, source) = sumIndex.pair(slot)
      shares[types[Int(stream)], default: []].append(
        Share(source: sourceNames[Int(source)], total: totals[slot], counted: counted[slot]))
    }
    for (index, type) in types.enumerated() { overlapping[type] = streams[index].overlapping }
    streams = []
    sumIndex = PairIndex()
    totals = []
    counted = []
  }

  private func sumSlot(stream: Int32, source: Int) -> Int {
    let (slot, isNew) = sumIndex.number(stream, Int32(source))
    if isNew {
      totals.append(0)
      counted.append(0)
    }
    return slot
  }

  private func advanceMerge(stream: Int32, to limit: Int64) {
    // Advanced in place (the closure updates other properties than `streams`): copying the
    // sweep out and back, with its arrays' reference counting, was a quarter of the observer's
    // time.
    streams[Int(stream)].merge!.advance(to: limit) { pieceStart, pieceEnd, winner in
      counted[sumSlot(stream: stream, source: rankSource[Int(winner.rank)])] +=
        winner.share(from: pieceStart, to: pieceEnd)
    }
  }
}

extension ReportQuality.Stream {
  /// A sample of positive length, in start order.
  mutating func countOverlaps(start: Int64, end: Int64, source: Int) {
    if pendingSource != source && !pending.isEmpty {
      for pendingEnd in pending where pendingEnd > start { overlapping += 1 }
      pending.removeAll(keepingCapacity: true)
      pruneAt = 64
    }
    if latestEnds.latest(otherThan: source) > start {
      overlapping += 1
    } else {
      pendingSource = source
      pending.append(end)
      if pending.count >= pruneAt {
        pending.removeAll { $0 <= start }
        pruneAt = Swift.max(64, pending.count * 2)
      }
    }
    latestEnds.record(end, of: source)
  }
}
