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
  static func folder() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("disk-full-\(UUID().uuidString)").path
  }

  /// health.sqlite: SQLite says "database or disk is full" (`SQLITE_FULL`), and the error carries
  /// the `ENOSPC` of its failed write.
  @Test func aFullDiskUnderTheDatabaseIsTheMachines() throws {
    let folder = Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder)
    defer { transaction.abandon() }
    try FileManager.default.createSymbolicLink(
      atPath: transaction.stagedPath(RunDatabase.file), withDestinationPath: "/dev/full")
    let database = try RunDatabase(
      transaction: transaction,
      entries: [.init(file: "a.csv", job: "a", table: "a", rows: "one row per n", keys: TableKeys(primary: ["n"]))])
    let writer = try #require(database.claim(file: "a.csv", columns: [.integer("n", "")], zone: .utc))
    for n in 0..<10_000 { writer.append([.integer(Int64(n))]) }
    database.startClosing()
    do {
      _ = try database.closed(transaction)
      Issue.record("rows were written to a full disk")
    } catch {
      guard case .ioError(let path, let reason, let code) = error else {
        Issue.record("unexpected error \(error)")
        return
      }
      #expect(path == RunDatabase.file)
      #expect(reason.contains("database or disk is full"))
      #expect(code == ENOSPC)
      #expect(NightlyBatch.Fault.of(.output(error)) == .machine)
    }
  }

  /// health.xlsx: libxlsxwriter fails the close in its own words, and the error carries the
  /// `ENOSPC` its zip writer met.
  @Test func aFullDiskUnderTheWorkbookIsTheMachines() throws {
    let folder = Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder)
    defer { transaction.abandon() }
    try FileManager.default.createSymbolicLink(
      atPath: transaction.stagedPath(RunWorkbook.file), withDestinationPath: "/dev/full")
    let workbook = try RunWorkbook(
      transaction: transaction, plan: RunWorkbookTests.plan, leftToCSV: [], zone: .utc, created: nil)
    let sheet = try #require(workbook.claim(file: "a.csv"))
    for n in 0..<2000 { sheet.append([.integer(Int64(n)), .text("row \(n)")]) }
    workbook.startClosing()
    do {
      _ = try workbook.closed()
      Issue.record("a workbook was written to a full disk")
    } catch {
      guard case .ioError(let path, _, let code) = error else {
        Issue.record("unexpected error \(error)")
        return
      }
      #expect(path == RunWorkbook.file)
      #expect(code == ENOSPC)
      #expect(NightlyBatch.Fault.of(.output(error)) == .machine)
    }
  }

  /// A CSV file: the write's own `ENOSPC`.
  @Test func aFullDiskUnderATableIsTheMachines() throws {
    let file = try OutputFile(path: "/dev/full")
    do {
      try file.write(Array(repeating: UInt8(ascii: "x"), count: 1 << 20))
      try file.close()
      Issue.record("a table was written to a full disk")
    } catch {
      guard case .ioError(_, _, let code) = error else {
        Issue.record("unexpected error \(error)")
        return
      }
      #expect(code == ENOSPC)
      #expect(NightlyBatch.Fault.of(.output(error)) == .machine)
    }
  }

  /// Foundation's file errors carry their POSIX number through, whichever way they say it.
  @Test func foundationErrorsGiveTheirSystemNumber() {
    let folder = Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    do {
      try FileManager.default.createDirectory(
        atPath: "/proc/healthetl-\(UUID().uuidString)", withIntermediateDirectories: true)
      Issue.record("a folder was made in /proc")
    } catch {
      #expect(OutputTransaction.code(error).map { [ENOENT, EACCES, EPERM, EROFS].contains($0) } == true, "\(error)")
    }
    #expect(OutputTransaction.code(CocoaError(.fileWriteOutOfSpace)) == ENOSPC)
    #expect(OutputTransaction.code(POSIXError(.EIO)) == EIO)
    #expect(OutputTransaction.code(CocoaError(.coderInvalidValue)) == nil)
  }
}
