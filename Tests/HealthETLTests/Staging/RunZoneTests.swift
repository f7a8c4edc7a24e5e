import HealthETL
import HealthModel
import Testing

@Suite struct RunZoneTests {
  @Test func namesTheDatabaseDoesNotKnowAreSkipped() throws {
    var facts = ExportFacts()
    facts.timeZoneVotes = [("Mars/Olympus", 10), ("Europe/Berlin", 2)]
    #expect(try RunZone.resolve(.auto, facts: facts).rules.identifier == "Europe/Berlin")
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
