import Foundation
import HealthExtract
import HealthModel
import Testing

@testable import HealthETL

/// Laps, routes and splits of the real exports in `../shared/fixtures/real`.
@Suite(.enabled(if: StageHarness.realAvailable, "../shared/fixtures/real is not beside this checkout"))
struct WorkoutRouteRealFixtureTests {
  static let fragments = WorkoutRealFixtureTests.fragments
  static let routesFolder = WorkoutRealFixtureTests.path(fragments + "workout-routes")

  /// Every GPX file of the real fixtures.
  static var gpxFiles: [String] {
    let root = StageHarness.realRoot.path
    let walker = FileManager.default.enumerator(atPath: root)
    var files: [String] = []
    while let name = walker?.nextObject() as? String {
      if name.hasSuffix(".gpx") { files.append(root + "/" + name) }
    }
    return files.sorted()
  }

  static func trackPoints(_ path: String) throws -> Int {
    try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "<trkpt ").count - 1
  }

  /// The 2025-09-13 pool swim: 15 Lap events (13 breaststroke, 1 freestyle, 1 unknown) of 50 m and
  /// a `SwimmingStrokeCount` statistic of 509, but no stroke samples.
  @Test func poolSwimLapsFromEvents() throws {
    let run = try WorkoutRealFixtureTests.fragment("workout_swimming.xml")
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    #expect(row.laps.count == 15)
    #expect(row.laps.allSatisfy { $0.origin == .event && $0.strokes == nil })
    #expect(row.laps.filter { $0.style == .breaststroke }.count == 13)
    #expect(row.laps.filter { $0.style == .freestyle }.count == 1)
    #expect(row.laps.filter { $0.style == .unknown }.count == 1)
    #expect(row.laps.reduce(0) { $0 + ($1.distanceMeters ?? 0) } == 750)
    #expect(row.strokes == 509)
    #expect(row.strokesFrom == "statistics")
    #expect(try run.text("swim_laps.csv").split(separator: "\n").count == 16)
  }

  @Test func everyRealGPXFileGivesItsTrackPoints() throws {
    let files = Self.gpxFiles
    #expect(files.count >= 35)
    for file in files {
      let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
      var points = 0
      var timed = 0
      let result = GPXReader.read(bytes: bytes, name: file) { point in
        points += 1
        if RoutePoint(gpx: point).time != nil { timed += 1 }
      }
      let expected = try Self.trackPoints(file)
      #expect(result == GPXReadResult(points: expected, problem: nil), "\(file)")
      #expect(timed == expected, "\(file)")
    }
  }

  /// The 2025-09-16 run as its export has it: the fragment beside the fixture's
  /// `workout-routes/` folder (34 files, one of them this run's).
  @Test func runWithItsRoute() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("healthetl-route-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let text = try String(
      contentsOfFile: WorkoutRealFixtureTests.path(Self.fragments + "workout_running.xml"), encoding: .utf8)
    let export = folder.appendingPathComponent("export.xml")
    try Data(
      ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<HealthData locale=\"en_GB\">\n<ExportDate value=\"2025-11-30 09:00:00 +0000\"/>\n"
        + text + "\n</HealthData>\n").utf8
    ).write(to: export)
    // Copied, not linked: a link inside an export folder is not followed.
    try FileManager.default.copyItem(
      atPath: Self.routesFolder, toPath: folder.appendingPathComponent("workout-routes").path)
    let run = try WorkoutFixture.run(.path(export.path), zone: .named("Europe/Paris"))
    defer { run.result.remove() }
    let row = try #require(run.rows.first)
    let route = try #require(row.routeSummary)
    #expect(route.points == 3654)
    // Haversine sum worked out independently (Python, the same Earth radius): 8999.547 m.
    #expect(abs(route.distanceMeters! - 8999.547154470545) < 1e-6)
    let report = try #require(run.mapper.routeReport)
    let files = try FileManager.default.contentsOfDirectory(atPath: Self.routesFolder).filter { $0.hasSuffix(".gpx") }
    #expect(report.files == files.count)
    #expect(report.unreferenced.count == files.count - 1)
    #expect(report.broken == 0 && report.missing == 0)
    var all = 0
    for file in files { all += try Self.trackPoints(Self.routesFolder + "/" + file) }
    #expect(report.points == all)
    #expect(try run.text("route_points.csv").split(separator: "\n").count == all + 1)
    // The first kilometre, by hand (Python, the same Earth radius): the run has no distance
    // samples, so the route's 8999.547 m are scaled to its 8955.12 m (its DistanceWalkingRunning
    // statistic), × 0.995063; the 384th step crosses 1000 m, at 15:21:13.21 UTC (1758036073.2109456),
    // 383.21 s after the first point, 2.437 m higher. The Watch's own first kilometre lasts 385.3 s;
    // the raw route's ended at 381.32 s.
    let first = try #require(row.splits.first { $0.from == "route_scaled" && $0.unit == "km" && $0.split == 1 })
    #expect(first.start == 1_758_035_690)
    #expect(abs(first.end - 1_758_036_073.2109456) < 1e-3)
    #expect(abs(first.movingSeconds - 383.2109456062317) < 1e-3)
    #expect(abs(first.elevationChangeMeters! - 2.436671700955003) < 1e-6)
    let km = row.splits.filter { $0.from == "route_scaled" && $0.unit == "km" }
    #expect(km.count == 9)
    #expect(abs(km.reduce(0) { $0 + $1.distanceMeters! } - 8955.12) < 1e-6)
    #expect(row.splits.filter { $0.from == "route_scaled" && $0.unit == "mi" }.count == 6)
    // The Watch's own splits: 15 Segment events, a kilometre chain and a mile chain.
    #expect(row.splits.filter { $0.from == "watch" }.count == 15)
    #expect(row.splits.filter { $0.from == "watch" && $0.unit == "km" }.count == 9)
  }

  /// k0rventen's export holds two route files no workout names: read all the same, counted.
  @Test func unreferencedRoutesAreReadAndCounted() throws {
    let zip = WorkoutRealFixtureTests.path("k0rventen__apple-health-grafana/tests/test-export.zip")
    let run = try WorkoutFixture.run(.path(zip))
    defer { run.result.remove() }
    let report = try #require(run.mapper.routeReport)
    #expect(report.files == 2)
    #expect(
      report.unreferenced == [
        "workout-routes/route_2019-09-24_1.07pm.gpx", "workout-routes/route_2019-10-04_12.59pm.gpx",
      ])
    let points = try run.text("route_points.csv").split(separator: "\n").dropFirst()
    #expect(points.count == report.points)
    // local_time, then an empty workout_id: no workout owns these files.
    #expect(points.allSatisfy { $0.split(separator: ",", omittingEmptySubsequences: false).dropFirst().first == "" })
    #expect(points.allSatisfy { $0.contains(",,workout-routes/route_2019-") })
  }
}
