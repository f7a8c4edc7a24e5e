import HealthModel

/// Workout attributes, statistics and metadata quantities (`217 cm`, `63 degF`, `1.402 mi`) in
/// the canonical units, through the one unit table (`UnitConversion`) evaluated exactly: a
/// workout has a handful of values and each should be the correctly rounded result.
enum WorkoutUnits {
  /// What a workout field holds, named by its base unit.
  enum Dimension: String {
    case length = "m"
    case energy = "kcal"
    case time = "s"
    case heartRate = "count/min"
    case temperature = "degC"
  }

  /// `value` (in `unit`) in the base unit of `dimension`; nil when the unit is missing or not
  /// one of that dimension.
  static func convert(_ value: ExactDecimal, unit: String?, to dimension: Dimension) -> Double? {
    guard let conversion = conversion(unit, dimension) else { return nil }
    return conversion.exactlyInBase(value)
  }

  /// The exact decimal result, for sums rounded once at the end; nil when the unit is not one of
  /// `dimension` or its conversion divides.
  static func exactlyConverted(_ value: ExactDecimal, unit: String, to dimension: Dimension) -> ExactDecimal? {
    conversion(unit, dimension)?.exactDecimalInBase(value)
  }

  /// As `convert` for a value already parsed to a Double (statistics attributes).
  static func convert(_ value: Double?, unit: String?, to dimension: Dimension) -> Double? {
    guard let value, let decimal = ExactDecimal(value) else { return nil }
    return convert(decimal, unit: unit, to: dimension)
  }

  /// `value` in seconds, exactly; nil for a unit that is not a time unit.
  static func seconds(_ value: ExactDecimal, unit: String?) -> ExactDecimal? {
    guard let unit else { return nil }
    return exactlyConverted(value, unit: unit, to: .time)
  }

  private static func conversion(_ unit: String?, _ dimension: Dimension) -> UnitConversion? {
    guard let unit else { return nil }
    let conversion = UnitConversion.forUnit(unit)
    return conversion.isKnown && conversion.baseUnit == dimension.rawValue ? conversion : nil
  }

  /// A metadata quantity `"<number> <unit>"` (`5700 %`, `217 cm`, `25 yd`); a bare number has no
  /// unit. Nil when the number part is not a number.
  static func parseQuantity(_ text: String) -> (value: ExactDecimal, unit: String?)? {
    let trimmed = text.drop { $0 == " " }
    guard let space = trimmed.firstIndex(of: " ") else {
      return ExactDecimal(trimmed).map { ($0, nil) }
    }
    guard let value = ExactDecimal(trimmed[..<space]) else { return nil }
    let unit = trimmed[space...].trimmingSpaces()
    return (value, unit.isEmpty ? nil : unit)
  }
}

extension Substring {
  fileprivate func trimmingSpaces() -> String {
    var start = startIndex
    while start < endIndex, self[start] == " " { formIndex(after: &start) }
    var end = endIndex
    while end > start, self[index(before: end)] == " " { formIndex(before: &end) }
    return String(self[start..<end])
  }
}
