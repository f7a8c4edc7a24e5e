import Foundation
public import HealthModel
public import RunExecution

/// `health.sqlite` of one run: a table per output table of the plan, filled by the same
/// `TableWriter`s that write the CSV files (a table's first output feeds it), on the database's
/// thread (`DatabaseThread`), with `metadata.json` for Datasette beside it. An output of one file
/// per sample type (`samples/{type}.csv`) gets a table per file.
///
/// Created before the stages, which ask it whether to keep rows for it (`wants`); its tables are
/// created as their writers claim them, in one transaction.
public final class RunDatabase: TableSink {
  /// The database's file in the output folder.
  public static let file = ToolFiles.database
  public static let metadataFile = ToolFiles.databaseMetadata
  /// Files of one pattern that get a table of their own; the pattern's later files share one
  /// (Pipelines/docs/outputs.md, "health.sqlite"). Each `CREATE` costs SQLite time in proportion to
  /// the tables already there (it reads its schema table back and walks every table), so a
  /// table per file made 10,000 types take 144 s; a real export has about 200.
  public static let tablesPerPattern = 500

  /// An output table the plan puts in the database.
  public struct Entry: Sendable {
    /// The output file that feeds it (its first output in the plan), or the pattern of its files
    /// (`samples/{type}.csv`).
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
  /// Placements of the files of a `{type}` pattern, by pattern; each file's name is made when it
  /// is claimed.
  private let patterns: [String: Placement]
  /// Table names given, lower-cased: SQLite's names ignore case.
  private var taken: Set<String>
  private var tables: [DatabaseTable] = []
  private var claimed: [String: DatabaseTableWriter] = [:]
  private let tablesPerPattern: Int
  /// Per pattern: its files with a table of their own so far.
  private var ownTables: [String: Int] = [:]
  /// Per pattern: the number of the table its files past `tablesPerPattern` share.
  private var sharedTables: [String: Int] = [:]

  /// Starts the database's thread on `executor`, which creates the file.
  public static func start(
    on executor: RunExecutor, transaction: OutputTransaction, entries: [Entry],
    tablesPerPattern: Int = RunDatabase.tablesPerPattern
  ) throws(OutputError) -> RunDatabase {
    let path = transaction.reserve(Self.file, sideFileSuffixes: SQLiteDatabase.sideFileSuffixes)
    do throws(SQLiteError) {
      return RunDatabase(
        thread: try DatabaseThread.start(on: executor, path: path), entries: entries,
        tablesPerPattern: tablesPerPattern)
    } catch {
      throw .writing(Self.file, reason: error.description, code: error.systemCode)
    }
  }

  private init(thread: DatabaseThread, entries: [Entry], tablesPerPattern: Int) {
    self.thread = thread
    self.tablesPerPattern = max(0, tablesPerPattern)
    (placements, patterns) = Self.placements(of: entries)
    taken = Set(placements.values.map { $0.name.lowercased() } + [ColumnsTable.name])
  }

  /// Whether the rows written to `file`, or to the files of pattern `file`, go to a table.
  public func wants(file: String) -> Bool { placements[file] != nil || patterns[file] != nil }

  public func claim(file: String, pattern: String?, columns: [Column], zone: ZoneRules) -> (any TableRowSink)? {
    claim(file: file, pattern: pattern, columns: columns, zone: zone) as DatabaseTableWriter?
  }

  /// The table fed by the table written to `file` (one of the files of `pattern`, when given),
  /// once; nil for a file without one.
  /// - Parameter zone: the run's zone, for `instant` columns.
  func claim(file: String, pattern: String? = nil, columns: [Column], zone: ZoneRules) -> DatabaseTableWriter? {
    guard claimed[file] == nil else { return nil }
    var placement: Placement
    var source = file
    if let planned = placements[file] {
      placement = planned
    } else if let pattern, let planned = patterns[pattern] {
      placement = planned
      if ownTables[pattern, default: 0] < tablesPerPattern {
        ownTables[pattern, default: 0] += 1
        placement.name = Self.unique(Self.tableName(file: file), taken: &taken)
      } else if let shared = sharedTables[pattern] {
        let writer = DatabaseTableWriter(table: shared, columnCount: columns.count, thread: thread)
        claimed[file] = writer
        return writer
      } else {
        placement.name = Self.unique(
          Self.tableName(file: pattern.replacingOccurrences(of: "{type}", with: Self.sharedTableStem)), taken: &taken)
        placement.rows +=
          "; the rows of every file of `\(pattern)` after the first \(tablesPerPattern) in name order, which share"
          + " this table"
        sharedTables[pattern] = tables.count
        source = pattern
      }
    } else {
      return nil
    }
    let table = DatabaseTable(
      name: placement.name, file: source, rows: placement.rows, columns: columns, keys: placement.keys,
      foreignKeys: placement.foreignKeys)
    thread.post(.create(table, zone: zone))
    let writer = DatabaseTableWriter(table: tables.count, columnCount: columns.count, thread: thread)
    tables.append(table)
    claimed[file] = writer
    return writer
  }

  /// The name of the table a pattern's files past `tablesPerPattern` share, in place of `{type}`
  /// (`samples/{type}.csv` → `other_types`).
  static let sharedTableStem = "other_types"

  /// Starts creating the indexes and committing, on the database's thread; `closed()` waits.
  /// Every table must have been written.
  func startClosing() {
    for writer in claimed.values { writer.flush() }
    thread.startClosing()
  }

  /// What was written, once the file is complete; writes `metadata.json`. The database it
  /// replaces is settled first (`SQLiteDatabase.settle`): its side files stay with it.
  func closed(_ transaction: OutputTransaction) throws(OutputError) -> DatabaseSummary {
    let summary: DatabaseSummary
    do throws(SQLiteError) {
      summary = try thread.closed()
    } catch {
      throw .writing(Self.file, reason: error.description, code: error.systemCode)
    }
    SQLiteDatabase.settle(transaction.committedPath(Self.file))
    let metadata = try transaction.create(Self.metadataFile)
    try metadata.write(
      DatasetteMetadata.json(tables: tables, databaseName: String(Self.file.prefix { $0 != "." })))
    try metadata.close()
    return summary
  }

  /// Table names, in the order of `entries`: the output file's name without its folder and
  /// extension, each character other than an ASCII letter, digit or `_` made `_`
  /// (`stats/heart-rate-per-day.csv` → `heart_rate_per_day`, `samples/StepCount.csv` →
  /// `StepCount`); a name taken already (ignoring case) or kept by this file (`columns`) gets
  /// `_2`, `_3`, …, one SQLite keeps (`sqlite_…`) starts `table_`. Files of a pattern are named
  /// when claimed, after the others.
  static func placements(of entries: [Entry]) -> (files: [String: Placement], patterns: [String: Placement]) {
    var taken: Set<String> = [ColumnsTable.name]
    var names: [String] = []
    for entry in entries {
      names.append(isPattern(entry.file) ? "" : unique(tableName(file: entry.file), taken: &taken))
    }
    var placements: [String: Placement] = [:]
    var patterns: [String: Placement] = [:]
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
      let placement = Placement(name: names[index], rows: entry.rows, keys: entry.keys, foreignKeys: foreignKeys)
      if isPattern(entry.file) { patterns[entry.file] = placement } else { placements[entry.file] = placement }
    }
    return (placements, patterns)
  }

  private static func isPattern(_ file: String) -> Bool { file.contains("{type}") }

  /// `base`, or `base_2`, `base_3`, … : the first not in `taken` (lower-cased). A name SQLite
  /// keeps for itself (`sqlite_…`) starts `table_`.
  static func unique(_ base: String, taken: inout Set<String>) -> String {
    let base = base.lowercased().hasPrefix("sqlite_") ? "table_" + base : base
    var name = base
    var number = 1
    while taken.contains(name.lowercased()) {
      number += 1
      name = base + "_\(number)"
    }
    taken.insert(name.lowercased())
    return name
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
final class DatabaseTableWriter: TableRowSink {
  /// Rows per hand-over.
  static let batchRows = 512

  private let table: Int
  private let thread: DatabaseThread
  private var batch: SinkBatch

  init(table: Int, columnCount: Int, thread: DatabaseThread) {
    self.table = table
    self.thread = thread
    batch = SinkBatch(rows: Self.batchRows, columns: columnCount)
  }

  /// Appends whole rows (the fields their CSV rows have). A row SQLite refuses fails the close.
  public func append(_ fields: [Field]) {
    if let full = batch.add(fields) { post(full) }
  }

  /// Hands the rows appended so far to the database's thread.
  public func flush() {
    if let rest = batch.take() { post(rest) }
  }

  private func post(_ fields: [Field]) {
    thread.post(.rows(table: table, fields: fields), weight: DatabaseThread.weight(ofFields: fields.count))
  }
}
