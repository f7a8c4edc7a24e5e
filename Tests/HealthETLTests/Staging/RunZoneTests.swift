import HealthETL
import HealthModel
import Testing

@Suite struct RunZoneTests {
  @Test func namesTheDatabaseDoesNotKnowAreSkipped() throws {
    var facts = ExportFacts()
    facts.timeZoneVotes = [("Mars/Olympus", 10), ("Europe/Berlin", 2)]
    let zone = try RunZone.resolve(.auto, facts: facts)
    #expect(zone.rules.identifier == "Europe/Berlin")
    #expect(zone.reason == "most frequent HKTimeZone metadata (2 of 12 votes)")
  }

  /// One HKTimeZone in the whole export (dogsheep's) is no majority: the reason says so.
  @Test func aSingleVoteIsNamedAsTheOnlyOne() throws {
    var facts = ExportFacts()
    facts.timeZoneVotes = [("America/Los_Angeles", 1)]
    #expect(try RunZone.resolve(.auto, facts: facts).reason == "the only HKTimeZone metadata (1 vote)")
  }

  @Test func fallsBackToTheExportDateOffsetThenTheFirstRecordThenUTC() throws {
    var facts = ExportFacts()
    facts.firstRecordOffset = -18_000
    #expect(try RunZone.resolve(.auto, facts: facts).rules.identifier == "UTC-05:00")
    facts.exportDateOffset = 3_600
    #expect(try RunZone.resolve(.auto, facts: facts).rules.identifier == "UTC+01:00")
    #expect(try RunZone.resolve(.auto, facts: ExportFacts()).rules.identifier == "UTC")
  }

  @Test func anExplicitZoneIsUsedAsGiven() throws {
    var facts = ExportFacts()
    facts.timeZoneVotes = [("Europe/Berlin", 2)]
    let zone = try RunZone.resolve(.named("America/Denver"), facts: facts)
    #expect(zone.rules.identifier == "America/Denver")
    #expect(zone.reason == "--tz America/Denver")
  }
}

/// The zone of an export without `HKTimeZone` from its locale's country and the offsets its dates
/// carry (Pipelines/docs/samples.md, "Time zone"): iOS 8–9 wrote each date with its own offset.
@Suite struct LocaleZoneTests {
  /// `yyyyMMddHHmmss±hhmm` as iOS 8–9 wrote dates.
  static func note(_ facts: inout ExportFacts, _ dates: [String]) {
    for text in dates {
      let date = HealthDateParser.parse(text)!
      facts.writtenOffsets.note(date.instant, offsetSeconds: date.offsetSeconds)
    }
  }

  /// Europe/Berlin went to summer time at 2015-03-29 01:00Z. Votes (distinct offset and written
  /// date): 03-02 +0100; 03-29 +0100 (01:30 local = 00:30Z, still winter); 03-29 +0200
  /// (03:30 local = 01:30Z, summer); 06-01 +0200 (its 18:00 record repeats the pair: no vote).
  /// Four votes, all matching Berlin's offset at their instants; Europe/Busingen matches them
  /// too, but the tz database lists Berlin first for DE.
  @Test func offsetsThatFollowDaylightSavingPickTheCountrysZone() throws {
    var facts = ExportFacts()
    facts.locale = "en_DE"
    facts.exportDateOffset = 7200
    Self.note(
      &facts,
      [
        "20150302080000+0100", "20150329013000+0100", "20150329033000+0200", "20150601120000+0200",
        "20150601180000+0200",
      ])
    #expect(facts.writtenOffsets.count == 4)
    let zone = try RunZone.resolve(.auto, facts: facts)
    #expect(zone.rules.identifier == "Europe/Berlin")
    #expect(
      zone.reason == "no HKTimeZone; locale en_DE (Germany) and 4 dates written at +0100/+0200 match Europe/Berlin")
    facts.locale = "de_DE"
    #expect(try RunZone.resolve(.auto, facts: facts).rules.identifier == "Europe/Berlin")
  }

  /// `yyyyMMddHHmmss±hhmm` as the export's `ExportDate`.
  static func exportDate(_ facts: inout ExportFacts, _ text: String) {
    let date = HealthDateParser.parse(text)!
    facts.exportDate = date.instant
    facts.exportDateOffset = date.offsetSeconds
  }

  /// An iPhone-only export since iOS 10: every date at +0100, the offset of its ExportDate
  /// (2015-12-20, winter). Berlin matches January and December, not July (2 of 3, under 99 %);
  /// but the one offset written is ExportDate's, and Berlin (first of DE; Busingen too is +0100
  /// in December) has it on the export day: Berlin is the guess, and the July date then lands at
  /// +0200 (2015-07-10 10:00Z is 12:00 in Berlin, not 11:00 as the fixed offset had it).
  @Test func oneOffsetAllYearAtTheExportDaysOffsetGuessesTheCountrysZone() throws {
    var facts = ExportFacts()
    facts.locale = "de_DE"
    Self.exportDate(&facts, "20151220090000+0100")
    Self.note(&facts, ["20150110120000+0100", "20150710120000+0100", "20151210120000+0100"])
    let zone = try RunZone.resolve(.auto, facts: facts)
    #expect(zone.rules.identifier == "Europe/Berlin")
    #expect(
      zone.reason
        == "no HKTimeZone; every date written at +0100, the offset of ExportDate: Europe/Berlin is a guess from locale de_DE (Germany) and that offset on the export day, the first of 2 zones of the country at +0100 then"
    )
    let july = HealthDateParser.parse("20150710120000+0100")!.instant
    #expect(zone.rules.offset(at: july) == 7200)
    #expect(zone.rules.offset(at: HealthDateParser.parse("20150110120000+0100")!.instant) == 3600)
  }

  /// en_US at -0500 all year: exported in January, the zones of the US at -0500 then are the ten
  /// of Eastern time (New York, Detroit, two of Kentucky, six of Indiana), New York first; exported
  /// in July, -0500 is Central daylight time, and Chicago comes first of its seven. Whether DST is
  /// in force on the export day decides.
  @Test func theExportDaysDaylightSavingDecidesTheGuess() throws {
    var facts = ExportFacts()
    facts.locale = "en_US"
    Self.exportDate(&facts, "20160115090000-0500")
    Self.note(&facts, ["20150110120000-0500", "20150710120000-0500"])
    var zone = try RunZone.resolve(.auto, facts: facts)
    #expect(zone.rules.identifier == "America/New_York")
    #expect(
      zone.reason
        == "no HKTimeZone; every date written at -0500, the offset of ExportDate: America/New_York is a guess from locale en_US (United States) and that offset on the export day, the first of 10 zones of the country at -0500 then"
    )
    Self.exportDate(&facts, "20160715090000-0500")
    zone = try RunZone.resolve(.auto, facts: facts)
    #expect(zone.rules.identifier == "America/Chicago")
    #expect(zone.reason.hasSuffix("the first of 7 zones of the country at -0500 then"))
  }

  /// en_AU at +0930 all year: Darwin keeps +0930 all year, so it matches every date written and is
  /// taken by the offsets alone, before any guess (Broken Hill and Adelaide, listed before it, are
  /// +1030 in the southern summer). Only when every date falls in the southern winter do Broken
  /// Hill and Adelaide match too, and Broken Hill is listed first.
  @Test func aZoneWithoutDaylightSavingThatMatchesEveryDateComesBeforeTheGuess() throws {
    var facts = ExportFacts()
    facts.locale = "en_AU"
    Self.exportDate(&facts, "20160715090000+0930")
    Self.note(&facts, ["20150110120000+0930", "20150710120000+0930"])
    let zone = try RunZone.resolve(.auto, facts: facts)
    #expect(zone.rules.identifier == "Australia/Darwin")
    #expect(
      zone.reason == "no HKTimeZone; locale en_AU (Australia) and 2 dates written at +0930 match Australia/Darwin")
  }

  /// The guess needs the one offset written to be ExportDate's: dates at +0100 exported at +0200
  /// (or dates of two offsets that no zone explains) keep the fixed offset of ExportDate.
  @Test func anOffsetOtherThanTheExportDaysKeepsTheFixedOffset() throws {
    var facts = ExportFacts()
    facts.locale = "de_DE"
    Self.exportDate(&facts, "20150720090000+0200")
    Self.note(&facts, ["20150110120000+0100", "20150710120000+0100", "20151210120000+0100"])
    #expect(try RunZone.resolve(.auto, facts: facts).rules.identifier == "UTC+02:00")
    // A country none of whose zones is at the offset on the export day: Germany at +0900.
    facts = ExportFacts()
    facts.locale = "de_DE"
    Self.exportDate(&facts, "20150720090000+0900")
    Self.note(&facts, ["20150110120000+0900", "20150710120000+0900"])
    let zone = try RunZone.resolve(.auto, facts: facts)
    #expect(zone.rules.identifier == "UTC+09:00")
    #expect(
      zone.reason
        == "no usable HKTimeZone; no zone of locale de_DE (Germany) matches the 2 dates written at +0900 (Europe/Berlin matches 0); fixed offset of ExportDate"
    )
  }

  /// One offset all year with no ExportDate instant to check it against: the fixed offset as
  /// before, and the reason says why.
  @Test func oneOffsetAllYearKeepsTheFixedOffset() throws {
    var facts = ExportFacts()
    facts.locale = "en_DE"
    facts.exportDateOffset = 3600
    Self.note(&facts, ["20150110120000+0100", "20150710120000+0100", "20151210120000+0100"])
    let zone = try RunZone.resolve(.auto, facts: facts)
    #expect(zone.rules.identifier == "UTC+01:00")
    #expect(
      zone.reason
        == "no usable HKTimeZone; no zone of locale en_DE (Germany) matches the 3 dates written at +0100 (Europe/Berlin matches 2); fixed offset of ExportDate"
    )
  }

  /// 99 winter days at +0100 (2015-11-01 to 2016-02-07, all before the 2016-03-27 switch) and one
  /// stray date at +0000: 99 of 100 votes match Berlin, which is 99 %, enough.
  @Test func aStrayOffsetDoesNotThrowTheZoneAway() throws {
    var facts = ExportFacts()
    facts.locale = "de_DE"
    let first = CivilDate(year: 2015, month: 11, day: 1).daysSinceEpoch * 86_400
    for day in 0..<99 {
      facts.writtenOffsets.note(Instant(seconds: first + Int64(day) * 86_400 + 39_600), offsetSeconds: 3600)
    }
    Self.note(&facts, ["20160208120000+0000"])
    let zone = try RunZone.resolve(.auto, facts: facts)
    #expect(zone.rules.identifier == "Europe/Berlin")
    #expect(
      zone.reason
        == "no HKTimeZone; locale de_DE (Germany) and 99 of 100 dates written at +0000/+0100 match Europe/Berlin")
    // Two strays are 98 %: not enough.
    Self.note(&facts, ["20160209120000+0000"])
    #expect(try RunZone.resolve(.auto, facts: facts).rules.identifier == "UTC")
  }

  /// Offsets of New York (EST -0500 in January, EDT -0400 in July) under en_US: the US has 29
  /// zones in zone.tab; New York, Detroit, Louisville and others match both votes, and New York is
  /// listed first.
  @Test func aCountryOfManyZonesTakesTheFirstThatMatches() throws {
    var facts = ExportFacts()
    facts.locale = "en_US"
    Self.note(&facts, ["20150110120000-0500", "20150710120000-0400"])
    #expect(try RunZone.resolve(.auto, facts: facts).rules.identifier == "America/New_York")
    // Pacific offsets: Los Angeles (Phoenix, -0700 all year, matches only July).
    facts = ExportFacts()
    facts.locale = "en_US"
    Self.note(&facts, ["20150110120000-0800", "20150710120000-0700"])
    #expect(try RunZone.resolve(.auto, facts: facts).rules.identifier == "America/Los_Angeles")
  }

  /// HKTimeZone comes first; a locale without a country, or no dates, changes nothing.
  @Test func otherwiseTheRulesAreAsBefore() throws {
    var facts = ExportFacts()
    facts.locale = "en_DE"
    facts.exportDateOffset = 3600
    Self.note(&facts, ["20150302080000+0100", "20150601120000+0200"])
    facts.timeZoneVotes = [("America/Denver", 1)]
    #expect(try RunZone.resolve(.auto, facts: facts).rules.identifier == "America/Denver")
    facts.timeZoneVotes = []
    facts.locale = "en"
    let zone = try RunZone.resolve(.auto, facts: facts)
    #expect(zone.rules.identifier == "UTC+01:00")
    #expect(zone.reason == "no usable HKTimeZone; fixed offset of ExportDate")
  }
}
