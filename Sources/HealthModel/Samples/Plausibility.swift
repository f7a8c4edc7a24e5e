/// What a measurement can be (Pipelines/docs/input.md, "Bad input"): values no body or device gives,
/// and dates no export holds data for, are rejected rather than allowed to drive the size of the
/// outputs (a step record in year 1 made `daily.csv` 3.6 million rows long) or their text (a heart
/// rate of 1e308).
public enum Plausibility {
  /// The earliest start a record or workout may have: 2000-01-01 00:00 UTC. Exports hold data
  /// imported from older devices and apps (scales from 2009, running watches from the mid-2000s);
  /// a date before 2000 is a clock or typing error (1970-01-01 is a clock at zero, 0001 a year
  /// left blank).
  public static let earliestStart = Instant(seconds: CivilDate(year: 2000, month: 1, day: 1).daysSinceEpoch * 86_400)

  /// How far past the export date a record or workout may start: a day, so a record saved while
  /// the export was written, on a phone whose zone is behind the one the export date is written
  /// in, still counts. A later start is a wrong clock (real exports hold records dated 2030).
  public static let secondsAfterExport: Int64 = 86_400

  /// The largest magnitude of a value of a type whose unit HealthETL does not convert: beyond
  /// 15 significant digits of integer part no value keeps its stated precision.
  public static let largestUnconvertedMagnitude = 1e15

  /// The values a quantity may take, in its canonical unit (Pipelines/docs/samples.md, "Units"); nil
  /// for a unit HealthETL does not convert. Bounds are far outside what any person or device
  /// records, so that only errors are caught: a heart rate of 400 bpm or a body temperature of
  /// 100 °C is kept, a negative heart rate or HRV is not.
  public static func range(ofCanonicalUnit unit: String) -> ClosedRange<Double>? { ranges[unit] }

  static let ranges: [String: ClosedRange<Double>] = [
    // Counts: a year's steps typed in by hand are tens of millions at the most.
    "count": 0...1e9,
    // Distances and lengths: a year of cycling is 100,000 km at the most.
    "m": 0...1e9,
    "kcal": 0...1e7,
    // Durations: no record lasts more than 366 days.
    "s": 0...31_622_400,
    // HRV and ground contact time: beat-to-beat intervals are under 3 s.
    "ms": 0...10_000,
    // Heart, breathing and pedalling rates.
    "count/min": 0...400,
    // Fractions 0–1 (oxygen saturation 0.97, body fat 0.25, walking steadiness).
    "%": 0...1,
    // Body masses and dietary masses (vitamins in micrograms are 1e-9 kg).
    "kg": 0...1_000,
    "mL": 0...100_000,
    // Body, wrist (a deviation, so negative) and water temperatures.
    "degC": -100...100,
    "mmHg": 0...500,
    "mg/dL": 0...5_000,
    // Speeds: 100 m/s is 360 km/h.
    "m/s": 0...100,
    "dBASPL": 0...200,
    "W": 0...5_000,
    "mL/min·kg": 0...150,
    "kcal/hr·kg": 0...100,
    "appleEffortScore": 0...20,
    "IU": 0...10_000,
    "L/min": 0...2_000,
    "mcS": 0...1e6,
  ]
}
