import Foundation
import HealthModel

/// Writes a JSON object tree (`[String: Any]`, arrays, strings, numbers, `NSNull`) to the same
/// bytes as `JSONSerialization.data(withJSONObject:options: [.prettyPrinted, .sortedKeys])`: the
/// format `run.json`, `metadata.json` and the delivery reports have always had, so rewriting
/// them changed no file.
///
/// Foundation's writer passes every character through a `String` of its own and builds a
/// `Locale` for every comparison of two keys; on a small export its two documents took a sixth
/// of the whole run's instructions. Here the bytes are appended to one buffer and keys are
/// ordered by the same comparison (`String.compare` with `.numeric`, `.caseInsensitive`,
/// `.forcedOrdering` and the system locale), but for two keys of ASCII letters and `_`, whose
/// bytes read case-blind give the same order (`isPlain`).
/// A value of a type the tree does not otherwise hold (`NSNumber`, `Decimal`, `Float`) makes the
/// whole document go through `JSONSerialization`, so nothing is written differently.
enum SortedJSON {
  /// The document's bytes, without a final newline; nil when it cannot be written (a key that is
  /// not a string, a number that is not finite), as `JSONSerialization` refuses it.
  static func data(_ object: Any) -> [UInt8]? {
    // Like `JSONSerialization`, only an array or an object makes a document.
    guard object is [Any?] || object is [AnyHashable: Any?] else { return nil }
    var writer = Writer()
    do {
      try writer.write(object)
      return writer.bytes
    } catch .unusual {
      return (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]))
        .map(Array.init)
    } catch {
      return nil
    }
  }

  /// Whether `key` has only ASCII letters and `_`. Two such keys are in Foundation's order
  /// when their bytes, upper case read as lower, are (`plainOrder`; `SortedJSONTests` checks it
  /// on every pair of such keys up to three characters). That spares most keys Foundation's
  /// locale-aware comparison, which was three quarters of the writing's cost.
  static func isPlain(_ key: String) -> Bool {
    key.utf8.allSatisfy { byte in
      (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || byte == UInt8(ascii: "_")
    }
  }

  /// Whether plain key `a` comes before plain key `b`; nil when they differ only in case, which
  /// Foundation's comparison settles.
  static func plainOrder(_ a: String, _ b: String) -> Bool? {
    func folded(_ byte: UInt8) -> UInt8 { byte == UInt8(ascii: "_") ? byte : byte | 0x20 }
    var left = a.utf8.makeIterator()
    var right = b.utf8.makeIterator()
    while true {
      switch (left.next().map(folded), right.next().map(folded)) {
      case (nil, nil): return nil
      case (nil, _): return true
      case (_, nil): return false
      case (let x?, let y?) where x != y: return x < y
      default: continue
      }
    }
  }

  enum Refusal: Error {
    /// A value Foundation writes that this writer leaves to it.
    case unusual
    /// A value Foundation refuses too.
    case invalid
  }

  private struct Writer {
    var bytes: [UInt8] = []
    var indent = 0
    /// The root locale, which is what `NSLocale.system` is on Linux.
    let locale = Locale(identifier: "")

    mutating func write(_ value: Any?) throws(Refusal) {
      guard let value else { return append("null") }
      // By its dynamic type: `value is NSNumber` would bridge an `Int` to one.
      if type(of: value) is NSNumber.Type { throw .unusual }
      switch value {
      case let text as String: writeString(text)
      case let flag as Bool: append(flag ? "true" : "false")
      case let number as Int: append(number.description)
      case let number as Int8: append(number.description)
      case let number as Int16: append(number.description)
      case let number as Int32: append(number.description)
      case let number as Int64: append(number.description)
      case let number as UInt: append(number.description)
      case let number as UInt8: append(number.description)
      case let number as UInt16: append(number.description)
      case let number as UInt32: append(number.description)
      case let number as UInt64: append(number.description)
      case let array as [Any?]: try writeArray(array)
      case let object as [AnyHashable: Any?]: try writeObject(object)
      case let number as Double:
        guard number.isFinite else { throw .invalid }
        var text = number.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        append(text)
      case is NSNull: append("null")
      default: throw .unusual
      }
    }

    private mutating func writeArray(_ array: [Any?]) throws(Refusal) {
      append("[\n")
      indent += 2
      for (index, element) in array.enumerated() {
        if index > 0 { append(",\n") }
        writeIndent()
        try write(element)
      }
      append("\n")
      indent -= 2
      writeIndent()
      append("]")
    }

    private mutating func writeObject(_ object: [AnyHashable: Any?]) throws(Refusal) {
      var entries: [(key: String, plain: Bool, value: Any?)] = []
      entries.reserveCapacity(object.count)
      for (key, value) in object {
        guard let key = key as? String else { throw .invalid }
        entries.append((key, SortedJSON.isPlain(key), value))
      }
      let locale = self.locale
      entries.sort { a, b in
        if a.plain && b.plain, let ascending = SortedJSON.plainOrder(a.key, b.key) { return ascending }
        return a.key.compare(
          b.key, options: [.numeric, .caseInsensitive, .forcedOrdering], range: a.key.startIndex..<a.key.endIndex,
          locale: locale) == .orderedAscending
      }
      append("{\n")
      indent += 2
      if !entries.isEmpty { writeIndent() }
      for (index, entry) in entries.enumerated() {
        if index > 0 {
          append(",\n")
          writeIndent()
        }
        writeString(entry.key)
        append(" : ")
        try write(entry.value)
      }
      append("\n")
      indent -= 2
      writeIndent()
      append("}")
    }

    private mutating func writeString(_ text: String) {
      bytes.append(UInt8(ascii: "\""))
      for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "\""): append("\\\"")
        case UInt8(ascii: "\\"): append("\\\\")
        case UInt8(ascii: "/"): append("\\/")
        case 0x08: append("\\b")
        case 0x0C: append("\\f")
        case 0x0A: append("\\n")
        case 0x0D: append("\\r")
        case 0x09: append("\\t")
        case 0x00..<0x20:
          // Lower-case hex, as `String(_:radix: 16)` writes it.
          append("\\u00" + Hex.encode([byte]))
        default: bytes.append(byte)
        }
      }
      bytes.append(UInt8(ascii: "\""))
    }

    private mutating func writeIndent() {
      bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent))
    }

    private mutating func append(_ text: String) {
      bytes.append(contentsOf: text.utf8)
    }
  }
}
