import Foundation

/// Numbers as output text: rounded to a column's precision, then written in the shortest form
/// that reads back to the rounded value (integers without `.0`).
enum NumberText {
  /// Appends `value` rounded to `precision`; nothing for a non-finite value.
  static func append(_ value: Double, precision: NumberPrecision, to out: inout [UInt8]) {
    guard value.isFinite else { return }
    switch precision {
    case .asRecorded, .byUnit: CSVField.appendNumber(value, to: &out)
    case .significantDigits(let digits): CSVField.appendNumber(rounded(value, significantDigits: digits), to: &out)
    case .decimals(let places): CSVField.appendNumber(rounded(value, decimals: places), to: &out)
    }
  }

  /// `value` to `digits` significant digits: the floating-point noise of computed values
  /// (`59.99999999999999` → `60`) goes, the precision of any real measurement stays.
  static func rounded(_ value: Double, significantDigits digits: Int) -> Double {
    guard value.isFinite, value != 0 else { return value }
    let exponent = Int(Foundation.floor(Foundation.log10(Swift.abs(value))))
    let scale = Foundation.pow(10.0, Double(digits - 1 - exponent))
    guard scale.isFinite, scale > 0 else { return value }
    let result = (value * scale).rounded() / scale
    return result.isFinite ? result : value
  }

  /// `value` to `places` decimal places, halves away from zero.
  static func rounded(_ value: Double, decimals places: Int) -> Double {
    let scale = Foundation.pow(10.0, Double(places))
    let result = (value * scale).rounded() / scale
    return result.isFinite ? result : value
  }
}
