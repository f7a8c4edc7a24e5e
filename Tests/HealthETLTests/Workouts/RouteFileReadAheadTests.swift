import Foundation
import HealthExtract
import RunExecution
import Testing

@testable import HealthETL

/// The route files are read on a thread of their own and handed over in order: each file's
/// start, its points in chunks, how it ended; the listing's failure; the end.
@Suite struct RouteFileReadAheadTests {
  static func gpx(points: Int) -> String {
    let lines = (0..<points).map { index in
      #"<trkpt lat="52.\#(index % 1000)" lon="13.5"><time>2024-03-20T10:00:00Z</time></trkpt>"# + "\n"
    }
    return #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n<gpx version=\"1.1\"><trk><trkseg>\n"
      + lines.joined() + "</trkseg></trk></gpx>\n"
  }

  /// A folder export: `files` (name → text) in `workout-routes/`.
  static func export(_ files: [String: String]) throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("routes-\(UUID().uuidString)")
    let routes = folder.appendingPathComponent("workout-routes")
    try FileManager.default.createDirectory(at: routes, withIntermediateDirectories: true)
    for (name, text) in files { try Data(text.utf8).write(to: routes.appendingPathComponent(name)) }
    return folder
  }

  /// What a reader hands over, in words: `file a.gpx`, `points 4096`, `end 5000 -`.
  static func events(_ reader: RouteFileReadAhead) -> [String] {
    var said: [String] = []
    while true {
      switch reader.next() {
      case .file(let path): said.append("file \(path)")
      case .points(let points): said.append("points \(points.count) from line \(points.first?.line ?? 0)")
      case .fileEnd(let result): said.append("end \(result.points) \(result.problem == nil ? "-" : "broken")")
      case .listingFailed: said.append("listing failed")
      case .end: return said
      }
    }
  }

  @Test(.timeLimit(.minutes(10))) func filesArriveInNameOrderWithTheirPointsInChunks() throws {
    let folder = try Self.export([
      "b.gpx": Self.gpx(points: RouteFileReadAhead.chunkPoints + 5),
      "a.gpx": Self.gpx(points: 2),
      "c.gpx": "<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"></trkpt><trkpt",
    ])
    defer { try? FileManager.default.removeItem(at: folder) }
    let reader = RouteFileReadAhead(.folder(folder.path), folder: "workout-routes", executor: testExecutor)
    // Each point starts on its own line, the first on line 3; a chunk holds 1,024.
    #expect(
      Self.events(reader) == [
        "file workout-routes/a.gpx", "points 2 from line 3", "end 2 -",
        "file workout-routes/b.gpx", "points 1024 from line 3", "points 5 from line 1027", "end 1029 -",
        "file workout-routes/c.gpx", "points 1 from line 1", "end 1 broken",
      ])
    // After the end, the end again.
    if case .end = reader.next() {} else { Issue.record("an event after the end") }
  }

  @Test(.timeLimit(.minutes(10))) func aZipThatCannotBeOpenedSaysSoAndEnds() {
    let reader = RouteFileReadAhead(
      .zip(path: "/nonexistent-\(UUID().uuidString).zip", prefix: "apple_health_export/"), folder: "workout-routes",
      executor: testExecutor)
    #expect(Self.events(reader) == ["listing failed"])
  }

  /// More chunks than may wait, and the reader dropped after the first event: the thread stops
  /// and is waited for, rather than waiting for room for ever.
  @Test(.timeLimit(.minutes(10))) func aReaderLeftEarlyStopsItsThread() throws {
    let points = RouteFileReadAhead.chunkPoints * (RouteFileReadAhead.depth + 4)
    let folder = try Self.export(["long.gpx": Self.gpx(points: points), "next.gpx": Self.gpx(points: 1)])
    defer { try? FileManager.default.removeItem(at: folder) }
    // An executor of its own, whose threads only this reader starts.
    let executor = RunExecutor(workers: 1)
    do {
      let reader = RouteFileReadAhead(.folder(folder.path), folder: "workout-routes", executor: executor)
      if case .file(let path) = reader.next() {
        #expect(path == "workout-routes/long.gpx")
      } else {
        Issue.record("the first event is not a file")
      }
      #expect(executor.threads == 1)
    }
    // Its thread has ended (the executor counts it a moment after it is waited for).
    var waited = 0
    while executor.threads > 0, waited < 200 {
      usleep(10_000)
      waited += 1
    }
    #expect(executor.threads == 0)
    // A new reader after it gets everything.
    let again = RouteFileReadAhead(.folder(folder.path), folder: "workout-routes", executor: executor)
    #expect(Self.events(again).last == "end 1 -")
  }
}
