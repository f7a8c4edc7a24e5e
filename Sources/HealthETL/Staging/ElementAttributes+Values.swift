import HealthExtract
import HealthModel

/// Attribute values as the few elements that are not records need them (cold paths: one call per
/// workout, correlation or other element, never per record).
extension ElementAttributes {
  static func text(_ bytes: UnsafeRawBufferPointer) -> String { String(decoding: bytes, as: UTF8.self) }

  /// The most characters of an input value that a message or `run.json` quotes.
  static let excerptLength = 80

  /// A value as quoted in a rejection: at most 80 characters, the last of them `…` when cut, so a
  /// 10 MB value is neither copied whole nor echoed into messages and `run.json`.
  static func excerpt(_ bytes: UnsafeRawBufferPointer) -> String {
    let head =
      bytes.count > 4 * excerptLength ? UnsafeRawBufferPointer(rebasing: bytes[0..<(4 * excerptLength)]) : bytes
    let text = String(decoding: head, as: UTF8.self)
    if head.count == bytes.count && text.count <= excerptLength { return text }
    return String(text.prefix(excerptLength - 1)) + "…"
  }

  static func excerpt(_ text: String) -> String {
    text.count <= excerptLength ? text : String(text.prefix(excerptLength - 1)) + "…"
  }

  func string(_ name: ExportAttribute) -> String? { value(name).map(Self.text) }

  func date(_ name: ExportAttribute) -> Instant? { value(name).flatMap { HealthDateParser.parse($0)?.instant } }

  func number(_ name: ExportAttribute) -> Double? { value(name).flatMap { DecimalParser.parse($0) } }

  /// A value with its unit attribute, kept as text so exact decimal conversions can use it.
  func quantity(_ name: ExportAttribute, unit: ExportAttribute) -> WorkoutElement.Quantity? {
    guard let bytes = value(name) else { return nil }
    return WorkoutElement.Quantity(text: Self.text(bytes), value: DecimalParser.parse(bytes), unit: string(unit))
  }

  /// Every attribute as written, in document order.
  func all() -> [(name: String, value: String)] {
    var result: [(name: String, value: String)] = []
    forEach { name, value in result.append((Self.text(name), Self.text(value))) }
    return result
  }
}
