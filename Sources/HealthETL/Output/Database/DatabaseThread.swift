import Foundation
import HealthExtract
import HealthModel
import RunExecution

/// The thread that owns one run's `health.sqlite`: the connection is used from this thread only.
///
/// Inserting a table's rows costs about as much as writing its CSV, and no stage needs the
/// database, so the tables' writers hand their rows over (`post`) and go on; only values cross
/// threads. The whole file is one transaction without a journal and without syncs (the staged
/// file is thrown away if the run fails), synced once when complete and swapped in with the
/// other outputs. A problem with a row is kept and reported by the close.
typealias DatabaseThread = FileWriterThread<DatabaseMessage, DatabaseSummary, SQLiteError>

enum DatabaseMessage: Sendable {
  /// A new table, its instants in `zone`; its number is the count of tables created before it.
  case create(DatabaseTable, zone: ZoneRules)
  /// Rows of table number `table`, one field per declared column, row after row.
  case rows(table: Int, fields: [Field])
  /// Creates the indexes, commits and syncs the file.
  case close
  /// Ends the thread without finishing the file.
  case stop
}

/// What `health.sqlite` holds once written.
struct DatabaseSummary: Sendable {
  var tables: [(name: String, rows: Int)]
}

extension FileWriterThread where Message == DatabaseMessage, Summary == DatabaseSummary, Failure == SQLiteError {
  /// Starts the thread on `executor` and waits until it has created the file and its `columns`
  /// table.
  static func start(on executor: RunExecutor, path: String) throws(SQLiteError) -> DatabaseThread {
    try start(on: executor, name: "database", budget: budgetUnits, close: .close, stop: .stop) {
      inbox throws(SQLiteError) in
      guard let summary = try DatabaseWriting.write(path: path, inbox: inbox) else { return nil }
      try DatabaseWriting.sync(path)
      return summary
    }
  }
}

extension FileWriterThread where Message == DatabaseMessage {
  /// Fields of rows per unit of a message's weight.
  static var fieldsPerUnit: Int { 1024 }
  /// Units in flight at most: 2^20 fields, about 24 MB of values. Inserting rows is the slowest
  /// writer at the end of a run (heart rate per minute: the database takes longer for its rows
  /// than the statistics take to compute them), so with a few batches in flight the marts waited
  /// for it; with this many, those that finish after them go on while it catches up
  /// (Sources/README.md, "Where the time goes").
  static var budgetUnits: Int { 1024 }

  /// The weight of a message of `fields` fields.
  static func weight(ofFields fields: Int) -> Int { (fields + fieldsPerUnit - 1) / fieldsPerUnit }
}

/// What the database's thread does.
private enum DatabaseWriting {
  /// Rows of one `INSERT` for a batch's full groups (the rest go one by one): up to 64, and no
  /// more parameters than 999, the lowest limit a libsqlite3 build may have.
  static func rowsPerStatement(_ table: DatabaseTable) -> Int { max(1, min(64, 999 / max(1, table.stored.count))) }

  /// Everything the thread does with the connection, so that the connection and its statements
  /// are closed when it returns; nil when stopped.
  static func write(path: String, inbox: DatabaseThread.Inbox) throws(SQLiteError) -> DatabaseSummary? {
    let database = try SQLiteDatabase(path: path)
    // No journal and no syncs while staging: a run that fails throws the file away. A 4 MB cache
    // (and so at most 4 MB for sorting a table into its indexes): rows go in in key order, so a
    // bigger one bought no speed, only memory (Sources/README.md, "Where the time goes").
    try database.execute(
      "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE; "
        + "PRAGMA cache_size = -4096; BEGIN")
    try database.execute(ColumnsTable.createStatement)
    let describe = try database.prepare(ColumnsTable.insertStatement)
    inbox.ready()
    var tables: [DatabaseTable] = []
    var statements = InsertStatements(database: database)
    var binders: [DatabaseRowBinder] = []
    var rows: [Int] = []
    var failure: SQLiteError?
    while true {
      switch inbox.next() {
      case .create(let table, let zone):
        tables.append(table)
        rows.append(0)
        binders.append(DatabaseRowBinder(columns: table.columns, zone: zone))
        guard failure == nil else { continue }
        do throws(SQLiteError) {
          try database.execute(table.createStatement)
          for row in ColumnsTable.rows(of: table) { try describe.run(row) }
        } catch {
          failure = error
        }
      case .rows(let table, let fields):
        guard failure == nil else { continue }
        let width = tables[table].columns.count
        guard width > 0 else { continue }
        var start = fields.startIndex
        do throws(SQLiteError) {
          let (insert, batchInsert, batchRows) = try statements.of(table, tables[table])
          while start + batchRows * width <= fields.endIndex {
            var parameter: Int32 = 1
            for _ in 0..<batchRows {
              parameter = try binders[table].bind(fields[start..<(start + width)], to: batchInsert, from: parameter)
              start += width
            }
            try binders[table].insert(batchInsert)
            rows[table] += batchRows
          }
          while start + width <= fields.endIndex {
            try binders[table].bind(fields[start..<(start + width)], to: insert)
            try binders[table].insert(insert)
            rows[table] += 1
            start += width
          }
        } catch {
          failure = error
        }
      case .close:
        if let failure { throw failure }
        statements.finalizeAll()
        for table in tables { for statement in table.indexStatements { try database.execute(statement) } }
        try database.execute("COMMIT")
        return DatabaseSummary(tables: zip(tables, rows).map { ($0.name, $1) })
      case .stop:
        return nil
      }
    }
  }

  /// The insert statements of the few tables written last, prepared when a table's rows come.
  ///
  /// Kept for every table, they cost about 100 KB each (a statement of many rows is a long
  /// program) and made each later `CREATE` slower: SQLite marks every prepared statement of the
  /// connection expired at each change of the schema (4,000 sample tables: 517 MB, 134 MB with
  /// these 8). A bounded set keeps both flat in the number of tables (README, "Speed and memory").
  struct InsertStatements {
    /// Tables whose statements are kept: rows of a few tables at once arrive interleaved, those
    /// of a `{type}` output one table after another.
    static let kept = 8

    let database: SQLiteDatabase
    private var entries: [(table: Int, insert: SQLiteStatement, batch: SQLiteStatement, rows: Int)] = []

    init(database: SQLiteDatabase) { self.database = database }

    /// The one-row and many-row inserts of table number `number`; the least recently used of
    /// the others is finalized when more than `kept` would be held.
    mutating func of(_ number: Int, _ table: DatabaseTable) throws(SQLiteError) -> (
      SQLiteStatement, SQLiteStatement, Int
    ) {
      if let found = entries.firstIndex(where: { $0.table == number }) {
        let entry = entries.remove(at: found)
        entries.append(entry)
        return (entry.insert, entry.batch, entry.rows)
      }
      if entries.count >= Self.kept { entries.removeFirst() }
      let rows = DatabaseWriting.rowsPerStatement(table)
      let entry = (
        table: number, insert: try database.prepare(table.insertStatement),
        batch: try database.prepare(table.insertStatement(rows: rows)), rows: rows
      )
      entries.append(entry)
      return (entry.insert, entry.batch, rows)
    }

    /// Finalizes every kept statement, before the indexes are created.
    mutating func finalizeAll() { entries.removeAll() }
  }

  /// The file's one sync, after the connection is closed.
  static func sync(_ path: String) throws(SQLiteError) {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0, fsync(descriptor) == 0 else {
      let code = errno
      if descriptor >= 0 { close(descriptor) }
      throw .syncFailed(path: path, systemErrno: code)
    }
    close(descriptor)
  }
}
