import Foundation
import HealthModel
import Testing

@testable import HealthETL

/// The nights worth a look (Pipelines/docs/nightly.md, "Worth a look"), worked out by hand. All times
/// UTC; a night's date is its session's end date (day boundary 18:00).
@Suite struct SleepOdditiesTests {
  static func record(_ source: String, _ start: String, _ end: String, _ value: String = "AsleepUnspecified") -> String
  {
    """
     <Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="\(source)" startDate="\(start) +0000" endDate="\(end) +0000" value="HKCategoryValueSleepAnalysis\(value)"/>
    """
  }

  static func run(_ records: [String]) throws -> (SleepMart, SleepNights) {
    var mart: SleepMart?
    let result = try StageHarness.run(StageHarness.export(records.joined(separator: "\n")), zone: .named("UTC")) { _ in
      mart = SleepMart(destinations: [])
      return [mart!]
    }
    defer { result.remove() }
    let made = try #require(mart)
    return (made, SleepNights(nights: made.nights, sessions: made.sessions, flagged: [:]))
  }

  static func flagged(_ mart: SleepMart, _ rule: Oddities.Rule) -> [String] {
    (mart.oddities?.found.first { $0.rule == rule }?.items ?? []).compactMap { $0.date?.description }
  }

  @Test func aNightAsleepMoreThan16HoursOrInBedMoreThanADayIsFlagged() throws {
    let (mart, _) = try Self.run([
      // 2024-03-02: 16 h 00 min 01 s asleep (57,601 s > 57,600): flagged.
      Self.record("App", "2024-03-01 20:00:00", "2024-03-02 12:00:01"),
      // 2024-03-04: exactly 16 h asleep: not flagged (more than 16 h is).
      Self.record("App", "2024-03-03 20:00:00", "2024-03-04 12:00:00"),
      // 2024-03-06: 8 h asleep inside 25 h in bed (two manual entries overlapping into one): flagged.
      Self.record("Health", "2024-03-05 11:00:00", "2024-03-06 00:00:00", "InBed"),
      Self.record("Health", "2024-03-05 23:00:00", "2024-03-06 12:00:00", "InBed"),
      Self.record("App", "2024-03-05 23:00:00", "2024-03-06 07:00:00"),
    ])
    #expect(Self.flagged(mart, SleepOddities.longNights) == ["2024-03-02", "2024-03-06"])
    let items = try #require(mart.oddities?.found.first?.items)
    #expect(items[0].detail == "asleep 16 h 00 min, from 2024-03-01 20:00 to 2024-03-02 12:00; from App")
    #expect(items[1].detail.hasPrefix("asleep 8 h 00 min, in bed 25 h 00 min"))
  }

  @Test func oneSourcesIdenticalBlocksOnThreeNightsOfAWeekAreFlagged() throws {
    let (mart, _) = try Self.run([
      // Sleep Cycle: 12 h 00 min on the nights of 03-02, 03-03 and 03-08: the starts lie within
      // 7 days (03-01 20:00 … 03-07 20:00 is 6 days): all three flagged.
      Self.record("Sleep Cycle", "2024-03-01 20:00:00", "2024-03-02 08:00:00"),
      Self.record("Sleep Cycle", "2024-03-02 20:00:00", "2024-03-03 08:00:00"),
      Self.record("Sleep Cycle", "2024-03-07 20:00:00", "2024-03-08 08:00:00"),
      // Pillow: 12 h 00 min on 03-11, 03-19 and 03-27: never three within 7 days: none flagged.
      Self.record("Pillow", "2024-03-10 20:00:00", "2024-03-11 08:00:00"),
      Self.record("Pillow", "2024-03-18 20:00:00", "2024-03-19 08:00:00"),
      Self.record("Pillow", "2024-03-26 20:00:00", "2024-03-27 08:00:00"),
      // AutoSleep: 7 h 00 min twice and 7 h 00 min 01 s once in three nights: not three identical.
      Self.record("AutoSleep", "2024-04-01 23:00:00", "2024-04-02 06:00:00"),
      Self.record("AutoSleep", "2024-04-02 23:00:00", "2024-04-03 06:00:01"),
      Self.record("AutoSleep", "2024-04-03 23:00:00", "2024-04-04 06:00:00"),
      // The Watch's stages: 2 h pieces repeat, but a piece under 3 h is no block.
      Self.record("Watch", "2024-04-10 00:00:00", "2024-04-10 02:00:00", "AsleepCore"),
      Self.record("Watch", "2024-04-11 00:00:00", "2024-04-11 02:00:00", "AsleepCore"),
      Self.record("Watch", "2024-04-12 00:00:00", "2024-04-12 02:00:00", "AsleepCore"),
    ])
    #expect(Self.flagged(mart, SleepOddities.repeatedBlocks) == ["2024-03-02", "2024-03-03", "2024-03-08"])
    #expect(Self.flagged(mart, SleepOddities.longNights) == [])
    let first = try #require(mart.oddities?.found.first?.items.first)
    #expect(
      first.detail == "Sleep Cycle wrote 12 h 00 min asleep, exactly as long as on 2 other nights from "
        + "2024-03-01 to 2024-03-07")
  }

  @Test func theNightsFlaggedReachTheProductWithTheirReason() throws {
    var mart: SleepMart?
    var nights: SleepNights?
    final class Reader: Mart {
      var read: (SleepNights?) -> Void = { _ in }
      var needs: [ProductNeed] { [ProductNeed(SleepNights.self)] }
      func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary] {
        read(context.products.read(SleepNights.self))
        return []
      }
    }
    let reader = Reader()
    reader.read = { nights = $0 }
    let result = try StageHarness.run(
      StageHarness.export(Self.record("App", "2024-03-01 20:00:00", "2024-03-02 14:00:00")), zone: .named("UTC")
    ) { _ in
      mart = SleepMart(destinations: [])
      return [mart!, reader]
    }
    defer { result.remove() }
    let flagged = try #require(nights?.flagged)
    #expect(Array(flagged.keys) == [CivilDate(year: 2024, month: 3, day: 2)])
    #expect(flagged.values.first?.hasPrefix("longer than anyone sleeps: asleep 18 h 00 min") == true)
  }
}
