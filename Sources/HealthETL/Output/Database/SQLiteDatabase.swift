import CSQLite3
import Foundation

/// Why SQLite refused: where, SQLite's extended result code and its message, and the system's
/// error number of the file operation that failed (`sqlite3_system_errno`; 0 when none did).
enum SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
  case open(path: String, code: Int32, message: String, systemErrno: Int32 = 0)
  /// A statement that could not be prepared or run; `sql` is its first line, cut to 120 characters.
  case statement(sql: String, code: Int32, message: String, systemErrno: Int32 = 0)

  var description: String {
    switch self {
    case .open(let path, let code, let message, _):
      return "SQLite cannot open \(path): \(message) (code \(code))"
    case .statement(let sql, let code, let message, _):
      return "SQLite refused `\(sql)`: \(message) (code \(code))"
    }
  }

  /// The system's error number behind a failure of the file, not of the SQL: the one the
  /// operating system gave SQLite, else the one SQLite's result code stands for (a full disk
  /// is `SQLITE_FULL`). Nil for a refusal that is SQL's own (a constraint, a syntax error).
  var systemCode: Int32? {
    let (code, system): (Int32, Int32)
    switch self {
    case .open(_, let result, _, let errno), .statement(_, let result, _, let errno): (code, system) = (result, errno)
    }
    switch code & 0xFF {
    case SQLITE_FULL: return system != 0 ? system : ENOSPC
    case SQLITE_IOERR: return system != 0 ? system : EIO
    case SQLITE_READONLY: return system != 0 ? system : EROFS
    case SQLITE_PERM: return system != 0 ? system : EPERM
    case SQLITE_CANTOPEN: return system != 0 ? system : nil
    case SQLITE_NOMEM: return ENOMEM
    default: return nil
    }
  }

  /// The file could not be synced once the connection was closed: SQLite's own code for that.
  static func syncFailed(path: String, systemErrno: Int32) -> SQLiteError {
    .open(path: path, code: SQLITE_IOERR, message: String(cString: strerror(systemErrno)), systemErrno: systemErrno)
  }

  static func summary(of sql: String) -> String {
    let line = sql.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? ""
    return line.count > 120 ? String(line.prefix(120)) + "…" : line
  }
}

/// One value of a row as SQLite stores it.
enum SQLiteValue: Sendable, Equatable {
  case null
  case integer(Int64)
  case real(Double)
  case text(String)
}

/// Set once, before the first connection: SQLite counts no memory, so that no allocation of the
/// database's thread takes the library's global mutex (which showed in profiles of long tables).
private let memoryCountingOff: Int32 = healthetl_sqlite3_config_memstatus_off()

/// A connection to one SQLite file through Debian's libsqlite3. Every `sqlite3_*` call of
/// HealthETL is in this file; the rest of the program sees statements, values and `SQLiteError`.
///
/// A connection is used by one thread at a time (the database's thread, `DatabaseThread`), so
/// libsqlite3's own mutexes are off (`SQLITE_OPEN_NOMUTEX`).
final class SQLiteDatabase {
  private let handle: OpaquePointer
  let path: String

  /// Opens `path`, creating it when `create` and it does not exist.
  init(path: String, create: Bool = true) throws(SQLiteError) {
    self.path = path
    _ = memoryCountingOff
    var opened: OpaquePointer?
    let flags =
      (create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX
      | SQLITE_OPEN_EXRESCODE
    let code = sqlite3_open_v2(path, &opened, flags, nil)
    guard code == SQLITE_OK, let opened else {
      // Even a failed open may return a handle, which holds the message and must be closed.
      let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
      let system = opened.map { sqlite3_system_errno($0) } ?? 0
      sqlite3_close_v2(opened)
      throw .open(path: path, code: code, message: message, systemErrno: system)
    }
    handle = opened
  }

  deinit { sqlite3_close_v2(handle) }

  /// Runs statements that take no parameters and return no rows (`;`-separated).
  func execute(_ sql: String) throws(SQLiteError) {
    let code = sqlite3_exec(handle, sql, nil, nil, nil)
    guard code == SQLITE_OK else { throw failure(sql, code) }
  }

  /// A statement to run many times with different values.
  func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
    var statement: OpaquePointer?
    let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
    guard code == SQLITE_OK, let statement else { throw failure(sql, code) }
    return SQLiteStatement(statement, sql: sql, database: self)
  }

  /// Every row `sql` returns, with `parameters` bound in order.
  func rows(_ sql: String, _ parameters: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
    try prepare(sql).rows(parameters)
  }

  /// `name` as an SQL identifier: in double quotes, a quote inside doubled. Any text is safe so,
  /// including a name that comes from an export.
  static func quoted(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
  }

  /// `text` as an SQL string literal, for the few statements that cannot take a parameter.
  static func literal(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
  }

  /// The files SQLite keeps beside a database, by the suffix of their names: the rollback journal
  /// and, in WAL mode, the log and its index. Whoever opens the database applies them to it, so
  /// they belong to that one file and must never be left beside another.
  static let sideFileSuffixes = ["-journal", "-wal", "-shm"]

  /// Brings the database at `path` to its last committed state in its own file, as the next
  /// opener would, when side files lie beside it: a hot journal of a client killed mid-write is
  /// rolled back, a WAL no connection holds any more is checkpointed. Done before the file is
  /// replaced, whose side files stay behind with it: a reader that still has it open then finds
  /// it whole (a reader in rollback mode looks for the journal by name, beside the new file, and
  /// would no longer find it). Best effort: a database SQLite cannot open, or one a live writer
  /// holds, is left as it is.
  static func settle(_ path: String) {
    guard sideFileSuffixes.contains(where: { access(path + $0, F_OK) == 0 }) else { return }
    _ = memoryCountingOff
    var opened: OpaquePointer?
    // Read-write (a read-only connection refuses to roll a hot journal back), never creating.
    let code = sqlite3_open_v2(path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
    defer { sqlite3_close_v2(opened) }
    guard code == SQLITE_OK, let opened else { return }
    // The first read takes the shared lock, which is when a hot journal is rolled back; the close
    // checkpoints a WAL when this is the last connection.
    _ = sqlite3_exec(opened, "SELECT count(*) FROM sqlite_schema", nil, nil, nil)
  }

  /// The libsqlite3 this program runs with (`3.40.1`).
  static var libraryVersion: String { String(cString: sqlite3_libversion()) }

  fileprivate func failure(_ sql: String, _ code: Int32) -> SQLiteError {
    .statement(
      sql: SQLiteError.summary(of: sql), code: code, message: String(cString: sqlite3_errmsg(handle)),
      systemErrno: sqlite3_system_errno(handle))
  }
}

/// A prepared statement of one connection, run again and again with new values.
final class SQLiteStatement {
  private let statement: OpaquePointer
  private let sql: String
  /// Kept so the connection outlives its statements.
  private let database: SQLiteDatabase

  fileprivate init(_ statement: OpaquePointer, sql: String, database: SQLiteDatabase) {
    self.statement = statement
    self.sql = sql
    self.database = database
  }

  deinit { sqlite3_finalize(statement) }

  /// Runs the statement once with `values` bound to its parameters in order (an INSERT).
  func run(_ values: some Collection<SQLiteValue>) throws(SQLiteError) {
    try bind(values)
    try insert()
  }

  /// Runs the statement once with the values bound since the last run (an INSERT), then makes
  /// it ready for the next.
  func insert() throws(SQLiteError) {
    let code = sqlite3_step(statement)
    sqlite3_reset(statement)
    guard code == SQLITE_DONE else { throw database.failure(sql, code) }
  }

  /// Binds each of `texts` (a parameter and the range of its UTF-8 bytes in `arena`) without
  /// copying it, then runs the statement once like `insert()`. SQLite reads such bytes only while
  /// it steps, which happens here, while `arena` cannot change; the bindings are cleared before
  /// returning, so none is left pointing at it. A text of no bytes is empty text, never NULL.
  func insert(texts: [BoundText], in arena: [UInt8]) throws(SQLiteError) {
    let code = arena.withUnsafeBytes { buffer -> Int32 in
      for text in texts {
        let code =
          text.bytes.isEmpty
          ? sqlite3_bind_text64(statement, text.parameter, "", 0, Self.transient, UInt8(SQLITE_UTF8))
          : sqlite3_bind_text64(
            statement, text.parameter,
            (buffer.baseAddress! + text.bytes.lowerBound).assumingMemoryBound(to: CChar.self),
            UInt64(text.bytes.count), nil, UInt8(SQLITE_UTF8))
        guard code == SQLITE_OK else { return code }
      }
      let code = sqlite3_step(statement)
      sqlite3_reset(statement)
      sqlite3_clear_bindings(statement)
      return code == SQLITE_DONE ? SQLITE_OK : code
    }
    try check(code)
  }

  /// A text parameter of `insert(texts:in:)`.
  struct BoundText {
    var parameter: Int32
    var bytes: Range<Int>
  }

  /// Runs the statement with `values` bound and returns every row.
  func rows(_ values: [SQLiteValue]) throws(SQLiteError) -> [[SQLiteValue]] {
    try bind(values)
    defer { sqlite3_reset(statement) }
    var rows: [[SQLiteValue]] = []
    let columns = sqlite3_column_count(statement)
    while true {
      let code = sqlite3_step(statement)
      if code == SQLITE_DONE { return rows }
      guard code == SQLITE_ROW else { throw database.failure(sql, code) }
      rows.append((0..<columns).map(value))
    }
  }

  private func bind(_ values: some Collection<SQLiteValue>) throws(SQLiteError) {
    var index: Int32 = 1
    for value in values {
      switch value {
      case .null: try bindNull(index)
      case .integer(let integer): try bind(index, integer: integer)
      case .real(let real): try bind(index, real: real)
      case .text(let text): try bind(index, text: text)
      }
      index += 1
    }
  }

  // Binding one parameter (numbered from 1) for the next `insert()`: a row of a long table is
  // bound value by value, its texts, dates and times by `insert(texts:in:)` from one buffer, so no
  // value becomes a `String` or an array element on the way.

  func bindNull(_ index: Int32) throws(SQLiteError) { try check(sqlite3_bind_null(statement, index)) }

  func bind(_ index: Int32, integer: Int64) throws(SQLiteError) {
    try check(sqlite3_bind_int64(statement, index, integer))
  }

  func bind(_ index: Int32, real: Double) throws(SQLiteError) {
    try check(sqlite3_bind_double(statement, index, real))
  }

  /// SQLite copies the bytes (SQLITE_TRANSIENT), into a buffer it keeps from row to row. The
  /// length is given, so a NUL inside the text is kept.
  func bind(_ index: Int32, text: String) throws(SQLiteError) {
    let code = text.withCString { bytes in
      sqlite3_bind_text64(statement, index, bytes, UInt64(text.utf8.count), Self.transient, UInt8(SQLITE_UTF8))
    }
    try check(code)
  }

  private func check(_ code: Int32) throws(SQLiteError) {
    guard code == SQLITE_OK else { throw database.failure(sql, code) }
  }

  private func value(_ column: Int32) -> SQLiteValue {
    switch sqlite3_column_type(statement, column) {
    case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, column))
    case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, column))
    case SQLITE_NULL: return .null
    default:
      guard let text = sqlite3_column_text(statement, column) else { return .null }
      let count = Int(sqlite3_column_bytes(statement, column))
      return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
    }
  }

  /// C's `SQLITE_TRANSIENT`, a macro Swift does not import.
  private static var transient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }
}
