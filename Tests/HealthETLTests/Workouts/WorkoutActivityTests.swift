import Foundation
import HealthETL
import HealthExtract
import HealthModel
import SyntheticExport
import Testing

/// `workout_activities.csv` (Pipelines/docs/workouts.md, "Multi-sport workouts"), on a triathlon written
/// by hand. Every expected value is read off the XML below.
struct WorkoutActivityTests {
  static let day = "2024-06-01"
  static func at(_ time: String) -> String { "\(day) \(time) +0000" }

  static func activity(_ type: String?, _ start: String, _ end: String, minutes: String, children: [String]) -> String {
    var text = "<WorkoutActivity uuid=\"UUID-\(start)\""
    if let type { text += " workoutActivityType=\"HKWorkoutActivityType\(type)\"" }
    text += " startDate=\"\(at(start))\" endDate=\"\(at(end))\" duration=\"\(minutes)\" durationUnit=\"min\">"
    return text + children.joined() + "</WorkoutActivity>"
  }

  static func heartRate(_ start: String, _ end: String, _ average: String, _ minimum: String, _ maximum: String)
    -> String
  {
    WorkoutFixture.statistic(
      "HeartRate", start: at(start), end: at(end), average: average, minimum: minimum, maximum: maximum,
      unit: "count/min")
  }

  static func energy(_ start: String, _ end: String, _ kcal: String) -> String {
    WorkoutFixture.statistic("ActiveEnergyBurned", start: at(start), end: at(end), sum: kcal, unit: "kcal")
  }

  /// Swim 30 min, T1 5 min, ride 60 min with a 5-minute pause, T2 5 min (no HeartRate statistic:
  /// two heart-rate samples, 150 and 160), run 30 min; the workout's own statistics hold the totals,
  /// the sums of the activities' (so adding both levels would double every total).
  static let triathlon = WorkoutFixture.workout(
    "SwimBikeRun", duration: "125", start: at("08:00:00"), end: at("10:10:00"),
    children: [
      WorkoutFixture.meta("HKTimeZone", "UTC"),
      WorkoutFixture.event("Segment", at("08:00:00"), minutes: "10"),
      WorkoutFixture.event("Pause", at("09:00:00")), WorkoutFixture.event("Resume", at("09:05:00")),
      WorkoutFixture.event("Segment", at("09:40:00"), minutes: "15"),
      WorkoutFixture.event("Segment", at("09:55:00"), minutes: "15"),
      activity(
        "Swimming", "08:00:00", "08:30:00", minutes: "30",
        children: [
          WorkoutFixture.event("Segment", at("08:00:00"), minutes: "10"),
          WorkoutFixture.statistic(
            "DistanceSwimming", start: at("08:00:00"), end: at("08:30:00"), sum: "1500", unit: "m"),
          energy("08:00:00", "08:30:00", "300"), heartRate("08:00:00", "08:30:00", "140", "120", "155"),
        ]),
      activity(
        "Transition", "08:30:00", "08:35:00", minutes: "5",
        children: [energy("08:30:00", "08:35:00", "20"), heartRate("08:30:00", "08:35:00", "130", "125", "150")]),
      activity(
        "Cycling", "08:35:00", "09:35:00", minutes: "55",
        children: [
          WorkoutFixture.event("Pause", at("09:00:00")), WorkoutFixture.event("Resume", at("09:05:00")),
          WorkoutFixture.statistic(
            "DistanceCycling", start: at("08:35:00"), end: at("09:35:00"), sum: "40", unit: "km"),
          energy("08:35:00", "09:35:00", "800"), heartRate("08:35:00", "09:35:00", "145", "130", "165"),
        ]),
      activity("Transition", "09:35:00", "09:40:00", minutes: "5", children: [energy("09:35:00", "09:40:00", "15")]),
      activity(
        "Running", "09:40:00", "10:10:00", minutes: "30",
        children: [
          WorkoutFixture.event("Segment", at("09:40:00"), minutes: "15"),
          WorkoutFixture.event("Segment", at("09:55:00"), minutes: "15"),
          WorkoutFixture.statistic(
            "DistanceWalkingRunning", start: at("09:40:00"), end: at("10:10:00"), sum: "10", unit: "km"),
          energy("09:40:00", "10:10:00", "450"), heartRate("09:40:00", "10:10:00", "160", "140", "175"),
        ]),
      WorkoutFixture.statistic("DistanceSwimming", start: at("08:00:00"), end: at("10:10:00"), sum: "1500", unit: "m"),
      WorkoutFixture.statistic("DistanceCycling", start: at("08:00:00"), end: at("10:10:00"), sum: "40", unit: "km"),
      WorkoutFixture.statistic(
        "DistanceWalkingRunning", start: at("08:00:00"), end: at("10:10:00"), sum: "10", unit: "km"),
      energy("08:00:00", "10:10:00", "1585"), heartRate("08:00:00", "10:10:00", "148.2", "120", "175"),
    ])

  static let body =
    WorkoutFixture.heartRate("150", at: at("09:36:00")) + "\n" + WorkoutFixture.heartRate("160", at: at("09:38:00"))
    + "\n" + triathlon

  @Test func theWorkoutRowKeepsTheTotalsOnce() throws {
    let run = try WorkoutFixture.run(Self.body)
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    #expect(row.activityType == "SwimBikeRun")
    #expect(row.activities == 5)
    // 1500 m + 40 km + 10 km from the workout's own statistics; the activities' would double it.
    #expect(row.distanceMeters == 51_500)
    #expect(row.energyKilocalories == 1585)
    #expect(row.heartRateAverage == 148.2)
    #expect(row.events == "pause=1;resume=1;segment=3")
    #expect(row.durationSeconds == 7500)
    #expect(row.elapsedSeconds == 7800)
  }

  @Test func oneRowPerActivityWithItsOwnTypeTimesAndStatistics() throws {
    let run = try WorkoutFixture.run(Self.body)
    defer { run.result.remove() }
    let rows = try #require(run.rows.first).activityRows
    #expect(rows.map(\.activity) == [1, 2, 3, 4, 5])
    #expect(rows.map(\.activityType) == ["Swimming", "Transition", "Cycling", "Transition", "Running"])
    #expect(rows.map(\.activityTypeRaw) == [46, 83, 13, 83, 37])
    #expect(rows.allSatisfy { $0.activityTypeFrom == "activity" })
    #expect(rows.map(\.durationSeconds) == [1800, 300, 3300, 300, 1800])
    #expect(rows.map(\.elapsedSeconds) == [1800, 300, 3600, 300, 1800])
    #expect(rows.map(\.distanceMeters) == [1500, nil, 40_000, nil, 10_000])
    #expect(rows.map(\.energyKilocalories) == [300, 20, 800, 15, 450])
    #expect(rows.map(\.events) == ["segment=1", "", "pause=1;resume=1", "", "segment=2"])
    #expect(rows.map(\.heartRateAverage) == [140, 130, 145, 155, 160])
    #expect(rows.map(\.heartRateMinimum) == [120, 125, 130, 150, 140])
    #expect(rows.map(\.heartRateMaximum) == [155, 150, 165, 160, 175])
    // T2 has no HeartRate statistic: the samples at 09:36 (150) and 09:38 (160).
    #expect(rows.map(\.heartRateFrom) == ["statistics", "statistics", "statistics", "samples", "statistics"])
    #expect(rows[0].uuid == "UUID-08:00:00")
    // The activities tile the workout: their energy adds up to the workout's 1585 kcal.
    #expect(rows.reduce(0) { $0 + ($1.energyKilocalories ?? 0) } == 1585)
  }

  @Test func theTableIsWrittenAsDeclared() throws {
    let run = try WorkoutFixture.run(Self.body)
    defer { run.result.remove() }
    let text = try run.text("workout_activities.csv")
    let lines = text.split(separator: "\n").map(String.init)
    #expect(lines.first == WorkoutTables.activities.columnNames.joined(separator: ","))
    #expect(lines.count == 6)
    let id = try #require(run.rows.first).id
    #expect(
      lines[3]
        == "2024-06-01 08:35:00,\(id),3,UUID-08:35:00,Cycling,13,activity,2024-06-01T08:35:00+00:00,"
        + "2024-06-01T09:35:00+00:00,3300,3600,40000,800,145,130,165,statistics,pause=1;resume=1")
  }

  /// A multi-sport workout is one server record, like every workout: its own type's code, its own
  /// times and `duration` — the same seven fields a single-sport workout gets.
  @Test func aTriathlonIsOneServerRecord() throws {
    let run = try WorkoutFixture.run(Self.body)
    defer { run.result.remove() }
    #expect(run.records.count == 1)
    let record = try #require(run.records.first)
    #expect(
      record.fieldValues == [
        "20240601", "SERVER999", "20240601080000", "20240601101000", "7500", "WATCH", try #require(run.rows.first).id,
      ])
  }

  /// An activity without its own type has its workout's (every real export seen so far).
  @Test func anActivityWithoutATypeHasItsWorkouts() throws {
    let body = WorkoutFixture.workout(
      "Running", duration: "20", start: Self.at("07:00:00"), end: Self.at("07:20:00"),
      children: [Self.activity(nil, "07:00:00", "07:20:00", minutes: "20", children: [])])
    let run = try WorkoutFixture.run(body)
    defer { run.result.remove() }
    let row = try #require(run.rows.first?.activityRows.first)
    #expect(row.activityType == "Running")
    #expect(row.activityTypeFrom == "workout")
    #expect(row.distanceMeters == nil)
    #expect(row.heartRateFrom == nil)
  }
}

/// The triathlons of `healthetl sample --profile multisport`: properties every one must have.
struct WorkoutActivitySampleTests {
  @Test func generatedTriathlonsSplitIntoTheirLegsAndKeepTheirTotals() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("healthetl-tri-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    var options = SyntheticExportOptions(days: 28, seed: 5)
    options.profile = .multisport
    let path = folder.appendingPathComponent("export.xml").path
    _ = try SyntheticExportGenerator.write(options, to: path)
    let run = try WorkoutFixture.run(.path(path))
    defer { run.result.remove() }
    let triathlons = run.rows.filter { $0.activityType == "SwimBikeRun" }
    #expect(triathlons.count >= 2)
    for row in triathlons {
      let legs = row.activityRows
      #expect(legs.map(\.activityType) == ["Swimming", "Transition", "Cycling", "Transition", "Running"])
      #expect(legs.first?.start == row.start && legs.last?.end == row.end)
      #expect(zip(legs.dropFirst(), legs).allSatisfy { $0.start == $1.end })
      #expect(legs.reduce(0) { $0 + $1.elapsedSeconds! } == row.elapsedSeconds)
      #expect(abs(legs.reduce(0) { $0 + $1.durationSeconds! } - row.durationSeconds!) < 1e-6)
      // The workout's distance is its own three statistics, the same texts as the legs'.
      #expect(abs(legs.reduce(0) { $0 + ($1.distanceMeters ?? 0) } - row.distanceMeters!) < 1e-6)
      // Each leg's energy is rounded to 0.001 kcal on its own: five roundings apart at most.
      #expect(abs(legs.reduce(0) { $0 + $1.energyKilocalories! } - row.energyKilocalories!) <= 0.0025 + 1e-9)
      #expect(legs.allSatisfy { $0.heartRateFrom == "statistics" })
      #expect(row.serverRecord.execTypeCode == "SERVER999")
    }
  }
}
