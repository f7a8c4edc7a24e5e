import Foundation

/// Parses decimal numbers (`62`, `-0.161`, `1.5e3`) from bytes without allocating.
///
/// Values with at most 15 significant digits and a small exponent — every value Apple writes —
/// are exact through the Clinger fast path (one multiply or divide by an exact power of ten);
/// anything longer goes through `strtod`. Hex, `inf`, `nan` and stray characters are rejected.
public enum DecimalParser {
  @usableFromInline static let powersOfTen: [Double] = (0...22).map { pow(10, Double($0)) }

  @inlinable
  public static func parse(_ bytes: UnsafeRawBufferPointer) -> Double? {
    let n = bytes.count
    guard n > 0, n < 64 else { return n == 0 ? nil : slowParse(bytes) }
    var i = 0
    var negative = false
    if bytes[0] == UInt8(ascii: "-") || bytes[0] == UInt8(ascii: "+") {
      negative = bytes[0] == UInt8(ascii: "-")
      i = 1
    }
    var mantissa: UInt64 = 0
    var digits = 0
    var sawDigit = false
    var fractionDigits = 0
    while i < n, bytes[i] >= 0x30, bytes[i] <= 0x39 {
      if mantissa != 0 || bytes[i] != 0x30 { digits += 1 }
      mantissa = mantissa &* 10 &+ UInt64(bytes[i] &- 0x30)
      sawDigit = true
      i += 1
    }
    if i < n, bytes[i] == UInt8(ascii: ".") {
      i += 1
      while i < n, bytes[i] >= 0x30, bytes[i] <= 0x39 {
        if mantissa != 0 || bytes[i] != 0x30 { digits += 1 }
        mantissa = mantissa &* 10 &+ UInt64(bytes[i] &- 0x30)
        fractionDigits += 1
        sawDigit = true
        i += 1
      }
    }
    guard sawDigit else { return nil }
    var exponent = 0
    if i < n, bytes[i] | 0x20 == UInt8(ascii: "e") {
      i += 1
      var expNegative = false
      if i < n, bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+") {
        expNegative = bytes[i] == UInt8(ascii: "-")
        i += 1
      }
      var sawExpDigit = false
      while i < n, bytes[i] >= 0x30, bytes[i] <= 0x39 {
        if exponent < 10_000 { exponent = exponent * 10 + Int(bytes[i] - 0x30) }
        sawExpDigit = true
        i += 1
      }
      guard sawExpDigit else { return nil }
      if expNegative { exponent = -exponent }
    }
    guard i == n else { return nil }
    let scale = exponent - fractionDigits
    if digits <= 15, scale >= -22, scale <= 22 {
      var value = Double(mantissa)
      value = scale < 0 ? value / powersOfTen[-scale] : value * powersOfTen[scale]
      return negative ? -value : value
    }
    return slowParse(bytes)
  }

  @usableFromInline
  static func slowParse(_ bytes: UnsafeRawBufferPointer) -> Double? {
    for byte in bytes {
      let ok =
        (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
        || byte == UInt8(ascii: "+") || byte | 0x20 == UInt8(ascii: "e")
      guard ok else { return nil }
    }
    var text = [CChar](repeating: 0, count: bytes.count + 1)
    for (index, byte) in bytes.enumerated() { text[index] = CChar(bitPattern: byte) }
    var end: UnsafeMutablePointer<CChar>?
    let value = text.withUnsafeMutableBufferPointer { buffer in strtod(buffer.baseAddress!, &end) }
    let consumed = text.withUnsafeMutableBufferPointer { buffer in end.map { $0 - buffer.baseAddress! } ?? 0 }
    guard consumed == bytes.count, value.isFinite else { return nil }
    return value
  }

  public static func parse(_ text: String) -> Double? {
    var copy = text
    return copy.withUTF8 { parse(UnsafeRawBufferPointer($0)) }
  }
}
