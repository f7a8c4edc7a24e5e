import Foundation

/// The `columns` table of `health.sqlite`: one row per column of every other table, from the
/// tables' declarations, so the file says what it holds without this program's documentation.
enum ColumnsTable {
  static let name = "columns"

  static let createStatement = """
    CREATE TABLE "columns" (
      "table" TEXT NOT NULL,
      "column" TEXT NOT NULL,
      "position" INTEGER NOT NULL,
      "type" TEXT NOT NULL,
      "kind" TEXT NOT NULL,
      "unit" TEXT,
      "precision" TEXT,
      "meaning" TEXT NOT NULL,
      PRIMARY KEY ("table", "column")
    )
    """

  static let insertStatement = "INSERT INTO \"columns\" VALUES (?, ?, ?, ?, ?, ?, ?, ?)"

  /// One row per stored column of `table`, in its order.
  static func rows(of table: DatabaseTable) -> [[SQLiteValue]] {
    table.stored.enumerated().map { position, column in
      [
        .text(table.name), .text(column.name), .integer(Int64(position + 1)), .text(column.type),
        .text(column.unixSeconds ? "unix seconds" : column.column.kind.rawValue),
        column.unit.map(SQLiteValue.text) ?? .null,
        column.precision.map(SQLiteValue.text) ?? .null, .text(column.meaning),
      ]
    }
  }
}

/// `metadata.json` beside `health.sqlite`: Datasette's metadata (`datasette health.sqlite
/// --metadata metadata.json`), from the same declarations: a title, description and source (the
/// output file with the same rows) per table, a description per column (its unit first), and the
/// units Datasette can convert.
enum DatasetteMetadata {
  /// Units Datasette's unit library (Pint) reads as written; the others are only described.
  static let convertibleUnits: Set<String> = ["s", "ms", "min", "h", "m", "km", "cm", "kg", "g", "kcal", "m/s", "degC"]

  static func json(tables: [DatabaseTable], databaseName: String) -> [UInt8] {
    var described: [String: Any] = [
      ColumnsTable.name: [
        "title": "Columns",
        "description": "One row per column of every other table: its SQLite type, kind, unit, precision and meaning.",
      ]
    ]
    for table in tables {
      var columns: [String: String] = [:]
      var units: [String: String] = [:]
      for column in table.stored {
        columns[column.name] = (column.unit.map { "[\($0)] " } ?? "") + column.meaning
        if let unit = column.unit, convertibleUnits.contains(unit) { units[column.name] = unit }
      }
      var entry: [String: Any] = [
        "title": table.name, "description": table.rows, "source": table.file, "columns": columns,
      ]
      if !units.isEmpty { entry["units"] = units }
      described[table.name] = entry
    }
    let metadata: [String: Any] = [
      "title": "Apple Health export",
      "description": "The tables of one HealthETL run; `columns` says what every column holds.",
      "databases": [databaseName: ["tables": described]],
    ]
    // Sorted keys: reruns are byte-identical.
    return (SortedJSON.data(metadata) ?? []) + [0x0A]
  }
}
