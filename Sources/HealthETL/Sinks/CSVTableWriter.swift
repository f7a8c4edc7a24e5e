import Foundation

/// Writes one CSV output the way every mart does: header, minimal quoting, empty for a missing
/// value, `\n` line ends, optional UTF-8 BOM, staged by the run's transaction.
public struct CSVTableWriter {
  private let file: OutputFile
  private let relativePath: String
  private let columnCount: Int
  private var line: [UInt8] = []
  public private(set) var rows = 0

  public init(
    _ transaction: OutputTransaction, path relativePath: String, columns: [String], byteOrderMark: Bool = false
  ) throws(OutputError) {
    file = try transaction.create(relativePath)
    self.relativePath = relativePath
    columnCount = columns.count
    if byteOrderMark { try file.write([0xEF, 0xBB, 0xBF]) }
    try file.write(columns.joined(separator: ",") + "\n")
  }

  /// Appends a row; `nil` is an empty field.
  public mutating func append(_ fields: [String?]) throws(OutputError) {
    precondition(fields.count == columnCount, "\(relativePath): \(fields.count) fields for \(columnCount) columns")
    line.removeAll(keepingCapacity: true)
    for (index, field) in fields.enumerated() {
      if index > 0 { line.append(UInt8(ascii: ",")) }
      CSVField.append(field, to: &line)
    }
    line.append(0x0A)
    try file.write(line)
    rows += 1
  }

  /// Flushes and closes the file.
  public func close() throws(OutputError) -> OutputSummary {
    try file.close()
    return OutputSummary(path: relativePath, rows: rows)
  }
}

/// Number formatting shared by the marts.
public enum FieldFormat {
  /// Shortest round-trip text; integers without `.0`; nil for nil or non-finite values.
  public static func number(_ value: Double?) -> String? {
    guard let value, value.isFinite else { return nil }
    var bytes: [UInt8] = []
    CSVField.appendNumber(value, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Whole seconds.
  public static func seconds(_ value: Int64?) -> String? { value.map { String($0) } }
}

/// Writes a JSON document (sorted keys, so reruns are byte-identical).
public enum JSONOutput {
  public static func write(_ object: Any, to transaction: OutputTransaction, path: String) throws(OutputError)
    -> OutputSummary
  {
    let data: Data
    do {
      data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
    } catch {
      throw .ioError(path: path, reason: "cannot encode JSON: \(error)")
    }
    let file = try transaction.create(path)
    try file.write(Array(data) + [0x0A])
    try file.close()
    return OutputSummary(path: path, rows: (object as? [Any])?.count ?? 1)
  }
}
