import HealthETL
import HealthExtract
import HealthModel
import Testing

/// Values no body or device gives and dates no export holds data for are rejected at staging
/// (Pipelines/docs/input.md, "Bad input"), so one record cannot drive the outputs' size or text.
@Suite struct PlausibilityTests {
  static let heartRate = "HKQuantityTypeIdentifierHeartRate"
  static let exportDate = "<ExportDate value=\"2024-03-20 08:00:00 +0100\"/>"

  @Test func valuesOutsideTheirUnitsRangeAreRejectedWithTheRange() throws {
    let body = [
      Staging.record(Self.heartRate, value: "1e308", unit: "count/min"),
      Staging.record(Self.heartRate, value: "-1e308", unit: "count/min"),
      Staging.record(Self.heartRate, value: "-3", unit: "count/min"),
      // 400 bpm is the bound, kept; 6.67 Hz is 400.2 bpm, rejected.
      Staging.record(Self.heartRate, value: "400", unit: "count/min"),
      Staging.record(Self.heartRate, value: "6.67", unit: "count/s"),
      Staging.record("HKQuantityTypeIdentifierHeartRateVariabilitySDNN", value: "-40", unit: "ms"),
      // A wrist temperature is a deviation: -1.5 °C is kept.
      Staging.record("HKQuantityTypeIdentifierAppleSleepingWristTemperature", value: "-1.5", unit: "degC"),
      // Exports write fractions with the unit `%`: 0.97 is kept, 97 (9,700 %) is not.
      Staging.record("HKQuantityTypeIdentifierOxygenSaturation", value: "0.97", unit: "%"),
      Staging.record("HKQuantityTypeIdentifierOxygenSaturation", value: "97", unit: "%"),
      // Units kept as written have their ranges too: running power of -3 W is not a measurement.
      Staging.record("HKQuantityTypeIdentifierRunningPower", value: "-3", unit: "W"),
      Staging.record("HKQuantityTypeIdentifierVO2Max", value: "48.2", unit: "mL/min·kg"),
      // A unit HealthETL does not know: any magnitude up to 1e15.
      Staging.record("HKQuantityTypeIdentifierFutureThing", value: "-1e14", unit: "zorks"),
      Staging.record("HKQuantityTypeIdentifierFutureThing", value: "2e15", unit: "zorks"),
    ].joined(separator: "\n")
    let (normalizer, stage) = try Staging.run(body)
    #expect(stage.rows.map(\.value) == [400, -1.5, 0.97, 48.2, -1e14])
    #expect(normalizer.rejections.counts == ["implausible value": 8])
    let examples = try #require(normalizer.rejections.examples["implausible value"])
    #expect(examples.map(\.line) == [3, 4, 5, 7, 8])
    #expect(examples.allSatisfy { $0.element == "Record" })
    #expect(examples[0].detail == "HeartRate value=\"1e308\" is outside 0…400 count/min")
    #expect(examples[3].detail == "HeartRate value=\"6.67\" is outside 0…400 count/min")
    #expect(examples[4].detail == "HeartRateVariabilitySDNN value=\"-40\" is outside 0…10000 ms")
  }

  @Test func datesBefore2000OrPastTheExportDateAreRejected() throws {
    let body = [
      Self.exportDate,
      // 2000-01-01 00:00 UTC is the first second kept; a second earlier is not.
      Staging.record(
        Self.heartRate, value: "60", unit: "count/min", start: "2000-01-01 00:00:00 +0000",
        end: "2000-01-01 00:00:00 +0000"),
      Staging.record(
        Self.heartRate, value: "61", unit: "count/min", start: "2000-01-01 00:59:59 +0100",
        end: "2000-01-01 00:59:59 +0100"),
      Staging.record(Self.heartRate, value: "62", unit: "count/min", start: "0001-01-01 00:00:00 +0000"),
      Staging.record(Self.heartRate, value: "63", unit: "count/min", start: "1970-01-01 00:00:00 +0000"),
      // The export date is 2024-03-20 07:00 UTC: a day later is kept, a second more is not.
      Staging.record(
        Self.heartRate, value: "64", unit: "count/min", start: "2024-03-21 07:00:00 +0000",
        end: "2024-03-21 07:00:00 +0000"),
      Staging.record(
        Self.heartRate, value: "65", unit: "count/min", start: "2024-03-21 07:00:01 +0000",
        end: "2024-03-21 07:00:01 +0000"),
      Staging.record(
        Self.heartRate, value: "66", unit: "count/min", start: "2030-01-06 12:35:46 -0400",
        end: "2030-01-06 12:35:51 -0400"),
      WorkoutFixture.workout("Running", start: "1970-01-01 00:00:00 +0000", end: "1970-01-01 00:30:00 +0000"),
      WorkoutFixture.workout("Running", start: "2024-03-19 18:00:00 +0000", end: "2024-03-19 18:30:00 +0000"),
    ].joined(separator: "\n")
    let (normalizer, stage) = try Staging.run(body)
    #expect(stage.rows.map(\.value) == [60, 64])
    #expect(stage.workouts.count == 1)
    #expect(normalizer.rejections.counts == ["implausible date": 6])
    let examples = try #require(normalizer.rejections.examples["implausible date"])
    #expect(examples[0].detail == "startDate=\"2000-01-01 00:59:59 +0100\" is before 2000-01-01")
    #expect(examples[3].detail == "startDate=\"2024-03-21 07:00:01 +0000\" is more than a day after the export date")
    #expect(examples.last?.element == "Record")
    // Only the first five examples are kept: the workout is the sixth.
    #expect(normalizer.facts.first?.seconds == 946_684_800)
  }

  @Test func withoutAnExportDateTheRunsClockIsTheBound() throws {
    let (normalizer, stage) = try Staging.run(
      Staging.record(
        Self.heartRate, value: "60", unit: "count/min", start: "9999-01-01 00:00:00 +0000",
        end: "9999-01-01 00:00:00 +0000"))
    #expect(stage.rows.isEmpty)
    #expect(
      normalizer.rejections.examples["implausible date"]?.first?.detail
        == "startDate=\"9999-01-01 00:00:00 +0000\" is more than a day after this run's clock (the export has no ExportDate)"
    )
  }

  @Test func usableElementsCountWhatAJobCanUse() throws {
    let (none, _) = try Staging.run(Staging.record(Self.heartRate, source: "", value: "1e308", unit: "count/min"))
    #expect(none.usableElements == 0)
    let (rings, _) = try Staging.run("<ActivitySummary dateComponents=\"2024-01-01\" activeEnergyBurned=\"300\"/>")
    #expect(rings.usableElements == 1)
    let (twice, _) = try Staging.run(
      [Staging.record(Self.heartRate, unit: "count/min"), Staging.record(Self.heartRate, unit: "count/min")]
        .joined(separator: "\n"))
    #expect(twice.usableElements == 1)
  }
}
