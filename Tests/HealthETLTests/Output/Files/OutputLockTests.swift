import Foundation
import Testing

@testable import HealthETL

/// One run at a time per output folder (Pipelines/docs/nightly.md, "Runs and the nightly batch"), even
/// when the lock file is deleted during a run and across the commit's folder exchange.
@Suite struct OutputLockTests {
  private func folder() throws -> String {
    let path = NSTemporaryDirectory() + "healthetl-lock-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
  }

  private func isLocked(_ directory: String) -> Bool {
    do {
      let lock = try OutputLock(directory: directory)
      lock.release()
      return false
    } catch {
      if case .locked = error { return true }
      Issue.record("unexpected \(error)")
      return false
    }
  }

  /// This process's open descriptors whose path (deleted or not) names `folder` or its staging.
  static func descriptors(naming folder: String) throws -> Int {
    let name = (folder as NSString).lastPathComponent
    return try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").filter {
      ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) ?? "").contains(name)
    }.count
  }

  @Test func deletingTheLockFileLetsNoSecondRunIn() throws {
    let out = try folder()
    defer { try? FileManager.default.removeItem(atPath: out) }
    let lock = try OutputLock(directory: out)
    try FileManager.default.removeItem(atPath: out + "/" + ToolFiles.lock)
    #expect(isLocked(out))
    lock.release()
    #expect(!isLocked(out))
  }

  @Test func theFolderACommitPutsInPlaceIsLockedToo() throws {
    let out = try folder()
    defer { try? FileManager.default.removeItem(atPath: out) }
    let lock = try OutputLock(directory: out)
    var before = stat()
    #expect(stat(out, &before) == 0)
    for round in 0..<2 {
      let transaction = try OutputTransaction(outputDirectory: out)
      let file = try transaction.create("round.txt")
      try file.write(Array("\(round)\n".utf8))
      try file.close()
      try transaction.commit()
      try? FileManager.default.removeItem(atPath: out + "/" + ToolFiles.lock)
      #expect(isLocked(out), "round \(round)")
    }
    // Many commits under one lock (a night of many exports) keep a bounded number of this
    // folder's descriptors open: the lock file, the folder first locked, the one at the name (and
    // a replacement during a commit). Other tests run in this process, so only this folder's count.
    for round in 2..<50 {
      let transaction = try OutputTransaction(outputDirectory: out)
      let file = try transaction.create("round.txt")
      try file.write(Array("\(round)\n".utf8))
      try file.close()
      try transaction.commit()
    }
    #expect(try Self.descriptors(naming: out) <= 4)
    #expect(isLocked(out))
    var after = stat()
    #expect(stat(out, &after) == 0)
    // The exchange really put another folder at the name.
    #expect(after.st_ino != before.st_ino)
    #expect(try String(contentsOfFile: out + "/round.txt", encoding: .utf8) == "49\n")
    lock.release()
    #expect(!isLocked(out))
  }
}
