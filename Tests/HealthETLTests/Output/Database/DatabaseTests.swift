import Foundation
import HealthModel
import Testing

@testable import HealthETL

/// `health.sqlite` piece by piece: any text is a safe identifier, values are stored as the CSV
/// writes them, table names are made from file names without ever meeting, and rows kept in
/// scratch come back as written.
@Suite struct DatabaseTests {
  static func temporaryPath() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("healthetl-db-\(UUID().uuidString).sqlite").path
  }

  @Test func anyTextIsASafeIdentifierAndValue() throws {
    let path = Self.temporaryPath()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let database = try SQLiteDatabase(path: path)
    try database.execute("CREATE TABLE victim (a TEXT)")
    let table = "x\"; DROP TABLE victim; --"
    let column = "a\"b'c"
    try database.execute(
      "CREATE TABLE \(SQLiteDatabase.quoted(table)) (\(SQLiteDatabase.quoted(column)) TEXT, n INTEGER, r REAL)")
    let text = "Robert'); DROP TABLE victim;--\u{0}after a NUL, “quotes” and 🏃"
    try database.prepare("INSERT INTO \(SQLiteDatabase.quoted(table)) VALUES (?, ?, ?)").run([
      .text(text), .integer(Int64.min), .real(0.1),
    ])
    #expect(
      try database.rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") == [
        [.text("victim")], [.text(table)],
      ])
    #expect(
      try database.rows(
        "SELECT \(SQLiteDatabase.quoted(column)), n, r FROM \(SQLiteDatabase.quoted(table)) WHERE n = ?",
        [.integer(Int64.min)]) == [[.text(text), .integer(Int64.min), .real(0.1)]])
    #expect(try database.rows("SELECT \(SQLiteDatabase.literal("it's")), NULL") == [[.text("it's"), .null]])
  }

  @Test func refusalsSayWhatAndWhy() throws {
    let path = Self.temporaryPath()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let database = try SQLiteDatabase(path: path)
    try database.execute("CREATE TABLE t (id TEXT PRIMARY KEY)")
    let insert = try database.prepare("INSERT INTO t VALUES (?)")
    try insert.run([.text("a")])
    #expect(throws: SQLiteError.self) { try insert.run([.text("a")]) }
    do {
      try insert.run([.text("a")])
    } catch {
      // SQLITE_CONSTRAINT_PRIMARYKEY, and SQLite's own words.
      #expect(
        error == .statement(sql: "INSERT INTO t VALUES (?)", code: 1555, message: "UNIQUE constraint failed: t.id"))
    }
    // The statement is reset after a refusal: the next row goes in.
    try insert.run([.text("b")])
    #expect(try database.rows("SELECT count(*) FROM t") == [[.integer(2)]])
    #expect(throws: SQLiteError.self) { try database.execute("SELEC 1") }
    #expect(throws: SQLiteError.self) { try SQLiteDatabase(path: "/nonexistent-folder/x.sqlite") }
  }

  /// Texts reach SQLite from the binder's buffer without a copy: rows of one statement each keep
  /// their own texts, and a run after one with longer texts stores its own, not what the buffer
  /// held before. A refused run leaves no text bound, and the statement takes the next rows.
  @Test func textsOfARunAreReadFromOneBuffer() throws {
    let columns: [Column] = [.text("id", "i"), .instant("start", "s"), .text("note", "n")]
    let table = DatabaseTable(name: "t", file: "t.csv", rows: "r", columns: columns, keys: .none, foreignKeys: [])
    let database = try SQLiteDatabase(path: ":memory:")
    try database.execute(
      "CREATE TABLE t (id TEXT PRIMARY KEY, start TEXT, start_unix INTEGER, note TEXT)")
    let two = try database.prepare(table.insertStatement(rows: 2))
    let one = try database.prepare(table.insertStatement(rows: 1))
    var binder = DatabaseRowBinder(columns: columns, zone: .fixed(offsetSeconds: 0))
    let start = Instant(seconds: 1_710_716_523)
    let next = try binder.bind(
      [.text("first"), .instant(start), .text(String(repeating: "long ", count: 50))][...], to: two)
    try binder.bind([.text("second"), .missing, .text("é")][...], to: two, from: next)
    try binder.insert(two)
    try binder.bind([.text("3"), .instant(Instant(seconds: 0)), .text("short")][...], to: one)
    try binder.insert(one)
    // A duplicate key is refused; the next run still stores its own values.
    try binder.bind([.text("3"), .missing, .text("refused")][...], to: one)
    #expect(throws: SQLiteError.self) { try binder.insert(one) }
    try binder.bind([.text("4"), .missing, .missing][...], to: one)
    try binder.insert(one)
    #expect(
      try database.rows("SELECT id, start, start_unix, note FROM t ORDER BY rowid") == [
        [
          .text("first"), .text("2024-03-17T23:02:03+00:00"), .integer(1_710_716_523),
          .text(String(repeating: "long ", count: 50)),
        ],
        [.text("second"), .null, .null, .text("é")],
        [.text("3"), .text("1970-01-01T00:00:00+00:00"), .integer(0), .text("short")],
        [.text("4"), .null, .null, .null],
      ])
  }

  @Test func valuesAreTheCSVsTypedAndEmptyIsNull() throws {
    let columns: [Column] = [
      .date("date", "d"), .instant("start", "s"), .localTime("t"), .number("km", precision: .decimals(2), "n"),
      .integer("steps", "i"), .boolean("indoor", "b"), .text("note", "t"),
    ]
    let table = DatabaseTable(
      name: "t", file: "t.csv", rows: "r", columns: columns, keys: TableKeys(primary: ["start_unix"]),
      foreignKeys: [])
    #expect(
      table.stored.map { "\($0.name) \($0.type)" } == [
        "date TEXT", "start TEXT", "start_unix INTEGER", "local_time TEXT", "km REAL", "steps INTEGER",
        "indoor INTEGER", "note TEXT",
      ])
    #expect(table.primaryKey == ["start_unix"])
    // Bound to a real statement and read back as SQLite stored them (without the key, whose
    // column would be the rowid and never NULL).
    let unkeyed = DatabaseTable(name: "t", file: "t.csv", rows: "r", columns: columns, keys: .none, foreignKeys: [])
    let database = try SQLiteDatabase(path: ":memory:")
    try database.execute(unkeyed.createStatement)
    let insert = try database.prepare(unkeyed.insertStatement)
    var binder = DatabaseRowBinder(columns: columns, zone: .fixed(offsetSeconds: 3600))
    // 2024-03-18T00:02:03+01:00 is 1710716523 Unix seconds.
    let start = Instant(seconds: 1_710_716_523)
    try binder.bind(
      [
        .date(CivilDate(daysSinceEpoch: 19_800)), .instant(start), .instant(start), .number(12.345_6), .integer(42),
        .boolean(true), .text("x"),
      ][...], to: insert)
    try binder.insert(insert)
    try binder.bind(
      [.missing, .missing, .missing, .number(.nan), .missing, .boolean(false), .text("")][...], to: insert)
    try binder.insert(insert)
    #expect(
      try database.rows("SELECT * FROM t ORDER BY rowid") == [
        [
          .text("2024-03-18"), .text("2024-03-18T00:02:03+01:00"), .integer(1_710_716_523),
          .text("2024-03-18 00:02:03"), .real(12.35), .integer(42), .integer(1), .text("x"),
        ],
        [.null, .null, .null, .null, .null, .null, .integer(0), .null],
      ])
    // Text with a NUL inside keeps its length; an empty text is empty, not NULL.
    let texts = try database.prepare("SELECT length(CAST(? AS BLOB)), ? IS NULL, length(?)")
    try texts.bind(1, text: "a\u{0}b")
    try texts.bind(2, text: "")
    try texts.bind(3, text: "héllo")
    #expect(try texts.rows([]) == [[.integer(3), .integer(0), .integer(5)]])
  }

  @Test func keysOverMissingColumnsAreLeftOut() {
    let table = DatabaseTable(
      name: "t", file: "t.csv", rows: "r", columns: [.text("id", "i")],
      keys: TableKeys(primary: ["id", "lap"], indexes: [["id"], ["start_unix"]]),
      foreignKeys: [.init(column: "workout_id", table: "w", key: "id")])
    #expect(table.primaryKey.isEmpty)
    #expect(table.indexes == [["id"]])
    #expect(table.foreignKeys.isEmpty)
    #expect(table.createStatement == "CREATE TABLE \"t\" (\n  \"id\" TEXT\n)")
    #expect(table.indexStatements == ["CREATE INDEX \"t_by_id\" ON \"t\" (\"id\")"])
  }

  @Test func tableNamesComeFromFilesAndNeverMeet() {
    #expect(RunDatabase.tableName(file: "stats/heart-rate-per-day.csv") == "heart_rate_per_day")
    #expect(RunDatabase.tableName(file: "samples/Foo_Bar.845addd9.csv") == "Foo_Bar_845addd9")
    #expect(RunDatabase.tableName(file: "Schlaf/über.json") == "_ber")
    #expect(RunDatabase.tableName(file: ".csv") == "_csv")
    let entries: [RunDatabase.Entry] = [
      .init(file: "workouts.csv", job: "w", table: "workouts", rows: "", keys: TableKeys(primary: ["id"])),
      .init(
        file: "laps.csv", job: "w", table: "laps", rows: "",
        keys: TableKeys(references: [.init("workout_id", to: "workouts")])),
      .init(
        file: "other/laps.ndjson", job: "v", table: "laps", rows: "",
        keys: TableKeys(references: [.init("workout_id", to: "workouts")])),
      .init(file: "Columns.csv", job: "x", table: "daily", rows: "", keys: .none),
      .init(file: "sqlite_stat1.csv", job: "x", table: "sessions", rows: "", keys: .none),
      .init(file: "samples/{type}.csv", job: "s", table: "samples", rows: "", keys: .none),
    ]
    let (files, patterns) = RunDatabase.placements(of: entries)
    #expect(
      files.mapValues(\.name) == [
        "workouts.csv": "workouts", "laps.csv": "laps", "other/laps.ndjson": "laps_2", "Columns.csv": "Columns_2",
        "sqlite_stat1.csv": "table_sqlite_stat1",
      ])
    // A reference goes to the table of the same job, never to another job's.
    #expect(files["laps.csv"]?.foreignKeys == [.init(column: "workout_id", table: "workouts", key: "id")])
    #expect(files["other/laps.ndjson"]?.foreignKeys == [])
    #expect(Set(patterns.keys) == ["samples/{type}.csv"])
    var taken: Set<String> = ["stepcount"]
    #expect(RunDatabase.unique("StepCount", taken: &taken) == "StepCount_2")
    #expect(RunDatabase.unique("STEPCOUNT", taken: &taken) == "STEPCOUNT_3")
    #expect(RunDatabase.unique("SQLITE_master", taken: &taken) == "table_SQLITE_master")
  }

  @Test func rowsKeptInScratchComeBackAsWrittenWhateverThePieces() throws {
    let rows: [[Field]] = [
      [
        .missing, .text(""), .text("a,b\n\u{0}é🏃"), .integer(-7), .number(-0.1), .number(.infinity), .boolean(true),
        .instant(Instant(seconds: -1)), .date(CivilDate(daysSinceEpoch: 19_800)),
      ],
      [.text(String(repeating: "x", count: 70_000)), .boolean(false)],
      [],
    ]
    var bytes: [UInt8] = []
    for row in rows { ScratchRows.append(row, to: &bytes) }
    for pieceSize in [1, 3, 4096, bytes.count] {
      var reader = ScratchRows.Reader()
      var read: [[Field]] = []
      var offset = 0
      while offset < bytes.count {
        let end = min(offset + pieceSize, bytes.count)
        try bytes[offset..<end].withUnsafeBytes { piece in try reader.rows(in: piece) { read.append($0) } }
        offset = end
      }
      #expect(read == rows, "pieces of \(pieceSize) bytes")
    }
  }
}
