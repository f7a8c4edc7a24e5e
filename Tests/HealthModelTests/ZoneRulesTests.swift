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

/// The tz database's country tables and the votes of written offsets (Pipelines/README.md,
/// "Time zone").
@Suite struct ZoneCountryTests {
  @Test(arguments: [
    ("en_DE", "DE"), ("de_DE", "DE"), ("zh_Hans_CN", "CN"), ("en-US", "US"), ("en_US_POSIX", "US"),
    ("en_GB@calendar=gregorian", "GB"),
  ])
  func countriesOfLocales(locale: String, country: String) {
    #expect(ZoneCountries.country(ofLocale: locale) == country)
  }

  @Test func localesWithoutACountry() {
    for locale in ["en", "es_419", "", "_"] { #expect(ZoneCountries.country(ofLocale: locale) == nil, "\(locale)") }
  }

  /// zone.tab rows have one code; zone1970.tab rows several, and a zone is listed under its
  /// first country before the zones other countries share with it.
  @Test func tablesParse() {
    let zone1970 = """
      # comment
      CH,DE,LI\t+4723+00832\tEurope/Zurich\tBüsingen
      DE,DK,NO\t+5230+01322\tEurope/Berlin\tmost of Germany
      US\t+404251-0740023\tAmerica/New_York\tEastern (most areas)
      US\t+415100-0873900\tAmerica/Chicago\tCentral (most areas)
      """
    let tables = ZoneCountries(zoneTable: zone1970, countryTable: "#code\tname\nDE\tGermany\nUS\tUnited States\n")
    #expect(tables.zones(ofCountry: "DE") == ["Europe/Berlin", "Europe/Zurich"])
    #expect(tables.zones(ofCountry: "NO") == ["Europe/Berlin"])
    #expect(tables.zones(ofCountry: "US") == ["America/New_York", "America/Chicago"])
    #expect(tables.zones(ofCountry: "FR") == [])
    #expect(tables.name(ofCountry: "DE") == "Germany")
    #expect(tables.name(ofCountry: "FR") == nil)
  }

  @Test func theSystemTablesKnowGermany() throws {
    let tables = try #require(ZoneCountries.load())
    #expect(tables.zones(ofCountry: "DE").first == "Europe/Berlin")
    #expect(tables.name(ofCountry: "DE") == "Germany")
  }

  /// One vote per distinct (offset, written local date): 2015-03-29 at +0100 and at +0200 are
  /// two, a second date of the same pair none; the first instant of a pair is kept.
  @Test func votesAreDistinctOffsetAndDatePairs() {
    var written = WrittenOffsets()
    let dates = [
      "20150329013000+0100", "20150329033000+0200", "20150329200000+0200", "20150329013500+0100",
      "20150330000000+0200",
    ]
    for text in dates {
      let date = HealthDateParser.parse(text)!
      written.note(date.instant, offsetSeconds: date.offsetSeconds)
    }
    #expect(written.count == 3)
    #expect(written.distinctOffsets == [3600, 7200])
    let votes = written.votes
    #expect(votes.map(\.offsetSeconds) == [3600, 7200, 7200])
    #expect(
      votes.map(\.instant)
        == ["20150329013000+0100", "20150329033000+0200", "20150330000000+0200"].map {
          HealthDateParser.parse($0)!.instant
        })
  }

  @Test func theBestZoneMatchesMostVotes() throws {
    let berlin = try ZoneRules.load("Europe/Berlin")
    let london = try ZoneRules.load("Europe/London")
    // January at +0000 and July at +0100: London's offsets; Berlin's are +0100 and +0200.
    let votes = ["20150110120000+0000", "20150710120000+0100"].map { text in
      let date = HealthDateParser.parse(text)!
      return (instant: date.instant, offsetSeconds: date.offsetSeconds)
    }
    let best = try #require(ZoneMatch.best(of: [berlin, london], votes: votes))
    #expect(best.rules.identifier == "Europe/London" && best.matched == 2 && best.total == 2)
    // Berlin matches neither: it is at +0100 in January and +0200 in July.
    #expect(ZoneMatch.best(of: [berlin], votes: votes)?.matched == 0)
    #expect(ZoneMatch.best(of: [], votes: votes) == nil)
    #expect(ZoneMatch.best(of: [berlin], votes: []) == nil)
  }
}
