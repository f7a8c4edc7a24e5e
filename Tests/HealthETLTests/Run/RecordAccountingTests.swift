import Foundation
import HealthExtract
import HealthModel
import Testing

@testable import HealthETL

/// Every record accounted for (Pipelines/docs/nightly.md, "Every record accounted for"): per type, the
/// staging layer's counts against what the run's marts declare they used.
@Suite struct RecordAccountingTests {
  /// Nine records, worked out by hand:
  /// - StepCount: 3 read — one is an exact copy (duplicate), one has `value="abc"` (rejected,
  ///   non-numeric value), one distinct, which the statistics job uses;
  /// - HeartRate: 1 read, used by the statistics job;
  /// - SleepAnalysis: 2 read — one asleep (used by the sleep mart), one with a value that is not a
  ///   sleep stage (set aside by the sleep mart, which shows the type whole);
  /// - AppleStandHour: 1 read, which no mart of the run shows: not shown, `samples` would;
  /// - 1 record without a `type`: rejected before its type was read;
  /// - 1 MindfulSession of no length: set aside by the daily mart.
  /// 3 + 1 + 2 + 1 + 1 + 1 = 9 records, each in exactly one column.
  static let body = """
     <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count" startDate="2024-03-18 10:00:00 +0000" endDate="2024-03-18 10:05:00 +0000" value="300"/>
     <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count" startDate="2024-03-18 10:00:00 +0000" endDate="2024-03-18 10:05:00 +0000" value="300"/>
     <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count" startDate="2024-03-18 11:00:00 +0000" endDate="2024-03-18 11:05:00 +0000" value="abc"/>
     <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" startDate="2024-03-18 10:00:00 +0000" endDate="2024-03-18 10:00:00 +0000" value="61"/>
     <Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="Watch" startDate="2024-03-18 00:00:00 +0000" endDate="2024-03-18 06:00:00 +0000" value="HKCategoryValueSleepAnalysisAsleepCore"/>
     <Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="Withings" startDate="2024-03-18 00:00:00 +0000" endDate="2024-03-18 06:00:00 +0000" value="HKCategoryValueSleepAnalysisDozing"/>
     <Record type="HKCategoryTypeIdentifierAppleStandHour" sourceName="Watch" startDate="2024-03-18 10:00:00 +0000" endDate="2024-03-18 11:00:00 +0000" value="HKCategoryValueAppleStandHourStood"/>
     <Record sourceName="Phone" unit="count" startDate="2024-03-18 10:00:00 +0000" endDate="2024-03-18 10:05:00 +0000" value="1"/>
     <Record type="HKCategoryTypeIdentifierMindfulSession" sourceName="Watch" startDate="2024-03-18 12:00:00 +0000" endDate="2024-03-18 12:00:00 +0000"/>
    """

  /// A mart that claims to show every heart-rate sample and counts none: the defect the
  /// accounting exists to catch.
  final class ForgetfulMart: Mart {
    private var use = SampleUse()
    var sampleUse: SampleUse? { use }

    func consume(_ sample: borrowing Sample, catalog: SampleCatalog) {
      if catalog.typeInfo(sample.type).shortName == "HeartRate" { use.showsWhole(sample.type) }
    }

    func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary] { [] }
  }

  static func account(forgetful: Bool = false) throws -> (RecordAccounting, StageHarness.Result) {
    var marts: [any Mart] = []
    let result = try StageHarness.run(StageHarness.export(body), zone: .named("UTC")) { transaction in
      let queries = [
        try! StatisticsQuery(name: "steps", type: "StepCount", interval: "1d", options: ["sum"], destinations: []),
        try! StatisticsQuery(name: "hr", type: "HeartRate", interval: "1d", options: ["avg"], destinations: []),
      ]
      marts = [SleepMart(destinations: []), try! StatisticsMart(jobs: queries, transaction: transaction)]
      marts += [MindfulMart(destinations: []), DailyMart(destinations: [], contributions: [MindfulMinutes.self])]
      if forgetful { marts.append(ForgetfulMart()) }
      return marts
    }
    let samples = RecordAccounting.Pipeline(name: "samples") { _ in true }
    let stats = RecordAccounting.Pipeline(name: "stats") { $0 == "StepCount" }
    let accounting = RecordAccounting(
      normalizer: result.normalizer, uses: marts.compactMap(\.sampleUse), others: [stats, samples])
    return (accounting, result)
  }

  @Test func everyRecordIsInExactlyOneColumn() throws {
    let (accounting, result) = try Self.account()
    defer { result.remove() }
    let lines = Dictionary(uniqueKeysWithValues: accounting.lines.map { ($0.type, $0) })
    #expect(
      lines["StepCount"]
        == RecordAccounting.Line(type: "StepCount", read: 3, duplicates: 1, rejected: ["non-numeric value": 1], used: 1)
    )
    #expect(lines["HeartRate"] == RecordAccounting.Line(type: "HeartRate", read: 1, used: 1))
    #expect(
      lines["SleepAnalysis"]
        == RecordAccounting.Line(type: "SleepAnalysis", read: 2, used: 1, setAside: ["value is not a sleep stage": 1]))
    #expect(
      lines["AppleStandHour"]
        == RecordAccounting.Line(type: "AppleStandHour", read: 1, notShown: 1, shownBy: ["samples"]))
    #expect(
      lines["MindfulSession"]
        == RecordAccounting.Line(type: "MindfulSession", read: 1, setAside: ["lasts no time": 1]))
    #expect(accounting.withoutType == 1)
    let json = accounting.jsonObject()
    // 9 = 3 used + 1 duplicate + 2 rejected (one without a type) + 2 set aside + 1 not shown.
    #expect(json["records"] as? Int == 9)
    #expect(json["used"] as? Int == 3)
    #expect(json["duplicates"] as? Int == 1)
    #expect(json["rejected"] as? Int == 2)
    #expect(json["setAside"] as? Int == 2)
    #expect(json["notShown"] as? Int == 1)
    #expect(json["unaccounted"] as? Int == 0)
    #expect(
      accounting.summaryLines == [
        "not shown by this run: 1 AppleStandHour record; `--pipeline samples` writes each type to "
          + "samples/<Type>.csv (run.json: accounting)",
        "set aside: 1 MindfulSession (lasts no time), 1 SleepAnalysis (value is not a sleep stage) records; "
          + "see run.json (accounting)",
      ])
  }

  @Test func aMartThatClaimsATypeAndCountsNothingLeavesItsSamplesUnaccounted() throws {
    let (accounting, result) = try Self.account(forgetful: true)
    defer { result.remove() }
    // The statistics mart used the one heart-rate sample: the best claim wins, nothing is lost.
    #expect(accounting.lines.first { $0.type == "HeartRate" }?.unaccounted == 0)
    // Alone, the forgetful mart's claim leaves it unaccounted, and the run says so.
    let normalizer = result.normalizer
    let type = try #require(
      (0..<normalizer.catalog.typeCount).first {
        normalizer.catalog.typeInfo(Int32($0)).shortName == "HeartRate"
      })
    var claim = SampleUse()
    claim.showsWhole(Int32(type))
    let alone = RecordAccounting(normalizer: normalizer, uses: [claim], others: [])
    #expect(alone.lines.first { $0.type == "HeartRate" }?.unaccounted == 1)
    #expect(alone.unaccounted == 1)
    #expect(alone.summaryLines.last?.hasPrefix("not accounted for: 1 HeartRate record, a defect of HealthETL") == true)
  }

  @Test func theMostSpecificPipelineThatShowsEveryHiddenTypeIsNamed() throws {
    var marts: [any Mart] = []
    let body = """
       <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count" startDate="2024-03-18 10:00:00 +0000" endDate="2024-03-18 10:05:00 +0000" value="300"/>
      """
    let result = try StageHarness.run(StageHarness.export(body), zone: .named("UTC")) { _ in
      marts = [SleepMart(destinations: [])]
      return marts
    }
    defer { result.remove() }
    let accounting = RecordAccounting(
      normalizer: result.normalizer, uses: marts.compactMap(\.sampleUse),
      others: [
        .init(name: "stats") { $0 == "StepCount" }, .init(name: "samples") { _ in true },
      ])
    #expect(accounting.lines.first?.shownBy == ["stats", "samples"])
    #expect(accounting.summaryLines.first?.hasSuffix("`--pipeline stats` shows them (run.json: accounting)") == true)
  }

  /// The daily table's audio columns are computed by the daily mart itself from every sound
  /// sample (no statistic does it): its 2 headphone and 1 environmental samples are used, not
  /// "not shown" as they were while the mart counted nothing (the food-glucose-bp profile's 56
  /// and 672).
  @Test func theDailyAudioColumnsUseTheirSoundSamples() throws {
    var marts: [any Mart] = []
    let body = """
       <Record type="HKQuantityTypeIdentifierHeadphoneAudioExposure" sourceName="Phone" unit="dBASPL" startDate="2024-03-18 10:00:00 +0000" endDate="2024-03-18 10:30:00 +0000" value="70"/>
       <Record type="HKQuantityTypeIdentifierHeadphoneAudioExposure" sourceName="Phone" unit="dBASPL" startDate="2024-03-18 12:00:00 +0000" endDate="2024-03-18 12:30:00 +0000" value="74"/>
       <Record type="HKQuantityTypeIdentifierEnvironmentalAudioExposure" sourceName="Watch" unit="dBASPL" startDate="2024-03-18 10:00:00 +0000" endDate="2024-03-18 10:30:00 +0000" value="60"/>
      """
    let result = try StageHarness.run(StageHarness.export(body), zone: .named("UTC")) { _ in
      marts = [DailyMart(destinations: [])]
      return marts
    }
    defer { result.remove() }
    let accounting = RecordAccounting(normalizer: result.normalizer, uses: marts.compactMap(\.sampleUse), others: [])
    let lines = Dictionary(uniqueKeysWithValues: accounting.lines.map { ($0.type, $0) })
    #expect(
      lines["HeadphoneAudioExposure"] == RecordAccounting.Line(type: "HeadphoneAudioExposure", read: 2, used: 2))
    #expect(
      lines["EnvironmentalAudioExposure"]
        == RecordAccounting.Line(type: "EnvironmentalAudioExposure", read: 1, used: 1))
  }
}
