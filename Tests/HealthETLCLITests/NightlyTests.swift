import Foundation
import Testing

/// The nightly batch (Pipelines/docs/nightly.md, "Runs and the nightly batch") over a growing inbox:
/// deltas with no duplicates and no gaps, a lock, and safety against being killed.
@Suite(.serialized) struct NightlyTests {
  /// Three exports of one person, 10, 20 and 30 days from the same start: each contains the
  /// previous one's workouts (same seed, same days), as successive real exports do.
  static func makeExports(in directory: URL) throws -> [URL] {
    try [10, 20, 30].map { days in
      let url = directory.appendingPathComponent("export-\(days)d.zip")
      let result = try CLI.run(["sample", "--days", String(days), "--seed", "5", "--zip", "--out", url.path])
      #expect(result.status == 0, "\(result.stderr)")
      return url
    }
  }

  /// A work folder with the three exports, an empty inbox and an output folder path.
  static func growingInbox() throws -> (work: URL, exports: [URL], inbox: URL, out: URL) {
    let work = try CLI.temporaryDirectory()
    let inbox = work.appendingPathComponent("inbox")
    try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
    return (work, try makeExports(in: work), inbox, work.appendingPathComponent("out"))
  }

  /// The record ids of a server-records file: an array (`workout_records.json`) or a delta
  /// (`workout_records.new.json`: sequence, final, records).
  static func recordIDs(_ url: URL) throws -> [String] {
    let json = try JSONSerialization.jsonObject(with: try Data(contentsOf: url))
    let records = try #require((json as? [String: Any])?["records"] ?? json) as? [[String: String]]
    return try #require(records).compactMap { $0["recordUuid"] }
  }

  /// A delta's sequence number and whether it is final.
  static func deltaHeader(_ url: URL) throws -> (sequence: Int, final: Bool) {
    let object = try #require(try JSONSerialization.jsonObject(with: try Data(contentsOf: url)) as? [String: Any])
    return (try #require(object["sequence"] as? Int), try #require(object["final"] as? Bool))
  }

  /// Copies an export into the inbox with a modification time that orders it after the others.
  static func deliver(_ export: URL, to inbox: URL, order: Int) throws {
    let target = inbox.appendingPathComponent(export.lastPathComponent)
    try FileManager.default.copyItem(at: export, to: target)
    try FileManager.default.setAttributes(
      [.modificationDate: Date(timeIntervalSince1970: 1_700_000_000 + Double(order) * 86_400)],
      ofItemAtPath: target.path)
  }

  static func nightlyArguments(_ inbox: URL, _ out: URL) -> [String] {
    ["nightly", "--inbox", inbox.path, "--out", out.path, "--pipeline", CLI.pipeline("workouts")]
  }

  static func nightly(_ inbox: URL, _ out: URL) throws -> CLI.Result {
    try CLI.run(nightlyArguments(inbox, out))
  }

  /// A nightly run in the background, to race or kill.
  static func startNightly(_ inbox: URL, _ out: URL) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CLI.binary)
    process.arguments = nightlyArguments(inbox, out)
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process
  }

  @Test func threeNightsDeliverEveryWorkoutExactlyOnce() throws {
    let (work, exports, inbox, out) = try Self.growingInbox()
    defer { try? FileManager.default.removeItem(at: work) }

    var deltas: [[String]] = []
    for (night, export) in exports.enumerated() {
      try Self.deliver(export, to: inbox, order: night)
      let result = try Self.nightly(inbox, out)
      #expect(result.status == 0, "\(result.stderr)")
      #expect(result.stderr.contains("processed 1 export(s)"), "\(result.stderr)")
      #expect(result.stderr.contains("skipped \(night) already processed"), "\(result.stderr)")
      deltas.append(try Self.recordIDs(out.appendingPathComponent("workout_records.new.json")))
    }
    let everything = try Self.recordIDs(out.appendingPathComponent("workout_records.json"))
    let delivered = deltas.flatMap { $0 }
    #expect(delivered.count == Set(delivered).count, "a workout was delivered twice")
    #expect(Set(delivered) == Set(everything), "a workout was never delivered")
    #expect(deltas.allSatisfy { !$0.isEmpty })
    #expect(everything.count > 10)

    // A night with nothing new delivers nothing.
    let quiet = try Self.nightly(inbox, out)
    #expect(quiet.status == 0)
    #expect(quiet.stderr.contains("processed 0 export(s), skipped 3"))
    #expect(try Self.recordIDs(out.appendingPathComponent("workout_records.new.json")).isEmpty)
  }

  @Test func aLockedOutputFolderIsExit75() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let inbox = work.appendingPathComponent("inbox")
    let out = work.appendingPathComponent("out")
    try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
    try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
    try FileManager.default.copyItem(
      at: URL(fileURLWithPath: CLI.sampleExport), to: inbox.appendingPathComponent("export.zip"))
    let descriptor = open(out.appendingPathComponent(".healthetl.lock").path, O_RDWR | O_CREAT, 0o644)
    defer { close(descriptor) }
    #expect(flock(descriptor, LOCK_EX | LOCK_NB) == 0)
    let result = try Self.nightly(inbox, out)
    #expect(result.status == 75, "\(result.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: out.path) == [".healthetl.lock"])
  }

  /// Two real nightly runs started together: one does the work, the other exits 75.
  @Test func twoConcurrentNightsOneExits75() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let inbox = work.appendingPathComponent("inbox")
    let out = work.appendingPathComponent("out")
    try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
    let big = inbox.appendingPathComponent("export.xml")
    #expect(try CLI.run(["sample", "--days", "60", "--seed", "9", "--out", big.path]).status == 0)
    try? FileManager.default.removeItem(at: inbox.appendingPathComponent("workout-routes"))
    let processes = [try Self.startNightly(inbox, out), try Self.startNightly(inbox, out)]
    for process in processes { process.waitUntilExit() }
    let statuses = processes.map(\.terminationStatus).sorted()
    #expect(statuses == [0, 75])
  }

  /// Killed nights lose nothing and repeat no completed night's delivery.
  @Test func killedNightsStillDeliverEverythingOnce() throws {
    let (work, exports, inbox, out) = try Self.growingInbox()
    defer { try? FileManager.default.removeItem(at: work) }
    var completed: [[String]] = []
    var killedMidway = 0
    for (night, export) in exports.enumerated() {
      try Self.deliver(export, to: inbox, order: night)
      // Kill the night part-way, then let the next attempt finish it.
      let process = try Self.startNightly(inbox, out)
      Thread.sleep(forTimeInterval: 0.02 + 0.1 * Double(night))
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      // A night that finished before the kill landed was a completed night: its delta counts.
      if process.terminationReason == .exit {
        completed.append(try Self.recordIDs(out.appendingPathComponent("workout_records.new.json")))
      } else {
        killedMidway += 1
      }
      #expect(try Self.nightly(inbox, out).status == 0)
      completed.append(try Self.recordIDs(out.appendingPathComponent("workout_records.new.json")))
    }
    let everything = try Self.recordIDs(out.appendingPathComponent("workout_records.json"))
    let delivered = completed.flatMap { $0 }
    #expect(Set(delivered) == Set(everything), "a workout was lost")
    #expect(delivered.count == Set(delivered).count, "a completed night's workout was delivered again")
    #expect(killedMidway > 0, "every kill landed after the night had finished; nothing was tested")
  }
}
