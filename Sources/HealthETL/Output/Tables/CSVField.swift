import HealthModel

/// RFC 4180 field writing with minimal quoting, the way DuckDB's writer does it: a field is quoted
/// only when it holds a comma, a quote, CR or LF (quotes inside are doubled); a missing value is an
/// empty field.
///
/// Text is data, never a formula: a spreadsheet program opening the CSV evaluates a cell that
/// starts with `=`, `+`, `-` or `@` (and LibreOffice one that starts with a tab or CR before them),
/// so such a text cell starts with a single quote (OWASP's rule for CSV injection). A cell that is
/// a plain decimal number (`-3.5`, `+1e-05`) is left as it is: it cannot be a formula, and a raw
/// value stays readable (Pipelines/docs/outputs.md, "Values").
enum CSVField {
  static func needsQuotes(_ bytes: UnsafeRawBufferPointer) -> Bool {
    for byte in bytes where byte == 0x2C || byte == 0x22 || byte == 0x0A || byte == 0x0D { return true }
    return false
  }

  /// Whether a spreadsheet could take this text for a formula.
  static func couldBeFormula(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard let first = bytes.first else { return false }
    switch first {
    case UInt8(ascii: "="), UInt8(ascii: "@"), 0x09, 0x0D: return true
    case UInt8(ascii: "+"), UInt8(ascii: "-"): return !isPlainNumber(bytes)
    default: return false
    }
  }

  /// `[+-]digits[.digits][e[+-]digits]` (or `.digits` after the sign), nothing else.
  private static func isPlainNumber(_ bytes: UnsafeRawBufferPointer) -> Bool {
    var index = 1
    func digits() -> Int {
      let start = index
      while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
      return index - start
    }
    var mantissa = digits()
    if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
      index += 1
      mantissa += digits()
    }
    guard mantissa > 0 else { return false }
    if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
      index += 1
      if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
      guard digits() > 0 else { return false }
    }
    return index == bytes.count
  }

  static func append(_ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
    let guardFormula = couldBeFormula(bytes)
    guard needsQuotes(bytes) else {
      if guardFormula { out.append(UInt8(ascii: "'")) }
      out.append(contentsOf: bytes)
      return
    }
    out.append(0x22)
    if guardFormula { out.append(UInt8(ascii: "'")) }
    for byte in bytes {
      if byte == 0x22 { out.append(0x22) }
      out.append(byte)
    }
    out.append(0x22)
  }

  static func append(_ text: String?, to out: inout [UInt8]) {
    guard var text else { return }
    text.withUTF8 { append(UnsafeRawBufferPointer($0), to: &out) }
  }

  /// The decimal digits of `value`, without a `String` in between (half a million rows of
  /// heart rate per minute write a few million of them).
  static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
    if value < 0 { out.append(UInt8(ascii: "-")) }
    var magnitude = value.magnitude
    if magnitude < 10 {
      out.append(UInt8(truncatingIfNeeded: 48 + magnitude))
      return
    }
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
      var first = 20
      while magnitude > 0 {
        first -= 1
        digits[first] = UInt8(truncatingIfNeeded: 48 + magnitude % 10)
        magnitude /= 10
      }
      out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[first...]))
    }
  }

  /// A number as the shortest text that reads back to the same Double; integers without `.0`.
  static func appendNumber(_ value: Double, to out: inout [UInt8]) {
    guard value.isFinite else { return }
    if value == value.rounded(), abs(value) < 1e15 {
      appendInteger(Int64(value), to: &out)
    } else {
      out.append(contentsOf: value.description.utf8)
    }
  }
}

/// JSON string escaping for the metadata column and JSON outputs.
enum JSONText {
  static func appendString(_ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
    out.append(0x22)
    for byte in bytes {
      switch byte {
      case 0x22: out.append(contentsOf: [0x5C, 0x22])
      case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
      case 0x0A: out.append(contentsOf: [0x5C, 0x6E])
      case 0x0D: out.append(contentsOf: [0x5C, 0x72])
      case 0x09: out.append(contentsOf: [0x5C, 0x74])
      case 0..<0x20:
        out.append(contentsOf: Array("\\u00".utf8))
        out.append(contentsOf: Array(Hex.encode([byte]).utf8))
      default: out.append(byte)
      }
    }
    out.append(0x22)
  }

  static func appendString(_ text: String, to out: inout [UInt8]) {
    var copy = text
    copy.withUTF8 { appendString(UnsafeRawBufferPointer($0), to: &out) }
  }
}
