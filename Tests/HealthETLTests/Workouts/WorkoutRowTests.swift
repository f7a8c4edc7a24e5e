import Foundation
import HealthETL
import HealthModel
import Testing

/// `workouts.csv` fields and their fallback rules (Pipelines/docs/workouts.md, "Workouts"). Expected
/// values are worked out by hand in the comments.
@Suite struct WorkoutRowTests {
  typealias F = WorkoutFixture

  /// An iOS ≤ 15 workout: only the legacy attributes, in miles and Cal; heart rate from samples.
  @Test func legacyAttributesInMilesAndCal() throws {
    let start = "2019-05-04 07:00:00 -0700"
    let end = "2019-05-04 07:35:10 -0700"
    let body = [
      // Heart rate: every sample whose start lies in [start, end], all sources, de-duplicated.
      F.heartRate("200", at: "2019-05-04 06:59:59 -0700"),  // 1 s before: out
      F.heartRate("120", at: start),  // at start: in
      F.heartRate("150", at: "2019-05-04 07:10:00 -0700"),
      F.heartRate("150", at: "2019-05-04 07:10:00 -0700"),  // a duplicate record: counted once
      F.heartRate("135", at: "2019-05-04 07:20:00 -0700", source: "Polar"),  // another source: in
      F.heartRate("90", at: end),  // at end: in
      F.heartRate("60", at: "2019-05-04 07:35:11 -0700"),  // 1 s after: out
      F.workout(
        "Running", source: "Ann’s Apple Watch", duration: "30.5", start: start, end: end,
        extra: #"totalDistance="3.1" totalDistanceUnit="mi" totalEnergyBurned="312.5" totalEnergyBurnedUnit="Cal""#,
        children: [
          F.meta("HKIndoorWorkout", "0"), F.meta("HKTimeZone", "America/Los_Angeles"),
          F.meta("HKWeatherTemperature", "59 degF"), F.meta("HKWeatherHumidity", "56 %"),
          F.event("Pause", "2019-05-04 07:05:00 -0700"), F.event("Resume", "2019-05-04 07:07:00 -0700"),
          F.event("Lap", "2019-05-04 07:00:00 -0700"), F.event("Pause", "2019-05-04 07:15:00 -0700"),
          F.event("Resume", "2019-05-04 07:17:10 -0700"), F.event("Lap", "2019-05-04 07:12:00 -0700"),
          F.event("Lap", "2019-05-04 07:24:00 -0700"),
        ]),
    ].joined(separator: "\n")
    let run = try F.run(body, zone: .named("America/Los_Angeles"))
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    #expect(row.activityType == "Running")
    #expect(row.activityTypeRaw == 37)
    #expect(row.durationSeconds == 1830)  // 30.5 min × 60
    #expect(row.elapsedSeconds == 2110)  // 35 min 10 s
    #expect(row.distanceMeters == 4988.9664)  // 3.1 mi × 1609.344 m/mi, exactly
    #expect(row.energyKilocalories == 312.5)  // Cal is kcal
    // (120 + 150 + 135 + 90) / 4 = 495 / 4 = 123.75
    #expect(row.heartRateAverage == 123.75)
    #expect(row.heartRateMinimum == 90)
    #expect(row.heartRateMaximum == 150)
    #expect(row.weatherTemperatureCelsius == 15)  // (59 − 32) × 5/9 = 27 × 5/9
    #expect(row.weatherHumidity == 0.56)  // a 2017-style "56 %"
    #expect(row.indoor == false)
    #expect(row.events == "pause=2;resume=2;lap=3")  // event-type order, not document order
    #expect(row.activities == 0)
    #expect(row.route == nil)
    #expect(row.deviceModel == "Watch")
    #expect(row.serverRecord.deviceTypeCode == "WATCH")
    #expect(row.serverRecord.execRuntime == "1830")
    #expect(row.serverRecord.recordDate == "20190504")
    let csv = try run.text("workouts.csv")
    #expect(
      csv.contains(
        ",Running,37,2019-05-04T07:00:00-07:00,2019-05-04T07:35:10-07:00,1830,2110,4988.9664,312.5,123.75,90,150,"
          + "Ann’s Apple Watch,Watch,false,America/Los_Angeles,,15,0.56,pause=2;resume=2;lap=3,0,,,,,,,,,,"
          + ",,,,totalDistance,samples,,,,,,,,,\n"))
  }

  /// An iOS 16+ workout with two WorkoutActivity children: the statistics inside the activities
  /// repeat the workout's and must not be added again; the activities' events are not counted.
  @Test func workoutActivitiesCountOnce() throws {
    let start = "2024-01-02 06:00:00 +0000"
    let half = "2024-01-02 06:15:00 +0000"
    let end = "2024-01-02 06:31:40 +0000"
    func activity(_ from: String, _ to: String) -> String {
      let heartRate = F.statistic(
        "HeartRate", start: from, end: to, average: "140", minimum: "100", maximum: "170", unit: "count/min")
      return """
        <WorkoutActivity uuid="0C822588-0470-4F37-9676-C324BF454FBE" startDate="\(from)" endDate="\(to)">
          \(F.event("Segment", from, minutes: "5"))
          \(F.statistic("DistanceWalkingRunning", start: from, end: to, sum: "2.5", unit: "km"))
          \(F.statistic("ActiveEnergyBurned", start: from, end: to, sum: "150", unit: "kcal"))
          \(heartRate)
        </WorkoutActivity>
        """
    }
    let body = [
      F.heartRate("60", at: "2024-01-02 06:10:00 +0000"),  // the statistic wins over samples
      F.workout(
        "Running", duration: "1800", durationUnit: "s", start: start, end: end,
        children: [
          F.meta("HKIndoorWorkout", "1"), F.meta("HKElevationAscended", "4550 cm"),
          F.meta("HKWeatherHumidity", "6900 %"), F.meta("HKWeatherTemperature", "21.5 degC"),
          F.event("Segment", start, minutes: "5"), F.event("Segment", half, minutes: "5"),
          activity(start, half), activity(half, end),
          F.statistic("DistanceWalkingRunning", start: start, end: end, sum: "5.012", unit: "km"),
          F.statistic("ActiveEnergyBurned", start: start, end: end, sum: "301.5", unit: "kcal"),
          F.statistic("BasalEnergyBurned", start: start, end: end, sum: "80", unit: "kcal"),
          F.statistic(
            "HeartRate", start: start, end: end, average: "142.5", minimum: "98", maximum: "171", unit: "count/min"),
          """
          <WorkoutRoute sourceName="Apple Watch" startDate="\(start)" endDate="\(end)">
            \(F.meta("HKMetadataKeySyncVersion", "2"))
            <FileReference path="/workout-routes/route_2024-01-02_6.31am.gpx"/>
          </WorkoutRoute>
          """,
          F.meta("HKIndoorWorkout", "1"),  // metadata repeated after the route, as real exports do
        ]),
    ].joined(separator: "\n")
    let run = try F.run(body)
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    #expect(row.distanceMeters == 5012)  // 5.012 km, not 5.012 + 2 × 2.5
    #expect(row.energyKilocalories == 301.5)  // active only, not + 2 × 150, not basal
    #expect(row.heartRateAverage == 142.5)
    #expect(row.heartRateMinimum == 98)
    #expect(row.heartRateMaximum == 171)
    #expect(row.activities == 2)
    #expect(row.events == "segment=2")
    #expect(row.indoor == true)
    #expect(row.elevationAscendedMeters == 45.5)  // 4550 cm / 100
    #expect(row.weatherHumidity == 0.69)  // 6900 % → 69 % → 0.69
    #expect(row.weatherTemperatureCelsius == 21.5)
    #expect(row.route == "/workout-routes/route_2024-01-02_6.31am.gpx")
    #expect(row.durationSeconds == 1800)
    #expect(row.elapsedSeconds == 1900)

    let objects = try JSONSerialization.jsonObject(with: Data(try run.text("workouts.json").utf8)) as? [[String: Any]]
    let object = try #require(objects?.first)
    #expect(object.count == WorkoutTables.workouts.columnNames.count)
    #expect(object["indoor"] as? Bool == true)
    #expect(object["distance_m"] as? Double == 5012)
    #expect(object["activity_type_raw"] as? Int == 37)
    #expect(object["pool_length_m"] is NSNull)
    #expect(object["strokes_freestyle"] is NSNull)
  }

  /// Each field falls back on its own: distance from a statistic, energy from the attribute.
  @Test func fieldsFallBackIndependently() throws {
    let start = "2022-10-01 10:00:00 +0000"
    let end = "2022-10-01 11:00:00 +0000"
    let body = F.workout(
      "Cycling", duration: "60", start: start, end: end,
      extra: #"totalDistance="99" totalDistanceUnit="km" totalEnergyBurned="2092" totalEnergyBurnedUnit="kJ""#,
      children: [
        F.statistic("DistanceCycling", start: start, end: end, sum: "25.4", unit: "km"),
        F.statistic("HeartRate", start: start, end: end, average: "131", unit: "count/min"),
        F.meta("HKWeatherHumidity", "10000 %"), F.meta("HKLapLength", "25 yd"),
      ])
    let run = try F.run(body)
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    #expect(row.distanceMeters == 25400)  // the statistic, not totalDistance
    #expect(row.energyKilocalories == 500)  // 2092 kJ / 4.184 kJ/kcal
    #expect(row.heartRateAverage == 131)
    // No minimum/maximum in the statistic and no samples: empty, never 0.
    #expect(row.heartRateMinimum == nil)
    #expect(row.heartRateMaximum == nil)
    #expect(row.weatherHumidity == 1)  // 10000 % → 100 % → 1
    #expect(row.poolLengthMeters == 22.86)  // 25 yd × 0.9144 m/yd
    #expect(row.indoor == nil)
    #expect(row.events == "")
  }

  @Test func humidityScaling() throws {
    // "6900 %" → 0.69 and "56 %" → 0.56 (Pipelines/docs/workouts.md, "Workout edge cases");
    // "5700 %" → 0.57; exactly 100 % stays 1.
    for (text, expected) in [("6900 %", 0.69), ("56 %", 0.56), ("5700 %", 0.57), ("100 %", 1.0), ("0 %", 0.0)] {
      let body = F.workout(
        "Walking", start: "2024-01-02 06:00:00 +0000", end: "2024-01-02 06:10:00 +0000",
        children: [F.meta("HKWeatherHumidity", text)])
      let run = try F.run(body)
      defer { run.result.remove() }
      #expect(run.rows.first?.weatherHumidity == expected, "\(text)")
    }
  }

  @Test func noDataIsEmptyNeverZero() throws {
    let body = F.workout(
      "Other", source: "Strava", device: nil, start: "2024-01-02 06:00:00 +0000", end: "2024-01-02 06:10:00 +0000")
    let run = try F.run(body)
    defer { run.result.remove() }
    let csv = try run.text("workouts.csv")
    let line = try #require(csv.split(separator: "\n").dropFirst().first)
    // id, Other, 3000, start, end, then: no duration, 600 s elapsed, and nothing else but the
    // source, an empty events list and 0 activities (a count).
    #expect(
      line.hasSuffix(
        ",Other,3000,2024-01-02T06:00:00+00:00,2024-01-02T06:10:00+00:00,,600,,,,,,Strava,,,,,,,,0,,,,,,,,,,"
          + String(repeating: ",", count: 14)))
    let record = try #require(run.records.first)
    #expect(record.execRuntime == "600")
  }

  @Test func rowsAreInStartOrderAndRerunsAreByteIdentical() throws {
    let body = [
      F.workout("Walking", start: "2024-01-03 06:00:00 +0000", end: "2024-01-03 06:10:00 +0000"),
      F.workout("Running", start: "2024-01-02 06:00:00 +0000", end: "2024-01-02 06:10:00 +0000"),
      // Same start as the next one: the id decides.
      F.workout("Yoga", source: "B", start: "2024-01-01 06:00:00 +0000", end: "2024-01-01 06:10:00 +0000"),
      F.workout("Yoga", source: "A", start: "2024-01-01 06:00:00 +0000", end: "2024-01-01 06:10:00 +0000"),
      // A copy (same source, type, start, end): one workout.
      F.workout("Walking", duration: "9", start: "2024-01-03 06:00:00 +0000", end: "2024-01-03 06:10:00 +0000"),
    ].joined(separator: "\n")
    let first = try F.run(body)
    defer { first.result.remove() }
    #expect(first.rows.map(\.activityType) == ["Yoga", "Yoga", "Running", "Walking"])
    #expect(first.rows[0].id < first.rows[1].id)
    // The first copy in document order is kept (no duration attribute).
    #expect(first.rows[3].durationSeconds == nil)
    let second = try F.run(body)
    defer { second.result.remove() }
    for file in ["workouts.csv", "workouts.json", "workout_records.json", "swim_laps.csv"] {
      #expect(try first.text(file) == second.text(file), "\(file)")
    }
  }

  @Test func outputsFollowThePipeline() throws {
    let body = F.workout("Running", start: "2024-01-02 06:00:00 +0000", end: "2024-01-02 06:10:00 +0000")
    let outputs = [
      WorkoutMart.Output(table: .workouts, file: "w/all.ndjson", format: .ndjson),
      WorkoutMart.Output(table: .records, file: "records.json", format: .json),
    ]
    let run = try F.run(body, outputs: outputs)
    defer { run.result.remove() }
    #expect(run.result.outputs.map(\.path) == ["w/all.ndjson", "records.json"])
    let line = try run.text("w/all.ndjson")
    #expect(line.hasPrefix("{\"local_time\": \"2024-01-02 06:00:00\", \"id\": \"") && line.hasSuffix("}\n"))
    #expect(!FileManager.default.fileExists(atPath: run.result.directory.appendingPathComponent("workouts.csv").path))
  }
}
