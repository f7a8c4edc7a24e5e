import Foundation
import Testing

/// A state file that cannot be used stops the run with exit 65 and a message naming the file,
/// never read as empty (which would deliver every workout again); a bad export in the inbox is
/// quarantined instead of blocking the exports after it.
@Suite(.serialized) struct NightlyStateTests {
  static func folderWithState(_ text: String?) throws -> (work: URL, out: URL) {
    let work = try CLI.temporaryDirectory()
    let out = work.appendingPathComponent("out")
    try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
    if let text {
      try text.write(to: out.appendingPathComponent(".healthetl-state.json"), atomically: true, encoding: .utf8)
    }
    return (work, out)
  }

  static let sha = String(repeating: "a", count: 64)
  static let record =
    #"{"recordDate": "20240318", "execTypeCode": "SERVER01", "execStartTime": "20240318070000", "execEndTime": "20240318073000", "execRuntime": "1800", "deviceTypeCode": "WATCH", "recordUuid": "289DA714-C2DA-5473-8C28-E278807A0917"}"#

  @Test(arguments: [
    (#"{"version": 1, "emitted": "x", "pending": [], "processed": []}"#, "emitted"),
    (#"{}"#, "version"),
    (#"{"version": 1, "emitted": ["289DA714-C2DA-5473-8C28-E278807A0917", 7]}"#, "emitted[1]"),
    (#"{"version": 99}"#, "version"),
    (#"{"version": 2, "pending": [{"recordUuid": 5}]}"#, "pending[0].recordDate"),
    (#"{"version": 1, "processed": [{"sha256": "x", "name": "a.zip", "bytes": 1}]}"#, "processed[0].sha256"),
    (#"[1, 2]"#, ""),
    ("{\"version\": 1, \"emitted\": [\"not a uuid\"]}", "emitted[0]"),
  ])
  func aStateWithWrongTypesIsRefused(text: String, keyPath: String) throws {
    let (work, out) = try Self.folderWithState(text)
    defer { try? FileManager.default.removeItem(at: work) }
    let before = try CLI.snapshot(out)
    let result = try CLI.run(["run", "--quiet", "--out", out.path, CLI.sampleExport])
    #expect(result.status == 65, "\(result.stderr)")
    #expect(result.stderr.contains(".healthetl-state.json"), "\(result.stderr)")
    if !keyPath.isEmpty { #expect(result.stderr.contains(": \(keyPath): "), "\(result.stderr)") }
    #expect(result.stderr.contains("move it"), "\(result.stderr)")
    var after = try CLI.snapshot(out)
    after[".healthetl.lock"] = nil
    #expect(after == before, "a refused state changed the folder")
  }

  @Test func aStateThatIsADirectoryOrADanglingLinkIsRefused() throws {
    let (work, out) = try Self.folderWithState(nil)
    defer { try? FileManager.default.removeItem(at: work) }
    let state = out.appendingPathComponent(".healthetl-state.json")
    try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
    var result = try CLI.run(["run", "--quiet", "--out", out.path, CLI.sampleExport])
    #expect(result.status == 65, "\(result.stderr)")
    #expect(result.stderr.contains("not a regular file"), "\(result.stderr)")
    try FileManager.default.removeItem(at: state)
    try FileManager.default.createSymbolicLink(atPath: state.path, withDestinationPath: "/nonexistent/state.json")
    result = try CLI.run(["run", "--quiet", "--out", out.path, CLI.sampleExport])
    #expect(result.status == 65, "\(result.stderr)")
    #expect(result.stderr.contains("symbolic link to nothing"), "\(result.stderr)")
  }

  @Test func aVersionOneStateIsReadAndItsIdsCarriedOver() throws {
    let (work, out) = try Self.folderWithState(nil)
    defer { try? FileManager.default.removeItem(at: work) }
    // A first run emits every workout; a version 1 state listing all of their ids must make the
    // next run's delta empty.
    #expect(try CLI.run(["run", "--quiet", "--out", out.path, CLI.sampleExport]).status == 0)
    let ids = try NightlyTests.recordIDs(out.appendingPathComponent("workout_records.json"))
    let list = ids.map { "\"\($0)\"" }.joined(separator: ", ")
    try #"{"version": 1, "emitted": [\#(list)], "pending": [], "processed": []}"#.write(
      to: out.appendingPathComponent(".healthetl-state.json"), atomically: true, encoding: .utf8)
    try FileManager.default.removeItem(at: out.appendingPathComponent(".healthetl-emitted"))
    #expect(try CLI.run(["run", "--quiet", "--out", out.path, CLI.sampleExport]).status == 0)
    #expect(try NightlyTests.recordIDs(out.appendingPathComponent("workout_records.new.json")).isEmpty)
    #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent(".healthetl-emitted").path))
    // A version 2 state without its ids beside it is refused rather than delivering again.
    try FileManager.default.removeItem(at: out.appendingPathComponent(".healthetl-emitted"))
    let result = try CLI.run(["run", "--quiet", "--out", out.path, CLI.sampleExport])
    #expect(result.status == 65, "\(result.stderr)")
    #expect(result.stderr.contains(".healthetl-emitted: is missing"), "\(result.stderr)")
  }

  @Test func aBadExportIsQuarantinedAndTheRestProcessed() throws {
    let (work, exports, inbox, out) = try NightlyTests.growingInbox()
    defer { try? FileManager.default.removeItem(at: work) }
    // Night 1: an empty file and a truncated export arrive before a good one.
    let empty = inbox.appendingPathComponent("a-empty.zip")
    _ = FileManager.default.createFile(atPath: empty.path, contents: Data())
    let cut = inbox.appendingPathComponent("b-cut.zip")
    let bytes = try Data(contentsOf: exports[0])
    try bytes.prefix(bytes.count / 2).write(to: cut)
    for (order, file) in [empty, cut].enumerated() {
      try FileManager.default.setAttributes(
        [.modificationDate: Date(timeIntervalSince1970: 1_600_000_000 + Double(order))], ofItemAtPath: file.path)
    }
    try NightlyTests.deliver(exports[0], to: inbox, order: 0)
    var result = try NightlyTests.nightly(inbox, out)
    #expect(result.status == 65, "something was quarantined: \(result.stderr)")
    #expect(result.stderr.contains("processed 1 export(s) (export-10d.zip)"), "\(result.stderr)")
    #expect(result.stderr.contains("quarantined a-empty.zip"), "\(result.stderr)")
    #expect(result.stderr.contains("quarantined b-cut.zip"), "\(result.stderr)")
    let firstNight = try NightlyTests.recordIDs(out.appendingPathComponent("workout_records.new.json"))
    #expect(!firstNight.isEmpty)
    let report = try #require(
      try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("run.json"))) as? [String: Any]
    )
    let nightly = try #require(report["nightly"] as? [String: Any])
    #expect(
      (nightly["quarantined"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == [
        "a-empty.zip", "b-cut.zip",
      ])

    // Night 2: unchanged, the bad files are skipped (exit 0); a new export is processed.
    try NightlyTests.deliver(exports[1], to: inbox, order: 1)
    result = try NightlyTests.nightly(inbox, out)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.contains("still quarantined, unchanged: a-empty.zip"), "\(result.stderr)")
    #expect(result.stderr.contains("processed 1 export(s) (export-20d.zip)"), "\(result.stderr)")

    // Night 3: the cut file is replaced by a whole export: its new content is processed.
    try FileManager.default.removeItem(at: cut)
    try FileManager.default.copyItem(at: exports[2], to: cut)
    result = try NightlyTests.nightly(inbox, out)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.contains("processed 1 export(s) (b-cut.zip)"), "\(result.stderr)")
  }
}
