/// An exact decimal number for the few values whose digits matter: a workout's `execRuntime` is
/// computed from the `duration` text without binary rounding, and unit conversions by exact
/// factors (`mi` = 1609.344 m, `cm` = 0.01 m) give the correctly rounded result (`217 cm` → 2.17,
/// not 2.1700000000000004). Workouts are few, so a digit array is fast enough; the per-record path
/// never uses this.
public struct ExactDecimal: Sendable, Hashable, CustomStringConvertible {
  /// Base-10 digits of the magnitude, most significant first, no leading zeros; empty for zero.
  private(set) var digits: [UInt8]
  /// The value is `digits × 10^exponent`.
  private(set) var exponent: Int
  public private(set) var isNegative: Bool

  public static let zero = ExactDecimal(digits: [], exponent: 0, isNegative: false)
  public static let one = ExactDecimal(digits: [1], exponent: 0, isNegative: false)

  private init(digits: [UInt8], exponent: Int, isNegative: Bool) {
    var digits = digits
    let leading = digits.firstIndex { $0 != 0 } ?? digits.count
    digits.removeFirst(leading)
    var exponent = exponent
    while let last = digits.last, last == 0 {
      digits.removeLast()
      exponent += 1
    }
    self.digits = digits
    self.exponent = digits.isEmpty ? 0 : exponent
    self.isNegative = digits.isEmpty ? false : isNegative
  }

  /// Parses `[+-]digits[.digits][e[+-]digits]` (what `DecimalParser` accepts, and what
  /// `Double.description` writes); nil for anything else.
  public init?(_ text: some StringProtocol) {
    let bytes = Array(text.utf8)
    var index = 0
    var negative = false
    if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
      negative = bytes[index] == UInt8(ascii: "-")
      index += 1
    }
    var digits: [UInt8] = []
    var fractionDigits = 0
    var sawDigit = false
    while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
      digits.append(bytes[index] - 0x30)
      sawDigit = true
      index += 1
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
      index += 1
      while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
        digits.append(bytes[index] - 0x30)
        fractionDigits += 1
        sawDigit = true
        index += 1
      }
    }
    guard sawDigit else { return nil }
    var exponent = 0
    if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
      index += 1
      var exponentNegative = false
      if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
        exponentNegative = bytes[index] == UInt8(ascii: "-")
        index += 1
      }
      var sawExponentDigit = false
      while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
        // Larger exponents are not numbers any workout carries; refusing them bounds the arrays.
        guard exponent < 400 else { return nil }
        exponent = exponent * 10 + Int(bytes[index] - 0x30)
        sawExponentDigit = true
        index += 1
      }
      guard sawExponentDigit else { return nil }
      if exponentNegative { exponent = -exponent }
    }
    guard index == bytes.count else { return nil }
    self.init(digits: digits, exponent: exponent - fractionDigits, isNegative: negative)
  }

  /// The exact decimal of a finite Double's shortest round-trip text (`1.402` stays 1.402).
  public init?(_ value: Double) {
    guard value.isFinite else { return nil }
    self.init(value.description)
  }

  public var isZero: Bool { digits.isEmpty }

  /// Plain positional text (`2050.8405044078826`, `0.01`, `1000`), never an exponent.
  public var description: String {
    guard !digits.isEmpty else { return "0" }
    var text = isNegative ? "-" : ""
    let digitText = String(decoding: digits.map { $0 + 0x30 }, as: UTF8.self)
    if exponent >= 0 {
      text += digitText + String(repeating: "0", count: exponent)
    } else if -exponent >= digits.count {
      text += "0." + String(repeating: "0", count: -exponent - digits.count) + digitText
    } else {
      let split = digitText.index(digitText.endIndex, offsetBy: exponent)
      text += digitText[..<split] + "." + digitText[split...]
    }
    return text
  }

  /// The Double nearest to the exact value (one correctly rounded conversion). With at most 15
  /// digits and a power of ten of at most 22 both are exact Doubles, so one multiplication or
  /// division is that conversion (Clinger's fast path, the one `strtod` takes first), without
  /// writing and parsing the text.
  public var doubleValue: Double {
    guard digits.count <= 15, exponent >= -22, exponent <= 22 else { return Double(description) ?? .nan }
    var significand = 0.0
    for digit in digits { significand = significand * 10 + Double(digit) }
    let magnitude =
      exponent >= 0
      ? significand * DecimalParser.powersOfTen[exponent] : significand / DecimalParser.powersOfTen[-exponent]
    return isNegative ? -magnitude : magnitude
  }

  public static func * (lhs: ExactDecimal, rhs: ExactDecimal) -> ExactDecimal {
    guard !lhs.isZero, !rhs.isZero else { return .zero }
    // A power of ten (most unit factors: 1, 1000, 0.01) moves the exponent; the digits stay as
    // they are, already without leading or trailing zeros.
    if rhs.digits == [1] { return lhs.scaled(by: rhs) }
    if lhs.digits == [1] { return rhs.scaled(by: lhs) }
    var product = [Int](repeating: 0, count: lhs.digits.count + rhs.digits.count)
    for (i, a) in lhs.digits.reversed().enumerated() {
      for (j, b) in rhs.digits.reversed().enumerated() { product[i + j] += Int(a) * Int(b) }
    }
    var carry = 0
    for index in product.indices {
      let total = product[index] + carry
      product[index] = total % 10
      carry = total / 10
    }
    return ExactDecimal(
      digits: product.reversed().map { UInt8($0) }, exponent: lhs.exponent + rhs.exponent,
      isNegative: lhs.isNegative != rhs.isNegative)
  }

  /// `self` times `power`, a power of ten with its sign.
  private func scaled(by power: ExactDecimal) -> ExactDecimal {
    var result = self
    result.exponent += power.exponent
    result.isNegative = isNegative != power.isNegative
    return result
  }

  public static func + (lhs: ExactDecimal, rhs: ExactDecimal) -> ExactDecimal {
    // Most unit conversions add a shift of zero.
    if rhs.isZero { return lhs }
    if lhs.isZero { return rhs }
    let exponent = min(lhs.exponent, rhs.exponent)
    let a = lhs.aligned(to: exponent)
    let b = rhs.aligned(to: exponent)
    if lhs.isNegative == rhs.isNegative {
      return ExactDecimal(digits: addMagnitudes(a, b), exponent: exponent, isNegative: lhs.isNegative)
    }
    if compareMagnitudes(a, b) >= 0 {
      return ExactDecimal(digits: subtractMagnitudes(a, b), exponent: exponent, isNegative: lhs.isNegative)
    }
    return ExactDecimal(digits: subtractMagnitudes(b, a), exponent: exponent, isNegative: rhs.isNegative)
  }

  public static prefix func - (value: ExactDecimal) -> ExactDecimal {
    ExactDecimal(digits: value.digits, exponent: value.exponent, isNegative: !value.isNegative)
  }

  public static func - (lhs: ExactDecimal, rhs: ExactDecimal) -> ExactDecimal { lhs + (-rhs) }

  /// The integer part (truncated toward zero); nil when it does not fit in an Int64.
  public var integerPart: Int64? {
    let integerDigits = digits.count + exponent
    guard integerDigits > 0 else { return 0 }
    guard integerDigits <= 18 else { return nil }
    var value: Int64 = 0
    for position in 0..<integerDigits { value = value * 10 + Int64(position < digits.count ? digits[position] : 0) }
    return isNegative ? -value : value
  }

  /// Rounded to `places` decimal places (negative: to tens, hundreds, …), halves away from zero,
  /// exactly: `1.005` → 1.01 (a Double holding 1.005 is just below it and would round to 1.0).
  public func rounded(places: Int) -> ExactDecimal {
    let dropped = -places - exponent
    guard dropped > 0, !digits.isEmpty else { return self }
    let kept = digits.count - dropped
    if kept < 0 { return .zero }
    var head = Array(digits[..<kept])
    if digits[kept] >= 5 {
      // Add one unit in the last kept place, carrying leftwards.
      var index = head.count - 1
      while index >= 0, head[index] == 9 {
        head[index] = 0
        index -= 1
      }
      if index >= 0 { head[index] += 1 } else { head.insert(1, at: 0) }
    }
    return ExactDecimal(digits: head, exponent: -places, isNegative: isNegative)
  }

  /// Digits (least significant last) scaled so the last one stands for `10^exponent`.
  private func aligned(to target: Int) -> [UInt8] { digits + [UInt8](repeating: 0, count: exponent - target) }

  private static func compareMagnitudes(_ a: [UInt8], _ b: [UInt8]) -> Int {
    let width = max(a.count, b.count)
    let padA = [UInt8](repeating: 0, count: width - a.count) + a
    let padB = [UInt8](repeating: 0, count: width - b.count) + b
    for (x, y) in zip(padA, padB) where x != y { return x < y ? -1 : 1 }
    return 0
  }

  private static func addMagnitudes(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
    var result: [UInt8] = []
    var carry: UInt8 = 0
    var i = a.count - 1
    var j = b.count - 1
    while i >= 0 || j >= 0 || carry > 0 {
      let total = (i >= 0 ? a[i] : 0) + (j >= 0 ? b[j] : 0) + carry
      result.append(total % 10)
      carry = total / 10
      i -= 1
      j -= 1
    }
    return result.reversed()
  }

  /// `a − b` for `a ≥ b`.
  private static func subtractMagnitudes(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
    var result: [UInt8] = []
    var borrow = 0
    var j = b.count - 1
    for i in stride(from: a.count - 1, through: 0, by: -1) {
      var digit = Int(a[i]) - borrow - (j >= 0 ? Int(b[j]) : 0)
      borrow = digit < 0 ? 1 : 0
      if digit < 0 { digit += 10 }
      result.append(UInt8(digit))
      j -= 1
    }
    return result.reversed()
  }
}
