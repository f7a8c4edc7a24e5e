import Foundation
import HealthModel
import Testing

@testable import HealthETL

/// A `{type}` output of many files in `health.sqlite` (issue 31, item 5): the work grows with the
/// files, not with their square.
///
/// What made it square is SQLite's: each `CREATE` reads its schema table back and walks every
/// table of the schema, so creating the T-th table costs about T, and T tables cost T²/2 (10,000
/// sample types took 144 s, 20,000 did not finish in 20 minutes). The work of one run is counted
/// here deterministically as that sum over the schema's entries (tables and indexes) — the entries
/// each `CREATE` finds — read from the finished file; timing a shared machine would be noise. With
/// a table per file the sum grows ×64 for ×8 files (it failed so before the fix, as it does with
/// `tablesPerPattern: .max`: 202 entries for 100 files, 1,602 for 800, work 20,301 → 1,282,401,
/// ×63.2); with the pattern's later files sharing one table it is constant (104 entries, work
/// 5,356 at every size), and the rows grow ×8.
@Suite struct DatabaseManyTablesTests {
  static let pattern = "samples/{type}.csv"

  /// One `{type}` file per type, one row per file, through the database's own thread; the
  /// schema's entries and each table's rows of the finished file.
  static func run(files: Int, tablesPerPattern: Int) throws -> (schema: Int, rows: [String: Int], metadata: [UInt8]) {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("many-tables-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder.path)
    defer { transaction.abandon() }
    let database = try RunDatabase.start(
      on: testExecutor, transaction: transaction,
      entries: [
        .init(
          file: pattern, job: "samples", table: "samples", rows: SampleTables.samples.rows,
          keys: SampleTables.samples.keys)
      ], tablesPerPattern: tablesPerPattern)
    let columns = SampleTables.samples.columns
    for index in 0..<files {
      let type = "MadeUp\(String(format: "%06d", index))"
      let table: DatabaseTableWriter? = database.claim(
        file: "samples/\(type).csv", pattern: pattern, columns: columns, zone: .fixed(offsetSeconds: 0))
      var fields = [Field](repeating: .missing, count: columns.count)
      fields[2] = .text(type)
      fields[8] = .instant(Instant(seconds: 1_704_103_200 + Int64(index)))
      table?.append(fields)
      table?.flush()
    }
    database.startClosing()
    _ = try database.closed(transaction)
    let file = try SQLiteDatabase(path: transaction.stagedPath(RunDatabase.file), create: false)
    let schema = try file.rows("SELECT count(*) FROM sqlite_master")
    var rows: [String: Int] = [:]
    for row in try file.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'columns'") {
      guard case .text(let name) = row[0] else { continue }
      if case .integer(let count) = try file.rows("SELECT count(*) FROM \(SQLiteDatabase.quoted(name))")[0][0] {
        rows[name] = Int(count)
      }
    }
    guard case .integer(let entries) = schema[0][0] else { return (0, rows, []) }
    let metadata = try [UInt8](Data(contentsOf: URL(fileURLWithPath: transaction.stagedPath(RunDatabase.metadataFile))))
    return (Int(entries), rows, metadata)
  }

  /// Σ over the schema's entries of the entries before it: what creating them cost SQLite.
  static func schemaWork(_ entries: Int) -> Int { entries * (entries - 1) / 2 }

  @Test func theWorkOfManyTypeFilesGrowsWithTheFiles() throws {
    let budget = 50
    let sizes = [100, 200, 400, 800]
    var work: [Int] = []
    var rows: [Int] = []
    for files in sizes {
      let result = try Self.run(files: files, tablesPerPattern: budget)
      // 50 tables of their own, each with its index on `start_unix`, the shared one and its
      // index, and `columns` with its primary key's index: 104 entries at every size.
      #expect(result.schema == 2 * budget + 4, "\(files) files")
      #expect(result.rows.count == budget + 1)
      #expect(result.rows["other_types"] == files - budget)
      #expect(result.rows.values.reduce(0, +) == files)
      work.append(Self.schemaWork(result.schema))
      rows.append(result.rows.values.reduce(0, +))
    }
    // ×8 files: ×8 rows, and the schema's work no more than ×8 (here ×1).
    #expect(rows.last! == 8 * rows.first!)
    #expect(work.last! <= 8 * work.first!, "schema work \(work) for \(sizes) files")
  }

  @Test func filesPastTheBudgetShareOneTableThatSaysSo() throws {
    let result = try Self.run(files: 5, tablesPerPattern: 3)
    #expect(
      result.rows == ["MadeUp000000": 1, "MadeUp000001": 1, "MadeUp000002": 1, "other_types": 2])
    let metadata = try JSONSerialization.jsonObject(with: Data(result.metadata)) as? [String: Any]
    let tables = ((metadata?["databases"] as? [String: Any])?["health"] as? [String: Any])?["tables"] as? [String: Any]
    let shared = tables?["other_types"] as? [String: Any]
    #expect(shared?["source"] as? String == Self.pattern)
    #expect(
      (shared?["description"] as? String)?.hasSuffix("after the first 3 in name order, which share this table") == true)
  }
}
