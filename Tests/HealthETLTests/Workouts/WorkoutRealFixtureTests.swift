import Foundation
import HealthETL
import HealthExtract
import HealthModel
import Testing

/// Workouts of the real exports in `../shared/fixtures/real` (SOURCES.md there says what each is).
@Suite(.enabled(if: StageHarness.realAvailable, "../shared/fixtures/real is not beside this checkout"))
struct WorkoutRealFixtureTests {
  /// Every real export with `Workout` elements.
  static let exports = [
    "bwassim__Health-Data-Analysis/data/export.zip",
    "jshrake__healthkit-to-sqlite/example/export.zip",
    "opendroid__hk/public/sampleexport.xml",
    "opendroid__hk/public/sampleexport-2.xml",
    "paulstaab__healthieR/inst/example_data/Export/apple_health_export/Export.xml",
    "paulstaab__healthieR/inst/example_data/Export.zip",
    "grll__apple-health-landing-zone/data/export.xml",
    "tdda__applehealthdata/testdata/export6s3sample.xml",
    "dogsheep__healthkit-to-sqlite/tests/export.xml",
    "dogsheep__healthkit-to-sqlite/tests/zip_contents/apple_health_export/export.xml",
  ]

  static let fragments = "NicolasReyrolle__apple-health-analyzer/tests/fixtures/exports/"

  static func path(_ relative: String) -> String { StageHarness.realRoot.appendingPathComponent(relative).path }

  /// The main XML of an export as text, read through the input layer only (no XML parsing).
  static func rawText(_ relative: String) throws -> String {
    let input = try ExportInput.open(path(relative))
    defer { input.close() }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = try buffer.withUnsafeMutableBytes { try input.read(into: $0) }
      if count == 0 { break }
      bytes += buffer[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// `yyyy-MM-dd HH:mm:ss ±hhmm` → epoch seconds, by hand.
  static func epoch(_ text: String) -> Int64 {
    let parts = text.split(separator: " ")
    let date = parts[0].split(separator: "-").map { Int64($0)! }
    let time = parts[1].split(separator: ":").map { Int64($0)! }
    let zone = parts[2]
    let sign: Int64 = zone.hasPrefix("-") ? -1 : 1
    let hours = Int64(zone.dropFirst().prefix(2))!
    let minutes = Int64(zone.dropFirst(3))!
    // Days from civil (Howard Hinnant's algorithm).
    let y = date[1] <= 2 ? date[0] - 1 : date[0]
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let m = date[1]
    let dayOfYear = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + date[2] - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    let days = era * 146_097 + dayOfEra - 719_468
    return days * 86_400 + time[0] * 3600 + time[1] * 60 + time[2] - sign * (hours * 3600 + minutes * 60)
  }

  /// Distinct workouts by their identity (source, type, start, end), counted with a regex.
  static func distinctWorkouts(in text: String) -> Int {
    var keys = Set<String>()
    for tag in text.matches(of: /<Workout\s[^>]*>/) {
      var attributes: [Substring: Substring] = [:]
      for match in tag.output.matches(of: /(\w+)="([^"]*)"/) { attributes[match.output.1] = match.output.2 }
      let key = [
        String(attributes["sourceName"]!), String(attributes["workoutActivityType"]!),
        String(epoch(String(attributes["startDate"]!))), String(epoch(String(attributes["endDate"]!))),
      ]
      keys.insert(key.joined(separator: "|"))
    }
    return keys.count
  }

  @Test func epochHelper() {
    // 2024-01-02 06:00:00 UTC is 1704175200, as in the documented id example (Pipelines/README.md,
    // "Workout identity"); 07:00 at +0100 is the same instant.
    #expect(Self.epoch("2024-01-02 06:00:00 +0000") == 1_704_175_200)
    #expect(Self.epoch("2024-01-02 07:00:00 +0100") == 1_704_175_200)
    #expect(Self.epoch("2024-01-01 22:00:00 -0800") == 1_704_175_200)
  }

  @Test(arguments: exports)
  func oneRowPerDistinctWorkout(_ relative: String) throws {
    let expected = Self.distinctWorkouts(in: try Self.rawText(relative))
    #expect(expected > 0)
    let run = try WorkoutFixture.run(.path(Self.path(relative)))
    defer { run.result.remove() }
    #expect(run.rows.count == expected, "\(relative)")
    #expect(run.records.count == expected)
    #expect(Set(run.rows.map(\.id)).count == expected)
    let lines = try run.text("workouts.csv").split(separator: "\n")
    #expect(lines.count == expected + 1)
  }

  @Test func garminCopiesCollapse() throws {
    let relative = "bwassim__Health-Data-Analysis/data/export.zip"
    let text = try Self.rawText(relative)
    // 60 Workout elements, of which the 2020-11-29 run is written 7 times.
    #expect(text.matches(of: /<Workout\s/).count == 60)
    #expect(text.matches(of: /startDate="2020-11-29 16:57:01 \+0100"/).count == 7)
    let run = try WorkoutFixture.run(.path(Self.path(relative)), zone: .named("Europe/Paris"))
    defer { run.result.remove() }
    #expect(run.result.normalizer.workoutCopies == 60 - run.rows.count)

    // The run by hand: Connect|HKWorkoutActivityTypeRunning|1606665421|1606667567
    // (2020-11-29 16:57:01 / 17:32:47 +0100); uuid.uuid5(NAMESPACE_URL, …) in Python gave
    // bba4543c-ae3a-5f04-9858-305e952a4fd9.
    let row = try #require(run.rows.first { $0.start == Instant(seconds: 1_606_665_421) })
    #expect(row.id == "BBA4543C-AE3A-5F04-9858-305E952A4FD9")
    #expect(
      row.id
        == WorkoutIdentityTests.rfc4122Version5(
          "healthetl:workout:Connect|HKWorkoutActivityTypeRunning|1606665421|1606667567"))
    #expect(row.activityType == "Running")
    #expect(row.elapsedSeconds == 2146)  // 35 min 46 s
    // 35.77871500651042 min × 60 = 2146.7229003906252 s exactly; the nearest Double prints as
    // 2146.722900390625.
    #expect(row.durationSeconds == 2146.722900390625)
    #expect(row.distanceMeters == 6020.89990234375)  // 6.02089990234375 km × 1000
    #expect(row.energyKilocalories == 573)
    // No statistics, so heart rate comes from the Connect HeartRate samples starting inside the
    // run: 18 of them, every 2 min from 16:58 to 17:32: 116 134 141 141 139 152 160 163 163 163
    // 163 167 168 162 160 162 162 159, sum 2775, mean 2775 / 18 = 154.1666…
    #expect(row.heartRateAverage == 2775.0 / 18)
    #expect(row.heartRateMinimum == 116)
    #expect(row.heartRateMaximum == 168)
    #expect(row.indoor == false)
    #expect(row.deviceModel == nil)
    #expect(row.events == "")
    let record = row.serverRecord
    #expect(
      record
        == WorkoutServerRecord(
          recordDate: "20201129", execTypeCode: "SERVER02", execStartTime: "20201129165701",
          execEndTime: "20201129173247", execRuntime: "2146", deviceTypeCode: "ETC",
          recordUuid: "BBA4543C-AE3A-5F04-9858-305E952A4FD9"))
  }

  @Test func jshrakeWalking() throws {
    let run = try WorkoutFixture.run(.path(Self.path("jshrake__healthkit-to-sqlite/example/export.zip")))
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    // Watch|HKWorkoutActivityTypeWalking|1582566240|1582568291 (2020-02-24 09:44:00 / 10:18:11
    // −0800); Python's uuid5 gave 037043c4-4ebe-58ec-b59c-f4fc11ebfa27.
    #expect(row.id == "037043C4-4EBE-58EC-B59C-F4FC11EBFA27")
    #expect(row.activityType == "Walking")
    #expect(row.activityTypeRaw == 52)
    #expect(row.durationSeconds == 2050.8405044078826)  // 34.18067507346471 min × 60
    #expect(row.elapsedSeconds == 2051)  // 34 min 11 s
    #expect(row.distanceMeters == 2256.300288)  // 1.402 mi × 1609.344
    #expect(row.energyKilocalories == 134.432)  // Cal
    #expect(row.heartRateAverage == nil)  // no HeartRate statistic, no HeartRate records
    #expect(row.weatherHumidity == 0.57)  // 5700 %
    #expect(row.elevationAscendedMeters == 2.17)  // 217 cm
    #expect(row.weatherTemperatureCelsius == 155.0 / 9)  // (63 − 32) × 5/9
    #expect(row.timeZone == "America/Los_Angeles")
    #expect(row.indoor == false)
    #expect(row.events == "segment=4")
    #expect(row.route == "/workout-routes/route_2020-02-24_10.18am.gpx")
    #expect(row.source == "Watch")
    #expect(row.deviceModel == "Watch")
    #expect(
      row.serverRecord
        == WorkoutServerRecord(
          recordDate: "20200224", execTypeCode: "SERVER01", execStartTime: "20200224094400",
          execEndTime: "20200224101811", execRuntime: "2050", deviceTypeCode: "WATCH",
          recordUuid: "037043C4-4EBE-58EC-B59C-F4FC11EBFA27"))
  }

  @Test func inlineLocationRouteHasNoPath() throws {
    let run = try WorkoutFixture.run(.path(Self.path("dogsheep__healthkit-to-sqlite/tests/export.xml")))
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    #expect(row.route == nil)
    // 0.4971749504535062 mi × 1609.344 = 800.1255234626474819328 m exactly → nearest Double.
    #expect(row.distanceMeters == 800.1255234626475)
    #expect(row.weatherHumidity == 0.96)  // "96 %"
  }

  static func fragment(_ name: String, zone: RunZone.Request = .named("Europe/Paris")) throws -> WorkoutFixture.Run {
    let text = try String(contentsOfFile: path(fragments + name), encoding: .utf8)
    return try WorkoutFixture.run(StageHarness.export(text), zone: zone)
  }

  @Test func poolSwimWithLapEvents() throws {
    let run = try Self.fragment("workout_swimming.xml")
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    #expect(row.events == "lap=15;segment=9")
    #expect(row.poolLengthMeters == 50)
    #expect(row.location == "pool")
    #expect(row.distanceMeters == 750)
    #expect(row.energyKilocalories == 277.588)
    #expect(row.heartRateAverage == 102.834)
    #expect(row.heartRateMinimum == 80)
    #expect(row.heartRateMaximum == 133)
    // The fragment has Lap events but no SwimmingStrokeCount records: the events are the lengths
    // (WorkoutRouteRealFixtureTests), without strokes per style.
    #expect(row.laps.count == 15)
    #expect(row.strokesByStyle == nil)
    // 15:39:17 / 16:18:24 +0100 are 16:39:17 / 17:18:24 in Luxembourg (CEST); 39.12815843423208 min
    // × 60 = 2347.6895060539248 s → 2347.690 → 2347.
    #expect(row.serverRecord.execStartTime == "20250913163917")
    #expect(row.serverRecord.execEndTime == "20250913171824")
    #expect(row.serverRecord.execRuntime == "2347")
    #expect(row.serverRecord.execTypeCode == "SERVER05")
  }

  @Test func runningWithOneActivity() throws {
    let run = try Self.fragment("workout_running.xml")
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    #expect(row.activities == 1)
    #expect(row.events == "segment=15")  // not 30: the activity repeats the workout's 15
    #expect(row.distanceMeters == 8955.12)  // workout-level 8.95512 km, not + the activity's 8.88354
    #expect(row.energyKilocalories == 655.465)
    #expect(row.heartRateAverage == 130.153)
    #expect(row.heartRateMinimum == 87)
    #expect(row.heartRateMaximum == 139)
    #expect(row.elevationAscendedMeters == 65.75)  // 6575 cm
    #expect(row.weatherHumidity == 0.64)  // 6400 %
    // (61.9694 − 32) × 5 / 9 = 149.847 / 9 = 16.64966…
    #expect(abs(row.weatherTemperatureCelsius! - 149.847 / 9) < 1e-12)
    #expect(row.route == "/workout-routes/route_2025-09-16_6.15pm.gpx")
    // 60.88754943410556 min × 60 = 3653.2529660463336 s → 3653.
    #expect(row.serverRecord.execRuntime == "3653")
    // 16:14:50 +0100 = 17:14:50 in Paris (CEST).
    #expect(row.serverRecord.execStartTime == "20250916171450")
    #expect(try run.text("workouts.csv").contains(",2025-09-16T17:14:50+02:00,2025-09-16T18:15:43+02:00,"))
  }

  @Test func intervalRunWithSeventeenActivities() throws {
    let run = try Self.fragment("workout_running_multiple_parts.xml")
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    #expect(row.activities == 17)
    #expect(row.events == "segment=10")
    // 17 routes, 17 distinct files, in document order.
    let routes = try #require(row.route).split(separator: ";")
    #expect(routes.count == 17)
    #expect(routes.first == "/workout-routes/route_2025-09-26_7.00pm.gpx")
  }

  /// Interval runs with 17 and 18 activities carry their statistics twice: the workout's totals
  /// and each step's share of them. The workout row counts the totals once (5.96338 km, not
  /// twice); the step rows add up to them within the exports' rounding (the 17 steps' sums are
  /// 5963.382 m and 450.8812 kcal against the workout's 5963.38 m and 450.881 kcal; the 18 steps'
  /// 5552.1422 m and 423.92347 kcal against 5552.15 m and 423.923 kcal).
  @Test(arguments: [
    ("workout_running_multiple_parts.xml", 17, 5963.38, 450.881, 5963.382, 450.8812),
    ("workout_running_too_fast.xml", 18, 5552.15, 423.923, 5552.1422, 423.92347),
  ])
  func intervalStepsAreRowsAndTheWorkoutCountsTotalsOnce(
    _ name: String, _ steps: Int, _ meters: Double, _ kilocalories: Double, _ stepMeters: Double,
    _ stepKilocalories: Double
  ) throws {
    let run = try Self.fragment(name)
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    #expect(row.distanceMeters == meters)
    #expect(row.energyKilocalories == kilocalories)
    let activities = row.activityRows
    #expect(activities.map(\.activity) == Array(1...steps))
    #expect(activities.allSatisfy { $0.activityType == "Running" && $0.activityTypeFrom == "workout" })
    #expect(activities.allSatisfy { $0.heartRateFrom == "statistics" })
    #expect(abs(activities.reduce(0) { $0 + $1.distanceMeters! } - stepMeters) < 1e-6)
    #expect(abs(activities.reduce(0) { $0 + $1.energyKilocalories! } - stepKilocalories) < 1e-6)
    #expect(try run.text("workout_activities.csv").split(separator: "\n").count == steps + 1)
  }

  /// The first step of the 17: 17:40:18–18:00:18 +0100 (18:40:18 in Paris), 20.00001266598701 min
  /// = 1200.0007599592206 s → 1200.001 at the column's precision; 3.08424 km; 231.76 kcal; heart
  /// rate 127.476 / 114 / 138; 6 events of its own.
  @Test func theFirstIntervalStepByHand() throws {
    let run = try Self.fragment("workout_running_multiple_parts.xml")
    defer { run.result.remove() }
    let step = try #require(run.rows.first?.activityRows.first)
    #expect(step.uuid == "5508C9A8-3F3B-4497-BE32-CFDEDCAAB9F2")
    #expect(step.elapsedSeconds == 1200)
    #expect(abs(step.durationSeconds! - 1200.0007599592206) < 1e-9)
    #expect(step.distanceMeters == 3084.24)
    #expect(step.energyKilocalories == 231.76)
    #expect(step.heartRateAverage == 127.476)
    #expect(step.heartRateMinimum == 114)
    #expect(step.heartRateMaximum == 138)
    let line = try #require(try run.text("workout_activities.csv").split(separator: "\n").dropFirst().first)
    #expect(line.hasPrefix("2025-09-26 18:40:18,"))
    #expect(
      line.contains(
        ",2025-09-26T18:40:18+02:00,2025-09-26T19:00:18+02:00,1200.001,1200,3084.24,231.76,127.476,114,138,statistics,")
    )
  }

  @Test(arguments: [
    "workout_cp_calculation.xml", "workout_cycling.xml", "workout_hiking.xml", "workout_running_long_distance.xml",
    "workout_running_too_fast.xml", "workout_running_usaint_bolt.xml", "workout_strength.xml",
    "workout_walking.xml",
  ])
  func everyFragmentGivesOneRow(_ name: String) throws {
    let run = try Self.fragment(name)
    defer { run.result.remove() }
    #expect(run.rows.count == 1)
    let row = try #require(run.rows.first)
    #expect(row.activityTypeRaw != nil)
    #expect(row.energyKilocalories != nil)
    #expect(row.serverRecord.recordUuid == row.id)
  }

  @Test func rerunIsByteIdentical() throws {
    let source = InputSource.path(Self.path("bwassim__Health-Data-Analysis/data/export.zip"))
    let first = try WorkoutFixture.run(source)
    defer { first.result.remove() }
    let second = try WorkoutFixture.run(source)
    defer { second.result.remove() }
    for file in ["workouts.csv", "workouts.json", "workout_records.json", "swim_laps.csv"] {
      #expect(try first.text(file) == second.text(file), "\(file)")
    }
  }
  /// The workout fragments of one real export (each a `Workout` element, some with its samples).
  static let workoutFragments = [
    "workout_cp_calculation.xml", "workout_cycling.xml", "workout_hiking.xml", "workout_running.xml",
    "workout_running_long_distance.xml", "workout_running_multiple_parts.xml", "workout_running_too_fast.xml",
    "workout_running_usaint_bolt.xml", "workout_walking.xml",
  ]

  /// Every split of every run, walk, hike and ride lies inside its workout, moves no faster than
  /// 100 m/s, and its kilometres and its miles each add up to the distance its `from` names: the
  /// workout's distance, or — an unscaled route, which spans only part of the workout — the
  /// route's (Pipelines/docs/workouts.md, "Splits"). Returns how many workouts had splits.
  @discardableResult
  static func expectSplitsAddUp(_ run: WorkoutFixture.Run, _ name: String) -> Int {
    var withSplits = 0
    for row in run.rows {
      let start = Double(row.start.seconds)
      let end = Double(row.end.seconds)
      for unit in ["km", "mi"] {
        let splits = row.splits.filter { $0.from != "watch" && $0.unit == unit }
        guard !splits.isEmpty else { continue }
        if unit == "km" { withSplits += 1 }
        for split in splits {
          #expect(split.start >= start && split.end <= end, "\(name) \(row.id) \(unit) \(split.split)")
          #expect((split.speed ?? 0) <= 100, "\(name) \(row.id) \(unit) \(split.split)")
        }
        if splits[0].from == "route", let distance = row.routeSummary?.distanceMeters {
          let total = splits.reduce(0) { $0 + ($1.distanceMeters ?? 0) }
          #expect(abs(total - distance) < 0.001, "\(name) \(row.id) \(unit): \(total) m of splits, \(distance) m route")
        } else if let distance = row.distanceMeters {
          let total = splits.reduce(0) { $0 + ($1.distanceMeters ?? 0) }
          #expect(abs(total - distance) < 0.001, "\(name) \(row.id) \(unit): \(total) m of splits, \(distance) m run")
        }
      }
    }
    return withSplits
  }

  /// jshrake's walk of 2,256.3 m (09:44–10:18) has a route of 776.7 m over its last 17 minutes only:
  /// that part's splits are the route's own (`route`), not scaled ×2.9 into a 3.8 m/s walk.
  @Test func aRouteOfPartOfTheWorkoutIsNotScaled() throws {
    let run = try WorkoutFixture.run(.path(Self.path("jshrake__healthkit-to-sqlite/example/export.zip")))
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    #expect(abs(row.distanceMeters! - 2256.3) < 0.01)
    #expect(abs(row.routeSummary!.distanceMeters! - 776.7) < 0.05)
    let km = row.splits.filter { $0.unit == "km" && $0.from != "watch" }
    #expect(km.map(\.from) == ["route"])
    #expect(km[0].distanceMeters == row.routeSummary!.distanceMeters)
  }

  @Test(arguments: exports)
  func splitsLieInsideTheirWorkoutAndAddUpToItsDistance(_ relative: String) throws {
    let run = try WorkoutFixture.run(.path(Self.path(relative)))
    defer { run.result.remove() }
    Self.expectSplitsAddUp(run, relative)
  }

  @Test(arguments: workoutFragments)
  func fragmentSplitsLieInsideTheirWorkoutAndAddUpToItsDistance(_ file: String) throws {
    let run = try WorkoutFixture.run(try String(contentsOfFile: Self.path(Self.fragments + file), encoding: .utf8))
    defer { run.result.remove() }
    Self.expectSplitsAddUp(run, file)
  }
}
