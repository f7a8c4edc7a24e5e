import HealthETL
import HealthModel
import Testing

/// Pieces and their winners, in-bed union and tallies (Pipelines/docs/sleep.md, "Sleep jobs", steps
/// 4–7). Times in minutes from a base instant; groups are priority positions (0 wins over 1).
@Suite struct SleepPieceResolverTests {
  static let base: Int64 = 1_709_582_400

  static func sample(
    _ start: Int64, _ end: Int64, _ stage: SleepStage, group: Int32 = 0, created: Int64? = nil
  ) -> SleepInterval {
    SleepInterval(
      start: Instant(seconds: base + start * 60), end: Instant(seconds: base + end * 60),
      created: created.map { Instant(seconds: base + $0 * 60) }, stage: stage, group: group)
  }

  /// Pieces of samples given in any order, as (start min, end min, stage, group).
  static func pieces(_ samples: [SleepInterval]) -> [[Int64]] {
    var sorted = samples
    _ = SleepSessionizer.sessions(&sorted, gapSeconds: 3600)
    return SleepPieceResolver.pieces(of: sorted[...]).map {
      [($0.start.seconds - base) / 60, ($0.end.seconds - base) / 60, Int64($0.stage.rawValue), Int64($0.group)]
    }
  }

  @Test func theHigherPriorityGroupWinsWhereItHasASampleTheOtherFillsTheRest() {
    // Group 1 (say AutoSleep) asleep 0–120; group 0 (the Watch) awake 30–45 and core 45–90.
    // 0–30 only group 1 → unspecified; 30–45 Watch awake; 45–90 Watch core; 90–120 group 1 again.
    let got = Self.pieces([
      Self.sample(0, 120, .asleepUnspecified, group: 1), Self.sample(30, 45, .awake, group: 0),
      Self.sample(45, 90, .asleepCore, group: 0),
    ])
    #expect(got == [[0, 30, 1, 1], [30, 45, 2, 0], [45, 90, 3, 0], [90, 120, 1, 1]])
  }

  @Test func inBedSamplesNeverDecideAndUncoveredTimeIsNoPiece() {
    // In-bed 0–100 from the top group; stages only at 10–20 (core) and 50–60 (deep).
    // 0–10, 20–50, 60–100 are in bed but no stage covers them: not pieces.
    let got = Self.pieces([
      Self.sample(0, 100, .inBed, group: 0), Self.sample(10, 20, .asleepCore, group: 1),
      Self.sample(50, 60, .asleepDeep, group: 1),
    ])
    #expect(got == [[10, 20, 3, 1], [50, 60, 4, 1]])
  }

  @Test func withinAGroupTheLaterCreationDateWinsAndAMissingOneIsEarliest() {
    // One group, three overlapping samples over 0–60:
    //   core 0–60 without creationDate (earliest of all),
    //   REM 0–30 created at minute 500, awake 20–60 created at minute 600 (the latest).
    // 0–20: REM (500) beats core (missing); 20–60: awake (600) beats REM and core.
    let got = Self.pieces([
      Self.sample(0, 60, .asleepCore), Self.sample(0, 30, .asleepREM, created: 500),
      Self.sample(20, 60, .awake, created: 600),
    ])
    #expect(got == [[0, 20, 5, 0], [20, 60, 2, 0]])
  }

  @Test func withEqualCreationDatesTheHigherRawValueWins() {
    // core (3) and deep (4), same group, same creationDate, both 0–30: deep wins.
    // awake (2) and unspecified (1) both 30–40: awake wins.
    let got = Self.pieces([
      Self.sample(0, 30, .asleepCore, created: 100), Self.sample(0, 30, .asleepDeep, created: 100),
      Self.sample(30, 40, .awake), Self.sample(30, 40, .asleepUnspecified),
    ])
    #expect(got == [[0, 30, 4, 0], [30, 40, 2, 0]])
  }

  @Test func zeroLengthSamplesNeverWin() {
    // A zero-length awake sample of the top group at minute 30 inside group 1's core 0–60:
    // it covers no time; the core sample is one piece 0–60 (cut at 30 and joined again).
    let got = Self.pieces([Self.sample(0, 60, .asleepCore, group: 1), Self.sample(30, 30, .awake, group: 0)])
    #expect(got == [[0, 60, 3, 1]])
  }

  @Test func neighbouringPiecesOfTheSameWinnerAreJoined() {
    // Watch core 0–30 and 30–60 back to back: one piece 0–60. Deep 60–70: its own piece.
    let got = Self.pieces([
      Self.sample(0, 30, .asleepCore), Self.sample(30, 60, .asleepCore), Self.sample(60, 70, .asleepDeep),
    ])
    #expect(got == [[0, 60, 3, 0], [60, 70, 4, 0]])
  }

  @Test func aLowerSampleOutlivingTheWinnerTakesOverWhenItEnds() {
    // Group 2 core 0–100; group 1 REM 10–80; group 0 awake 20–40.
    // 0–10 core(2); 10–20 REM(1); 20–40 awake(0); 40–80 REM(1) again; 80–100 core(2).
    let got = Self.pieces([
      Self.sample(0, 100, .asleepCore, group: 2), Self.sample(10, 80, .asleepREM, group: 1),
      Self.sample(20, 40, .awake, group: 0),
    ])
    #expect(got == [[0, 10, 3, 2], [10, 20, 5, 1], [20, 40, 2, 0], [40, 80, 5, 1], [80, 100, 3, 2]])
  }

  @Test func inBedSecondsIsTheLengthOfTheUnion() {
    // In bed 0–100 (group 0) and 50–130 (group 1) overlap: union 0–130 = 130 min = 7800 s;
    // another stretch 200–210 adds 600 s → 8400. Stage samples do not count.
    var samples = [
      Self.sample(0, 100, .inBed), Self.sample(50, 130, .inBed, group: 1), Self.sample(200, 210, .inBed),
      Self.sample(140, 190, .asleepCore),
    ]
    _ = SleepSessionizer.sessions(&samples, gapSeconds: 3600)
    #expect(SleepPieceResolver.inBedSeconds(of: samples[...]) == 8400)
    // No in-bed sample: nil, not 0. A zero-length one: 0.
    #expect(SleepPieceResolver.inBedSeconds(of: [Self.sample(0, 10, .asleepCore)][...]) == nil)
    #expect(SleepPieceResolver.inBedSeconds(of: [Self.sample(5, 5, .inBed)][...]) == 0)
  }

  @Test func aTallyAddsPiecesByStageAndMergesSessions() {
    // Session A: core 0–60 (3600 s, group 1), awake 60–70 (600 s, group 0), REM 70–100 (1800 s,
    // group 1); in bed 3000 s. Session B: deep 500–530 (1800 s, group 2); no in-bed sample.
    let a = SleepTally(
      session: [
        SleepPiece(start: Instant(seconds: 0), end: Instant(seconds: 3600), stage: .asleepCore, group: 1),
        SleepPiece(start: Instant(seconds: 3600), end: Instant(seconds: 4200), stage: .awake, group: 0),
        SleepPiece(start: Instant(seconds: 4200), end: Instant(seconds: 6000), stage: .asleepREM, group: 1),
      ], inBed: 3000)
    #expect(a.asleep == 5400 && a.core == 3600 && a.rem == 1800 && a.awake == 600)
    #expect(a.sleepStart == Instant(seconds: 0) && a.sleepEnd == Instant(seconds: 6000))
    #expect(a.winningGroups == [0, 1] && a.sessions == 1 && a.inBed == 3000)
    let b = SleepTally(
      session: [SleepPiece(start: Instant(seconds: 30000), end: Instant(seconds: 31800), stage: .asleepDeep, group: 2)],
      inBed: nil)
    var day = SleepTally()
    day.merge(b)
    day.merge(a)
    // 5400 + 1800 asleep; in bed 3000 (+ nothing); first asleep 0, last 31800; groups 0, 1, 2.
    #expect(day.asleep == 7200 && day.deep == 1800 && day.inBed == 3000 && day.sessions == 2)
    #expect(day.sleepStart == Instant(seconds: 0) && day.sleepEnd == Instant(seconds: 31800))
    #expect(day.winningGroups == [0, 1, 2])
  }

  @Test func anAwakeOnlySessionHasNoSleepStartButAWinner() {
    let tally = SleepTally(
      session: [SleepPiece(start: Instant(seconds: 0), end: Instant(seconds: 300), stage: .awake, group: 3)], inBed: nil
    )
    #expect(tally.asleep == 0 && tally.awake == 300 && tally.sleepStart == nil && tally.winningGroups == [3])
  }

  /// The winner of every second, by looking at every sample: obviously right, quadratic.
  static func referenceSeconds(_ samples: [SleepInterval]) -> [Int64: (SleepStage, Int32)] {
    var result: [Int64: (SleepStage, Int32)] = [:]
    guard let low = samples.map(\.start.seconds).min(), let high = samples.map(\.end.seconds).max() else { return [:] }
    var second = low
    while second < high {
      var best: SleepInterval?
      for sample in samples
      where sample.stage != .inBed && sample.start.seconds <= second && second < sample.end.seconds {
        if best.map({ sample.beats($0) }) ?? true { best = sample }
      }
      if let best { result[second] = (best.stage, best.group) }
      second += 60
    }
    return result
  }

  @Test(arguments: 1...40) func matchesAPerMinuteReferenceOnRandomOverlaps(seed: UInt64) {
    // Random samples on a whole-minute grid, so checking each minute's first second covers all.
    var rng = seed &* 0x9E37_79B9_7F4A_7C15
    func next(_ bound: Int64) -> Int64 {
      rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int64((rng >> 33) % UInt64(bound))
    }
    var samples: [SleepInterval] = []
    for _ in 0..<(5 + next(40)) {
      let start = next(600)
      let created: Int64? = next(4) == 0 ? nil : next(3)
      samples.append(
        Self.sample(
          start, start + next(120), SleepStage(rawValue: Int(next(6)))!, group: Int32(next(4)), created: created))
    }
    let reference = Self.referenceSeconds(samples)
    var sorted = samples
    _ = SleepSessionizer.sessions(&sorted, gapSeconds: 1_000_000)
    var covered: [Int64: (SleepStage, Int32)] = [:]
    let pieces = SleepPieceResolver.pieces(of: sorted[...])
    for (a, b) in zip(pieces, pieces.dropFirst()) { #expect(a.end <= b.start, "pieces overlap") }
    for piece in pieces {
      var second = piece.start.seconds
      while second < piece.end.seconds {
        covered[second] = (piece.stage, piece.group)
        second += 60
      }
    }
    #expect(covered.count == reference.count)
    for (second, winner) in reference {
      #expect(covered[second]?.0 == winner.0 && covered[second]?.1 == winner.1, "seed \(seed) at \(second)")
    }
  }

  // The limit only turns a hang into a failure: the heap sweep takes about a second alone (tens
  // of seconds among the whole suite's parallel tests), a scan of the covering set per piece
  // hours. Speed itself is measured by `make bench`, not here.
  @Test(.timeLimit(.minutes(10))) func manyNestedSamplesStayFast() {
    // 200 000 samples all covering the middle, each of its own group: a scan of the covering set
    // per piece would be ~10^10 steps; the heap sweep is ~n log n.
    var samples: [SleepInterval] = []
    for index in 0..<200_000 {
      let i = Int64(index)
      samples.append(
        SleepInterval(
          start: Instant(seconds: i), end: Instant(seconds: 400_000 - i), stage: .asleepCore, group: Int32(index)))
    }
    _ = SleepSessionizer.sessions(&samples, gapSeconds: 3600)
    let pieces = SleepPieceResolver.pieces(of: samples[...])
    // Group 0 covers 0–400 000 and beats every other: one piece.
    #expect(pieces.count == 1 && pieces[0].length == 400_000 && pieces[0].group == 0)
  }
}
