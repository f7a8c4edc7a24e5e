/// The chains of a workout's Segment events (Pipelines/docs/workouts.md, "Splits"): in start order, each
/// segment continues the chain whose last segment ends closest to its start — within 2 s, once
/// the pauses between them are left out — the earliest such chain on a tie, else starts a chain.
///
/// Looking at every chain for every segment cost their product: a workout of 240,000 segments,
/// none continuing another, took 108 s. A chain's last end is either still ahead of the segments'
/// starts or already behind them, and the starts only grow, so the chains are kept in two orders:
/// those ending ahead in a heap by end (the closest is on top, the earliest chain first), those
/// ending behind in the order they fell behind, grouped by the moving clock at their end
/// (`PauseIntervals.movingClock`, which stands still during pauses) — the group with the latest
/// reading is the closest, its earliest chain on top. Each segment then costs a few heap steps.
struct WatchSplitChains {
  typealias Segment = (start: Double, end: Double)

  /// A chain's last end while it is ahead of the segments' starts.
  private struct Ahead: Comparable {
    var end: Double
    var chain: Int
    var version: Int

    static func < (a: Ahead, b: Ahead) -> Bool { a.end != b.end ? a.end < b.end : a.chain < b.chain }
  }

  /// A chain that fell behind, by chain number (earliest first).
  private struct Behind: Comparable {
    var chain: Int
    var version: Int

    static func < (a: Behind, b: Behind) -> Bool { a.chain < b.chain }
  }

  /// The chains that fell behind with one moving-clock reading at their ends.
  private struct Reading {
    var clock: Double
    var chains = MergeHeap<Behind>()
  }

  /// Segments of each chain, in the order they joined it.
  private(set) var chains: [[Segment]] = []
  /// Per chain: bumped when a segment joins it, so its older heap entries are known stale.
  private var versions: [Int] = []
  private var ahead = MergeHeap<Ahead>()
  private var behind: [Reading] = []
  /// Heap entries looked at: what the time follows (tests count it).
  private(set) var steps = 0

  /// Chains the given segments (sorted by start, then end) form.
  static func chains(of segments: [Segment], pauses: PauseIntervals) -> (chains: [[Segment]], steps: Int) {
    var chaining = WatchSplitChains()
    for segment in segments { chaining.add(segment, pauses: pauses) }
    return (chaining.chains, chaining.steps)
  }

  /// The segments with the pauses inside them given back (Pipelines/docs/workouts.md, "Splits").
  /// The Watch's segments run each from where the previous one ended, their duration the wall-clock
  /// span, pauses included (the real fixtures' runs with pauses); a segment whose duration leaves out
  /// the pauses inside it ends early by them, and the next one starts at its end plus those pauses —
  /// which would break the chain there. So a segment with a pause inside it spans to the start of
  /// the segment that starts where its duration, counted as moving time, ends (within 2 s), when no
  /// segment starts at its own end. Given and kept sorted by start, then end.
  static func acrossPauses(_ segments: [Segment], pauses: PauseIntervals) -> [Segment] {
    guard !pauses.intervals.isEmpty, segments.count > 1 else { return segments }
    // The segment starting closest to `time`, within 2 s, other than `own`.
    func starting(near time: Double, other own: Int) -> Int? {
      var low = 0
      var high = segments.count
      while low < high {
        let middle = (low + high) / 2
        if segments[middle].start < time - 2 { low = middle + 1 } else { high = middle }
      }
      var best: Int?
      while low < segments.count, segments[low].start <= time + 2 {
        if low != own, best == nil || abs(segments[low].start - time) < abs(segments[best!].start - time) {
          best = low
        }
        low += 1
      }
      return best
    }
    let intervals = pauses.intervals
    var result = segments
    var changed = false
    for (index, segment) in segments.enumerated() {
      guard pauses.pausedSeconds(from: segment.start, to: segment.end) > 0 else { continue }
      // Where the duration ends when counted as moving time: each pause it reaches (one starting
      // as it runs out included, as the next segment starts at the resume) adds its length.
      var end = segment.end
      var pause = firstPause(endingAfter: segment.start, in: intervals)
      while pause < intervals.count, intervals[pause].start <= end {
        end += intervals[pause].end - max(intervals[pause].start, segment.start)
        pause += 1
      }
      guard starting(near: segment.end, other: index) == nil, let successor = starting(near: end, other: index),
        segments[successor].start > segment.end
      else { continue }
      result[index].end = segments[successor].start
      changed = true
    }
    if changed { result.sort { $0.start != $1.start ? $0.start < $1.start : $0.end < $1.end } }
    return result
  }

  /// The index of the first of `intervals` (sorted, disjoint) ending after `time`, or their count.
  private static func firstPause(endingAfter time: Double, in intervals: [(start: Double, end: Double)]) -> Int {
    var low = 0
    var high = intervals.count
    while low < high {
      let middle = (low + high) / 2
      if intervals[middle].end <= time { low = middle + 1 } else { high = middle }
    }
    return low
  }

  /// The gap between a chain ending at `end` and a segment starting at `start`: how far apart
  /// they are, less the pauses between them when the chain ends first.
  static func gap(from end: Double, to start: Double, pauses: PauseIntervals) -> Double {
    var gap = abs(start - end)
    // A pause between two segments of a chain (the Watch leaves it out of the segment).
    if start > end { gap -= pauses.pausedSeconds(from: end, to: start) }
    return gap
  }

  mutating func add(_ segment: Segment, pauses: PauseIntervals) {
    // Chains ending before this start fall behind, in order of their ends.
    while let top = ahead.min, top.end < segment.start {
      ahead.popMin()
      steps += 1
      guard top.version == versions[top.chain] else { continue }
      let clock = pauses.movingClock(at: top.end)
      if behind.isEmpty || clock > behind[behind.count - 1].clock {
        behind.append(Reading(clock: clock))
      }
      behind[behind.count - 1].chains.push(Behind(chain: top.chain, version: top.version))
    }
    var best: (chain: Int, gap: Double)?
    while let top = ahead.min, top.version != versions[top.chain] {
      ahead.popMin()
      steps += 1
    }
    if let top = ahead.min {
      let gap = Self.gap(from: top.end, to: segment.start, pauses: pauses)
      if gap <= 2 { best = (top.chain, gap) }
      steps += 1
    }
    while let reading = behind.last {
      if let top = reading.chains.min {
        if top.version == versions[top.chain] {
          let gap = Self.gap(from: chains[top.chain].last!.end, to: segment.start, pauses: pauses)
          if gap <= 2, best == nil || gap < best!.gap || (gap == best!.gap && top.chain < best!.chain) {
            best = (top.chain, gap)
          }
          steps += 1
          break
        }
        behind[behind.count - 1].chains.popMin()
        steps += 1
      } else {
        behind.removeLast()
      }
    }
    let chain: Int
    if let best {
      chain = best.chain
      chains[chain].append(segment)
      versions[chain] += 1
    } else {
      chain = chains.count
      chains.append([segment])
      versions.append(0)
    }
    ahead.push(Ahead(end: segment.end, chain: chain, version: versions[chain]))
    steps += 1
  }
}
