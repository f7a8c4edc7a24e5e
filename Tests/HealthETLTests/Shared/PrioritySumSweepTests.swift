import Testing

@testable import HealthETL

/// The priority merge of sums (`PrioritySumSweep`; Pipelines/docs/samples.md, "Source priority"): the
/// winning group's share of each piece, and work that follows the samples, not their overlap
/// (issue 31, item 5).
@Suite struct PrioritySumSweepTests {
  /// A sample of the merge: `[start, end)`, its value, its group's rank.
  struct Piece: Equatable {
    var start: Int64
    var end: Int64
    var rank: Int32
    var value: Double
  }

  /// The sweep as it was before this change: every covering sample looked at for every piece,
  /// each winning sample handed out on its own. The reference for the shares, and the measure of
  /// what the ratio test below would have found (`steps`: covering samples looked at).
  struct ReferenceSweep {
    var active: [(start: Int64, end: Int64, value: Double, rank: Int32)] = []
    var cursor = Int64.min
    var steps = 0

    mutating func add(start: Int64, end: Int64, value: Double, rank: Int32) {
      if active.isEmpty { cursor = start }
      active.append((start, end, value, rank))
    }

    mutating func advance(to limit: Int64, _ emit: (Int64, Int64, Int32, Double) -> Void) {
      while !active.isEmpty && cursor < limit {
        var nextEnd = Int64.max
        var winner = Int32.max
        for sample in active {
          nextEnd = min(nextEnd, sample.end)
          winner = min(winner, sample.rank)
          steps += 1
        }
        let pieceEnd = min(nextEnd, limit)
        for sample in active where sample.rank == winner {
          emit(cursor, pieceEnd, winner, sample.value * Double(pieceEnd - cursor) / Double(sample.end - sample.start))
          steps += 1
        }
        cursor = pieceEnd
        if nextEnd <= cursor {
          steps += active.count
          active.removeAll { $0.end <= pieceEnd }
        }
      }
      if cursor < limit { cursor = limit }
    }
  }

  /// Every piece's winning share, in order; shares of one piece added up.
  static func pieces(_ samples: [Piece]) -> (pieces: [Piece], steps: Int) {
    var sweep = PrioritySumSweep()
    var out: [Piece] = []
    let emit = { (from: Int64, to: Int64, winner: PrioritySumSweep.Winner) in
      out.append(Piece(start: from, end: to, rank: winner.rank, value: winner.share(from: from, to: to)))
    }
    for sample in samples {
      sweep.advance(to: sample.start, emit)
      sweep.add(start: sample.start, end: sample.end, value: sample.value, rank: sample.rank)
    }
    sweep.advance(to: .max, emit)
    return (out, sweep.steps)
  }

  static func referencePieces(_ samples: [Piece]) -> (pieces: [Piece], steps: Int) {
    var sweep = ReferenceSweep()
    var out: [Piece] = []
    let emit = { (from: Int64, to: Int64, rank: Int32, share: Double) in
      if let last = out.last, last.start == from, last.end == to {
        out[out.count - 1].value += share
      } else {
        out.append(Piece(start: from, end: to, rank: rank, value: share))
      }
    }
    for sample in samples {
      sweep.advance(to: sample.start, emit)
      sweep.add(start: sample.start, end: sample.end, value: sample.value, rank: sample.rank)
    }
    sweep.advance(to: .max, emit)
    return (out, sweep.steps)
  }

  @Test func theBestRankedGroupTakesEachPieceProRata() {
    // A (rank 0) [0, 10) 10, B (rank 1) [5, 20) 30, A again [8, 12) 4, nothing [20, 30), B [30, 40) 5.
    // [0, 5): A alone, 10 × 5/10 = 5. [5, 8): A wins over B, 3. [8, 10): both A's, 10 × 2/10 + 4 × 2/4
    // = 4. [10, 12): the second A, 4 × 2/4 = 2. [12, 20): B, 30 × 8/15 = 16. [30, 40): B, 5.
    // A counts 14 of 14, B 21 of 35.
    let result = Self.pieces([
      Piece(start: 0, end: 10, rank: 0, value: 10), Piece(start: 5, end: 20, rank: 1, value: 30),
      Piece(start: 8, end: 12, rank: 0, value: 4), Piece(start: 30, end: 40, rank: 1, value: 5),
    ])
    #expect(
      result.pieces == [
        Piece(start: 0, end: 5, rank: 0, value: 5), Piece(start: 5, end: 8, rank: 0, value: 3),
        Piece(start: 8, end: 10, rank: 0, value: 4), Piece(start: 10, end: 12, rank: 0, value: 2),
        Piece(start: 12, end: 20, rank: 1, value: 16), Piece(start: 30, end: 40, rank: 1, value: 5),
      ])
  }

  /// Random streams (start order, many groups, overlapping within and across groups): the same
  /// pieces, winners and shares as the reference, to 1e-12 of the piece's value.
  @Test func sharesAreTheReferencesOnRandomStreams() {
    var generator = SplitMix(seed: 31)
    for round in 0..<200 {
      var samples: [Piece] = []
      var start: Int64 = 0
      for _ in 0..<Int(generator.next() % 60) {
        start += Int64(generator.next() % 5)
        let length = 1 + Int64(generator.next() % 40)
        let value = Double(generator.next() % 10_000) / 7
        samples.append(Piece(start: start, end: start + length, rank: Int32(generator.next() % 6), value: value))
      }
      let (mine, reference) = (Self.pieces(samples).pieces, Self.referencePieces(samples).pieces)
      #expect(mine.count == reference.count, "round \(round)")
      for (a, b) in zip(mine, reference) {
        #expect(a.start == b.start && a.end == b.end && a.rank == b.rank, "round \(round)")
        #expect(abs(a.value - b.value) <= 1e-12 * max(1, abs(b.value)), "round \(round): \(a.value) \(b.value)")
      }
    }
  }

  /// N six-hour samples of 100 sources, one starting every quarter second: all N overlap, and
  /// each source's own samples overlap N / 100 deep. ×8 samples must cost no more than ×8 × 1.25
  /// steps (here 1,845 → 14,095, ×7.6: 2 per sample entering, 1 per piece, 1 per end). The
  /// reference — the sweep before this change — takes ×63.8 (94,649 → 6,042,024), which the same
  /// bound refuses.
  @Test func workFollowsTheSamplesNotTheirOverlap() {
    func samples(_ count: Int) -> [Piece] {
      (0..<count).map { index in
        let start = Int64(index / 4)
        return Piece(start: start, end: start + 6 * 3600, rank: Int32(index % 100), value: Double(100 + index % 900))
      }
    }
    let sizes = [500, 1000, 2000, 4000]
    let steps = sizes.map { Self.pieces(samples($0)).steps }
    #expect(Double(steps.last!) <= 8 * 1.25 * Double(steps.first!), "steps \(steps) for \(sizes) samples")
    let reference = [sizes.first!, sizes.last!].map { Self.referencePieces(samples($0)).steps }
    #expect(Double(reference.last!) > 8 * 1.25 * Double(reference.first!), "reference steps \(reference)")
  }
}

/// SplitMix64: a small deterministic generator for the random streams.
struct SplitMix {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
