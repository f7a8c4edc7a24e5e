import HealthModel
import Testing

@Suite struct UnitConversionTests {
  @Test(
    arguments: [
      ("mi", 3.1, "m", 4_988.9664),
      ("km", 2.5, "m", 2_500),
      ("cm", 217, "m", 2.17),
      ("yd", 25, "m", 22.86),
      ("Cal", 310, "kcal", 310),
      ("kJ", 418.4, "kcal", 100),
      ("lb", 150, "kg", 68.0388555),
      ("g", 500, "kg", 0.5),
      ("mg", 250, "kg", 0.00025),
      ("degF", 98.6, "degC", 37),
      ("degF", 32, "degC", 0),
      ("min", 34.5, "s", 2070),
      ("ms", 48, "ms", 48),
      ("count/s", 1.5, "count/min", 90),
      ("mi/hr", 2.95276, "m/s", 1.32000),
      ("km/hr", 36, "m/s", 10),
      ("L", 1.2, "mL", 1200),
      ("%", 0.161, "%", 0.161),
      ("count", 152, "count", 152),
    ] as [(String, Double, String, Double)])
  func converts(unit: String, raw: Double, canonical: String, expected: Double) {
    let conversion = UnitConversion.forUnit(unit)
    #expect(conversion.isKnown)
    #expect(conversion.canonicalUnit == canonical)
    #expect(abs(conversion.apply(raw) - expected) < 1e-4 * max(1, abs(expected)))
  }

  @Test func unknownUnitsPassThrough() {
    let conversion = UnitConversion.forUnit("mL/min·kg")
    #expect(!conversion.isKnown)
    #expect(conversion.canonicalUnit == "mL/min·kg")
    #expect(conversion.apply(42.5) == 42.5)
  }

  @Test(
    arguments: [
      ("62", 62.0), ("-0.161", -0.161), ("+3", 3), ("1.5e3", 1500), ("2.95276", 2.95276), ("0", 0),
      ("12345678901234567890", 12_345_678_901_234_567_168), ("0.1", 0.1), ("1e-7", 1e-7),
    ] as [(String, Double)])
  func parsesNumbers(text: String, expected: Double) {
    #expect(DecimalParser.parse(text) == expected)
  }

  @Test(arguments: ["", "-", ".", "1.2.3", "abc", "1e", "nan", "inf", "0x10", "12 ", " 12", "1,5"])
  func rejectsNonNumbers(text: String) {
    #expect(DecimalParser.parse(text) == nil)
  }
}

/// `ExactDecimal.doubleValue` skips writing and parsing the text where one multiplication or
/// division is exact: it must give what parsing the text gives, for every number of digits and
/// every power of ten on both sides of that range.
@Suite struct ExactDecimalDoubleTests {
  @Test func theNearestDoubleIsTheParsedText() {
    var generator = SystemRandomNumberGenerator()
    var texts = [
      "0", "-0", "1", "-1", "0.1", "1.005", "2.17", "123456789012345", "1234567890123456", "9007199254740993",
    ]
    for _ in 0..<20_000 {
      let digits = Int.random(in: 1...18, using: &generator)
      var text = Int.random(in: 0...1, using: &generator) == 0 ? "" : "-"
      for _ in 0..<digits { text.append(Character(String(Int.random(in: 0...9, using: &generator)))) }
      text += "e\(Int.random(in: -30...30, using: &generator))"
      texts.append(text)
    }
    for text in texts {
      let decimal = ExactDecimal(text)!
      let parsed = Double(decimal.description)!
      #expect(decimal.doubleValue.bitPattern == parsed.bitPattern, "\(text): \(decimal.doubleValue), not \(parsed)")
      if decimal.doubleValue.bitPattern != parsed.bitPattern { return }
    }
  }
}

/// `+` returns the other side when one is zero and `*` moves the exponent when one side is a power
/// of ten: both must give the value the digit-by-digit arithmetic gives, sign included.
@Suite struct ExactDecimalShortcutTests {
  @Test(arguments: [
    // (lhs, rhs, lhs × rhs, lhs + rhs), worked out by hand.
    ("12.5", "1000", "12500", "1012.5"),
    ("12.5", "0.01", "0.125", "12.51"),
    ("-12.5", "0.01", "-0.125", "-12.49"),
    ("12.5", "-1", "-12.5", "11.5"),
    ("-0.3", "-10", "3", "-10.3"),
    ("1", "1", "1", "2"),
    ("0", "1000", "0", "1000"),
    ("-7.25", "0", "0", "-7.25"),
  ])
  func powersOfTenAndZero(lhs: String, rhs: String, product: String, sum: String) {
    let a = ExactDecimal(lhs)!
    let b = ExactDecimal(rhs)!
    #expect(a * b == ExactDecimal(product)!)
    #expect(b * a == ExactDecimal(product)!)
    #expect((a * b).description == ExactDecimal(product)!.description)
    #expect(a + b == ExactDecimal(sum)!)
    #expect(b + a == ExactDecimal(sum)!)
  }

  /// Against the long multiplication, on every value × sign × exponent × power of ten below: the
  /// same power written as `2 × 5·10^(k−1)` goes digit by digit (no value here doubles to a power
  /// of ten, which would take the shortcut on both sides). Enumerated, not random, so a failure
  /// names its case and replays.
  @Test func shortcutAgreesWithLongMultiplication() {
    let digits = ["1", "7", "12", "25", "999", "1001", "123456789012", "31415926535897932"]
    for text in digits {
      for sign in ["", "-"] {
        for exponent in stride(from: -8, through: 8, by: 4) {
          let value = ExactDecimal("\(sign)\(text)e\(exponent)")!
          for power in -6...6 {
            let viaShortcut = value * ExactDecimal("1e\(power)")!
            let viaDigits = (value * ExactDecimal("2")!) * ExactDecimal("5e\(power - 1)")!
            #expect(viaShortcut == viaDigits, "\(value) × 1e\(power)")
            #expect(viaShortcut.description == viaDigits.description, "\(value) × 1e\(power)")
          }
        }
      }
    }
  }
}
