import HealthETL
import HealthExtract
import HealthModel
import Testing

@Suite struct RecordNormalizerTests {
  static let steps = "HKQuantityTypeIdentifierStepCount"

  @Test func duplicatesCountOnceAndTheFirstIsKept() throws {
    let body = [
      Staging.record(Self.steps, value: "152", created: "2024-01-01 10:06:00 +0000"),
      // Same key, other creation date, device and metadata: the same sample.
      Staging.record(
        Self.steps, value: "152", created: "2024-01-02 08:00:00 +0000", device: "&lt;&lt;HKDevice: 0x1&gt;, name:X&gt;",
        metadata: [("HKWasUserEntered", "0")]),
      // A different value is a different sample.
      Staging.record(Self.steps, value: "153"),
    ].joined(separator: "\n")
    let (normalizer, stage) = try Staging.run(body)
    #expect(stage.rows.count == 2)
    #expect(stage.rows[0].value == 152)
    #expect(stage.rows[0].created == Instant(seconds: 1_704_103_560).seconds)  // 2024-01-01T10:06:00Z
    #expect(stage.rows[0].metadata.isEmpty)
    #expect(normalizer.duplicateSamples.reduce(0, +) == 1)
    #expect(normalizer.distinctSamples.reduce(0, +) == 2)
    #expect(normalizer.recordsRead.reduce(0, +) == 3)
  }

  @Test func correlationChildrenCountOnce() throws {
    let systolic = Staging.record(
      "HKQuantityTypeIdentifierBloodPressureSystolic", source: "Withings", value: "120", unit: "mmHg")
    let diastolic = Staging.record(
      "HKQuantityTypeIdentifierBloodPressureDiastolic", source: "Withings", value: "80", unit: "mmHg")
    let body = """
      \(systolic)
      <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Withings" startDate="2024-01-01 10:00:00 +0000" endDate="2024-01-01 10:05:00 +0000">
      \(systolic)
      \(diastolic)
      </Correlation>
      """
    let (normalizer, stage) = try Staging.run(body)
    // Systolic appears twice (top level and child), diastolic only as a child: two samples.
    #expect(stage.rows.map(\.type).sorted() == ["BloodPressureDiastolic", "BloodPressureSystolic"])
    #expect(stage.rows.first { $0.type == "BloodPressureDiastolic" }?.inCorrelation == true)
    #expect(normalizer.elementCounts[ExportElement.record.rawValue] == 3)
  }

  @Test func valuesAreConvertedAndCategoriesNamed() throws {
    let body = [
      Staging.record("HKQuantityTypeIdentifierDistanceWalkingRunning", value: "3.1", unit: "mi"),
      Staging.record("HKQuantityTypeIdentifierBodyTemperature", value: "98.6", unit: "degF"),
      Staging.record("HKCategoryTypeIdentifierSleepAnalysis", value: "HKCategoryValueSleepAnalysisAsleep", unit: nil),
      Staging.record("HKCategoryTypeIdentifierMindfulSession", value: nil, unit: nil),
    ].joined(separator: "\n")
    let (_, stage) = try Staging.run(body)
    #expect(abs(stage.rows[0].value - 4988.9664) < 1e-9)
    #expect(abs(stage.rows[1].value - 37) < 1e-9)
    #expect(stage.rows[2].category == "asleepUnspecified")
    #expect(stage.rows[3].category == "notApplicable")
  }

  @Test func rejectionsAreCountedPerReasonWithLines() throws {
    let body = [
      Staging.record(Self.steps, value: "abc"),
      Staging.record(Self.steps, value: "1", start: "2024-01-01T10:00:00Z"),
      Staging.record(Self.steps, value: nil),
      Staging.record(Self.steps, value: "5", start: "2024-01-01 11:00:00 +0000", end: "2024-01-01 10:00:00 +0000"),
      "<Record sourceName=\"Watch\" startDate=\"2024-01-01 10:00:00 +0000\" endDate=\"2024-01-01 10:00:00 +0000\"/>",
      Staging.record(Self.steps, value: "7"),
    ].joined(separator: "\n")
    let (normalizer, stage) = try Staging.run(body)
    #expect(stage.rows.count == 1)
    #expect(normalizer.rejections.counts["non-numeric value"] == 1)
    #expect(normalizer.rejections.counts["unparseable date"] == 1)
    #expect(normalizer.rejections.counts["missing attribute"] == 2)
    #expect(normalizer.rejections.counts["end before start"] == 1)
    // The body starts on line 3 of the document.
    #expect(normalizer.rejections.examples["non-numeric value"]?.first?.line == 3)
    #expect(normalizer.rejections.examples["unparseable date"]?.first?.line == 4)
    #expect(normalizer.rejections.examples["unparseable date"]?.first?.detail.contains("2024-01-01T10:00:00Z") == true)
  }

  @Test func timeZoneVotesAreOnePerDistinctElement() throws {
    let tokyo = [("HKTimeZone", "Asia/Tokyo"), ("HKTimeZone", "Asia/Tokyo")]
    let body = [
      Staging.record(Self.steps, value: "1", metadata: tokyo),
      Staging.record(Self.steps, value: "1", metadata: tokyo),  // duplicate: no second vote
      Staging.record(Self.steps, value: "2", metadata: [("HKTimeZone", "Europe/Paris")]),
      Staging.record(Self.steps, value: "3", metadata: [("HKTimeZone", "Europe/Paris")]),
      Staging.record(Self.steps, value: "4", metadata: [("HKTimeZone", "Asia/Tokyo")]),
    ].joined(separator: "\n")
    let (normalizer, _) = try Staging.run(body)
    #expect(normalizer.facts.timeZoneVotes.map(\.name) == ["Asia/Tokyo", "Europe/Paris"])
    #expect(normalizer.facts.timeZoneVotes.map(\.votes) == [2, 2])
    // A tie goes to the value seen first.
    let zone = try RunZone.resolve(.auto, facts: normalizer.facts)
    #expect(zone.rules.identifier == "Asia/Tokyo")
  }

  @Test func workoutCopiesCollapse() throws {
    let workout = """
      <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="30" durationUnit="min" sourceName="Connect" startDate="2024-01-01 10:00:00 +0000" endDate="2024-01-01 10:35:00 +0000">
       <MetadataEntry key="HKTimeZone" value="Europe/Paris"/>
       <WorkoutActivity uuid="A" startDate="2024-01-01 10:00:00 +0000" endDate="2024-01-01 10:35:00 +0000">
        <WorkoutEvent type="HKWorkoutEventTypeLap" date="2024-01-01 10:10:00 +0000"/>
        <WorkoutStatistics type="HKQuantityTypeIdentifierHeartRate" startDate="2024-01-01 10:00:00 +0000" endDate="2024-01-01 10:35:00 +0000" average="150" minimum="120" maximum="170" unit="count/min"/>
       </WorkoutActivity>
       <WorkoutEvent type="HKWorkoutEventTypePause" date="2024-01-01 10:20:00 +0000"/>
       <WorkoutRoute sourceName="Connect" startDate="2024-01-01 10:00:00 +0000" endDate="2024-01-01 10:35:00 +0000"><FileReference path="/workout-routes/route_1.gpx"/></WorkoutRoute>
      </Workout>
      """
    let (normalizer, stage) = try Staging.run(Array(repeating: workout, count: 7).joined(separator: "\n"))
    #expect(stage.workouts.count == 1)
    #expect(normalizer.workoutCopies == 6)
    let first = try #require(stage.workouts.first)
    #expect(first.activities.count == 1)
    #expect(first.activities[0].events.count == 1)
    #expect(first.activities[0].statistics.first?.average == 150)
    #expect(first.events.map(\.type) == ["HKWorkoutEventTypePause"])
    #expect(first.routes.first?.filePath == "/workout-routes/route_1.gpx")
    #expect(normalizer.facts.timeZoneVotes.first?.votes == 1)
  }

  @Test func otherTopLevelElementsArePassedThrough() throws {
    let body = """
      <ActivitySummary dateComponents="2024-01-01" activeEnergyBurned="500" activeEnergyBurnedUnit="Cal"/>
      <Audiogram type="HKDataTypeIdentifierAudiogram" sourceName="Mimi" startDate="2024-01-01 10:00:00 +0000" endDate="2024-01-01 10:00:00 +0000"><SensitivityPoint frequencyValue="500" frequencyUnit="Hz"/></Audiogram>
      <FutureThing answer="42"/>
      """
    let (normalizer, stage) = try Staging.run(body)
    #expect(stage.generic.map(\.name) == ["ActivitySummary", "Audiogram", "FutureThing"])
    #expect(stage.generic[0].attributes.first { $0.name == "activeEnergyBurned" }?.value == "500")
    #expect(stage.generic[1].childCount == 1)
    #expect(normalizer.unknownElementCounts == ["FutureThing": 1])
  }
}
