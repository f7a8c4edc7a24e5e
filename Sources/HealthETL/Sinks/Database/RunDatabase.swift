import Foundation
import HealthModel

/// `health.sqlite` of one run: a table per output table of the plan, filled by the same
/// `TableWriter`s that write the CSV files (a table's first output feeds it), on the database's
/// thread (`DatabaseThread`), with `metadata.json` for Datasette beside it.
public final class RunDatabase {
  /// The database's file in the output folder.
  public static let file = "health.sqlite"
  public static let metadataFile = DatasetteMetadata.file

  /// An output table the plan puts in the database.
  public struct Entry: Sendable {
    /// The output file that feeds it (its first output in the plan).
    public var file: String
    /// The job that writes it; references go to tables of the same job.
    public var job: String
    /// Its name in pipeline files (`workouts`).
    public var table: String
    /// What one row is.
    public var rows: String
    public var keys: TableKeys

    public init(file: String, job: String, table: String, rows: String, keys: TableKeys) {
      self.file = file
      self.job = job
      self.table = table
      self.rows = rows
      self.keys = keys
    }
  }

  /// Where each entry goes: its table's name, and its references resolved to table names.
  struct Placement: Sendable, Equatable {
    var name: String
    var rows: String
    var keys: TableKeys
    var foreignKeys: [DatabaseTable.ForeignKey]
  }

  private let thread: DatabaseThread
  private let placements: [String: Placement]
  private var tables: [DatabaseTable] = []
  private var claimed: [String: DatabaseTableWriter] = [:]

  init(transaction: OutputTransaction, entries: [Entry], zone: ZoneRules) throws(OutputError) {
    placements = Self.placements(of: entries)
    let path = transaction.reserve(Self.file)
    do throws(SQLiteError) {
      thread = try DatabaseThread(path: path, zone: zone)
    } catch {
      throw .ioError(path: Self.file, reason: error.description)
    }
  }

  /// The table fed by the table written to `file`, once; nil for a file without one.
  func claim(file: String, columns: [Column]) -> DatabaseTableWriter? {
    guard let placement = placements[file], claimed[file] == nil else { return nil }
    let table = DatabaseTable(
      name: placement.name, rows: placement.rows, columns: columns, keys: placement.keys,
      foreignKeys: placement.foreignKeys)
    thread.post(.create(table))
    let writer = DatabaseTableWriter(table: tables.count, columnCount: columns.count, thread: thread)
    tables.append(table)
    claimed[file] = writer
    return writer
  }

  /// Starts creating the indexes and committing, on the database's thread; `closed()` waits.
  /// Every table must have been written.
  func startClosing() {
    for writer in claimed.values { writer.flush() }
    thread.startClosing()
  }

  /// What was written, once the file is complete; writes `metadata.json`.
  func closed(_ transaction: OutputTransaction) throws(OutputError) -> DatabaseThread.Summary {
    let summary: DatabaseThread.Summary
    do throws(SQLiteError) {
      summary = try thread.closed()
    } catch {
      throw .ioError(path: Self.file, reason: error.description)
    }
    let metadata = try transaction.create(Self.metadataFile)
    try metadata.write(
      DatasetteMetadata.json(tables: tables, databaseName: String(Self.file.prefix { $0 != "." })))
    try metadata.close()
    return summary
  }

  /// Table names, in the order of `entries`: the output file's name without its folder and
  /// extension, each character other than an ASCII letter, digit or `_` made `_`
  /// (`stats/heart-rate-per-day.csv` → `heart_rate_per_day`); a name taken already, or one
  /// SQLite or this file keeps (`columns`, `sqlite_…`), gets `_2`, `_3`, …
  static func placements(of entries: [Entry]) -> [String: Placement] {
    var taken: Set<String> = [ColumnsTable.name]
    var names: [String] = []
    for entry in entries {
      let base = tableName(file: entry.file)
      var name = base
      var number = 1
      while taken.contains(name.lowercased()) || name.lowercased().hasPrefix("sqlite_") {
        number += 1
        name = base + "_\(number)"
      }
      taken.insert(name.lowercased())
      names.append(name)
    }
    var placements: [String: Placement] = [:]
    for (index, entry) in entries.enumerated() {
      let foreignKeys = entry.keys.references.compactMap { reference -> DatabaseTable.ForeignKey? in
        guard
          let target = entries.indices.first(where: {
            entries[$0].job == entry.job && entries[$0].table == reference.table
          }),
          entries[target].keys.primary.count == 1
        else { return nil }
        return .init(column: reference.column, table: names[target], key: entries[target].keys.primary[0])
      }
      placements[entry.file] = Placement(
        name: names[index], rows: entry.rows, keys: entry.keys, foreignKeys: foreignKeys)
    }
    return placements
  }

  static func tableName(file: String) -> String {
    var stem = Substring(file.split(separator: "/").last ?? "")
    if let dot = stem.lastIndex(of: "."), dot > stem.startIndex { stem = stem[..<dot] }
    let name = String(
      stem.unicodeScalars.map { scalar in
        scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_")
          ? Character(scalar) : "_"
      })
    return name.isEmpty ? "table" : name
  }
}

/// One output table as a table of `health.sqlite`: its writer hands rows over in batches to the
/// database's thread.
final class DatabaseTableWriter {
  /// Rows per hand-over.
  static let batchRows = 512

  private let table: Int
  private let columnCount: Int
  private let thread: DatabaseThread
  private var batch: [Field] = []

  init(table: Int, columnCount: Int, thread: DatabaseThread) {
    self.table = table
    self.columnCount = columnCount
    self.thread = thread
  }

  /// Appends one row (the fields its CSV row has). A row SQLite refuses fails the close.
  func append(_ fields: [Field]) {
    batch.append(contentsOf: fields)
    if batch.count >= Self.batchRows * columnCount { flush() }
  }

  /// Hands the rows appended so far to the database's thread.
  func flush() {
    guard !batch.isEmpty else { return }
    thread.post(.rows(table: table, fields: batch))
    batch.removeAll(keepingCapacity: true)
  }
}
