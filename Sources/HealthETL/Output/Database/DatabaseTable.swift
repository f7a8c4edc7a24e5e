import HealthModel

/// One output table as a table of `health.sqlite`, from the table's declaration: a column per
/// declared column, its SQLite type by the column's kind, and after each instant column its Unix
/// seconds (`start` → `start_unix`), for range queries and arithmetic. The values are the CSV's:
/// numbers rounded to the column's precision, instants as the CSV writes them in the run's zone,
/// and an empty field (a missing value or empty text) is NULL, never 0 or ''.
struct DatabaseTable: Sendable {
  /// A column as SQLite stores it.
  struct StoredColumn: Sendable, Equatable {
    var name: String
    /// `INTEGER`, `REAL` or `TEXT`.
    var type: String
    /// The declared column it comes from.
    var column: Column
    /// Unix seconds of the instant `column`, not its text.
    var unixSeconds: Bool

    var unit: String? { unixSeconds ? "s" : column.unit }

    var meaning: String {
      unixSeconds ? "`\(column.name)` as Unix seconds (seconds since 1970-01-01T00:00:00Z)" : column.meaning
    }

    /// The precision the column tables print, for numbers; empty for other kinds.
    var precision: String? { column.kind == .number && !unixSeconds ? column.precision.description : nil }
  }

  /// A column holding the primary key of a row of another table.
  struct ForeignKey: Sendable, Equatable {
    var column: String
    var table: String
    var key: String
  }

  let name: String
  /// The output file with the same rows.
  let file: String
  /// What one row is (the declaration's `rows`).
  let rows: String
  let columns: [Column]
  let stored: [StoredColumn]
  let primaryKey: [String]
  let indexes: [[String]]
  let foreignKeys: [ForeignKey]

  /// - Parameter keys: the declaration's keys; a key or index over a column the table does not
  ///   have (a job that asked for fewer columns) is left out.
  init(name: String, file: String, rows: String, columns: [Column], keys: TableKeys, foreignKeys: [ForeignKey]) {
    self.name = name
    self.file = file
    self.rows = rows
    self.columns = columns
    var stored: [StoredColumn] = []
    for column in columns {
      stored.append(StoredColumn(name: column.name, type: Self.type(of: column), column: column, unixSeconds: false))
      if column.kind == .instant {
        stored.append(StoredColumn(name: column.name + "_unix", type: "INTEGER", column: column, unixSeconds: true))
      }
    }
    self.stored = stored
    let names = Set(stored.map(\.name))
    primaryKey = keys.primary.allSatisfy(names.contains) ? keys.primary : []
    indexes = keys.indexes.filter { $0.allSatisfy(names.contains) }
    self.foreignKeys = foreignKeys.filter { names.contains($0.column) }
  }

  static func type(of column: Column) -> String {
    switch column.kind {
    case .integer, .boolean: return "INTEGER"
    case .number: return "REAL"
    case .text, .instant, .date, .localTime, .localMinute: return "TEXT"
    }
  }

  /// `CREATE TABLE`, with the primary and foreign keys.
  var createStatement: String {
    var parts = stored.map { SQLiteDatabase.quoted($0.name) + " " + $0.type }
    if !primaryKey.isEmpty { parts.append("PRIMARY KEY (" + Self.list(primaryKey) + ")") }
    for key in foreignKeys {
      parts.append(
        "FOREIGN KEY (" + SQLiteDatabase.quoted(key.column) + ") REFERENCES " + SQLiteDatabase.quoted(key.table)
          + " (" + SQLiteDatabase.quoted(key.key) + ")")
    }
    return "CREATE TABLE " + SQLiteDatabase.quoted(name) + " (\n  " + parts.joined(separator: ",\n  ") + "\n)"
  }

  /// `CREATE INDEX` for each index, named `<table>_by_<columns>`. Created after the rows, which
  /// is faster than keeping them up to date row by row.
  var indexStatements: [String] {
    indexes.map { columns in
      "CREATE INDEX " + SQLiteDatabase.quoted(name + "_by_" + columns.joined(separator: "_")) + " ON "
        + SQLiteDatabase.quoted(name) + " (" + Self.list(columns) + ")"
    }
  }

  var insertStatement: String { insertStatement(rows: 1) }

  /// One `INSERT` of `rows` rows: a long table goes in so many rows a statement, which spares
  /// SQLite starting and ending a statement for each row.
  func insertStatement(rows: Int) -> String {
    let row = "(" + Array(repeating: "?", count: stored.count).joined(separator: ", ") + ")"
    return "INSERT INTO " + SQLiteDatabase.quoted(name) + " VALUES "
      + Array(repeating: row, count: rows).joined(separator: ", ")
  }

  private static func list(_ names: [String]) -> String { names.map(SQLiteDatabase.quoted).joined(separator: ", ") }
}

/// Binds the fields of a table's rows to its insert statement as the values SQLite stores, on the
/// database's thread: numbers straight from the fields; texts, dates and times gathered into one
/// buffer per run of the statement, which SQLite reads without copying (`insert(_:)`). Copying
/// each text into SQLite's own memory (SQLITE_TRANSIENT) was a sixth of the database's thread.
struct DatabaseRowBinder {
  private let kinds: [Column.Kind]
  private let precisions: [NumberPrecision]
  private var time: LocalTimeText
  /// The UTF-8 bytes of the texts bound since the last run, and where each goes.
  private var arena: [UInt8] = []
  private var texts: [SQLiteStatement.BoundText] = []

  init(columns: [Column], zone: ZoneRules) {
    kinds = columns.map(\.kind)
    precisions = columns.map(\.precision)
    time = LocalTimeText(zone)
  }

  /// Binds one row (one field per declared column) in the order of the stored columns, from
  /// parameter `first` (a statement of many rows takes the next row from the returned number).
  /// One loop over the row's storage: called per field through a function of its own, each field
  /// was copied on the way in, and binding cost the database's thread as much as SQLite's insert.
  @discardableResult
  mutating func bind(_ fields: ArraySlice<Field>, to statement: SQLiteStatement, from first: Int32 = 1)
    throws(SQLiteError) -> Int32
  {
    let count = Swift.min(kinds.count, fields.count)
    return try fields.withUnsafeBufferPointer { (row) throws(SQLiteError) -> Int32 in
      var index = first
      for column in 0..<count {
        let kind = kinds[column]
        switch row[column] {
        case .missing: try statement.bindNull(index)
        case .text(let value):
          if value.isEmpty {
            try statement.bindNull(index)
          } else {
            let start = arena.count
            var value = value
            value.withUTF8 { arena.append(contentsOf: $0) }
            texts.append(SQLiteStatement.BoundText(parameter: index, bytes: start..<arena.count))
          }
        case .integer(let value): try statement.bind(index, integer: value)
        case .number(let value):
          if value.isFinite {
            try statement.bind(index, real: precisions[column].rounded(value))
          } else {
            try statement.bindNull(index)
          }
        case .boolean(let value): try statement.bind(index, integer: value ? 1 : 0)
        case .date(let date):
          let start = arena.count
          LocalTimeFormatter.appendDate(date, to: &arena)
          texts.append(SQLiteStatement.BoundText(parameter: index, bytes: start..<arena.count))
        case .instant(let instant):
          let start = arena.count
          switch kind {
          case .date: time.appendDate(instant, to: &arena)
          case .localTime: time.appendLocal(instant, to: &arena)
          case .localMinute: time.appendLocal(instant, seconds: false, to: &arena)
          default: time.appendISO8601(instant, to: &arena)
          }
          texts.append(SQLiteStatement.BoundText(parameter: index, bytes: start..<arena.count))
        }
        index += 1
        if kind == .instant {
          if case .instant(let instant) = row[column] {
            try statement.bind(index, integer: instant.seconds)
          } else {
            try statement.bindNull(index)
          }
          index += 1
        }
      }
      return index
    }
  }

  /// Runs `statement` once with the rows bound since its last run, their texts from this binder's
  /// buffer, which is then emptied for the next run.
  mutating func insert(_ statement: SQLiteStatement) throws(SQLiteError) {
    defer {
      arena.removeAll(keepingCapacity: true)
      texts.removeAll(keepingCapacity: true)
    }
    try statement.insert(texts: texts, in: arena)
  }
}
