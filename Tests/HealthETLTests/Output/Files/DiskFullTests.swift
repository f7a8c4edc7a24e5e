import Foundation
import HealthModel
import Testing

@testable import HealthETL

/// A full disk is the machine's fault wherever a run meets it: the output error carries the
/// system's error number (`ENOSPC`) whichever library was writing, so the nightly batch retries
/// the export the next night instead of counting it towards quarantine. The disk is Linux's
/// `/dev/full`, whose every write fails with `ENOSPC`, reached through a link where the file
/// would be staged.
///
/// The limit catches a hang, never slowness.
@Suite(.timeLimit(.minutes(5))) struct DiskFullTests {
  /// A run's transaction whose `file` is staged on `/dev/full`.
  static func onFullDisk(_ file: String, _ body: (OutputTransaction) throws -> Void) throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("disk-full-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder)
    defer { transaction.abandon() }
    try FileManager.default.createSymbolicLink(atPath: transaction.stagedPath(file), withDestinationPath: "/dev/full")
    try body(transaction)
  }

  /// The I/O error `write` ends with, checked to be the full disk's and the machine's fault.
  static func expectFullDisk(
    at path: String?, _ write: () throws(OutputError) -> Void, sourceLocation: SourceLocation = #_sourceLocation
  ) -> String? {
    do {
      try write()
      Issue.record("written to a full disk", sourceLocation: sourceLocation)
    } catch {
      guard case .ioError(let failed, let reason, let code) = error else {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
        return nil
      }
      if let path { #expect(failed == path, sourceLocation: sourceLocation) }
      #expect(code == ENOSPC, sourceLocation: sourceLocation)
      #expect(NightlyBatch.Fault.of(.output(error)) == .machine, sourceLocation: sourceLocation)
      return reason
    }
    return nil
  }

  /// health.sqlite: SQLite says "database or disk is full" (`SQLITE_FULL`), and the error carries
  /// the `ENOSPC` of its failed write.
  @Test func aFullDiskUnderTheDatabaseIsTheMachines() throws {
    try Self.onFullDisk(RunDatabase.file) { transaction in
      let database = try RunDatabase.start(
        on: testExecutor, transaction: transaction,
        entries: [.init(file: "a.csv", job: "a", table: "a", rows: "one row per n", keys: TableKeys(primary: ["n"]))])
      let writer = try #require(database.claim(file: "a.csv", columns: [.integer("n", "")], zone: .utc))
      for n in 0..<10_000 { writer.append([.integer(Int64(n))]) }
      database.startClosing()
      let reason = Self.expectFullDisk(at: RunDatabase.file) { () throws(OutputError) in
        _ = try database.closed(transaction)
      }
      #expect(reason?.contains("database or disk is full") == true)
    }
  }

  /// health.xlsx: libxlsxwriter fails the close in its own words, and the error carries the
  /// `ENOSPC` its zip writer met.
  @Test func aFullDiskUnderTheWorkbookIsTheMachines() throws {
    try Self.onFullDisk(RunWorkbook.file) { transaction in
      let workbook = try RunWorkbook.start(
        on: testExecutor, transaction: transaction, plan: RunWorkbookTests.plan, leftToCSV: [], zone: .utc, created: nil
      )
      let sheet = try #require(workbook.claim(file: "a.csv"))
      for n in 0..<2000 { sheet.append([.integer(Int64(n)), .text("row \(n)")]) }
      workbook.startClosing()
      _ = Self.expectFullDisk(at: RunWorkbook.file) { () throws(OutputError) in _ = try workbook.closed() }
    }
  }

  /// A CSV file: the write's own `ENOSPC`.
  @Test func aFullDiskUnderATableIsTheMachines() throws {
    let file = try OutputFile(path: "/dev/full")
    _ = Self.expectFullDisk(at: "/dev/full") { () throws(OutputError) in
      try file.write(Array(repeating: UInt8(ascii: "x"), count: 1 << 20))
      try file.close()
    }
  }

  /// Foundation's file errors carry their POSIX number through, whichever way they say it.
  @Test func foundationErrorsGiveTheirSystemNumber() {
    // A folder inside a regular file: the system says ENOTDIR.
    do {
      try FileManager.default.createDirectory(atPath: "/etc/hostname/x", withIntermediateDirectories: true)
      Issue.record("a folder was made inside a file")
    } catch {
      #expect(OutputError.systemCode(of: error) == ENOTDIR, "\(error)")
    }
    #expect(OutputError.systemCode(of: CocoaError(.fileWriteOutOfSpace)) == ENOSPC)
    #expect(OutputError.systemCode(of: POSIXError(.EIO)) == EIO)
    #expect(OutputError.systemCode(of: CocoaError(.coderInvalidValue)) == nil)
  }
}
