import Foundation
import HealthExtract
import HealthModel
import Testing

@testable import HealthETL

/// Laps from Lap events, splits and the GPX reader on small hand-worked cases
/// (Pipelines/docs/workouts.md, "Swimming", "Routes", "Splits").
@Suite struct WorkoutRouteTests {
  typealias F = WorkoutFixture

  // MARK: Splits

  /// 0 m at t 0 (10 m high), 600 m at t 100 (20 m), 1200 m at t 200 (50 m): the kilometre falls
  /// two thirds of the way into the second step, at t 166.67 and 40 m high.
  @Test func boundaryBetweenTwoPoints() {
    var accumulator = SplitAccumulator(unit: 1000, pauses: PauseIntervals())
    accumulator.add(time: 0, step: 0, elevation: 10)
    accumulator.add(time: 100, step: 600, elevation: 20)
    accumulator.add(time: 200, step: 600, elevation: 50)
    let splits = accumulator.finish()
    #expect(splits.count == 2)
    let first = splits[0]
    #expect(first.start == 0)
    #expect(abs(first.end - 500.0 / 3) < 1e-9)
    #expect(first.distanceMeters == 1000)
    #expect(abs(first.movingSeconds - 500.0 / 3) < 1e-9)
    #expect(first.elevationStart == 10)
    #expect(abs(first.elevationEnd! - 40) < 1e-9)
    // 10 → 20 → 40: 30 up, nothing down.
    #expect(abs(first.elevationGainMeters! - 30) < 1e-9)
    #expect(first.elevationLossMeters == 0)
    let last = splits[1]
    #expect(abs(last.start - 500.0 / 3) < 1e-9)
    #expect(last.end == 200)
    #expect(abs(last.distanceMeters - 200) < 1e-9)
    #expect(abs(last.movingSeconds - 100.0 / 3) < 1e-9)
    #expect(abs(last.elevationGainMeters! - 10) < 1e-9)
  }

  /// A manual pause 50–80 s and a motion pause 70–90 s inside the first kilometre: merged, 40 s
  /// are not moving time; the elapsed time keeps them.
  @Test func pauseInsideASplit() {
    let pauses = PauseIntervals(
      manual: [(pauses: true, time: 50), (pauses: false, time: 80)],
      motion: [(pauses: true, time: 70), (pauses: false, time: 90)], workoutEnd: 200)
    #expect(pauses.pausedSeconds(from: 0, to: 200) == 40)
    var accumulator = SplitAccumulator(unit: 1000, pauses: pauses)
    accumulator.add(time: 0, step: 0, elevation: nil)
    accumulator.add(time: 100, step: 600, elevation: nil)
    accumulator.add(time: 200, step: 600, elevation: nil)
    let splits = accumulator.finish()
    #expect(abs(splits[0].movingSeconds - (500.0 / 3 - 40)) < 1e-9)
    #expect(splits[0].elevationGainMeters == nil)
    let split = WorkoutSplit(splits[0], from: "route", unit: .km)
    #expect(abs(split.elapsedSeconds - 500.0 / 3) < 1e-9)
    // 126.67 moving seconds for 1000 m: that is the pace per km, and 7.894… m/s.
    #expect(abs(split.paceSeconds! - (500.0 / 3 - 40)) < 1e-9)
    #expect(abs(split.speed! - 1000 / (500.0 / 3 - 40)) < 1e-9)
    #expect(split.elevationChangeMeters == nil)
  }

  /// One step of 2500 m over 250 s crosses two kilometres (at 100 s and 200 s) and one mile
  /// (1609.344 m at 160.9344 s).
  @Test func oneStepCrossesSeveralBoundaries() {
    var km = SplitAccumulator(unit: 1000, pauses: PauseIntervals())
    var mile = SplitAccumulator(unit: SplitUnit.mi.meters, pauses: PauseIntervals())
    km.add(time: 0, step: 0, elevation: nil)
    km.add(time: 250, step: 2500, elevation: nil)
    mile.add(time: 0, step: 0, elevation: nil)
    mile.add(time: 250, step: 2500, elevation: nil)
    let kilometres = km.finish()
    #expect(kilometres.map(\.end) == [100, 200, 250])
    #expect(kilometres.map(\.distanceMeters) == [1000, 1000, 500])
    let miles = mile.finish()
    #expect(miles.count == 2)
    #expect(abs(miles[0].end - 160.9344) < 1e-9)
    #expect(abs(miles[1].distanceMeters - (2500 - 1609.344)) < 1e-9)
  }

  /// One step of 3,000 km over 100 s: the splits stop where 2,000 km is reached, at 66.67 s —
  /// 2,000 kilometres, and 1,242 miles and 1,194.752 m — and nothing after counts.
  @Test func splitsStopAtTwoThousandKilometres() {
    var km = SplitAccumulator(unit: 1000, pauses: PauseIntervals())
    var mile = SplitAccumulator(unit: SplitUnit.mi.meters, pauses: PauseIntervals())
    for index in 0..<2 {
      var accumulator = index == 0 ? km : mile
      accumulator.add(time: 0, step: 0, elevation: nil)
      accumulator.add(time: 100, step: 3_000_000, elevation: nil)
      #expect(accumulator.reachedLongestDistance)
      accumulator.add(time: 200, step: 1000, elevation: nil)
      if index == 0 { km = accumulator } else { mile = accumulator }
    }
    let kilometres = km.finish()
    #expect(kilometres.count == 2000)
    #expect(abs(kilometres.last!.end - 200.0 / 3) < 1e-9)
    #expect(kilometres.last!.distanceMeters == 1000)
    let miles = mile.finish()
    #expect(miles.count == 1243)
    // 2,000,000 − 1,242 × 1,609.344 = 2,000,000 − 1,998,805.248.
    #expect(abs(miles.last!.distanceMeters - 1194.752) < 1e-6)
    #expect(abs(miles.last!.end - 200.0 / 3) < 1e-9)
  }

  /// A run 10:00–10:10 without a route or a distance of its own, and its distance samples:
  /// 1.5 km over 10:00–10:05 (5 m/s), 25 km at one instant 10:05 (Garmin Connect's way of writing
  /// a whole run: faster than 100 m/s, so no part of the splits), and 1.2 km over 10:09–10:19,
  /// clipped to its minute inside the workout: 1200 × 60 / 600 = 120 m over 10:09–10:10 (it once
  /// put all 1.2 km there). Cumulative: 1000 m at 200 s; 1500 m at 300 s, then 2 m/s from 540 s
  /// to 600 s, up to 1620 m; a mile at 540 + 109.344 / 2 = 594.672 s.
  @Test func distanceSplitsStayInTheWorkoutAndSkipImpossibleSamples() throws {
    func distance(_ km: String, _ start: String, _ end: String) -> String {
      Staging.record(
        "HKQuantityTypeIdentifierDistanceWalkingRunning", source: "Apple Watch", value: km, unit: "km",
        start: "2024-03-20 \(start) +0000", end: "2024-03-20 \(end) +0000")
    }
    let body = [
      distance("1.5", "10:00:00", "10:05:00"), distance("25", "10:05:00", "10:05:00"),
      distance("1.2", "10:09:00", "10:19:00"),
      F.workout("Running", duration: "10", start: "2024-03-20 10:00:00 +0000", end: "2024-03-20 10:10:00 +0000"),
    ]
    let run = try F.run(body.joined(separator: "\n"))
    defer { run.result.remove() }
    let splits = try #require(run.rows.first).splits
    let start = 1_710_928_800.0
    let km = splits.filter { $0.from == "distance" && $0.unit == "km" }
    #expect(km.map { $0.end - start } == [200, 600])
    #expect(km.map(\.distanceMeters) == [1000, 620])
    let miles = splits.filter { $0.from == "distance" && $0.unit == "mi" }
    #expect(miles.count == 2)
    #expect(abs(miles[0].end - start - 594.672) < 1e-6)
    #expect(miles[1].end - start == 600)
    #expect(abs(miles[1].distanceMeters! - 10.656) < 1e-9)
  }

  /// A third-party run 10:00–10:30 of 4.2 km (`totalDistance`) whose app wrote its distance
  /// twice, overlapping: 4 km over 10:00–10:30 and 4 km over 10:00–10:20; an iPhone's 3 km over the
  /// same half hour ranks below the workout's own source and gives nothing. Merged as the
  /// statistics' sum: 4000 × 1200 / 1800 + 4000 = 6666.67 m in the first 1200 s, 1333.33 m in the
  /// last 600 s, 8000 m in all — scaled by 4200 / 8000 = 0.525 to the workout's distance: 3500 m
  /// at 2.916 667 m/s, then 700 m at 1.166 667 m/s. Kilometres end at 1000 / 2.916 667 = 342.857 s,
  /// 685.714 s, 1028.571 s and 1200 + 500 / 1.166 667 = 1628.571 s; the last 200 m at 1800 s. It
  /// once laid the samples end to end: 12 km of splits, the last ending after the workout.
  @Test func overlappingDistanceSamplesMergeAndAddUpToTheWorkout() throws {
    func distance(_ source: String, _ km: String, _ start: String, _ end: String) -> String {
      Staging.record(
        "HKQuantityTypeIdentifierDistanceWalkingRunning", source: source, value: km, unit: "km",
        start: "2024-03-20 \(start) +0000", end: "2024-03-20 \(end) +0000")
    }
    let body = [
      distance("RunApp", "4", "10:00:00", "10:30:00"), distance("RunApp", "4", "10:00:00", "10:20:00"),
      distance("iPhone", "3", "10:00:00", "10:30:00"),
      F.workout(
        "Running", source: "RunApp", device: nil, duration: "30", start: "2024-03-20 10:00:00 +0000",
        end: "2024-03-20 10:30:00 +0000", extra: "totalDistance=\"4.2\" totalDistanceUnit=\"km\""),
    ]
    let run = try F.run(body.joined(separator: "\n"))
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    #expect(row.distanceMeters == 4200)
    let start = 1_710_928_800.0
    let km = row.splits.filter { $0.unit == "km" }
    #expect(km.allSatisfy { $0.from == "distance_scaled" })
    let ends = [342.857_142_857, 685.714_285_714, 1028.571_428_571, 1628.571_428_571, 1800]
    #expect(km.count == ends.count)
    for (split, end) in zip(km, ends) { #expect(abs(split.end - start - end) < 1e-6) }
    #expect(abs(km.last!.distanceMeters! - 200) < 1e-6)
    let miles = row.splits.filter { $0.unit == "mi" }
    #expect(miles.count == 3)
    #expect(abs(miles[0].end - start - 1609.344 / (3500.0 / 1200)) < 1e-6)
    for unit in [km, miles] {
      #expect(abs(unit.reduce(0) { $0 + $1.distanceMeters! } - 4200) < 1e-6)
      #expect(unit.allSatisfy { $0.start >= start && $0.end <= start + 1800 })
    }
  }

  /// A 10 km run 10:00–11:00 whose only distance sample is an iPhone's 100 m over 10:00:00–10:00:20:
  /// scaled to the workout's 10 km, those 20 s would run at 500 m/s, faster than a person moves, so
  /// the run has no splits (it has no route either) rather than ten kilometres in 20 s.
  @Test func aSeriesScaledBeyondHumanSpeedGivesNoSplits() throws {
    let body = [
      Staging.record(
        "HKQuantityTypeIdentifierDistanceWalkingRunning", source: "iPhone", value: "100", unit: "m",
        start: "2024-03-20 10:00:00 +0000", end: "2024-03-20 10:00:20 +0000"),
      F.workout(
        "Running", duration: "60", start: "2024-03-20 10:00:00 +0000", end: "2024-03-20 11:00:00 +0000",
        extra: "totalDistance=\"10\" totalDistanceUnit=\"km\""),
    ]
    let run = try F.run(body.joined(separator: "\n"))
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    #expect(row.distanceMeters == 10_000)
    #expect(row.splits.isEmpty)
  }

  /// A 4.2 km run from 08:00:00 (t 0) paused 08:07:00–08:09:30 (t 420–570), its Segment events
  /// written as the bundled sample writes them: durations of moving time, the next segment
  /// starting at the end plus the pause inside. km: 0 (5 min), 300 (5 min, ends at 600 — with the
  /// pause inside, its 300 moving seconds end at 750), 750, 1050 (5 min each); mi: 0 (8 min, ends
  /// at 480 — at 630 with the 150 s paused from 420), 630 (8 min). Each segment with the pause
  /// inside spans to its successor's start (none starts at 600 or 480), so the chains are 4 km and
  /// 2 mi: km 2 is 300–750, 300 s moving of 450; mi 1 is 0–630, 480 s moving of 630. Before, the
  /// mile's second segment continued the kilometres (600 → 630, 30 s) and the chains were 3, 1
  /// and 2 segments long. Written as the real fixtures write them — the durations spanning the
  /// pause (km 2 of 7.5 min, mi 1 of 10.5 min) — the same splits.
  @Test func aPauseInsideAWatchSegmentBreaksNoChain() throws {
    func at(_ seconds: Int) -> String {
      String(format: "2024-04-01 08:%02d:%02d +0000", seconds / 60, seconds % 60)
    }
    for (km2, mi1) in [("5", "8"), ("7.5", "10.5")] {
      let body = F.workout(
        "Running", duration: "22.5", start: at(0), end: at(1500),
        extra: "totalDistance=\"4.2\" totalDistanceUnit=\"km\"",
        children: [
          F.event("Segment", at(0), minutes: "5"), F.event("Segment", at(0), minutes: mi1),
          F.event("Segment", at(300), minutes: km2), F.event("Pause", at(420)), F.event("Resume", at(570)),
          F.event("Segment", at(630), minutes: "8"), F.event("Segment", at(750), minutes: "5"),
          F.event("Segment", at(1050), minutes: "5"),
        ])
      let run = try F.run(body)
      defer { run.result.remove() }
      let row = try #require(run.rows.first)
      let start = 1_711_958_400.0
      let watch = row.splits.filter { $0.from == "watch" }
      #expect(watch.map { $0.unit ?? "-" } == ["km", "km", "km", "km", "mi", "mi"], "\(km2)")
      #expect(watch.map { $0.start - start } == [0, 300, 750, 1050, 0, 630], "\(km2)")
      #expect(watch.map { $0.end - start } == [300, 750, 1050, 1350, 630, 1110], "\(km2)")
      #expect(watch.map(\.movingSeconds) == [300, 300, 300, 300, 480, 480], "\(km2)")
      #expect(watch.map(\.distanceMeters) == [1000, 1000, 1000, 1000, 1609.344, 1609.344], "\(km2)")
    }
  }

  /// The bundled sample: its route splits once added up past the workout's distance (5,699 m of
  /// splits for the 5,160.46 m run of 2024-03-18: the raw GPS track is longer than the Watch's
  /// distance). Now every workout's splits add up to its distance and lie inside it.
  @Test func sampleSplitsAddUpToEachWorkout() throws {
    let run = try F.run(.path(StageHarness.sampleExport))
    defer { run.result.remove() }
    #expect(WorkoutRealFixtureTests.expectSplitsAddUp(run, "SampleData/export.zip") == 11)
    let row = try #require(run.rows.first { $0.distanceMeters == 5160.46 })
    let km = row.splits.filter { $0.unit == "km" && $0.from != "watch" }
    #expect(km.count == 6)
    #expect(km.allSatisfy { $0.from == "distance" })
    #expect(abs(km.reduce(0) { $0 + $1.distanceMeters! } - 5160.46) < 1e-6)
    // Cut from the distance samples, the kilometres take their elevation from the route: their
    // rises add up to the route's.
    let gain = km.reduce(0) { $0 + $1.elevationGainMeters! }
    #expect(abs(gain - row.routeSummary!.elevationGainMeters!) < 1e-3)
  }

  /// The route's elevation as a line through its points — (0 s, 10 m), (50 s, 20 m), (150 s, 0 m),
  /// (300 s, 30 m) — over splits [0, 100), [100, 250), [250, 400), [400, 500). The first rises
  /// 10 m to 50 s and falls to 10 m at 100 s: gain 10, loss 10, change 0. The second falls 10 m
  /// to 150 s and rises to 20 m at 250 s: gain 20, loss 10, change 10. The third rises 10 m to the
  /// last point at 300 s; the fourth lies past the line and has no elevation.
  @Test func splitElevationFromTheRouteLine() {
    let splits = [(0.0, 100.0), (100, 250), (250, 400), (400, 500)].enumerated().map { index, span in
      WorkoutSplit(
        from: "distance", unit: "km", split: index + 1, start: span.0, end: span.1, distanceMeters: 1000,
        movingSeconds: span.1 - span.0)
    }
    var profile = SplitElevationProfile(splits)
    for (time, elevation) in [(0.0, 10.0), (50, 20), (150, 0), (120, 99), (300, 30)] {
      profile.add(time: time, elevation: elevation)
    }
    #expect(profile.splits.map(\.elevationGainMeters) == [10, 20, 10, nil])
    #expect(profile.splits.map(\.elevationLossMeters) == [10, 10, 0, nil])
    #expect(profile.splits.map(\.elevationChangeMeters) == [0, 10, 10, nil])
  }

  /// Two points 0.01° of latitude apart on one meridian: 6371008.8 × 0.01 × π / 180 m.
  @Test func haversineOnAMeridian() {
    #expect(abs(RouteAggregate.distance(52.50, 13.4, 52.51, 13.4) - 6_371_008.8 * 0.01 * Double.pi / 180) < 1e-6)
  }

  // MARK: Laps

  static func strokes(_ value: String, _ start: String, _ end: String, style: String? = nil) -> String {
    Staging.record(
      "HKQuantityTypeIdentifierSwimmingStrokeCount", source: "Apple Watch", value: value, unit: "count",
      start: "2024-02-01 \(start) +0000", end: "2024-02-01 \(end) +0000",
      metadata: style.map { [("HKSwimmingStrokeStyle", $0)] } ?? [])
  }

  static func lap(_ time: String, style: String, swolf: String? = nil, day: String = "2024-02-01") -> String {
    var metadata = [("HKSwimmingStrokeStyle", style)]
    if let swolf { metadata.append(("HKSWOLFScore", swolf)) }
    return F.event("Lap", "\(day) \(time) +0000", minutes: "0.5", metadata: metadata)
  }

  /// Three Lap events (freestyle, kickboard, breaststroke) and a stroke sample no event covers;
  /// a second swim with Lap events only takes its strokes from its statistic.
  @Test func lapsFromEventsFirst() throws {
    let body = [
      Self.strokes("18", "07:00:10", "07:00:40", style: "2"),  // → E1
      Self.strokes("10", "07:02:00", "07:02:20", style: "4"),  // → E3
      Self.strokes("5", "07:02:20", "07:02:30"),  // → E3 too
      Self.strokes("20", "07:05:00", "07:05:30", style: "1"),  // no event: a length of its own
      F.workout(
        "Swimming", duration: "10", start: "2024-02-01 07:00:00 +0000", end: "2024-02-01 07:10:00 +0000",
        children: [
          F.meta("HKLapLength", "25 m"),
          Self.lap("07:00:10", style: "2", swolf: "40"),
          Self.lap("07:01:00", style: "6"),  // kickboard: no stroke samples
          Self.lap("07:02:00", style: "4", swolf: "50"),
          F.statistic(
            "SwimmingStrokeCount", start: "2024-02-01 07:00:00 +0000", end: "2024-02-01 07:10:00 +0000", sum: "999",
            unit: "count"),
        ]),
      F.workout(
        "Swimming", duration: "10", start: "2024-02-02 07:00:00 +0000", end: "2024-02-02 07:10:00 +0000",
        children: [
          F.meta("HKLapLength", "50 m"),
          Self.lap("07:00:10", style: "4", day: "2024-02-02"), Self.lap("07:01:10", style: "0", day: "2024-02-02"),
          F.statistic(
            "SwimmingStrokeCount", start: "2024-02-02 07:00:00 +0000", end: "2024-02-02 07:10:00 +0000", sum: "40",
            unit: "count"),
        ]),
    ]
    let run = try F.run(body.joined(separator: "\n"))
    defer { run.result.remove() }
    #expect(run.rows.count == 2)
    let first = run.rows[0]
    #expect(first.laps.map(\.origin) == [.event, .event, .event, .strokeSample])
    #expect(first.laps.map(\.strokes) == [18, nil, 15, 20])
    #expect(first.laps.map(\.style) == [.freestyle, .kickboard, .breaststroke, .mixed])
    #expect(first.laps.map(\.swolf) == [40, nil, 50, nil])
    #expect(first.laps.map(\.start.seconds) == [1_706_770_810, 1_706_770_860, 1_706_770_920, 1_706_771_100])
    #expect(first.laps.map { $0.end.seconds - $0.start.seconds } == [30, 30, 30, 30])
    #expect(first.laps.map(\.distanceMeters) == [25, 25, 25, 25])
    #expect(first.laps.allSatisfy { $0.distanceFrom == "pool_length" })
    // The samples win over the statistic's 999.
    #expect(first.strokes == 53)
    #expect(first.strokesFrom == "samples")
    #expect(first.strokesByStyle == [0, 20, 18, 0, 15, 0, 0])
    let second = run.rows[1]
    #expect(second.laps.count == 2)
    #expect(second.laps.allSatisfy { $0.strokes == nil })
    #expect(second.strokes == 40)
    #expect(second.strokesFrom == "statistics")
    #expect(second.strokesByStyle == nil)
    let laps = try run.text("swim_laps.csv").split(separator: "\n")
    #expect(laps.count == 7)
    #expect(laps[2].hasSuffix(",,kickboard,25,,event,pool_length"))
    #expect(laps[4].hasSuffix(",20,mixed,25,,stroke_sample,pool_length"))
  }

  // MARK: Device type

  @Test func deviceTypeFromEveryClue() {
    typealias R = WorkoutServerRecord
    // The real 2018 walk: source "Apple", watchOS 4.3.1, no device.
    #expect(R.deviceTypeCode(device: nil, sourceName: "Apple", sourceVersion: "4.3.1") == "WATCH")
    #expect(R.deviceTypeCode(device: nil, sourceName: "Apple", sourceVersion: "17.2") == "PHONE")
    #expect(R.deviceTypeCode(device: nil, sourceName: "Apple", sourceVersion: "10.1") == "ETC")
    #expect(R.deviceTypeCode(device: nil, sourceName: "Garmin Connect", sourceVersion: "5") == "ETC")
    #expect(R.deviceTypeCode(device: nil, sourceName: "Ann’s Apple Watch", sourceVersion: nil) == "WATCH")
  }

  // MARK: GPX

  static func gpx(_ body: String) -> [UInt8] {
    Array(
      ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\" xmlns=\"http://www.topografix.com/GPX/1/1\">\n"
        + body + "</gpx>\n").utf8)
  }

  @Test func gpxPointsAndSegments() {
    let bytes = Self.gpx(
      """
      <trk><trkseg>
      <trkpt lat=" 52.5 " lon="13.4"><ele>34.5</ele><time>2024-03-18T18:06:10.250+01:00</time><extensions><speed>-1</speed><course>12.5</course><hAcc>4</hAcc><vAcc>2</vAcc></extensions></trkpt>
      <trkpt lon="13.41" lat="52.51"><time>2024-03-18T17:06:11Z</time></trkpt>
      </trkseg><trkseg>
      <trkpt lon="13.42" lat="52.52"><time>yesterday</time></trkpt>
      </trkseg></trk>

      """)
    var points: [RoutePoint] = []
    let result = GPXReader.read(bytes: bytes) { points.append(RoutePoint(gpx: $0)) }
    #expect(result == GPXReadResult(points: 3, problem: nil))
    // 2024-03-18T17:06:10Z = 1710781570.
    #expect(
      points[0]
        == RoutePoint(
          time: 1_710_781_570.25, latitude: 52.5, longitude: 13.4, elevation: 34.5, speed: -1, course: 12.5,
          horizontalAccuracy: 4, verticalAccuracy: 2, startsSegment: true))
    #expect(points[1].time == 1_710_781_571)
    #expect(points[1].startsSegment == false)
    #expect(points[2].time == nil)
    #expect(points[2].startsSegment == true)
  }

  @Test func badGPXIsAOneLineProblem() {
    let cut = GPXReader.read(bytes: Array("<gpx><trk><trkseg>\n<trkpt lat=\"1\" lon=\"2\"></trkpt>\n<trkpt".utf8)) {
      _ in
    }
    #expect(cut.points == 1)
    #expect(cut.problem?.hasPrefix("cut short at line 3: ") == true)
    let broken = GPXReader.read(bytes: Array("<gpx><trk>\n<trkpt lat=\"1\" lon=\"2\">\n</trk></gpx>".utf8)) { _ in }
    #expect(broken.points == 0)
    #expect(broken.problem?.hasPrefix("broken XML at line 3: ") == true)
    let kml = GPXReader.read(bytes: Array("<?xml version=\"1.0\"?><kml><trkpt lat=\"1\" lon=\"2\"/></kml>".utf8)) { _ in
    }
    #expect(kml == GPXReadResult(points: 0, problem: "not a GPX file: its root element is <kml>"))
    #expect(GPXReader.read(bytes: []) { _ in } == GPXReadResult(points: 0, problem: "the file is empty"))
    let text = GPXReader.read(bytes: Array("route".utf8)) { _ in }
    #expect(text.problem?.hasPrefix("not XML at line 1: ") == true)
    for result in [cut, broken, kml, text] { #expect(result.problem?.contains("\n") == false) }
  }

  // MARK: Routes that no person could have run

  /// A folder export: one run (or `activity`) 10:00–10:10 UTC on 2024-03-20 naming
  /// `workout-routes/route.gpx`, whose `<trkpt>` lines are `points`, from line 3 of the file on.
  static func folderRun(_ points: [String], activity: String = "Running") throws -> (run: F.Run, folder: URL) {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("healthetl-routes-\(UUID())")
    try FileManager.default.createDirectory(
      at: folder.appendingPathComponent("workout-routes"), withIntermediateDirectories: true)
    let workout = F.workout(
      activity, duration: "10", start: "2024-03-20 10:00:00 +0000", end: "2024-03-20 10:10:00 +0000",
      children: [
        "<WorkoutRoute sourceName=\"Apple Watch\"><FileReference path=\"/workout-routes/route.gpx\"/></WorkoutRoute>"
      ])
    let export =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<HealthData locale=\"en_US\">\n"
      + "<ExportDate value=\"2024-04-01 09:00:00 +0000\"/>\n\(workout)\n</HealthData>\n"
    try Data(export.utf8).write(to: folder.appendingPathComponent("export.xml"))
    let gpx =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\"><trk><trkseg>\n"
      + points.joined(separator: "\n") + "\n</trkseg></trk></gpx>\n"
    try Data(gpx.utf8).write(to: folder.appendingPathComponent("workout-routes/route.gpx"))
    do {
      return (try F.run(.path(folder.appendingPathComponent("export.xml").path), zone: .named("UTC")), folder)
    } catch {
      try? FileManager.default.removeItem(at: folder)
      throw error
    }
  }

  static func trkpt(_ latitude: String, _ longitude: String, _ time: String, elevation: String? = nil) -> String {
    "<trkpt lat=\"\(latitude)\" lon=\"\(longitude)\">\(elevation.map { "<ele>\($0)</ele>" } ?? "")<time>\(time)</time></trkpt>"
  }

  /// `2024-03-20T10:MM:SSZ`, `seconds` after 10:00.
  static func at(_ seconds: Int) -> String {
    "2024-03-20T10:" + String(format: "%02d:%02dZ", seconds / 60, seconds % 60)
  }

  /// The reported file: 100 points alternating between (0, 0) and (0, 180), one a second, once
  /// gave 3.2 million kilometre and mile splits (505 MB, 1.17 GB of memory). Every (0, 180) is a
  /// jump of 20,015 km in 1 s from the (0, 0) before it: 50 points kept, all at (0, 0), 0 m, no
  /// split.
  @Test func alternatingHalfWayRoundTheEarthGivesNoSplits() throws {
    let (run, folder) = try Self.folderRun((0..<100).map { Self.trkpt("0", $0 % 2 == 0 ? "0" : "180", Self.at($0)) })
    defer {
      run.result.remove()
      try? FileManager.default.removeItem(at: folder)
    }
    let row = try #require(run.rows.first)
    #expect(row.routeSummary?.points == 50)
    #expect(row.routeSummary?.distanceMeters == 0)
    #expect(row.splits.isEmpty)
    #expect(try run.text("workout_splits.csv").split(separator: "\n").count == 1)
    #expect(try run.text("route_points.csv").split(separator: "\n").count == 51)
    #expect(
      row.routeProblems
        == "workout-routes/route.gpx: dropped 50 of 100 points: a jump faster than 100 m/s ×50 (first at line 4)")
    let report = try #require(run.mapper.routeReport)
    #expect(report.points == 50)
    #expect(report.droppedPoints == 50)
    #expect(report.dropped == ["jump": 50])
  }

  /// Latitude 91, longitude 181 and ±1e308 were written to `route_points.csv` as they were.
  @Test func coordinatesOutOfRangeAreDroppedWithTheirReason() throws {
    let (run, folder) = try Self.folderRun([
      Self.trkpt("52.5", "13.4", Self.at(0)), Self.trkpt("91", "13.4", Self.at(1)),
      Self.trkpt("52.5", "181", Self.at(2)), Self.trkpt("1e308", "13.4", Self.at(3)),
      Self.trkpt("52.5", "-1e308", Self.at(4)), Self.trkpt("52.5001", "13.4", Self.at(5), elevation: "34"),
    ])
    defer {
      run.result.remove()
      try? FileManager.default.removeItem(at: folder)
    }
    let row = try #require(run.rows.first)
    #expect(
      row.routeProblems
        == "workout-routes/route.gpx: dropped 4 of 6 points: latitude outside -90…90 ×2 (first at line 4), "
        + "longitude outside -180…180 ×2 (first at line 5)")
    // 0.0001° of a meridian: 6371008.8 × 0.0001 × π / 180 = 11.1195 m.
    #expect(abs(row.routeSummary!.distanceMeters! - 6_371_008.8 * 0.0001 * Double.pi / 180) < 1e-6)
    #expect(row.routeSummary?.maximumLatitude == 52.5001)
    let points = try run.text("route_points.csv").split(separator: "\n").dropFirst()
    #expect(points.map { $0.split(separator: ",", omittingEmptySubsequences: false)[4] } == ["52.5", "52.5001"])
    #expect(run.mapper.routeReport?.dropped == ["latitudeOutOfRange": 2, "longitudeOutOfRange": 2])
  }

  /// A ride 10:00–10:10 with a point every minute 0.005° further north on one meridian
  /// (6371008.8 × 0.005 × π / 180 = 555.9754 m a step, 5559.754 m in all: 9.3 m/s, a kilometre
  /// in 1:48, which on foot would be too fast for splits), and three points out of
  /// order: one dated 10:10:30 right after the second (within the minute after the end: it sinks
  /// to the end, at the last point's place), one dated 9999-12-31 (dropped: outside the workout;
  /// it once made splits end in year 10000) and one dated 10:00:30 halfway between the first two
  /// (put back in its place: the distance stays). Kilometre k ends at 60 × 1000 k / 555.9754 s;
  /// the last one is 559.754 m and ends at 10:10:00, the workout's end, not 10:10:30.
  @Test func pointsOutOfOrderGiveNoSplitOutsideTheWorkout() throws {
    var points = (0...10).map {
      Self.trkpt(String(format: "%.3f", 52.5 + 0.005 * Double($0)), "13.4", Self.at(60 * $0))
    }
    points.insert(Self.trkpt("52.550", "13.4", Self.at(630)), at: 2)
    points.append(Self.trkpt("52.550", "13.4", "9999-12-31T23:59:59Z"))
    points.append(Self.trkpt("52.5025", "13.4", Self.at(30)))
    let (run, folder) = try Self.folderRun(points, activity: "Cycling")
    defer {
      run.result.remove()
      try? FileManager.default.removeItem(at: folder)
    }
    let row = try #require(run.rows.first)
    let step = 6_371_008.8 * 0.005 * Double.pi / 180
    #expect(abs(row.routeSummary!.distanceMeters! - 10 * step) < 1e-6)
    #expect(row.routeSummary?.points == 13)
    #expect(
      row.routeProblems
        == "workout-routes/route.gpx: dropped 1 of 14 points: time more than 60 s outside the workout ×1 (first at line 15)"
    )
    let start = 1_710_928_800.0
    let km = row.splits.filter { $0.from == "route" && $0.unit == "km" }
    #expect(km.count == 6)
    for (index, split) in km.dropLast().enumerated() {
      #expect(abs(split.end - start - 60 * 1000 * Double(index + 1) / step) < 1e-6)
    }
    #expect(km.last!.end == start + 600)
    #expect(abs(km.last!.distanceMeters! - (10 * step - 5000)) < 1e-6)
    let miles = row.splits.filter { $0.from == "route" && $0.unit == "mi" }
    #expect(miles.count == 4)
    #expect(abs(miles[0].end - start - 60 * 1609.344 / step) < 1e-6)
    // No split starts before the workout or ends after it.
    #expect(row.splits.allSatisfy { $0.start >= start && $0.end <= start + 600 })
    let times = try run.text("route_points.csv").split(separator: "\n").dropFirst().map {
      String($0.split(separator: ",", omittingEmptySubsequences: false)[3])
    }
    #expect(times.first == "2024-03-20T10:00:00+00:00")
    #expect(times[1] == "2024-03-20T10:00:30+00:00")
    #expect(times.last == "2024-03-20T10:10:30+00:00")
    #expect(times == times.sorted())
  }

  /// Found by the GPX fuzzer: an EBCDIC file (which libxml2 decodes by itself) carried a DOCTYPE
  /// past the UTF-8 byte filter, its entity declaration was parsed and libxml2's side document
  /// leaked. Files that are not UTF-8 are now refused before libxml2 sees them.
  @Test func aGPXFileThatIsNotUTF8IsRefusedByName() throws {
    let text = "<?xml version=\"1.0\"?><!DOCTYPE gpx [<!ENTITY a \"aaaa\">]><gpx><trkpt lat=\"1\" lon=\"2\"/></gpx>"
    let ebcdic = try #require(Self.ebcdic(text))
    #expect(
      GPXReader.read(bytes: ebcdic) { _ in }
        == GPXReadResult(problem: "not UTF-8: the file is EBCDIC text (route files from the Health app are UTF-8)"))
    let utf16 = try #require(text.data(using: .utf16LittleEndian))
    #expect(GPXReader.read(bytes: Array(utf16)) { _ in }.problem?.hasPrefix("not UTF-8: the file is UTF-16LE") == true)
    let latin1 = text.replacingOccurrences(of: "version=\"1.0\"", with: "version=\"1.0\" encoding=\"ISO-8859-1\"")
    #expect(GPXReader.read(bytes: Array(latin1.utf8)) { _ in }.problem?.contains("ISO-8859-1") == true)
    // The same document in UTF-8 has its DOCTYPE blanked and is read.
    #expect(GPXReader.read(bytes: Array(text.utf8)) { _ in } == GPXReadResult(points: 1))
  }

  /// `text` in EBCDIC code page 037, for the characters it uses (letters, digits, `<?!="[]>/ .`).
  static func ebcdic(_ text: String) -> [UInt8]? {
    let special: [Character: UInt8] = [
      "<": 0x4C, "?": 0x6F, "!": 0x5A, "=": 0x7E, "\"": 0x7F, "[": 0xBA, "]": 0xBB, ">": 0x6E, "/": 0x61,
      " ": 0x40, ".": 0x4B,
    ]
    let rows: [(String, UInt8)] = [
      ("abcdefghi", 0x81), ("jklmnopqr", 0x91), ("stuvwxyz", 0xA2),
      ("ABCDEFGHI", 0xC1), ("JKLMNOPQR", 0xD1), ("STUVWXYZ", 0xE2), ("0123456789", 0xF0),
    ]
    var bytes: [UInt8] = []
    for character in text {
      if let byte = special[character] {
        bytes.append(byte)
      } else if let (row, first) = rows.first(where: { $0.0.contains(character) }) {
        bytes.append(first + UInt8(row.distance(from: row.startIndex, to: row.firstIndex(of: character)!)))
      } else {
        return nil
      }
    }
    return bytes
  }
}
