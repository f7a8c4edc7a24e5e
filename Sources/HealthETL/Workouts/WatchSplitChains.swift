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
