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
