import HealthModel

/// The text of a table's rows in CSV (RFC 4180: minimal quoting, empty for missing, `\n`), JSON
/// (an array of objects, `null` for missing) or NDJSON (one object per line). The table's
/// declaration decides every value's text: numbers to the column's precision, instants in the
/// run's zone; keys appear in column order, so reruns are byte-identical.
///
/// A value with no references, so a table's rows can be encoded on another thread
/// (`RowEncodingLane`).
struct RowEncoder: Sendable {
  let format: TableFormat
  /// Each column's kind and precision, apart: a row reads them without copying a `Column`.
  private let kinds: [Column.Kind]
  private let precisions: [NumberPrecision]
  /// Column names as JSON keys (`"name": `), encoded once.
  private let jsonKeys: [[UInt8]]
  private var time: LocalTimeText
  /// Rows encoded so far: a JSON array separates every row after the first.
  private(set) var rowsEncoded = 0

  init(columns: [Column], format: TableFormat, zone: ZoneRules) {
    self.format = format
    kinds = columns.map(\.kind)
    precisions = columns.map(\.precision)
    time = LocalTimeText(zone)
    jsonKeys = columns.map { column in
      var key: [UInt8] = []
      JSONText.appendString(column.name, to: &key)
      key.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: " ")])
      return key
    }
  }

  var columnCount: Int { kinds.count }

  /// What comes before the first row: the CSV header, or the JSON array's opening bracket.
  static func head(columns: [Column], format: TableFormat, byteOrderMark: Bool) -> [UInt8] {
    switch format {
    case .csv:
      let header = Array((columns.map(\.name).joined(separator: ",") + "\n").utf8)
      return (byteOrderMark ? [0xEF, 0xBB, 0xBF] : []) + header
    case .json: return Array("[".utf8)
    case .ndjson: return []
    }
  }

  /// What comes after the last of `rows` rows.
  static func tail(format: TableFormat, rows: Int) -> [UInt8] {
    format == .json ? Array((rows == 0 ? "]\n" : "\n]\n").utf8) : []
  }

  /// Appends one row, one field per column, to `line`.
  mutating func encode(_ fields: ArraySlice<Field>, to line: inout [UInt8]) {
    let first = fields.startIndex
    switch format {
    case .csv:
      for index in fields.indices {
        if index > first { line.append(UInt8(ascii: ",")) }
        appendCSV(fields[index], column: index - first, to: &line)
      }
    case .json, .ndjson:
      if format == .json { line.append(contentsOf: rowsEncoded == 0 ? Self.firstRow : Self.nextRow) }
      line.append(UInt8(ascii: "{"))
      for index in fields.indices {
        if index > first { line.append(contentsOf: [UInt8(ascii: ","), UInt8(ascii: " ")]) }
        line.append(contentsOf: jsonKeys[index - first])
        appendJSON(fields[index], column: index - first, to: &line)
      }
      line.append(UInt8(ascii: "}"))
    }
    if format != .json { line.append(0x0A) }
    rowsEncoded += 1
  }

  private static let firstRow = Array("\n  ".utf8)
  private static let nextRow = Array(",\n  ".utf8)
  private static let null = Array("null".utf8)

  private mutating func appendCSV(_ field: Field, column: Int, to line: inout [UInt8]) {
    switch field {
    case .missing: return
    case .text(let text): CSVField.append(text, to: &line)
    default: appendBare(field, column: column, to: &line)
    }
  }

  private mutating func appendJSON(_ field: Field, column: Int, to line: inout [UInt8]) {
    switch field {
    case .missing: line.append(contentsOf: Self.null)
    case .text(let text): JSONText.appendString(text, to: &line)
    case .number(let value) where !value.isFinite: line.append(contentsOf: Self.null)
    case .instant, .date:
      // Instants, dates and local times are all JSON strings.
      line.append(UInt8(ascii: "\""))
      appendBare(field, column: column, to: &line)
      line.append(UInt8(ascii: "\""))
    default: appendBare(field, column: column, to: &line)
    }
  }

  /// The text of a value that needs neither quoting nor escaping.
  private mutating func appendBare(_ field: Field, column: Int, to line: inout [UInt8]) {
    switch field {
    case .missing, .text: break
    case .integer(let value): CSVField.appendInteger(value, to: &line)
    case .number(let value): NumberText.append(value, precision: precisions[column], to: &line)
    case .boolean(let value): line.append(contentsOf: (value ? "true" : "false").utf8)
    case .instant(let instant):
      switch kinds[column] {
      case .date: time.appendDate(instant, to: &line)
      case .localTime: time.appendLocal(instant, to: &line)
      case .localMinute: time.appendLocal(instant, seconds: false, to: &line)
      default: time.appendISO8601(instant, to: &line)
      }
    case .date(let date): LocalTimeFormatter.appendDate(date, to: &line)
    }
  }
}
