import HealthETL
import HealthModel
import Testing

/// Sessions and their dates (Pipelines/docs/sleep.md, "Sleep jobs", steps 2–3). Times are offsets from
/// a base instant, in minutes.
@Suite struct SleepSessionizerTests {
  /// 2024-03-04T20:00:00Z.
  static let base: Int64 = 1_709_582_400

  static func interval(_ startMinute: Int64, _ endMinute: Int64, _ stage: SleepStage = .asleepCore) -> SleepInterval {
    SleepInterval(
      start: Instant(seconds: base + startMinute * 60), end: Instant(seconds: base + endMinute * 60), stage: stage,
      group: 0)
  }

  static func minutes(_ session: SleepSession) -> (Int64, Int64) {
    ((session.start.seconds - base) / 60, (session.end.seconds - base) / 60)
  }

  @Test func aGapOfExactlyTheLimitKeepsTheSessionAndOneSecondMoreSplitsIt() {
    // 0–60, then 120–180: the second starts exactly 60 min after the latest end → same session.
    // 180–240 ends at 240; the next starts at 300 min + 1 s, 60 min 1 s later → new session.
    var samples = [Self.interval(0, 60), Self.interval(120, 180), Self.interval(180, 240)]
    samples.append(
      SleepInterval(
        start: Instant(seconds: Self.base + 300 * 60 + 1), end: Instant(seconds: Self.base + 330 * 60),
        stage: .asleepCore, group: 0))
    let sessions = SleepSessionizer.sessions(&samples, gapSeconds: 3600)
    #expect(sessions.count == 2)
    #expect(Self.minutes(sessions[0]) == (0, 240))
    #expect(sessions[0].samples == 0..<3)
    #expect(sessions[1].start.seconds == Self.base + 300 * 60 + 1)
    #expect(sessions[1].samples == 3..<4)
  }

  @Test func theGapIsMeasuredFromTheLatestEndNotTheLastSample() {
    // An in-bed sample 0–480 encloses a short stage sample 60–90. A sample at 500 starts 20 min
    // after the latest end (480) although 410 min after the previous sample's end (90): same session.
    var samples = [Self.interval(0, 480, .inBed), Self.interval(60, 90), Self.interval(500, 530)]
    let sessions = SleepSessionizer.sessions(&samples, gapSeconds: 3600)
    #expect(sessions.count == 1)
    #expect(Self.minutes(sessions[0]) == (0, 530))
  }

  @Test func inputInAnyOrderIsSortedByStart() {
    // Document order is not time order: 300–330 first, then 0–30 and 40–70.
    // Sorted: 0–30, 40–70 (10 min gap, same session), 300–330 (230 min after 70: new session).
    var samples = [Self.interval(300, 330), Self.interval(0, 30), Self.interval(40, 70)]
    let sessions = SleepSessionizer.sessions(&samples, gapSeconds: 3600)
    #expect(sessions.map(Self.minutes).map { [$0.0, $0.1] } == [[0, 70], [300, 330]])
    #expect(samples.map { ($0.start.seconds - Self.base) / 60 } == [0, 40, 300])
  }

  @Test func zeroLengthSamplesBridgeGaps() {
    // 0–60 and 160–200 are 100 min apart: two sessions. A zero-length sample at 110 is 50 min
    // after 60 and 50 min before 160, so all three become one session.
    var apart = [Self.interval(0, 60), Self.interval(160, 200)]
    #expect(SleepSessionizer.sessions(&apart, gapSeconds: 3600).count == 2)
    var bridged = [Self.interval(0, 60), Self.interval(110, 110, .awake), Self.interval(160, 200)]
    let sessions = SleepSessionizer.sessions(&bridged, gapSeconds: 3600)
    #expect(sessions.count == 1 && Self.minutes(sessions[0]) == (0, 200))
  }

  @Test func noSamplesNoSessions() {
    var none: [SleepInterval] = []
    #expect(SleepSessionizer.sessions(&none, gapSeconds: 3600).isEmpty)
  }

  @Test func theNightDateIsTheEndDateOrTheNextFromSixInTheEvening() throws {
    let utc = try ZoneRules.load("UTC")
    func date(_ text: String) -> String {
      SleepSessionizer.nightDate(
        endingAt: Instant(seconds: SleepTesting.epoch(text)), rules: utc, dayBoundaryMinutes: 18 * 60
      ).description
    }
    #expect(date("2024-03-05T07:05:00+00:00") == "2024-03-05")  // a night ending in the morning
    #expect(date("2024-03-05T17:59:59+00:00") == "2024-03-05")  // one second before the boundary
    #expect(date("2024-03-05T18:00:00+00:00") == "2024-03-06")  // at the boundary: next date
    #expect(date("2024-03-05T23:59:59+00:00") == "2024-03-06")
    #expect(date("2024-03-06T00:00:00+00:00") == "2024-03-06")  // midnight belongs to the new day
  }

  @Test func theBoundaryIsWallClockTimeOnADaylightSavingDay() throws {
    // New York springs forward on 2024-03-10 at 02:00 EST: 18:00 that day is EDT, 22:00Z
    // (not 23:00Z as in winter). 21:59:59Z is 17:59:59 EDT → 03-10; 22:00:00Z is 18:00 → 03-11.
    let newYork = try ZoneRules.load("America/New_York")
    func date(_ epoch: Int64) -> String {
      SleepSessionizer.nightDate(endingAt: Instant(seconds: epoch), rules: newYork, dayBoundaryMinutes: 18 * 60)
        .description
    }
    let tenPMZ = SleepTesting.epoch("2024-03-10T22:00:00+00:00")
    #expect(date(tenPMZ - 1) == "2024-03-10")
    #expect(date(tenPMZ) == "2024-03-11")
  }

  @Test func aBoundaryAtMidnightMeansTheEndDateItself() throws {
    // dayBoundary 00:00 would otherwise move every session a day on; it means "no boundary".
    let utc = try ZoneRules.load("UTC")
    let end = Instant(seconds: SleepTesting.epoch("2024-03-05T20:00:00+00:00"))
    #expect(SleepSessionizer.nightDate(endingAt: end, rules: utc, dayBoundaryMinutes: 0).description == "2024-03-05")
    #expect(
      SleepSessionizer.nightDate(endingAt: end, rules: utc, dayBoundaryMinutes: 21 * 60).description == "2024-03-05")
    #expect(
      SleepSessionizer.nightDate(endingAt: end, rules: utc, dayBoundaryMinutes: 12 * 60).description == "2024-03-06")
  }
}
