import Foundation
import HealthModel
import Testing

@testable import HealthETL

/// A `RowWriter` writes each row's fields in the order of its table's declaration, from the
/// values its columns read.
@Suite struct RowWriterTests {
  struct Reading {
    var name: String?
    var value: Double?
    var count: Int?
  }

  static let table = RowTable<Reading>(
    "readings", rows: "one row per reading", defaultFile: "readings.csv",
    columns: [
      .integer("count", "a whole number, sometimes missing") { $0.count.map(Int64.init) },
      .text("name", "a text, sometimes missing") { $0.name },
      .number("value", precision: .decimals(1), "a number to one place") { $0.value },
    ])

  @Test func aRowAfterAFullerOneKeepsNoneOfItsValues() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rowwriter-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder.path)
    defer { transaction.abandon() }
    var writer = try RowWriter(transaction, path: "readings.csv", table: Self.table, zone: .utc)
    try writer.append(Reading(name: "a,b", value: 2.25, count: 3))
    try writer.append(Reading(name: nil, value: nil, count: nil))
    try writer.append(Reading(name: "c", value: -0.04, count: 0))
    #expect(try writer.close().rows == 3)
    // Columns in declared order (count, name, value); 2.25 to one place, halves away from zero,
    // is 2.3; -0.04 is -0.0, written 0; the empty row stays empty.
    let written = try String(
      contentsOfFile: transaction.stagedPath("readings.csv"), encoding: .utf8)
    #expect(
      written == """
        count,name,value
        3,"a,b",2.3
        ,,
        0,c,0

        """)
  }

  @Test func fieldsOfARowAreItsColumnsValuesInOrder() {
    #expect(Self.table.fields(of: Reading(name: "x", value: 1.5, count: 7)) == [.integer(7), .text("x"), .number(1.5)])
    var fields: [Field] = [.text("before")]
    Self.table.appendFields(of: Reading(name: nil, value: nil, count: 1), to: &fields)
    #expect(fields == [.text("before"), .integer(1), .missing, .missing])
  }
}
