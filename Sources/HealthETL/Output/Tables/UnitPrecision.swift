/// The precision of every computed or converted value, by its canonical unit (Pipelines/README.md,
/// "Precision"). Values are written rounded to it, so binary noise (`1283.9820556640627 s`,
/// `17.22222222222222 degC`) never reaches an output, while every digit a real export records is
/// kept: exports write values to six significant digits (`47.8478` bpm, `0.00466741` km,
/// `9.13123` flights), and each unit's places keep six digits of its usual magnitudes.
///
/// Sums keep at least four decimals: pro-rata shares of a sample are fractions of it. Sums are
/// rounded once, after summing.
public enum UnitPrecision {
  public struct Entry: Sendable {
    /// The canonical unit (`count/min`).
    public let unit: String
    /// Decimal places of values (means, minima, a converted value).
    public let places: Int
    /// How `health.xlsx` shows values, and sums.
    public let display: SheetDisplay
    public let sumDisplay: SheetDisplay
    /// Why these places: what real exports record.
    public let reason: String
  }

  /// Sums keep at least this many decimals.
  public static let minimumSumPlaces = 4

  /// Units missing here (compound units such as VO₂ max's `mL/min·kg`, `W`, `IU`) get `other`.
  public static let table: [Entry] = [
    Entry(
      unit: "count", places: 5, display: .general, sumDisplay: .decimals(0),
      reason: "flights are recorded as `9.13123`; steps sums keep their pro-rata fractions"),
    Entry(
      unit: "count/min", places: 4, display: .decimals(1), sumDisplay: .decimals(1),
      reason: "heart rate is recorded as `47.8478`"),
    Entry(
      unit: "s", places: 3, display: .hoursMinutesSeconds, sumDisplay: .hoursMinutesSeconds,
      reason: "durations to the millisecond (`21.3997 min` of a workout is 1283.982 s)"),
    Entry(
      unit: "ms", places: 4, display: .decimals(1), sumDisplay: .decimals(1), reason: "HRV is recorded as `56.1638`"),
    Entry(
      unit: "m", places: 5, display: .decimals(2), sumDisplay: .decimals(0),
      reason: "walking distances are recorded as `0.00466741 km` (4.66741 m)"),
    Entry(
      unit: "kcal", places: 4, display: .decimals(1), sumDisplay: .decimals(0),
      reason: "energy is recorded as `0.255 kcal`, or `0.267776 kJ` (0.064 kcal)"),
    Entry(
      unit: "kg", places: 12, display: .general, sumDisplay: .general,
      reason: "body mass `188.826 lb` is 85.6500… kg; vitamins are recorded in `mcg` (10⁻⁹ kg)"),
    Entry(
      unit: "%", places: 5, display: .percent, sumDisplay: .percent,
      reason: "fractions 0–1, recorded as `0.294`"),
    Entry(
      unit: "degC", places: 2, display: .decimals(1), sumDisplay: .decimals(1),
      reason: "body temperature `98.7 degF` is 37.06 °C, and back 98.7 °F"),
    Entry(
      unit: "m/s", places: 5, display: .decimals(2), sumDisplay: .decimals(2),
      reason: "speeds are recorded as `2.21457 mi/hr` (0.98999 m/s)"),
    Entry(unit: "mL", places: 3, display: .decimals(0), sumDisplay: .decimals(0), reason: "`8 fl_oz_us` is 236.588 mL"),
    Entry(
      unit: "mg/dL", places: 3, display: .decimals(0), sumDisplay: .decimals(0),
      reason: "glucose `4.59 mmol/L` is 82.692 mg/dL"),
    Entry(unit: "mmHg", places: 2, display: .decimals(0), sumDisplay: .decimals(0), reason: "recorded whole"),
    Entry(
      unit: "dBASPL", places: 4, display: .decimals(1), sumDisplay: .decimals(1),
      reason: "sound levels are recorded as `68.8319`"),
  ]

  /// Every other unit (not converted: its values are as recorded, its means need a precision).
  public static let other = Entry(
    unit: "other", places: 4, display: .general, sumDisplay: .general, reason: "VO₂ max is recorded as `50.2313`")

  public static func entry(unit: String?) -> Entry {
    guard let unit else { return other }
    return table.first { $0.unit == unit } ?? other
  }

  /// The precision of a value (or with `sum`, a sum) in `unit`.
  public static func precision(unit: String?, sum: Bool = false) -> NumberPrecision {
    let places = entry(unit: unit).places
    return .decimals(sum ? max(places, minimumSumPlaces) : places)
  }

  public static func display(unit: String?, sum: Bool = false) -> SheetDisplay {
    sum ? entry(unit: unit).sumDisplay : entry(unit: unit).display
  }
}
