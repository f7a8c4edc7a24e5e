import Testing

@testable import HealthETL

/// The chains of Segment events (`WatchSplitChains`; Pipelines/docs/workouts.md, "Splits") and the
/// paused seconds they leave out (`PauseIntervals`): the same chains as looking at every chain
/// for every segment, for work that follows the segments (issue 31, item 5).
@Suite struct WatchSplitChainsTests {
  typealias Segment = WatchSplitChains.Segment

  /// The chaining before this change: every chain looked at for every segment (`steps`), and
  /// every pause from the first for every gap.
  static func referenceChains(_ segments: [Segment], pauses: [(start: Double, end: Double)]) -> (
    chains: [[Segment]], steps: Int
  ) {
    let intervals = PauseIntervals(pauses).intervals
    func paused(_ start: Double, _ end: Double) -> Double {
      var total = 0.0
      for interval in intervals {
        if interval.start >= end { break }
        let overlap = min(end, interval.end) - max(start, interval.start)
        if overlap > 0 { total += overlap }
      }
      return total
    }
    var chains: [[Segment]] = []
    var steps = 0
    for segment in segments {
      var best: (chain: Int, gap: Double)?
      for (index, chain) in chains.enumerated() {
        steps += 1
        let end = chain.last!.end
        var gap = abs(segment.start - end)
        if segment.start > end { gap -= paused(end, segment.start) }
        if gap <= 2, best == nil || gap < best!.gap { best = (index, gap) }
      }
      if let best { chains[best.chain].append(segment) } else { chains.append([segment]) }
    }
    return (chains, steps)
  }

  static func same(_ a: [[Segment]], _ b: [[Segment]]) -> Bool {
    a.count == b.count
      && zip(a, b).allSatisfy { x, y in
        x.count == y.count && zip(x, y).allSatisfy { $0.start == $1.start && $0.end == $1.end }
      }
  }

  @Test func aKilometreAndAMileChainInterleavedWithAPause() {
    // km: [0, 300) [300, 610) then a 60 s pause [610, 670), [670, 950); mi: [0, 480) [481, 960).
    // [300, 610) joins the km chain (gap 0). [481, 960) joins the mile chain (gap 1; the km chain
    // ends at 610, 129 s ahead). [670, 950): the km chain ended at 610, 60 s before, all paused:
    // gap 0; the mile chain ends 290 s ahead.
    let pauses = PauseIntervals([(610, 670)])
    let segments: [Segment] = [(0, 300), (0, 480), (300, 610), (481, 960), (670, 950)]
    let chains = WatchSplitChains.chains(of: segments, pauses: pauses).chains
    #expect(Self.same(chains, [[(0, 300), (300, 610), (670, 950)], [(0, 480), (481, 960)]]))
  }

  /// Random segments and pauses (whole and fractional seconds, gaps around 2 s, overlaps, ties):
  /// the reference's chains.
  @Test func chainsAreTheReferencesOnRandomWorkouts() {
    var generator = SplitMix(seed: 7)
    func random(_ bound: UInt64) -> Double { Double(generator.next() % bound) }
    for round in 0..<400 {
      var pauses: [(start: Double, end: Double)] = []
      for _ in 0..<Int(generator.next() % 6) {
        let start = random(300)
        pauses.append((start, start + 1 + random(20)))
      }
      var segments: [Segment] = []
      for _ in 0..<Int(generator.next() % 40) {
        let start = random(300) + (generator.next() % 3 == 0 ? random(4) / 4 : 0)
        segments.append((start, start + 0.5 + random(12) / 2))
      }
      segments.sort { $0.start != $1.start ? $0.start < $1.start : $0.end < $1.end }
      let mine = WatchSplitChains.chains(of: segments, pauses: PauseIntervals(pauses)).chains
      let reference = Self.referenceChains(segments, pauses: pauses).chains
      #expect(Self.same(mine, reference), "round \(round): \(segments) pauses \(pauses)")
    }
  }

  /// Paused seconds by binary search and the moving clock agree with a walk over every pause.
  @Test func pausedSecondsAndTheMovingClockAgreeWithAWalk() {
    var generator = SplitMix(seed: 11)
    for _ in 0..<300 {
      var raw: [(start: Double, end: Double)] = []
      for _ in 0..<Int(generator.next() % 8) {
        let start = Double(generator.next() % 200)
        raw.append((start, start + Double(generator.next() % 30)))
      }
      let pauses = PauseIntervals(raw)
      for _ in 0..<20 {
        let a = Double(generator.next() % 2_400) / 10 - 10
        let b = a + Double(generator.next() % 1_200) / 10
        var walked = 0.0
        for interval in pauses.intervals {
          let overlap = min(b, interval.end) - max(a, interval.start)
          if overlap > 0 { walked += overlap }
        }
        #expect(abs(pauses.pausedSeconds(from: a, to: b) - walked) < 1e-9, "\(raw) [\(a), \(b))")
        #expect(abs((pauses.movingClock(at: b) - pauses.movingClock(at: a)) - (b - a - walked)) < 1e-9)
      }
    }
  }

  /// N segments of 5 s every 10 s, none continuing another (so N chains), with a pause between
  /// every tenth pair. ×8 segments must cost no more than ×8 × 1.25 steps (here 748 → 5,998,
  /// ×8.0); the reference — the chaining before this change — takes ×64.2 (31,125 → 1,999,000),
  /// which the same bound refuses. A workout of 240,000 such segments took 108 s.
  @Test func workFollowsTheSegmentsNotTheirProduct() {
    func workout(_ count: Int) -> (segments: [Segment], pauses: [(start: Double, end: Double)]) {
      var segments: [Segment] = []
      var pauses: [(start: Double, end: Double)] = []
      for index in 0..<count {
        let start = Double(10 * index)
        segments.append((start, start + 5))
        if index % 10 == 0 { pauses.append((start + 6, start + 7)) }
      }
      return (segments, pauses)
    }
    let sizes = [250, 500, 1000, 2000]
    let steps = sizes.map { size in
      let (segments, pauses) = workout(size)
      return WatchSplitChains.chains(of: segments, pauses: PauseIntervals(pauses)).steps
    }
    #expect(Double(steps.last!) <= 8 * 1.25 * Double(steps.first!), "steps \(steps) for \(sizes) segments")
    // Without the pauses, which change no chain here (a gap of 5 s, 4 s once paused) and would
    // only make the reference slower.
    let reference = [sizes.first!, sizes.last!].map { Self.referenceChains(workout($0).segments, pauses: []).steps }
    #expect(Double(reference.last!) > 8 * 1.25 * Double(reference.first!), "reference steps \(reference)")
  }
}
