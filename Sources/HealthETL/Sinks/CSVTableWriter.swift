import Foundation

/// A CSV table with text columns: the common case of `TableWriter`.
public struct CSVTableWriter {
  private var writer: TableWriter

  public init(
    _ transaction: OutputTransaction, path relativePath: String, columns: [String], byteOrderMark: Bool = false
  ) throws(OutputError) {
    writer = try TableWriter(transaction, path: relativePath, columns: columns, byteOrderMark: byteOrderMark)
  }

  public var rows: Int { writer.rows }

  /// Appends a row; `nil` is an empty field.
  public mutating func append(_ fields: [String?]) throws(OutputError) { try writer.append(fields) }

  /// Flushes and closes the file.
  public func close() throws(OutputError) -> OutputSummary { try writer.close() }
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
