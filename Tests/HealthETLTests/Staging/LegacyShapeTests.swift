import Foundation
import HealthETL
import HealthModel
import Testing

/// The record shapes of iOS 8–9 exports (Pipelines/docs/input.md, "The iOS 8–9 format"): category
/// values written as numbers or not at all, Withings' `Sleep Stage`, and discrete quantities
/// written as day aggregates. Every record here is written as those exports wrote it: `source=`,
/// compact dates, metadata as attributes.
@Suite struct LegacyShapeTests {
  /// One iOS 8–9 `Record`; `extra` is written as it is (attributes, a space in a name included).
  static func record(
    _ type: String, source: String, unit: String? = nil, start: String, end: String, value: String? = nil,
    extra: String = ""
  ) -> String {
    var text = "<Record type=\"\(type)\" source=\"\(source)\""
    if let unit { text += " unit=\"\(unit)\"" }
    text += " startDate=\"\(start)\" endDate=\"\(end)\""
    if let value { text += " value=\"\(value)\"" }
    return text + (extra.isEmpty ? "" : " " + extra) + "/>"
  }

  static let sleepType = "HKCategoryTypeIdentifierSleepAnalysis"

  static func sleep(_ source: String, _ start: String, _ end: String, value: String?, extra: String = "") -> String {
    record(sleepType, source: source, start: start, end: end, value: value, extra: extra)
  }

  // MARK: - Category values

  @Test func numbersAndAbsentValuesTakeHealthKitsRawValues() throws {
    let t = (start: "20150302220000+0000", end: "20150302230000+0000")
    let body = [
      Self.sleep("Mi Fit", t.start, t.end, value: "1"),
      Self.sleep("Alex’s iPhone", t.start, t.end, value: "0"),
      Self.sleep("Jawbone UP", t.start, t.end, value: nil),
      Self.sleep("Later", t.start, t.end, value: "HKCategoryValueSleepAnalysisAsleep"),
      Self.record("HKCategoryTypeIdentifierAppleStandHour", source: "Watch", start: t.start, end: t.end, value: "1"),
      Self.record("HKCategoryTypeIdentifierAppleStandHour", source: "Watch2", start: t.start, end: t.end),
      Self.record("HKCategoryTypeIdentifierMindfulSession", source: "Calm", start: t.start, end: t.end, value: "0"),
      Self.record("HKCategoryTypeIdentifierMindfulSession", source: "Calm2", start: t.start, end: t.end),
      Self.record(
        "HKCategoryTypeIdentifierCervicalMucusQuality", source: "Clue", start: t.start, end: t.end, value: "5"),
      Self.record(
        "HKCategoryTypeIdentifierOvulationTestResult", source: "Clue", start: t.start, end: t.end, value: "2"),
      // A type whose values HealthETL does not know keeps its number; so does a number that is
      // not a whole one.
      Self.record("HKCategoryTypeIdentifierSomethingNew", source: "App", start: t.start, end: t.end, value: "3"),
      Self.sleep("Odd", t.start, t.end, value: "1.5"),
    ].joined(separator: "\n")
    let (normalizer, stage) = try Staging.run(body)
    #expect(normalizer.rejections.counts.isEmpty)
    #expect(
      stage.rows.map { "\($0.source): \($0.category ?? "-")" } == [
        "Mi Fit: asleepUnspecified", "Alex’s iPhone: inBed", "Jawbone UP: inBed", "Later: asleepUnspecified",
        "Watch: idle", "Watch2: stood", "Calm: notApplicable", "Calm2: notApplicable", "Clue: eggWhite",
        "Clue: luteinizingHormoneSurge", "App: 3", "Odd: 1.5",
      ])
  }

  @Test func aNumberThatIsNoValueOfItsTypeIsRejected() throws {
    let body = [
      Self.sleep("Mi Fit", "20150302220000+0000", "20150302230000+0000", value: "7"),
      Self.record(
        "HKCategoryTypeIdentifierCervicalMucusQuality", source: "Clue", start: "20150302220000+0000",
        end: "20150302230000+0000", value: "0"),
      Self.sleep("Mi Fit", "20150302230000+0000", "20150302233000+0000", value: "1"),
    ].joined(separator: "\n")
    let (normalizer, stage) = try Staging.run(body)
    #expect(stage.rows.map(\.category) == ["asleepUnspecified"])
    #expect(normalizer.rejections.counts == ["unknown category value": 2])
    let examples = try #require(normalizer.rejections.examples["unknown category value"])
    // The body starts on line 3 of the document.
    #expect(examples.map(\.line) == [3, 4])
    #expect(examples[0].detail == "SleepAnalysis value=\"7\" is no raw value of the type (0…5)")
    #expect(examples[1].detail == "CervicalMucusQuality value=\"0\" is no raw value of the type (1…5)")
  }

  /// Withings writes `Sleep Stage="…"` (a space in the name, which the byte filter turns into
  /// `Sleep_Stage`) and no value.
  @Test func withingsSleepStagesMapToHealthKitStages() throws {
    let stages = ["Light", "Deep", "REM", "Awake", "deep ", "Unknown"]
    let body = stages.enumerated().map { index, stage in
      Self.sleep(
        "Health Mate", "2015030222\(index)000+0000", "2015030222\(index)500+0000", value: nil,
        extra: "Sleep Stage=\"\(stage)\" Health Mate App Version=\"2.6.2\"")
    }.joined(separator: "\n")
    let (normalizer, stage) = try Staging.run(body)
    #expect(normalizer.rejections.counts.isEmpty)
    #expect(
      stage.rows.map(\.category) == [
        "asleepCore", "asleepDeep", "asleepREM", "awake", "asleepDeep", "asleepUnspecified",
      ])
    // The stage is read, the app version is not.
    #expect(normalizer.notRead.attributes.counts == ["Record/@Health_Mate_App_Version": 6])
  }

  /// iOS 8 wrote `HKWasUserEntered="1"` as an attribute of the record: it is the metadata entry
  /// of that name, so the sample is typed in by hand (first in source priority), and the
  /// attribute is read, not tallied as unread. A `MetadataEntry` of it reads the same; a record
  /// with neither is not typed in.
  @Test func theUserEnteredAttributeMarksTheSampleTypedIn() throws {
    let type = "HKQuantityTypeIdentifierBodyMass"
    let body = [
      Self.record(
        type, source: "Alex’s iPhone", unit: "kg", start: "20150302080000+0100", end: "20150302080000+0100",
        value: "71.5", extra: "HKWasUserEntered=\"1\""),
      "<Record type=\"\(type)\" source=\"Scale\" unit=\"kg\" startDate=\"20150303080000+0100\" "
        + "endDate=\"20150303080000+0100\" value=\"71.2\"><MetadataEntry key=\"HKWasUserEntered\" value=\"1\"/></Record>",
      Self.record(
        type, source: "Scale", unit: "kg", start: "20150304080000+0100", end: "20150304080000+0100", value: "71.0"),
    ].joined(separator: "\n")
    let (normalizer, stage) = try Staging.run(body)
    #expect(stage.rows.map(\.userEntered) == [true, true, false])
    #expect(stage.rows[0].metadata == ["HKWasUserEntered": "1"])
    #expect(normalizer.notRead.attributes.total == 0)
  }

  /// Two Withings records of the same minutes with different stages are two samples: the stage
  /// is their raw value, part of their identity (Pipelines/docs/samples.md, "Duplicates").
  @Test func stagesAreTheRawValueOfTheIdentity() throws {
    let deep = Self.sleep(
      "Health Mate", "20150302220000+0000", "20150302223000+0000", value: nil, extra: "Sleep Stage=\"Deep\"")
    let light = Self.sleep(
      "Health Mate", "20150302220000+0000", "20150302223000+0000", value: nil, extra: "Sleep Stage=\"Light\"")
    let (normalizer, stage) = try Staging.run([deep, light, deep].joined(separator: "\n"))
    #expect(stage.rows.map(\.category) == ["asleepDeep", "asleepCore"])
    #expect(normalizer.duplicateSamples.reduce(0, +) == 1)
  }

  /// A night from four sources of 2015, as iOS 8–9 wrote them (UTC, `--tz UTC`):
  ///
  ///   iPhone, typed in:  value="0"  22:15–06:45  in bed
  ///   Jawbone UP:        no value   22:30–06:30  in bed
  ///   Mi Fit:            value="1"  23:00–03:00  asleep 14400 s
  ///                      value="1"  03:10–06:00  asleep 10200 s
  ///
  /// in bed = union(22:15–06:45, 22:30–06:30) = 8 h 30 min = 30600 s; asleep = unspecified =
  /// 14400 + 10200 = 24600 s (03:00–03:10 no stage covers: nothing); one session, dated by its
  /// end, 2015-03-03.
  ///
  /// The next night Withings alone, stages as `Sleep Stage` and no value:
  ///
  ///   Light 23:00–00:30 5400   Deep 00:30–01:30 3600   Light 01:30–04:00 9000
  ///   REM   04:00–05:00 3600   Awake 05:00–05:10  600  Light 05:10–06:30 4800
  ///   Unknown 06:30–06:40 600 (sleep of no known stage: unspecified)
  ///
  /// core = 5400 + 9000 + 4800 = 19200; deep 3600; REM 3600; unspecified 600;
  /// asleep = 19200 + 3600 + 3600 + 600 = 27000; awake 600; no in-bed record.
  @Test func nightsFromNumbersAbsentValuesAndWithingsStages() throws {
    let withings = "Health Mate App Version=\"2.6.2\" Sleep Stage="
    let records = [
      Self.sleep("Alex’s iPhone", "20150302221500+0000", "20150303064500+0000", value: "0"),
      Self.sleep("Jawbone UP", "20150302223000+0000", "20150303063000+0000", value: nil),
      Self.sleep("Mi Fit", "20150302230000+0000", "20150303030000+0000", value: "1"),
      Self.sleep("Mi Fit", "20150303031000+0000", "20150303060000+0000", value: "1"),
      Self.sleep(
        "Health Mate", "20150303230000+0000", "20150304003000+0000", value: nil, extra: withings + "\"Light\""),
      Self.sleep("Health Mate", "20150304003000+0000", "20150304013000+0000", value: nil, extra: withings + "\"Deep\""),
      Self.sleep(
        "Health Mate", "20150304013000+0000", "20150304040000+0000", value: nil, extra: withings + "\"Light\""),
      Self.sleep("Health Mate", "20150304040000+0000", "20150304050000+0000", value: nil, extra: withings + "\"REM\""),
      Self.sleep(
        "Health Mate", "20150304050000+0000", "20150304051000+0000", value: nil, extra: withings + "\"Awake\""),
      Self.sleep(
        "Health Mate", "20150304051000+0000", "20150304063000+0000", value: nil, extra: withings + "\"Light\""),
      Self.sleep(
        "Health Mate", "20150304063000+0000", "20150304064000+0000", value: nil, extra: withings + "\"Unknown\""),
    ]
    let output = try SleepTesting.run(records)
    #expect(output.days.map(\.date) == ["2015-03-03", "2015-03-04"])
    #expect(
      output.days[0].measures
        == SleepTesting.Measures(
          asleep: 24600, unspecified: 24600, inBed: 30600, sleepStart: "2015-03-02T23:00:00+00:00",
          sleepEnd: "2015-03-03T06:00:00+00:00", sources: "Mi Fit"))
    #expect(
      output.days[1].measures
        == SleepTesting.Measures(
          asleep: 27000, core: 19200, deep: 3600, rem: 3600, unspecified: 600, awake: 600,
          sleepStart: "2015-03-03T23:00:00+00:00", sleepEnd: "2015-03-04T06:40:00+00:00", sources: "Health Mate"))
    SleepTesting.checkInvariants(output)
  }

  // MARK: - Day aggregates

  /// Sleep Cycle's heart rate of 2015-05-31 as a day aggregate, in count/s and without a value:
  /// the average is the value, 1.11667 count/s × 60 = 67.0002 count/min; `min`, `max` and
  /// `recordCount` stay with the sample as metadata, as written.
  @Test func aDiscreteDayAggregateTakesItsAverage() throws {
    let body = [
      Self.record(
        "HKQuantityTypeIdentifierHeartRate", source: "Sleep Cycle", unit: "count/s", start: "20150531161900+0100",
        end: "20150601161900+0100", extra: "min=\"1.11667\" max=\"1.11667\" average=\"1.11667\" recordCount=\"1\""),
      // Any discrete type alike: 72.4 kg, the mean of two weighings of 72.1 and 72.7.
      Self.record(
        "HKQuantityTypeIdentifierBodyMass", source: "Health Mate", unit: "kg", start: "20150601000000+0200",
        end: "20150602000000+0200", extra: "min=\"72.1\" max=\"72.7\" average=\"72.4\" recordCount=\"2\""),
      // A cumulative record carries its total as `value`, and a count.
      Self.record(
        "HKQuantityTypeIdentifierStepCount", source: "Alex’s iPhone", unit: "count", start: "20150601080000+0200",
        end: "20150601081000+0200", value: "812", extra: "recordCount=\"3\" sessionId=\"17\""),
    ].joined(separator: "\n")
    let (normalizer, stage) = try Staging.run(body)
    #expect(normalizer.rejections.counts.isEmpty)
    try #require(stage.rows.count == 3)
    #expect(abs(stage.rows[0].value - 67.0002) < 1e-9)
    #expect(stage.rows[0].metadata == ["min": "1.11667", "max": "1.11667", "recordCount": "1"])
    #expect(stage.rows[1].value == 72.4)
    #expect(stage.rows[1].metadata == ["min": "72.1", "max": "72.7", "recordCount": "2"])
    #expect(stage.rows[2].value == 812)
    #expect(stage.rows[2].metadata == ["recordCount": "3", "sessionId": "17"])
    // Nothing of these records goes unread.
    #expect(normalizer.notRead.attributes.total == 0)
  }

  /// An average is not a total: a cumulative record without a value is still rejected.
  @Test func aCumulativeRecordWithOnlyAnAverageIsRejected() throws {
    let body = Self.record(
      "HKQuantityTypeIdentifierStepCount", source: "Alex’s iPhone", unit: "count", start: "20150601080000+0200",
      end: "20150601081000+0200", extra: "average=\"400\" recordCount=\"2\"")
    let (normalizer, stage) = try Staging.run(body)
    #expect(stage.rows.isEmpty)
    #expect(normalizer.rejections.counts == ["missing attribute": 1])
    #expect(normalizer.rejections.examples["missing attribute"]?.first?.detail == "StepCount has no value")
  }

  /// The samples table shows an aggregate as it was written: `raw_value` is the average it was
  /// read from, `raw_unit` count/s, `value` in count/min, `min`/`max`/`recordCount` in `metadata`.
  @Test func theSamplesTableShowsTheAggregate() throws {
    let body = Self.record(
      "HKQuantityTypeIdentifierHeartRate", source: "Sleep Cycle", unit: "count/s", start: "20150531161900+0100",
      end: "20150601161900+0100", extra: "min=\"1.1\" max=\"1.25\" average=\"1.11667\" recordCount=\"4\"")
    let result = try StageHarness.run(StageHarness.export(body), zone: .named("Europe/Berlin")) { transaction in
      [SampleMart(transaction: transaction, destinations: [.init(file: "samples.json", format: .json)])]
    }
    defer { result.remove() }
    let rows = try #require(
      try JSONSerialization.jsonObject(with: Data(result.text("samples.json").utf8)) as? [[String: Any]])
    try #require(rows.count == 1)
    let row = rows[0]
    #expect(row["type"] as? String == "HeartRate")
    #expect(row["value"] as? Double == 67.0002)
    #expect(row["unit"] as? String == "count/min")
    #expect(row["raw_value"] as? String == "1.11667")
    #expect(row["raw_unit"] as? String == "count/s")
    #expect(row["start"] as? String == "2015-05-31T17:19:00+02:00")
    let metadata = try #require(row["metadata"] as? [String: Any])
    #expect(metadata as? [String: String] == ["min": "1.1", "max": "1.25", "recordCount": "4"])
    // The column's description (`pipelines describe`, Pipelines/README.md) says so, rather than
    // "the value exactly as written", which the `value` attribute absent here is not.
    let column = try #require(SampleTables.samples.columns.first { $0.name == "raw_value" })
    #expect(column.meaning.contains("`average`") && column.meaning.contains("`Sleep Stage`"))
  }
}
