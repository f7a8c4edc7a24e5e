/// Unit conversion for workout attributes, statistics and metadata quantities (`217 cm`,
/// `63 degF`, `1.402 mi`), into the canonical units of SPEC §3.
///
/// Factors that are exact decimals are applied in decimal arithmetic, so a conversion gives the
/// Double nearest the exact result; only `kJ`/`J` and `degF` need a binary division.
enum WorkoutUnits {
  enum Dimension {
    /// → m
    case length
    /// → kcal
    case energy
    /// → s
    case time
    /// → count/min
    case heartRate
    /// → degC
    case temperature
  }

  private static func exact(_ text: String) -> WorkoutDecimal { WorkoutDecimal(text)! }

  private static let lengthFactors: [String: WorkoutDecimal] = [
    "m": exact("1"), "cm": exact("0.01"), "mm": exact("0.001"), "km": exact("1000"), "in": exact("0.0254"),
    "ft": exact("0.3048"), "yd": exact("0.9144"), "mi": exact("1609.344"),
  ]
  private static let energyFactors: [String: WorkoutDecimal] = [
    "kcal": exact("1"), "Cal": exact("1"), "cal": exact("0.001"),
  ]
  private static let timeFactors: [String: WorkoutDecimal] = [
    "s": exact("1"), "ms": exact("0.001"), "min": exact("60"), "hr": exact("3600"), "h": exact("3600"),
    "d": exact("86400"),
  ]
  private static let heartRateFactors: [String: WorkoutDecimal] = ["count/min": exact("1"), "count/s": exact("60")]

  /// `value` (in `unit`) in the canonical unit of `dimension`; nil when the unit is missing or
  /// not one of that dimension.
  static func convert(_ value: WorkoutDecimal, unit: String?, to dimension: Dimension) -> Double? {
    guard let unit else { return nil }
    if let exact = exactlyConverted(value, unit: unit, to: dimension) { return exact.doubleValue }
    switch dimension {
    case .length, .time, .heartRate: return nil
    case .energy:
      if unit == "kJ" { return value.doubleValue / 4.184 }
      if unit == "J" { return value.doubleValue / 4184 }
      return nil
    case .temperature:
      switch unit {
      // (F − 32) and × 5 are exact; one rounding for the division.
      case "degF": return ((value - exact("32")) * exact("5")).doubleValue / 9
      case "K": return (value - exact("273.15")).doubleValue
      default: return nil
      }
    }
  }

  /// The conversion when its factor is an exact decimal (every length, time and heart-rate unit,
  /// `kcal`/`Cal`/`cal`, `degC`), as an exact decimal for sums; nil otherwise.
  static func exactlyConverted(_ value: WorkoutDecimal, unit: String, to dimension: Dimension) -> WorkoutDecimal? {
    let factor: WorkoutDecimal?
    switch dimension {
    case .length: factor = lengthFactors[unit]
    case .time: factor = timeFactors[unit]
    case .heartRate: factor = heartRateFactors[unit]
    case .energy: factor = energyFactors[unit]
    case .temperature: factor = unit == "degC" ? exact("1") : nil
    }
    return factor.map { value * $0 }
  }

  /// As `convert` for a value already parsed to a Double (statistics attributes).
  static func convert(_ value: Double?, unit: String?, to dimension: Dimension) -> Double? {
    guard let value, let decimal = WorkoutDecimal(value) else { return nil }
    return convert(decimal, unit: unit, to: dimension)
  }

  /// `value` in seconds, exactly; nil for a unit that is not a time unit.
  static func seconds(_ value: WorkoutDecimal, unit: String?) -> WorkoutDecimal? {
    guard let unit else { return nil }
    return exactlyConverted(value, unit: unit, to: .time)
  }

  /// A metadata quantity `"<number> <unit>"` (`5700 %`, `217 cm`, `25 yd`); a bare number has no
  /// unit. Nil when the number part is not a number.
  static func parseQuantity(_ text: String) -> (value: WorkoutDecimal, unit: String?)? {
    let trimmed = text.drop { $0 == " " }
    guard let space = trimmed.firstIndex(of: " ") else {
      return WorkoutDecimal(trimmed).map { ($0, nil) }
    }
    guard let value = WorkoutDecimal(trimmed[..<space]) else { return nil }
    let unit = trimmed[space...].trimmingSpaces()
    return (value, unit.isEmpty ? nil : unit)
  }
}

extension Substring {
  fileprivate func trimmingSpaces() -> String {
    String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
  }
}
