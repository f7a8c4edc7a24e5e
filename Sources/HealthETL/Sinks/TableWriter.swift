import Foundation

/// How a column's text is written in JSON outputs (CSV writes every value as text).
public enum ColumnKind: Sendable {
  case text
  /// Already-formatted numbers (`FieldFormat.number`), written bare.
  case number
  /// `true` / `false`.
  case boolean
}

/// One table output in CSV (RFC 4180: header, minimal quoting, empty for missing, `\n`), JSON (an
/// array of objects, `null` for missing) or NDJSON (one object per line), staged by the run's
/// transaction. Keys appear in column order, so reruns are byte-identical.
public struct TableWriter {
  private let file: OutputFile
  public let relativePath: String
  private let columns: [String]
  private let kinds: [ColumnKind]
  private let format: TableFormat
  private var line: [UInt8] = []
  public private(set) var rows = 0

  public init(
    _ transaction: OutputTransaction, path relativePath: String, columns: [String], kinds: [ColumnKind]? = nil,
    format: TableFormat = .csv, byteOrderMark: Bool = false
  ) throws(OutputError) {
    file = try transaction.create(relativePath)
    self.relativePath = relativePath
    self.columns = columns
    self.kinds = kinds ?? Array(repeating: .text, count: columns.count)
    precondition(self.kinds.count == columns.count, "\(relativePath): one kind per column")
    self.format = format
    switch format {
    case .csv:
      if byteOrderMark { try file.write([0xEF, 0xBB, 0xBF]) }
      try file.write(columns.joined(separator: ",") + "\n")
    case .json: try file.write("[")
    case .ndjson: break
    }
  }

  /// Appends a row; `nil` is a missing value.
  public mutating func append(_ fields: [String?]) throws(OutputError) {
    precondition(fields.count == columns.count, "\(relativePath): \(fields.count) fields for \(columns.count) columns")
    line.removeAll(keepingCapacity: true)
    switch format {
    case .csv:
      for (index, field) in fields.enumerated() {
        if index > 0 { line.append(UInt8(ascii: ",")) }
        CSVField.append(field, to: &line)
      }
    case .json, .ndjson:
      if format == .json { line.append(contentsOf: Array((rows == 0 ? "\n  " : ",\n  ").utf8)) }
      line.append(UInt8(ascii: "{"))
      for (index, field) in fields.enumerated() {
        if index > 0 { line.append(contentsOf: [UInt8(ascii: ","), UInt8(ascii: " ")]) }
        JSONText.appendString(columns[index], to: &line)
        line.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: " ")])
        guard let field else {
          line.append(contentsOf: Array("null".utf8))
          continue
        }
        switch kinds[index] {
        case .text: JSONText.appendString(field, to: &line)
        case .number, .boolean: line.append(contentsOf: Array(field.utf8))
        }
      }
      line.append(UInt8(ascii: "}"))
    }
    if format != .json { line.append(0x0A) }
    try file.write(line)
    rows += 1
  }

  /// Flushes and closes the file.
  public func close() throws(OutputError) -> OutputSummary {
    if format == .json { try file.write(rows == 0 ? "]\n" : "\n]\n") }
    try file.close()
    return OutputSummary(path: relativePath, rows: rows)
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
