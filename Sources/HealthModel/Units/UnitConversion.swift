/// How a unit as written in an export maps to the canonical unit of SPEC §3:
/// `canonical = raw × factor + offset`.
public struct UnitConversion: Sendable, Hashable {
  public let canonicalUnit: String
  public let factor: Double
  public let offset: Double
  /// False when the unit is not one HealthETL knows: the value passes through unchanged and the
  /// run report lists the unit.
  public let isKnown: Bool

  public init(canonicalUnit: String, factor: Double = 1, offset: Double = 0, isKnown: Bool = true) {
    self.canonicalUnit = canonicalUnit
    self.factor = factor
    self.offset = offset
    self.isKnown = isKnown
  }

  @inlinable public func apply(_ raw: Double) -> Double { raw * factor + offset }

  /// The conversion for `unit` (the export's unit string, after XML unescaping).
  public static func forUnit(_ unit: String) -> UnitConversion {
    if let known = table[unit] { return known }
    return UnitConversion(canonicalUnit: unit, isKnown: false)
  }

  static func to(_ canonical: String, _ factor: Double = 1, offset: Double = 0) -> UnitConversion {
    UnitConversion(canonicalUnit: canonical, factor: factor, offset: offset)
  }

  static let metersPerMile = 1609.344
  static let kilogramsPerPound = 0.45359237
  static let kilojoulesPerKilocalorie = 4.184

  /// Every unit string seen in real exports (reference §1.6) plus the usual siblings.
  static let table: [String: UnitConversion] = [
    // counts
    "count": to("count"),
    // lengths → m
    "m": to("m"), "cm": to("m", 0.01), "mm": to("m", 0.001), "km": to("m", 1000),
    "in": to("m", 0.0254), "ft": to("m", 0.3048), "yd": to("m", 0.9144), "mi": to("m", metersPerMile),
    // energy → kcal (Cal is the large calorie, i.e. kcal)
    "kcal": to("kcal"), "Cal": to("kcal"), "cal": to("kcal", 0.001),
    "kJ": to("kcal", 1 / kilojoulesPerKilocalorie), "J": to("kcal", 0.001 / kilojoulesPerKilocalorie),
    // mass → kg
    "kg": to("kg"), "g": to("kg", 0.001), "mg": to("kg", 1e-6), "mcg": to("kg", 1e-9), "µg": to("kg", 1e-9),
    "lb": to("kg", kilogramsPerPound), "oz": to("kg", kilogramsPerPound / 16), "st": to("kg", kilogramsPerPound * 14),
    // beat and breath rates → count/min
    "count/min": to("count/min"), "count/s": to("count/min", 60),
    // durations → s; ms (HRV, ground contact time) stays ms
    "s": to("s"), "min": to("s", 60), "hr": to("s", 3600), "h": to("s", 3600), "d": to("s", 86_400),
    "ms": to("ms"),
    // fractions already
    "%": to("%"),
    // temperature → degC
    "degC": to("degC"), "degF": to("degC", 5.0 / 9.0, offset: -32 * 5.0 / 9.0), "K": to("degC", offset: -273.15),
    // speed → m/s
    "m/s": to("m/s"), "km/hr": to("m/s", 1000 / 3600.0), "mi/hr": to("m/s", metersPerMile / 3600),
    "m/hr": to("m/s", 1 / 3600.0), "ft/s": to("m/s", 0.3048), "m/min": to("m/s", 1 / 60.0),
    // pressure, glucose, volume, sound
    "mmHg": to("mmHg"), "cmAq": to("mmHg", 0.73555924), "inHg": to("mmHg", 25.4),
    "mg/dL": to("mg/dL"), "mmol<180.1558800000541>/L": to("mg/dL", 18.01558800000541),
    "mL": to("mL"), "L": to("mL", 1000), "dL": to("mL", 100), "cL": to("mL", 10),
    "fl_oz_us": to("mL", 29.5735295625), "fl_oz_imp": to("mL", 28.4130625), "cup_us": to("mL", 236.5882365),
    "dBASPL": to("dBASPL"),
  ]
}
