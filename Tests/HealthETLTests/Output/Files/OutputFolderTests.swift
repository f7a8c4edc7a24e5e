import Foundation
import Testing

@testable import HealthETL

/// `--out` is resolved once (`OutputFolder`) and the check, the lock and the transaction use
/// that one value; `run.json` is amended (night summary, delivery) only when it reads strictly.
@Suite struct OutputFolderTests {
  private func scratch() throws -> String {
    let path = NSTemporaryDirectory() + "healthetl-folder-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return URL(fileURLWithPath: path).resolvingSymlinksInPath().path
  }

  @Test func aFolderIsAbsoluteWithoutDotsOrATrailingSlash() throws {
    let base = try scratch()
    defer { try? FileManager.default.removeItem(atPath: base) }
    let folder = OutputFolder(base + "/a/../out/")
    #expect(folder.given == base + "/a/../out/")
    #expect(folder.path == base + "/out")
    #expect(folder.realPath == base + "/out")
    #expect(folder.description == base + "/a/../out/")
  }

  /// A folder that is a link is swapped where it points, so the link survives the commit; the
  /// lock and the transaction agree on it because both take the one value.
  @Test func aLinkedFolderIsWhereItPoints() throws {
    let base = try scratch()
    defer { try? FileManager.default.removeItem(atPath: base) }
    try FileManager.default.createDirectory(atPath: base + "/target", withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(atPath: base + "/link", withDestinationPath: base + "/target")
    let folder = OutputFolder(base + "/link")
    #expect(folder.path == base + "/target")
    let lock = try OutputLock(folder)
    defer { lock.release() }
    let transaction = try OutputTransaction(folder)
    #expect(transaction.outputDirectory == base + "/target")
    let file = try transaction.create("x.txt")
    try file.write(Array("x\n".utf8))
    try file.close()
    try transaction.commit()
    #expect(FileManager.default.contents(atPath: base + "/link/x.txt") == Data("x\n".utf8))
    #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: base + "/link")) == base + "/target")
  }

  @Test func aFolderHoldingTheExportIsRefusedThroughItsRealPath() throws {
    let base = try scratch()
    defer { try? FileManager.default.removeItem(atPath: base) }
    _ = FileManager.default.createFile(atPath: base + "/export.zip", contents: Data())
    #expect(throws: OutputError.self) {
      try OutputFolderCheck.check(OutputFolder(base + "/."), input: base + "/export.zip")
    }
  }

  /// The run report an earlier commit wrote keeps every value as it was; one with a key twice is
  /// an error naming its line, not silently replaced by a report holding only the new section.
  @Test func runJSONIsReadStrictlyForAmending() throws {
    let base = try scratch()
    defer { try? FileManager.default.removeItem(atPath: base) }
    let path = base + "/run.json"
    #expect(try RunReport.readForAmending(path) == nil)
    try Data(#"{"jobs": 3, "seconds": 0.25, "sha256": null, "ok": true, "outputs": [{"path": "a.csv"}]}"#.utf8)
      .write(to: URL(fileURLWithPath: path))
    let object = try #require(try RunReport.readForAmending(path))
    #expect(object["jobs"] as? Int == 3)
    #expect(object["seconds"] as? Double == 0.25)
    #expect(object["sha256"] is NSNull)
    #expect(object["ok"] as? Bool == true)
    #expect(((object["outputs"] as? [[String: Any]])?.first?["path"] as? String) == "a.csv")
    try Data("{\n\"jobs\": 3,\n\"jobs\": 4}".utf8).write(to: URL(fileURLWithPath: path))
    #expect {
      _ = try RunReport.readForAmending(path)
    } throws: { error in
      guard case .ioError(let where_, let reason, _) = error as? OutputError else { return false }
      return where_ == path && reason.hasPrefix("line 3: ") && reason.contains("move it away")
    }
    try Data("[1]".utf8).write(to: URL(fileURLWithPath: path))
    #expect(throws: OutputError.self) { _ = try RunReport.readForAmending(path) }
  }

  /// Only a run.json that is not there is none: one that cannot be read (here a folder: EISDIR;
  /// under a descriptor limit EMFILE) is an error with its errno, so no night or delivery writes
  /// a report holding only its own section over it.
  @Test func anUnreadableRunJSONIsAnErrorNotMissing() throws {
    let base = try scratch()
    defer { try? FileManager.default.removeItem(atPath: base) }
    let path = base + "/run.json"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    #expect {
      _ = try RunReport.readForAmending(path)
    } throws: { error in
      guard case .ioError(let where_, let reason, let code) = error as? OutputError else { return false }
      return where_ == path && code == EISDIR && reason.contains("Is a directory")
    }
    #expect(try RunReport.readForAmending(base + "/none/run.json") == nil)
  }
}
