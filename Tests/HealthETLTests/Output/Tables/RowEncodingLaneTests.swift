import Foundation
import HealthModel
import Testing

@testable import HealthETL

/// Rows encoded on the run's pool are the bytes the writer would write itself, in order,
/// and a writer that fails part-way stops its lane.
@Suite struct RowEncodingLaneTests {
  static let columns: [Column] = [
    .text("name", "a text that sometimes needs quoting"),
    .number("value", precision: .decimals(2), "a number to two places"),
    .instant("at", "an instant in the table's zone"),
    .integer("count", "a whole number, sometimes missing"),
  ]
  static let zone = ZoneRules.fixed(offsetSeconds: 3600)

  static func row(_ index: Int) -> [Field] {
    [
      .text(index % 7 == 0 ? "x,\(index)" : "t\(index)"), .number(Double(index) / 3),
      .instant(Instant(seconds: Int64(index) * 8640)), index % 5 == 0 ? .missing : .integer(Int64(index)),
    ]
  }

  /// The staged bytes of a table of `rows` rows.
  static func written(rows: Int, format: TableFormat, onThread: Bool) throws -> [UInt8] {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rows-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder.path)
    defer { transaction.abandon() }
    var writer = try TableWriter(
      transaction, path: "t/table", columns: columns, format: format, zone: zone, lane: onThread ? testExecutor : nil)
    for index in 0..<rows { try writer.append(row(index)) }
    let summary = try writer.close()
    #expect(summary.rows == rows)
    return Array(try Data(contentsOf: URL(fileURLWithPath: transaction.stagedPath("t/table"))))
  }

  @Test(arguments: [TableFormat.csv, .json, .ndjson])
  func twoRowsAreWrittenAsWorkedOutByHand(format: TableFormat) throws {
    // Row 0: "x,0" needs quotes in CSV; 0 / 3 = 0; 0 s is 01:00 at +01:00; the count is missing.
    // Row 1: 1 / 3 to two places is 0.33; 8640 s is 02:24 UTC, 03:24 at +01:00.
    let expected: String
    switch format {
    case .csv:
      expected = """
        name,value,at,count
        "x,0",0,1970-01-01T01:00:00+01:00,
        t1,0.33,1970-01-01T03:24:00+01:00,1

        """
    case .json:
      expected = """
        [
          {"name": "x,0", "value": 0, "at": "1970-01-01T01:00:00+01:00", "count": null},
          {"name": "t1", "value": 0.33, "at": "1970-01-01T03:24:00+01:00", "count": 1}
        ]

        """
    case .ndjson:
      expected = """
        {"name": "x,0", "value": 0, "at": "1970-01-01T01:00:00+01:00", "count": null}
        {"name": "t1", "value": 0.33, "at": "1970-01-01T03:24:00+01:00", "count": 1}

        """
    }
    #expect(String(decoding: try Self.written(rows: 2, format: format, onThread: true), as: UTF8.self) == expected)
    #expect(String(decoding: try Self.written(rows: 2, format: format, onThread: false), as: UTF8.self) == expected)
  }

  /// More batches than may be in flight, and a last batch that is not full: the same bytes.
  @Test(arguments: [TableFormat.csv, .json, .ndjson], [0, 1, 2047, 2048, 19_000])
  func aThreadWritesTheSameBytes(format: TableFormat, rows: Int) throws {
    let here = try Self.written(rows: rows, format: format, onThread: false)
    let there = try Self.written(rows: rows, format: format, onThread: true)
    #expect(here.count == there.count)
    #expect(here == there)
  }

  /// More batches than may wait, to a file that takes no bytes: the thread keeps taking them
  /// (the caller never blocks) and the close reports the first error.
  @Test(.timeLimit(.minutes(10)), arguments: ["/dev/full", "/nonexistent-folder/t.csv"])
  func aWriteErrorIsReportedByTheCloseAndTheCallerNeverWaitsForever(path: String) throws {
    let thread = RowEncodingLane(
      encoder: RowEncoder(columns: [.integer("n", "")], format: .csv, zone: .utc), appendingTo: path,
      executor: testExecutor)
    for batch in 0..<(RowEncodingLane.depth * 3) {
      thread.send((0..<2048).map { _ in .integer(Int64(batch)) })
    }
    do {
      try thread.finish()
      Issue.record("writing to \(path) succeeded")
    } catch {
      guard case .ioError(let failed, let reason, _) = error else {
        Issue.record("unexpected error \(error)")
        return
      }
      #expect(failed == path)
      #expect(reason == (path == "/dev/full" ? "No space left on device" : "No such file or directory"))
    }
  }

  /// A mart that fails part-way drops its writer without closing it: the thread ends, and the
  /// transaction is abandoned as usual.
  @Test(.timeLimit(.minutes(10))) func aWriterDroppedWithoutClosingEndsItsThread() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rows-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder.path)
    defer { transaction.abandon() }
    do {
      var writer = try TableWriter(
        transaction, path: "t.csv", columns: Self.columns, zone: Self.zone, lane: testExecutor)
      for index in 0..<30_000 { try writer.append(Self.row(index)) }
    }
    // The rows handed over were written before the thread ended; none was half-written.
    let text = try String(contentsOfFile: transaction.stagedPath("t.csv"), encoding: .utf8)
    #expect(text.hasSuffix("\n"))
    #expect(text.split(separator: "\n").count == 1 + 30_000 / TableWriter.handOverRows * TableWriter.handOverRows)
  }
}
