public import HealthModel

/// One table output in CSV (RFC 4180: header, minimal quoting, empty for missing, `\n`), JSON (an
/// array of objects, `null` for missing) or NDJSON (one object per line), staged by the run's
/// transaction. The table's declaration decides every value's text: numbers to the column's
/// precision, instants in the run's zone. Keys appear in column order, so reruns are
/// byte-identical.
public struct TableWriter {
  private let file: OutputFile
  public let relativePath: String
  private let columns: [Column]
  /// Each column's kind and precision, apart: a row reads them without copying a `Column`.
  private let kinds: [Column.Kind]
  private let precisions: [NumberPrecision]
  /// Column names as JSON keys (`"name": `), encoded once.
  private let jsonKeys: [[UInt8]]
  private let format: TableFormat
  private let zone: ZoneRules
  private var line: [UInt8] = []
  public private(set) var rows = 0
  /// The sheet of `health.xlsx` the rows also go to, when the table has one.
  private let sheet: WorkbookTableWriter?

  /// - Parameters:
  ///   - columns: the table's columns (its declaration, or the part of it a job asked for).
  ///   - zone: the run's zone, for `instant` columns.
  public init(
    _ transaction: OutputTransaction, path relativePath: String, columns: [Column], format: TableFormat = .csv,
    zone: ZoneRules, byteOrderMark: Bool = false
  ) throws(OutputError) {
    file = try transaction.create(relativePath)
    sheet = transaction.workbook?.claim(file: relativePath)
    self.relativePath = relativePath
    self.columns = columns
    kinds = columns.map(\.kind)
    precisions = columns.map(\.precision)
    self.format = format
    self.zone = zone
    jsonKeys = columns.map { column in
      var key: [UInt8] = []
      JSONText.appendString(column.name, to: &key)
      key.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: " ")])
      return key
    }
    switch format {
    case .csv:
      if byteOrderMark { try file.write([0xEF, 0xBB, 0xBF]) }
      try file.write(columns.map(\.name).joined(separator: ",") + "\n")
    case .json: try file.write("[")
    case .ndjson: break
    }
  }

  /// Appends a row, one field per column.
  public mutating func append(_ fields: [Field]) throws(OutputError) {
    precondition(fields.count == columns.count, "\(relativePath): \(fields.count) fields for \(columns.count) columns")
    line.removeAll(keepingCapacity: true)
    switch format {
    case .csv:
      for index in fields.indices {
        if index > 0 { line.append(UInt8(ascii: ",")) }
        appendCSV(fields[index], column: index)
      }
    case .json, .ndjson:
      if format == .json { line.append(contentsOf: rows == 0 ? Self.firstRow : Self.nextRow) }
      line.append(UInt8(ascii: "{"))
      for index in fields.indices {
        if index > 0 { line.append(contentsOf: [UInt8(ascii: ","), UInt8(ascii: " ")]) }
        line.append(contentsOf: jsonKeys[index])
        appendJSON(fields[index], column: index)
      }
      line.append(UInt8(ascii: "}"))
    }
    if format != .json { line.append(0x0A) }
    try file.write(line)
    try sheet?.append(fields)
    rows += 1
  }

  /// Flushes and closes the file.
  public func close() throws(OutputError) -> OutputSummary {
    if format == .json { try file.write(rows == 0 ? "]\n" : "\n]\n") }
    try file.close()
    return OutputSummary(path: relativePath, rows: rows)
  }

  private static let firstRow = Array("\n  ".utf8)
  private static let nextRow = Array(",\n  ".utf8)
  private static let null = Array("null".utf8)

  private mutating func appendCSV(_ field: Field, column: Int) {
    switch field {
    case .missing: return
    case .text(let text): CSVField.append(text, to: &line)
    default: appendBare(field, column: column)
    }
  }

  private mutating func appendJSON(_ field: Field, column: Int) {
    switch field {
    case .missing: line.append(contentsOf: Self.null)
    case .text(let text): JSONText.appendString(text, to: &line)
    case .number(let value) where !value.isFinite: line.append(contentsOf: Self.null)
    case .instant, .date:
      // Instants, dates and local times are all JSON strings.
      line.append(UInt8(ascii: "\""))
      appendBare(field, column: column)
      line.append(UInt8(ascii: "\""))
    default: appendBare(field, column: column)
    }
  }

  /// The text of a value that needs neither quoting nor escaping.
  private mutating func appendBare(_ field: Field, column: Int) {
    switch field {
    case .missing, .text: break
    case .integer(let value): CSVField.appendInteger(value, to: &line)
    case .number(let value): NumberText.append(value, precision: precisions[column], to: &line)
    case .boolean(let value): line.append(contentsOf: (value ? "true" : "false").utf8)
    case .instant(let instant):
      switch kinds[column] {
      case .date: LocalTimeFormatter.appendDate(zone.localDate(at: instant), to: &line)
      case .localTime: LocalTimeFormatter.appendLocal(instant, offsetSeconds: zone.offset(at: instant), to: &line)
      case .localMinute:
        LocalTimeFormatter.appendLocal(instant, offsetSeconds: zone.offset(at: instant), seconds: false, to: &line)
      default: LocalTimeFormatter.appendISO8601(instant, offsetSeconds: zone.offset(at: instant), to: &line)
      }
    case .date(let date): LocalTimeFormatter.appendDate(date, to: &line)
    }
  }
}

/// One file a stage writes one of its tables to (`Table` is the stage's own enum of tables).
public struct TableDestination<Table: Sendable & Equatable>: Sendable, Equatable {
  public var table: Table
  /// Relative to the output folder.
  public var file: String
  /// `csv`, `json` (an array of objects) or `ndjson`.
  public var format: TableFormat

  public init(table: Table, file: String, format: TableFormat) {
    self.table = table
    self.file = file
    self.format = format
  }
}
