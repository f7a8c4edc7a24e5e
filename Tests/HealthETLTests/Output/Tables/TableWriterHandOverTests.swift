import Foundation
import HealthModel
import Testing

@testable import HealthETL

/// A table's writer builds each row's fields once and hands the rows over in batches of
/// `TableWriter.handOverRows`: every sink and the encoding lane get the same array, none a copy.
@Suite struct TableWriterHandOverTests {
  struct Reading {
    var index: Int
  }

  static let table = RowTable<Reading>(
    "readings", rows: "one row per reading", defaultFile: "readings.csv",
    columns: [
      .integer("n", "the reading's number") { Int64($0.index) },
      .text("name", "a text") { "r\($0.index)" },
    ])

  /// Takes the rows of every table and keeps each array it is handed.
  final class RecordingSink: TableSink, TableRowSink {
    var handed: [[Field]] = []
    var flushes = 0
    func wants(file: String) -> Bool { true }
    func claim(file: String, pattern: String?, columns: [Column], zone: ZoneRules) -> (any TableRowSink)? { self }
    func append(_ fields: [Field]) { handed.append(fields) }
    func flush() { flushes += 1 }
    var storage: [UnsafeRawPointer?] { handed.map { $0.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) } } }
  }

  @Test(arguments: [false, true]) func sinksShareTheBatchesOfWholeRows(onThread: Bool) throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("handover-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder.path)
    defer { transaction.abandon() }
    let sinks = TableSinks()
    let first = RecordingSink()
    let second = RecordingSink()
    sinks.add(first)
    sinks.add(second)
    var writer = try RowWriter(
      transaction, path: "readings.csv", table: Self.table, zone: .utc, sinks: sinks,
      lane: onThread ? testExecutor : nil)
    let rows = 2 * TableWriter.handOverRows + 76
    for index in 0..<rows { try writer.append(Reading(index: index)) }
    #expect(try writer.close().rows == rows)
    // Two full batches and the rest at the close, two fields a row, in order.
    #expect(first.handed.map(\.count) == [1024, 1024, 152])
    #expect(first.handed.joined().map { $0 } == (0..<rows).flatMap { [Field.integer(Int64($0)), .text("r\($0)")] })
    #expect(first.flushes == 1)
    // The same storage, not a copy each.
    #expect(first.storage == second.storage)
    #expect(second.handed.map(\.count) == [1024, 1024, 152])
    let text = try String(contentsOfFile: transaction.stagedPath("readings.csv"), encoding: .utf8)
    let lines = text.split(separator: "\n")
    #expect(lines.count == 1 + rows)
    #expect(lines[1] == "0,r0")
    #expect(lines[rows] == "\(rows - 1),r\(rows - 1)")
  }

  /// A sink's batch: rows that come one at a time are gathered into batches of 3 rows here; a
  /// batch that comes whole goes over as it is, the same storage.
  @Test func aSinkGathersSingleRowsAndPassesWholeBatchesOn() {
    var batch = SinkBatch(rows: 3, columns: 2)
    let row: [Field] = [.integer(1), .text("a")]
    #expect(batch.add(row) == nil)
    #expect(batch.add(row) == nil)
    #expect(batch.add(row)?.count == 6)
    #expect(batch.take() == nil)
    let whole = [Field](repeating: .integer(2), count: 8)
    let passed = batch.add(whole)
    #expect(passed == whole)
    #expect(Self.storage(passed ?? []) == Self.storage(whole))
    #expect(batch.add(row) == nil)
    #expect(batch.add([]) == nil)
    #expect(batch.take() == row)
    #expect(batch.take() == nil)
  }

  static func storage(_ fields: [Field]) -> UnsafeRawPointer? {
    fields.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
  }
}
