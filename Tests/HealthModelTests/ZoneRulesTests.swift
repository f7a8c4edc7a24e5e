import Foundation
import HealthModel
import Testing

@Suite struct ZoneRulesTests {
  @Test func berlinAcrossSpringForward() throws {
    let berlin = try ZoneRules.load("Europe/Berlin")
    // 2024-03-31 01:00:00Z is the switch from +01:00 to +02:00.
    let switchInstant = Instant(seconds: 1_711_846_800)
    #expect(berlin.offset(at: Instant(seconds: switchInstant.seconds - 1)) == 3600)
    #expect(berlin.offset(at: switchInstant) == 7200)
    // Local midnight of 2024-03-31 is 23:00Z the day before; of 04-01 it is 22:00Z: a 23-hour day.
    let day = CivilDate(year: 2024, month: 3, day: 31).daysSinceEpoch * 86_400
    let start = berlin.firstInstant(atOrAfterLocal: day)
    let next = berlin.firstInstant(atOrAfterLocal: day + 86_400)
    #expect(next.seconds - start.seconds == 23 * 3600)
    // 02:30 does not exist that night: the first instant at or after it is the switch itself.
    #expect(berlin.firstInstant(atOrAfterLocal: day + 2 * 3600 + 1800) == switchInstant)
  }

  @Test func newYorkFallBackIsA25HourDay() throws {
    let newYork = try ZoneRules.load("America/New_York")
    let day = CivilDate(year: 2024, month: 11, day: 3).daysSinceEpoch * 86_400
    let length =
      newYork.firstInstant(atOrAfterLocal: day + 86_400).seconds
      - newYork.firstInstant(atOrAfterLocal: day).seconds
    #expect(length == 25 * 3600)
  }

  /// Far-future instants come from the POSIX rule in the TZif footer, not the table.
  @Test func futureRulesFromTheFooter() throws {
    let sydney = try ZoneRules.load("Australia/Sydney")
    // 2090-01-15 is southern summer (+11:00), 2090-07-15 winter (+10:00).
    #expect(
      sydney.offset(at: Instant(seconds: CivilDate(year: 2090, month: 1, day: 15).daysSinceEpoch * 86_400)) == 39_600)
    #expect(
      sydney.offset(at: Instant(seconds: CivilDate(year: 2090, month: 7, day: 15).daysSinceEpoch * 86_400)) == 36_000)
  }

  /// Cross-check against Foundation's TimeZone over many instants in several zones.
  @Test(arguments: [
    "Europe/Berlin", "America/Los_Angeles", "Asia/Kathmandu", "Australia/Lord_Howe", "Asia/Tokyo",
    "America/Santiago", "Pacific/Chatham", "Africa/Casablanca",
  ])
  func agreesWithFoundation(name: String) throws {
    let rules = try ZoneRules.load(name)
    let zone = try #require(TimeZone(identifier: name))
    var t: Int64 = 946_684_800  // 2000-01-01
    while t < 1_893_456_000 {  // 2030-01-01
      let expected = zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(t)))
      #expect(Int(rules.offset(at: Instant(seconds: t))) == expected, "\(name) at \(t)")
      t += 86_400 * 3 + 3_607
    }
  }

  @Test func rejectsUnknownAndUnsafeNames() {
    #expect(throws: ZoneError.unknown("Mars/Olympus")) { try ZoneRules.load("Mars/Olympus") }
    #expect(throws: ZoneError.unknown("../../etc/passwd")) { try ZoneRules.load("../../etc/passwd") }
    #expect(throws: ZoneError.unknown("")) { try ZoneRules.load("") }
  }

  @Test func fixedZones() {
    #expect(ZoneRules.fixed(offsetSeconds: 32_400).identifier == "UTC+09:00")
    #expect(ZoneRules.fixed(offsetSeconds: -34_200).offset(at: Instant(seconds: 0)) == -34_200)
    #expect(ZoneRules.fixed(offsetSeconds: 0).identifier == "UTC")
  }
}
