import Foundation
import HealthExtract
import RunExecution
import Testing

@testable import HealthETL

/// The route files are read on a thread of their own, which never waits for its taker (the
/// points wait in a spool file), and handed over in order: each file's start, its points in
/// chunks, how it ended; the listing's failure; the end.
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

  /// A scratch folder for a reader's spool, removed by the caller.
  static func scratch() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("spool-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
  }

  /// A reader of `workout-routes/` in the folder export `folder`, spooling into `scratch`.
  static func reader(_ folder: URL, scratch: URL, executor: RunExecutor = testExecutor) throws -> RouteFileReadAhead {
    try RouteFileReadAhead.start(
      .folder(folder.path), folder: "workout-routes", scratchFolder: scratch.path, meter: nil, on: executor)
  }

  /// What a reader hands over, in words: `file a.gpx`, `points 4096`, `end 5000 -`.
  static func events(_ reader: RouteFileReadAhead) throws -> [String] {
    var said: [String] = []
    while true {
      switch try reader.next() {
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
    let scratch = try Self.scratch()
    defer { for made in [folder, scratch] { try? FileManager.default.removeItem(at: made) } }
    let reader = try Self.reader(folder, scratch: scratch)
    // Each point starts on its own line, the first on line 3; a chunk holds 1,024.
    #expect(
      try Self.events(reader) == [
        "file workout-routes/a.gpx", "points 2 from line 3", "end 2 -",
        "file workout-routes/b.gpx", "points 1024 from line 3", "points 5 from line 1027", "end 1029 -",
        "file workout-routes/c.gpx", "points 1 from line 1", "end 1 broken",
      ])
    // After the end, the end again.
    if case .end = try reader.next() {} else { Issue.record("an event after the end") }
    // The spool was unlinked as soon as it was made: nothing is left in the scratch folder.
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
  }

  @Test(.timeLimit(.minutes(10))) func aZipThatCannotBeOpenedSaysSoAndEnds() throws {
    let scratch = try Self.scratch()
    defer { try? FileManager.default.removeItem(at: scratch) }
    let reader = try RouteFileReadAhead.start(
      .zip(path: "/nonexistent-\(UUID().uuidString).zip", prefix: "apple_health_export/"), folder: "workout-routes",
      scratchFolder: scratch.path, meter: nil, on: testExecutor)
    #expect(try Self.events(reader) == ["listing failed"])
  }

  /// No spool, no thread: the error is the finish's to report.
  @Test(.timeLimit(.minutes(10))) func aSpoolThatCannotBeMadeIsAnOutputErrorAndStartsNoThread() {
    let executor = RunExecutor(workers: 1)
    let missing = "/nonexistent-\(UUID().uuidString)"
    #expect(throws: OutputError.self) {
      try RouteFileReadAhead.start(
        .folder("/"), folder: "workout-routes", scratchFolder: missing, meter: nil, on: executor)
    }
    #expect(executor.threads == 0)
  }

  /// Files of many chunks read with nobody taking them, as while the export's parse runs: the
  /// thread reads to the end and ends on its own (it used to wait once 8 chunks waited), and the
  /// taker gets every point afterwards, in order.
  @Test(.timeLimit(.minutes(10))) func theFilesAreReadWithoutWaitingForTheTaker() throws {
    let points = RouteFileReadAhead.chunkPoints * 12 + 3
    let folder = try Self.export(["long.gpx": Self.gpx(points: points), "next.gpx": Self.gpx(points: 1)])
    let scratch = try Self.scratch()
    defer { for made in [folder, scratch] { try? FileManager.default.removeItem(at: made) } }
    // An executor of its own, whose threads only this reader starts.
    let executor = RunExecutor(workers: 1)
    let reader = try Self.reader(folder, scratch: scratch, executor: executor)
    var waited = 0
    while executor.threads > 0, waited < 3000 {
      usleep(10_000)
      waited += 1
    }
    #expect(executor.threads == 0, "the reading thread still runs after 30 s with nobody taking its points")
    var lines: [Int] = []
    var latitudes: [Double] = []
    var files: [String] = []
    reading: while true {
      switch try reader.next() {
      case .file(let path): files.append(path)
      case .points(let chunk):
        lines += chunk.map(\.line)
        latitudes += chunk.compactMap(\.point.latitude)
        // What the file has comes back (2024-03-20T10:00:00Z); what it lacks stays empty.
        #expect(chunk.allSatisfy { $0.point.time == 1_710_928_800 && $0.point.longitude == 13.5 })
        #expect(chunk.allSatisfy { $0.point.elevation == nil && $0.point.speed == nil })
      case .fileEnd, .listingFailed: continue
      case .end: break reading
      }
    }
    #expect(files == ["workout-routes/long.gpx", "workout-routes/next.gpx"])
    #expect(lines == Array(3..<(3 + points)) + [3])
    // The text writes `52.<index % 1000>`: the values parsed come back bit for bit from the spool.
    #expect(latitudes.count == points + 1)
    #expect(latitudes[1] == 52.1 && latitudes[999] == 52.999 && latitudes[1000] == 52.0)
  }

  /// Past the entries that may wait (files begun and ended, chunks' places), the thread waits for
  /// its taker instead of holding more: with room for a few entries, 200 files are still all
  /// handed over, in order, and a reader dropped while the thread waits stops it.
  @Test(.timeLimit(.minutes(10))) func theThreadWaitsOncePastTheEntriesThatMayWait() throws {
    let names = (0..<200).map { String(format: "r%03d.gpx", $0) }
    let folder = try Self.export(Dictionary(uniqueKeysWithValues: names.map { ($0, Self.gpx(points: 1)) }))
    let scratch = try Self.scratch()
    defer { for made in [folder, scratch] { try? FileManager.default.removeItem(at: made) } }
    let executor = RunExecutor(workers: 1)
    // About six entries' worth: a file's start (64 bytes and its path), its chunk, its end.
    let reader = try RouteFileReadAhead.start(
      .folder(folder.path), folder: "workout-routes", scratchFolder: scratch.path, meter: nil, waitingLimit: 6 * 100,
      on: executor)
    usleep(300_000)
    #expect(executor.threads == 1, "the thread waits for its taker")
    var files: [String] = []
    reading: while true {
      switch try reader.next() {
      case .file(let path): files.append(path)
      case .end: break reading
      default: continue
      }
    }
    #expect(files == names.map { "workout-routes/" + $0 })
    // Dropped while the thread waits for room: it is stopped and waited for.
    do {
      let dropped = try RouteFileReadAhead.start(
        .folder(folder.path), folder: "workout-routes", scratchFolder: scratch.path, meter: nil,
        waitingLimit: 6 * 100, on: executor)
      usleep(100_000)
      _ = try dropped.next()
    }
    var waited = 0
    while executor.threads > 0, waited < 3000 {
      usleep(10_000)
      waited += 1
    }
    #expect(executor.threads == 0)
  }

  /// The spool counts against the run's output budget, as the rows it becomes would: a file of
  /// more points than the budget allows fails the read with `overBudget` (the export's fault),
  /// whatever the points' fate in the rows.
  @Test(.timeLimit(.minutes(10))) func aSpoolPastTheOutputBudgetFailsTheRead() throws {
    let folder = try Self.export(["many.gpx": Self.gpx(points: RouteFileReadAhead.chunkPoints * 3)])
    let scratch = try Self.scratch()
    defer { for made in [folder, scratch] { try? FileManager.default.removeItem(at: made) } }
    let meter = OutputMeter()
    // Room for one chunk of 1,024 points of 80 bytes, not two.
    meter.apply(OutputBudget(ratio: 1, allowance: 0), inputBytes: 100_000)
    let reader = try RouteFileReadAhead.start(
      .folder(folder.path), folder: "workout-routes", scratchFolder: scratch.path, meter: meter, on: testExecutor)
    var points = 0
    var failure: OutputError?
    reading: while true {
      do {
        switch try reader.next() {
        case .points(let chunk): points += chunk.count
        case .end: break reading
        default: continue
        }
      } catch {
        failure = error
        break reading
      }
    }
    guard case .overBudget(_, let bytes, let limit, _) = failure else {
      Issue.record("not stopped by the budget: \(String(describing: failure))")
      return
    }
    #expect(limit == 100_000 && bytes == 2 * 1024 * 80)
    #expect(points == 1024)
  }

  /// Many chunks, and the reader dropped after the first event: the thread stops and is waited
  /// for before its spool is closed.
  @Test(.timeLimit(.minutes(10))) func aReaderLeftEarlyStopsItsThread() throws {
    let points = RouteFileReadAhead.chunkPoints * 12
    let folder = try Self.export(["long.gpx": Self.gpx(points: points), "next.gpx": Self.gpx(points: 1)])
    let scratch = try Self.scratch()
    defer { for made in [folder, scratch] { try? FileManager.default.removeItem(at: made) } }
    // An executor of its own, whose threads only this reader starts.
    let executor = RunExecutor(workers: 1)
    do {
      let reader = try Self.reader(folder, scratch: scratch, executor: executor)
      if case .file(let path) = try reader.next() {
        #expect(path == "workout-routes/long.gpx")
      } else {
        Issue.record("the first event is not a file")
      }
    }
    // Its thread has ended (the executor counts it a moment after it is waited for).
    var waited = 0
    while executor.threads > 0, waited < 200 {
      usleep(10_000)
      waited += 1
    }
    #expect(executor.threads == 0)
    // A new reader after it gets everything.
    let again = try Self.reader(folder, scratch: scratch, executor: executor)
    #expect(try Self.events(again).last == "end 1 -")
  }
}
