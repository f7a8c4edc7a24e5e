import Foundation
import HealthETL
import HealthModel
import Testing

/// Swimming (Pipelines/docs/workouts.md, "Swimming"): `swim_laps.csv` and the swim fields of `workouts.csv`.
@Suite struct WorkoutSwimTests {
  typealias F = WorkoutFixture

  static func strokes(
    _ value: String, _ start: String, _ end: String, source: String = "Apple Watch", style: String? = nil,
    swolf: String? = nil
  ) -> String {
    var metadata: [(String, String)] = []
    if let style { metadata.append(("HKSwimmingStrokeStyle", style)) }
    if let swolf { metadata.append(("HKSWOLFScore", swolf)) }
    return Staging.record(
      "HKQuantityTypeIdentifierSwimmingStrokeCount", source: source, value: value, unit: "count",
      start: "2024-02-01 \(start) +0000", end: "2024-02-01 \(end) +0000", metadata: metadata)
  }

  static func distance(_ meters: String, _ start: String, _ end: String, source: String = "Apple Watch") -> String {
    Staging.record(
      "HKQuantityTypeIdentifierDistanceSwimming", source: source, value: meters, unit: "m",
      start: "2024-02-01 \(start) +0000", end: "2024-02-01 \(end) +0000")
  }

  static func lap(_ time: String, minutes: String, style: String, swolf: String) -> String {
    F.event(
      "Lap", "2024-02-01 \(time) +0000", minutes: minutes,
      metadata: [("HKSwimmingStrokeStyle", style), ("HKSWOLFScore", swolf)])
  }

  /// A 25 yd pool swim 07:00–07:10 with five lengths in three styles.
  static let poolSwim = [
    strokes("9", "06:59:00", "06:59:30"),  // before the workout: not a length of it
    strokes("18", "07:00:10", "07:00:40", style: "2", swolf: "48"),  // L1 freestyle
    strokes("20", "07:00:50", "07:01:20", style: "2"),  // L2 freestyle
    strokes("15", "07:02:00", "07:02:45", style: "4", swolf: "61"),  // L3 breaststroke
    strokes("22", "07:03:00", "07:03:40", style: "3"),  // L4 backstroke
    strokes("16", "07:04:00", "07:04:30"),  // L5: style from its Lap event
    strokes("17", "07:05:00", "07:05:30", source: "Ann’s iPhone", style: "5"),  // another source: not counted
    strokes("12", "07:10:00", "07:10:30", style: "2"),  // starts at the workout's end: out ([start, end))
    distance("22.86", "07:00:10", "07:00:40"),  // all in L1
    distance("22.86", "07:00:40", "07:01:20"),  // 40 s, 30 of them in L2
    distance("22.86", "07:02:00", "07:02:45"),  // all in L3
    distance("22.86", "07:04:10", "07:04:10"),  // an instant inside L5: counts whole
    distance("50", "07:03:00", "07:03:40", source: "Ann’s iPhone"),  // another source: not used
    F.workout(
      "Swimming", duration: "10", start: "2024-02-01 07:00:00 +0000", end: "2024-02-01 07:10:00 +0000",
      children: [
        F.meta("HKLapLength", "25 yd"), F.meta("HKSwimmingLocationType", "1"), F.meta("HKIndoorWorkout", "1"),
        // Laps: E1 at L1 (the sample's own SWOLF wins), E2 overlapping L2 by 25 s, E3 at L3 (the
        // sample's SWOLF wins), none at L4, E5 at L5 (gives style and SWOLF).
        lap("07:00:10", minutes: "0.5", style: "2", swolf: "99"),
        lap("07:00:45", minutes: "0.5", style: "2", swolf: "50"),
        lap("07:02:00", minutes: "0.75", style: "4", swolf: "60"),
        lap("07:04:00", minutes: "0.5", style: "2", swolf: "46"),
        // A Segment spanning L1–L2 is not a Lap: its SWOLF is never used.
        F.event("Segment", "2024-02-01 07:00:10 +0000", minutes: "2", metadata: [("HKSWOLFScore", "77")]),
        F.statistic(
          "DistanceSwimming", start: "2024-02-01 07:00:00 +0000", end: "2024-02-01 07:10:00 +0000", sum: "114.3",
          unit: "m"),
      ]),
  ].joined(separator: "\n")

  @Test func poolSwimWithThreeStyles() throws {
    let run = try F.run(Self.poolSwim)
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    #expect(row.laps.map(\.lap) == [1, 2, 3, 4, 5])
    #expect(row.laps.map(\.strokes) == [18, 20, 15, 22, 16])
    #expect(row.laps.map(\.style) == [.freestyle, .freestyle, .breaststroke, .backstroke, .freestyle])
    #expect(row.laps.map(\.swolf) == [48, 50, 61, nil, 46])
    #expect(row.laps.map { $0.end - $0.start } == [30, 30, 45, 40, 30])
    // A length of a pool is the pool's length, whatever the distance samples say (the second
    // length's share of one was 22.86 m × 30 s / 40 s = 17.145 m).
    #expect(row.laps.allSatisfy { $0.distanceMeters == 22.86 })
    #expect(row.laps.allSatisfy { $0.distanceFrom == "pool_length" })
    // L4 has no Lap event: a length of its own stroke sample.
    #expect(row.laps.map(\.origin) == [.event, .event, .event, .strokeSample, .event])
    #expect(row.laps[4].distanceMeters == 22.86)
    // Totals: freestyle 18 + 20 + 16 = 54, breaststroke 15, backstroke 22, the rest 0.
    // Order: unknown, mixed, freestyle, backstroke, breaststroke, butterfly, kickboard.
    #expect(row.strokesByStyle == [0, 0, 54, 22, 15, 0, 0])
    #expect(row.poolLengthMeters == 22.86)  // 25 yd × 0.9144
    #expect(row.location == "pool")
    #expect(row.distanceMeters == 114.3)
    #expect(row.events == "lap=4;segment=1")
    #expect(row.serverRecord.execTypeCode == "SERVER05")

    let csv = try run.text("swim_laps.csv")
    let lines = csv.split(separator: "\n").map(String.init)
    #expect(
      lines.first == "local_time,workout_id,lap,start,end,duration_s,strokes,style,distance_m,swolf,from,distance_from")
    #expect(lines.count == 6)
    #expect(
      lines[1]
        == "2024-02-01 07:00:10,\(row.id),1,2024-02-01T07:00:10+00:00,2024-02-01T07:00:40+00:00,30,18,freestyle,22.86,48"
        + ",event,pool_length")
    #expect(
      lines[4]
        == "2024-02-01 07:03:00,\(row.id),4,2024-02-01T07:03:00+00:00,2024-02-01T07:03:40+00:00,40,22,backstroke,22.86,"
        + ",stroke_sample,pool_length")
    #expect(
      lines[5]
        == "2024-02-01 07:04:00,\(row.id),5,2024-02-01T07:04:00+00:00,2024-02-01T07:04:30+00:00,30,16,freestyle,22.86,46"
        + ",event,pool_length")
    // Then 5 laps, 91 strokes from the samples.
    #expect(try run.text("workouts.csv").contains(",22.86,pool,0,0,54,22,15,0,0,5,91,samples,"))
  }

  @Test func openWaterSwimWithoutStrokeSamples() throws {
    let start = "2024-06-01 08:00:00 +0000"
    let end = "2024-06-01 08:40:00 +0000"
    let body = [
      // Distance samples alone make no lengths.
      Self.distance("400", "08:05:00", "08:15:00").replacingOccurrences(of: "2024-02-01", with: "2024-06-01"),
      F.workout(
        "Swimming", duration: "38", start: start, end: end,
        children: [
          F.meta("HKSwimmingLocationType", "2"), F.meta("HKIndoorWorkout", "0"),
          F.statistic("DistanceSwimming", start: start, end: end, sum: "1.2", unit: "km"),
        ]),
    ].joined(separator: "\n")
    let run = try F.run(body)
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    #expect(row.laps.isEmpty)
    #expect(row.location == "open_water")
    #expect(row.poolLengthMeters == nil)
    #expect(row.strokesByStyle == nil)
    #expect(row.distanceMeters == 1200)  // 1.2 km
    #expect(try run.text("swim_laps.csv") == WorkoutTables.laps.columnNames.joined(separator: ",") + "\n")
    // No lengths (0), distance from the statistic, no route.
    #expect(try run.text("workouts.csv").hasSuffix(",,open_water,,,,,,,,0,,,statistics,,,,,,,,,,\n"))
  }

  @Test func strokesOfOtherWorkoutsAreNotLaps() throws {
    // A run with stroke samples inside it (a mislabelled watch) gets no laps: only swims do.
    let body = [
      Self.strokes("18", "07:00:10", "07:00:40", style: "2"),
      F.workout("Running", start: "2024-02-01 07:00:00 +0000", end: "2024-02-01 07:10:00 +0000"),
    ].joined(separator: "\n")
    let run = try F.run(body)
    defer { run.result.remove() }
    #expect(run.rows.first?.laps.isEmpty == true)
    #expect(run.rows.first?.strokesByStyle == nil)
  }

  @Test func strokesOfAnotherSourceCountWhenTheWorkoutSourceHasNone() throws {
    // The workout was saved by an app; the lengths by the watch: the watch's samples are the laps.
    let body = [
      Self.strokes("18", "07:00:10", "07:00:40", source: "Apple Watch", style: "6"),
      Self.strokes("21", "07:01:00", "07:01:40", source: "Apple Watch", style: "1"),
      Self.strokes("7", "07:02:00", "07:02:40", source: "Apple Watch", style: "9"),
      F.workout(
        "Swimming", source: "MySwimPro", device: nil, start: "2024-02-01 07:00:00 +0000",
        end: "2024-02-01 07:10:00 +0000", children: [F.meta("HKMetadataKeyLapLength", "50 m")]),
    ].joined(separator: "\n")
    let run = try F.run(body)
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    // An unrecognised style value (9) counts as unknown.
    #expect(row.laps.map(\.style) == [.kickboard, .mixed, .unknown])
    #expect(row.strokesByStyle == [7, 21, 0, 0, 0, 0, 18])
    #expect(row.poolLengthMeters == 50)
    #expect(row.location == nil)
  }

  /// The names `swim_laps.csv` and the `strokes_<style>` columns use, in HealthKit's order of raw
  /// values (`HKSwimmingStrokeStyle`: 0 unknown … 6 kickboard).
  @Test func strokeStyleNames() {
    #expect(
      SwimStrokeStyle.allCases.map(\.name)
        == ["unknown", "mixed", "freestyle", "backstroke", "breaststroke", "butterfly", "kickboard"])
    #expect(SwimStrokeStyle.allCases.map(\.rawValue) == Array(0...6))
  }
}
