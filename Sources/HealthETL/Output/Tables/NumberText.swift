import Foundation
import HealthModel

/// Numbers as output text: rounded to a column's precision, then written in the shortest form
/// that reads back to the rounded value (integers without `.0`).
enum NumberText {
  /// Appends `value` rounded to `precision`; nothing for a non-finite value.
  static func append(_ value: Double, precision: NumberPrecision, to out: inout [UInt8]) {
    guard value.isFinite else { return }
    CSVField.appendNumber(roundedAsWritten(value, precision: precision), to: &out)
  }

  /// The value `append` writes the text of: `value` rounded to `precision`.
  static func roundedAsWritten(_ value: Double, precision: NumberPrecision) -> Double {
    switch precision {
    case .asRecorded, .byUnit: return value
    case .significantDigits(let digits): return rounded(value, significantDigits: digits)
    case .decimals(let places): return rounded(value, decimals: places)
    }
  }

  /// `value` to `digits` significant digits: the floating-point noise of computed values
  /// (`59.99999999999999` → `60`) goes, the precision of any real measurement stays.
  static func rounded(_ value: Double, significantDigits digits: Int) -> Double {
    guard value.isFinite, value != 0 else { return value }
    let exponent = Int(Foundation.floor(Foundation.log10(Swift.abs(value))))
    return rounded(value, decimals: digits - 1 - exponent)
  }

  /// `value` to `places` decimal places, halves away from zero, as the decimal the value's
  /// shortest text stands for: `0.7909990439770554` to 15 places is 0.790999043977055. Scaling
  /// the Double is exact enough except within a few units in the last place of a half, where
  /// the product's own rounding could tip it; there the decimal is rounded digit by digit.
  /// 10⁰ … 10²², every one exact in a Double: `pow` is the slowest part of rounding otherwise.
  static let powersOfTen = (0...22).map { Foundation.pow(10.0, Double($0)) }

  static func rounded(_ value: Double, decimals places: Int) -> Double {
    guard value.isFinite else { return value }
    let scale = places >= 0 && places < powersOfTen.count ? powersOfTen[places] : Foundation.pow(10.0, Double(places))
    guard scale.isFinite, scale > 0 else { return value }
    let scaled = value * scale
    let fraction = Swift.abs(scaled - scaled.rounded(.towardZero))
    if Swift.abs(fraction - 0.5) <= 4 * scaled.ulp, let exact = ExactDecimal(value) {
      let result = exact.rounded(places: places).doubleValue
      if result.isFinite { return result }
    }
    let result = scaled.rounded() / scale
    return result.isFinite ? result : value
  }
}
