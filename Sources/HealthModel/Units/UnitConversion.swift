/// How a unit as written in an export maps to the canonical unit of its dimension
/// (Pipelines/docs/samples.md, "Units"): the one unit table of HealthETL.
///
/// Every conversion is `base = (raw + shift) × numerator ÷ denominator`, with decimal constants,
/// so it can be evaluated two ways from the same entry: millions of record values use the
/// precomputed Double `factor` and `offset` (one multiply-add); the few workout values whose
/// digits matter use `exactlyInBase`, which computes in exact decimals and rounds once.
public struct UnitConversion: Sendable, Hashable {
  /// The unit sample values are given in: the dimension's base, except that `ms` stays `ms`.
  public let canonicalUnit: String
  public let factor: Double
  public let offset: Double
  /// False when the unit is not one HealthETL knows: the value passes through unchanged and the
  /// run report lists the unit.
  public let isKnown: Bool
  /// The dimension's base unit (`m`, `kcal`, `s`, `count/min`, `degC`, …).
  public let baseUnit: String
  let shift: ExactDecimal
  let numerator: ExactDecimal
  let denominator: ExactDecimal
  /// 1 ÷ the factor as an exact decimal, when the unit is the base times a power of ten (or one
  /// with a finite decimal inverse), for `fromBase`.
  let decimalInverse: ExactDecimal?

  init(
    baseUnit: String, numerator: String = "1", denominator: String = "1", shift: String = "0",
    keepsOwnUnit symbol: String? = nil, isKnown: Bool = true
  ) {
    self.baseUnit = baseUnit
    self.shift = ExactDecimal(shift)!
    self.numerator = ExactDecimal(numerator)!
    self.denominator = ExactDecimal(denominator)!
    self.isKnown = isKnown
    if self.shift.isZero, self.denominator == .one, let inverse = ExactDecimal(1 / self.numerator.doubleValue),
      inverse * self.numerator == .one
    {
      decimalInverse = inverse
    } else {
      decimalInverse = nil
    }
    if let symbol {
      canonicalUnit = symbol
      factor = 1
      offset = 0
    } else {
      canonicalUnit = baseUnit
      let ratio = self.numerator.doubleValue / self.denominator.doubleValue
      factor = ratio
      offset =
        self.shift.isZero ? 0 : self.shift.doubleValue * self.numerator.doubleValue / self.denominator.doubleValue
    }
  }

  @inlinable public func apply(_ raw: Double) -> Double { raw * factor + offset }

  /// `value` (in this unit) in `baseUnit`, computed exactly and rounded once to a Double (a
  /// division by a constant that is not a power of ten is the one binary step).
  public func exactlyInBase(_ value: ExactDecimal) -> Double {
    let scaled = (value + shift) * numerator
    return denominator == ExactDecimal.one ? scaled.doubleValue : scaled.doubleValue / denominator.doubleValue
  }

  /// `value` in `baseUnit` as an exact decimal (for sums that must be rounded once, at the end);
  /// nil when the conversion divides.
  public func exactDecimalInBase(_ value: ExactDecimal) -> ExactDecimal? {
    guard denominator == ExactDecimal.one else { return nil }
    return (value + shift) * numerator
  }

  /// `value`, given in `baseUnit`, in this unit (`m` → `km`, `s` → `h`): the inverse of `apply`.
  /// When this unit is the base times a power of ten the step is a decimal shift, exact on the
  /// value's decimal text (1234.5 m is 1.2345 km, not 1.2345000000000002); otherwise one multiply
  /// by the inverse ratio.
  public func fromBase(_ value: Double) -> Double {
    if let inverse = decimalInverse, let exact = ExactDecimal(value) {
      return (exact * inverse).doubleValue
    }
    return (value - offset) * (1 / factor)
  }

  /// Every unit HealthETL converts, by base unit then symbol (for the documentation).
  public static var known: [(symbol: String, conversion: UnitConversion)] {
    table.sorted { ($0.value.baseUnit, $0.key) < ($1.value.baseUnit, $1.key) }.map { ($0.key, $0.value) }
  }

  /// The conversion as a formula of decimal constants: `× 1609.344`, `+ -32, × 5 ÷ 9`.
  public var formula: String {
    var parts: [String] = []
    if !shift.isZero {
      parts.append((shift.isNegative ? "− " : "+ ") + (shift.isNegative ? (-shift) : shift).description)
    }
    if numerator != ExactDecimal.one { parts.append("× " + numerator.description) }
    if denominator != ExactDecimal.one { parts.append("÷ " + denominator.description) }
    return parts.isEmpty ? "× 1" : parts.joined(separator: ", ")
  }

  /// The conversion for `unit` (the export's unit string, after XML unescaping).
  public static func forUnit(_ unit: String) -> UnitConversion {
    if let known = table[unit] { return known }
    return UnitConversion(baseUnit: unit, keepsOwnUnit: unit, isKnown: false)
  }

  private static func to(
    _ base: String, _ numerator: String = "1", over denominator: String = "1", shift: String = "0"
  ) -> UnitConversion {
    UnitConversion(baseUnit: base, numerator: numerator, denominator: denominator, shift: shift)
  }

  static let metersPerMile = "1609.344"
  static let kilogramsPerPound = "0.45359237"
  static let kilojoulesPerKilocalorie = "4.184"

  /// Every unit string seen in real exports plus the usual siblings.
  static let table: [String: UnitConversion] = [
    // counts
    "count": to("count"),
    // lengths → m
    "m": to("m"), "cm": to("m", "0.01"), "mm": to("m", "0.001"), "km": to("m", "1000"),
    "in": to("m", "0.0254"), "ft": to("m", "0.3048"), "yd": to("m", "0.9144"), "mi": to("m", metersPerMile),
    // energy → kcal (Cal is the large calorie, i.e. kcal)
    "kcal": to("kcal"), "Cal": to("kcal"), "cal": to("kcal", "0.001"),
    "kJ": to("kcal", over: kilojoulesPerKilocalorie), "J": to("kcal", "0.001", over: kilojoulesPerKilocalorie),
    // mass → kg
    "kg": to("kg"), "g": to("kg", "0.001"), "mg": to("kg", "0.000001"), "mcg": to("kg", "0.000000001"),
    "µg": to("kg", "0.000000001"), "lb": to("kg", kilogramsPerPound), "oz": to("kg", kilogramsPerPound, over: "16"),
    "st": to("kg", "6.35029318"),
    // beat and breath rates → count/min
    "count/min": to("count/min"), "count/s": to("count/min", "60"),
    // durations → s; ms (HRV, ground contact time) keeps its unit in samples
    "s": to("s"), "min": to("s", "60"), "hr": to("s", "3600"), "h": to("s", "3600"), "d": to("s", "86400"),
    "ms": UnitConversion(baseUnit: "s", numerator: "0.001", keepsOwnUnit: "ms"),
    // fractions already
    "%": to("%"),
    // temperature → degC
    "degC": to("degC"), "degF": to("degC", "5", over: "9", shift: "-32"), "K": to("degC", shift: "-273.15"),
    // speed → m/s
    "m/s": to("m/s"), "km/hr": to("m/s", "1000", over: "3600"), "mi/hr": to("m/s", metersPerMile, over: "3600"),
    "m/hr": to("m/s", over: "3600"), "ft/s": to("m/s", "0.3048"), "m/min": to("m/s", over: "60"),
    // pressure, glucose, volume, sound
    "mmHg": to("mmHg"), "cmAq": to("mmHg", "0.73555924"), "inHg": to("mmHg", "25.4"),
    "mg/dL": to("mg/dL"), "mmol<180.1558800000541>/L": to("mg/dL", "18.01558800000541"),
    "mL": to("mL"), "L": to("mL", "1000"), "dL": to("mL", "100"), "cL": to("mL", "10"),
    "fl_oz_us": to("mL", "29.5735295625"), "fl_oz_imp": to("mL", "28.4130625"), "cup_us": to("mL", "236.5882365"),
    "dBASPL": to("dBASPL"),
  ]
}
