import Foundation
import HealthExtract
import HealthModel
import Testing

@testable import HealthETL

/// The workouts worth a look and the splits rule (Pipelines/docs/nightly.md, "Worth a look",
/// "Splits"), worked out by hand; all times UTC on 2024-03-20.
@Suite struct WorkoutOdditiesTests {
  typealias F = WorkoutFixture

  static func at(_ time: String) -> String { "2024-03-20 \(time) +0000" }

  static func distance(_ meters: String, _ start: String, _ end: String, source: String = "RunApp") -> String {
    Staging.record(
      "HKQuantityTypeIdentifierDistanceWalkingRunning", source: source, value: meters, unit: "m", start: at(start),
      end: at(end))
  }

  static func items(_ run: F.Run, _ rule: Oddities.Rule) -> [Oddities.Item] {
    run.mapper.oddities?.found.first { $0.rule == rule }?.items ?? []
  }

  @Test func totalsNoPersonAchievesAndOneSourcesOverlappingWorkoutsAreFlagged() throws {
    let body = [
      // 5.5 km in 341 s: 16.13 m/s, a kilometre in 62 s (1:02 /km) against 2:00 on foot.
      F.workout(
        "Running", source: "RunApp", device: nil, duration: "341", durationUnit: "s", start: Self.at("07:00:00"),
        end: Self.at("07:05:41"), extra: "totalDistance=\"5.5\" totalDistanceUnit=\"km\""),
      // 5 km in an hour: 1.39 m/s, nothing to see.
      F.workout(
        "Walking", source: "RunApp", device: nil, duration: "60", start: Self.at("08:00:00"), end: Self.at("09:00:00"),
        extra: "totalDistance=\"5\" totalDistanceUnit=\"km\""),
      // One app's two rides 10:00–11:00 and 10:10–11:00: 50 min of overlap, more than half of the
      // shorter (50 min): the second is flagged. Another source's ride over them is not.
      F.workout(
        "Cycling", source: "BikeApp", device: nil, duration: "60", start: Self.at("10:00:00"), end: Self.at("11:00:00")),
      F.workout(
        "Cycling", source: "BikeApp", device: nil, duration: "50", start: Self.at("10:10:00"), end: Self.at("11:00:00")),
      F.workout("Cycling", duration: "60", start: Self.at("10:00:00"), end: Self.at("11:00:00")),
      // One app's rides 12:00–13:00 and 12:50–13:30 share 10 min, less than half of 40: not flagged.
      F.workout(
        "Cycling", source: "BikeApp", device: nil, duration: "60", start: Self.at("12:00:00"), end: Self.at("13:00:00")),
      F.workout(
        "Cycling", source: "BikeApp", device: nil, duration: "40", start: Self.at("12:50:00"), end: Self.at("13:30:00")),
    ]
    let run = try F.run(body.joined(separator: "\n"))
    defer { run.result.remove() }
    #expect(
      Self.items(run, WorkoutOddities.impossibleTotals).map(\.detail) == [
        "Running at 07:00 from RunApp: 5.5 km in 5:41 (1:02 /km), faster than 2:00 /km"
      ])
    #expect(
      Self.items(run, WorkoutOddities.overlapping).map(\.detail) == [
        "Cycling at 10:10 from BikeApp overlaps its Cycling at 10:00 by 50:00"
      ])
    // Values stay as written.
    #expect(run.rows.first?.distanceMeters == 5500)
  }

  /// A run 10:00–10:10 (600 s) of 3 km whose app wrote its distance lumpily: 1,000 m over
  /// 10:00:00–10:00:20, then 2,000 m over 10:05–10:10. Cut from them, kilometre 1 ends at 20 s
  /// (50 m/s, under the 100 m/s a sample may not pass, but a kilometre in 0:20 on foot), so the
  /// series is not the run's. Its Watch segments — three of 1 minute, a chain of kilometres (3 is
  /// 3 km, not 1.86 mi rounded) — put a kilometre in 1:00: not written either. Without a route, the
  /// run has no splits, and its one row in `workout_splits.csv` says why (before, it had no row:
  /// the reason was only in "Worth a look").
  @Test func splitsFasterThanTheActivityAllowsAreNotWritten() throws {
    let body = [
      Self.distance("1000", "10:00:00", "10:00:20"), Self.distance("2000", "10:05:00", "10:10:00"),
      F.workout(
        "Running", source: "RunApp", device: nil, duration: "10", start: Self.at("10:00:00"), end: Self.at("10:10:00"),
        extra: "totalDistance=\"3\" totalDistanceUnit=\"km\"",
        children: [
          F.event("Segment", Self.at("10:00:00"), minutes: "1"), F.event("Segment", Self.at("10:01:00"), minutes: "1"),
          F.event("Segment", Self.at("10:02:00"), minutes: "1"),
        ]),
    ]
    let run = try F.run(body.joined(separator: "\n"))
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    let why =
      "the distance samples put km 1 in 0:20, faster than 2:00 /km; "
      + "the Watch's segments put km 1 in 1:00, faster than 2:00 /km"
    #expect(row.splits.map(\.from) == ["none (\(why))"])
    let lines = try run.text("workout_splits.csv").split(separator: "\n")
    #expect(lines.count == 2)
    // Empty unit, split and figures; the workout's start and end.
    #expect(
      lines.last.map(String.init)
        == "2024-03-20 10:00:00,\(row.id),\"none (\(why))\",,,2024-03-20T10:00:00+00:00,2024-03-20T10:10:00+00:00,,,,,,,,,,"
    )
    #expect(
      Self.items(run, WorkoutOddities.fastSplits).map(\.detail) == [
        "Running at 10:00 from RunApp: the distance samples put km 1 in 0:20, faster than 2:00 /km; "
          + "the Watch's segments put km 1 in 1:00, faster than 2:00 /km; no splits: its one row in workout_splits.csv says none"
      ])
  }

  /// The same lumpy distance under a run with a route: 11 points a minute apart due north, 200 m
  /// each (0.0017986° of latitude), 2 km in 10 minutes at 3.33 m/s. The route's splits stand in,
  /// and their `from` says why: kilometre 1 at 300 s, kilometre 2 at 600 s.
  @Test func theRouteStandsInForATooFastSeriesAndItsRowsSayWhy() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("healthetl-fast-\(UUID())")
    defer { try? FileManager.default.removeItem(at: folder) }
    try FileManager.default.createDirectory(
      at: folder.appendingPathComponent("workout-routes"), withIntermediateDirectories: true)
    let workout = F.workout(
      "Running", source: "RunApp", device: nil, duration: "10", start: Self.at("10:00:00"), end: Self.at("10:10:00"),
      extra: "totalDistance=\"2\" totalDistanceUnit=\"km\"",
      children: [
        "<WorkoutRoute sourceName=\"RunApp\"><FileReference path=\"/workout-routes/route.gpx\"/></WorkoutRoute>"
      ])
    let export =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<HealthData locale=\"en_US\">\n"
      + "<ExportDate value=\"2024-04-01 09:00:00 +0000\"/>\n"
      + Self.distance("1000", "10:00:00", "10:00:20") + "\n" + Self.distance("1000", "10:05:00", "10:10:00") + "\n"
      + workout + "\n</HealthData>\n"
    try Data(export.utf8).write(to: folder.appendingPathComponent("export.xml"))
    let points = (0...10).map { minute in
      WorkoutRouteTests.trkpt(
        String(format: "%.7f", 48 + Double(minute) * 200 / 111_195.0), "11", WorkoutRouteTests.at(minute * 60))
    }
    let gpx =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\"><trk><trkseg>\n"
      + points.joined(separator: "\n") + "\n</trkseg></trk></gpx>\n"
    try Data(gpx.utf8).write(to: folder.appendingPathComponent("workout-routes/route.gpx"))
    let run = try F.run(.path(folder.appendingPathComponent("export.xml").path), zone: .named("UTC"))
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    let km = row.splits.filter { $0.unit == "km" }
    #expect(km.count == 2)
    let reason = " (the distance samples put km 1 in 0:20, faster than 2:00 /km)"
    #expect(km.allSatisfy { $0.from.hasPrefix("route") && $0.from.hasSuffix(reason) })
    let start = 1_710_928_800.0
    #expect(km.map { ($0.end - start).rounded() } == [300, 600])
    #expect(
      Self.items(run, WorkoutOddities.fastSplits).first?.detail.hasSuffix(
        "faster than 2:00 /km; splits from \(km[0].from.prefix { $0 != " " })") == true)
  }

  /// A workout's totals come from the export: a duration of 1e300 s or a speed of 1e-300 m/s
  /// crashed the message's conversion to whole seconds (found by the `run` fuzzer). 10⁹ s is
  /// 277,777 h 46 min 40 s.
  @Test func messagesOfAbsurdTotalsAreBounded() {
    #expect(ActivitySpeed.clock(1e300) == "277777:46:40")
    #expect(ActivitySpeed.clock(-5) == "0:00")
    #expect(ActivitySpeed.clock(.nan) == "0:00")
    #expect(ActivitySpeed.clock(341) == "5:41")
    #expect(ActivitySpeed.pace(1e-300) == "16666666:40 /km")
    #expect(ActivitySpeed.pace(.infinity) == "0:00 /km")
  }

  @Test func theLimitsOfEachActivity() {
    // On foot 1000 m / 120 s; cycling 1000 m / 36 s; swimming 2.5 m/s; other activities none.
    #expect(ActivitySpeed.fastest("Running") == 1000.0 / 120)
    #expect(ActivitySpeed.fastest("HKWorkoutActivityTypeHiking") == 1000.0 / 120)
    #expect(ActivitySpeed.fastest("Cycling") == 1000.0 / 36)
    #expect(ActivitySpeed.fastest("Swimming") == 2.5)
    #expect(ActivitySpeed.fastest("DownhillSkiing") == nil)
    #expect(ActivitySpeed.pace(1000.0 / 120) == "2:00 /km")
    #expect(ActivitySpeed.pace(1000.0 / 36) == "0:36 /km")
    // A kilometre in 2:00 passes, in 1:59 not; a last split of 200 m in 10 s (a quarter of a
    // kilometre is 250 m) is not judged.
    func split(_ number: Int, meters: Double, seconds: Double) -> WorkoutSplit {
      WorkoutSplit(from: "distance", unit: "km", split: number, start: 0, end: seconds, movingSeconds: seconds)
        .with(meters)
    }
    #expect(ActivitySpeed.tooFast([split(1, meters: 1000, seconds: 120)], activityType: "Running") == nil)
    #expect(ActivitySpeed.tooFast([split(1, meters: 1000, seconds: 119)], activityType: "Running") == "km 1 in 1:59")
    #expect(ActivitySpeed.tooFast([split(9, meters: 200, seconds: 10)], activityType: "Running") == nil)
    #expect(ActivitySpeed.tooFast([split(9, meters: 300, seconds: 10)], activityType: "Running") == "km 9 in 0:10")
  }
}

extension WorkoutSplit {
  fileprivate func with(_ meters: Double) -> WorkoutSplit {
    var split = self
    split.distanceMeters = meters
    return split
  }
}
