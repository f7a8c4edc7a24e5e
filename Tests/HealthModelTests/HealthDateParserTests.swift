import HealthModel
import Testing

@Suite struct HealthDateParserTests {
  /// Expected epochs worked out by hand: 2023-02-21 is day 19409 since 1970-01-01
  /// (53 years = 19358 days incl. 13 leap days, + 31 (Jan) + 20), so 00:30:31 +0900 is
  /// 19409·86400 + 1831 − 32400.
  @Test func parsesTheExportFormat() throws {
    let parsed = try #require(HealthDateParser.parse("2023-02-21 00:30:31 +0900"))
    #expect(parsed.instant.seconds == 19409 * 86400 + 1831 - 32400)
    #expect(parsed.offsetSeconds == 32400)
  }

  @Test(arguments: [
    ("2024-01-01 12:00:00 +0545", Int64(1_704_110_400 - 20_700), Int32(20_700)),
    ("2024-01-01 12:00:00 -0930", Int64(1_704_110_400 + 34_200), Int32(-34_200)),
    ("2024-01-01 12:00:00 +1400", Int64(1_704_110_400 - 50_400), Int32(50_400)),
    ("2024-01-01 12:00:00 -0000", Int64(1_704_110_400), Int32(0)),
    ("1970-01-01 00:00:00 +0000", Int64(0), Int32(0)),
    ("2024-02-29 23:59:59 +0000", Int64(1_709_251_199), Int32(0)),
    ("1969-12-31 23:59:59 +0000", Int64(-1), Int32(0)),
  ])
  func offsets(text: String, epoch: Int64, offset: Int32) throws {
    let parsed = try #require(HealthDateParser.parse(text))
    #expect(parsed.instant.seconds == epoch)
    #expect(parsed.offsetSeconds == offset)
  }

  @Test(arguments: [
    "", "2024-01-01 12:00:00", "2024-01-01 12:00:00 +01000", "2024-01-01 12:00:00 +010", "2024-01-01T12:00:00 +0100",
    "2024-13-01 12:00:00 +0100", "2023-02-29 12:00:00 +0100", "2024-01-01 24:00:00 +0100",
    "2024-01-01 12:60:00 +0100", "2024-01-01 12:00:00 *0100", "2024-01-01 12:00:00 +1500", "20240101 12:00:00 +0100x",
    "2024-0a-01 12:00:00 +0100", "2024-01-32 12:00:00 +0100",
  ])
  func rejectsMalformedDates(text: String) {
    #expect(HealthDateParser.parse(text) == nil)
  }

  /// iOS 8–9 wrote `yyyyMMddHHmmss±hhmm`: 2015-11-07 is day 16746 (45 years = 16436 days incl.
  /// 11 leap days, + 304 for January–October + 6), so 17:19:24 +0100 is 16746·86400 + 62364 − 3600.
  @Test func parsesTheCompactFormOfIOS8And9() throws {
    let parsed = try #require(HealthDateParser.parse("20151107171924+0100"))
    #expect(parsed.instant.seconds == 16746 * 86400 + 62364 - 3600)
    #expect(parsed.offsetSeconds == 3600)
    let west = try #require(HealthDateParser.parse("20150325190606-0700"))
    #expect(west.instant == HealthDateParser.parse("2015-03-25 19:06:06 -0700")?.instant)
    #expect(west.offsetSeconds == -25_200)
  }

  @Test(arguments: [
    "2015110717192+0100", "201511071719240+0100", "20151107171924 +0100", "20151107171924+010",
    "20151307171924+0100", "20150229171924+0100", "20151107241924+0100", "20151107171924*0100",
    "20151107171924+1500", "2015-11-07171924+01", "20151107171924+01:0",
  ])
  func rejectsMalformedCompactDates(text: String) {
    #expect(HealthDateParser.parse(text) == nil)
  }

  @Test func formatsWithTheZoneOffset() {
    let instant = Instant(seconds: 1_710_080_103)  // 2024-03-10T14:15:03Z
    #expect(LocalTimeFormatter.iso8601(instant, offsetSeconds: -25_200) == "2024-03-10T07:15:03-07:00")
    #expect(LocalTimeFormatter.iso8601(instant, offsetSeconds: 0) == "2024-03-10T14:15:03+00:00")
    #expect(LocalTimeFormatter.iso8601(instant, offsetSeconds: 20_700) == "2024-03-10T20:00:03+05:45")
    #expect(LocalTimeFormatter.compact(instant, offsetSeconds: 32_400, withTime: true) == "20240310231503")
  }

  @Test func civilDateRoundTrips() {
    for days in stride(from: Int64(-800_000), through: 800_000, by: 997) {
      #expect(CivilDate(daysSinceEpoch: days).daysSinceEpoch == days)
    }
    #expect(CivilDate(year: 2024, month: 3, day: 10).isoWeekdayIndex == 6)  // a Sunday
    #expect(CivilDate(year: 2024, month: 1, day: 31).adding(months: 1) == CivilDate(year: 2024, month: 2, day: 29))
    #expect(CivilDate("2024-02-30") == nil)
  }
}
