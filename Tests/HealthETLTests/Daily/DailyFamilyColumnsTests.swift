import HealthModel
import Testing

@testable import HealthETL

/// The families' columns of `daily.csv` (Pipelines/docs/daily.md, "Daily"): small exports worked by
/// hand, every date in UTC.
@Suite struct DailyFamilyColumnsTests {
  static func quantity(
    _ type: String, _ value: String, _ unit: String, _ start: String, _ end: String? = nil, source: String = "App"
  ) -> String {
    "<Record type=\"HKQuantityTypeIdentifier\(type)\" sourceName=\"\(source)\" unit=\"\(unit)\" "
      + "creationDate=\"\(end ?? start)\" startDate=\"\(start)\" endDate=\"\(end ?? start)\" value=\"\(value)\"/>"
  }

  static func rows(_ records: [String]) throws -> [[String: String]] {
    let result = try StageHarness.run(StageHarness.export(records.joined(separator: "\n")), zone: .named("UTC")) {
      _ in
      [DailyMart(destinations: [.init(table: .daily, file: "daily.csv", format: .csv)])]
    }
    defer { result.remove() }
    return try result.csvRows("daily.csv")
  }

  @Test func bloodPressureReadingsAndMeans() throws {
    let morning = "2024-03-01 08:00:00 +0000"
    let pair = [
      Self.quantity("BloodPressureSystolic", "121", "mmHg", morning, source: "Omron"),
      Self.quantity("BloodPressureDiastolic", "79", "mmHg", morning, source: "Omron"),
    ]
    let records =
      [
        "<Correlation type=\"HKCorrelationTypeIdentifierBloodPressure\" sourceName=\"Omron\" "
          + "creationDate=\"\(morning)\" startDate=\"\(morning)\" endDate=\"\(morning)\">"
      ] + pair + ["</Correlation>"] + pair
      + [
        // The same pair at top level only, and a systolic an app wrote without its diastolic.
        Self.quantity("BloodPressureSystolic", "130", "mmHg", "2024-03-01 20:00:00 +0000", source: "Omron"),
        Self.quantity("BloodPressureDiastolic", "85", "mmHg", "2024-03-01 20:00:00 +0000", source: "Omron"),
        Self.quantity("BloodPressureSystolic", "140", "mmHg", "2024-03-01 21:00:00 +0000", source: "BP Log"),
        Self.quantity("BloodPressureSystolic", "118", "mmHg", "2024-03-03 07:00:00 +0000", source: "Omron"),
        Self.quantity("BloodPressureDiastolic", "77", "mmHg", "2024-03-03 07:00:00 +0000", source: "Omron"),
      ]
    let rows = try Self.rows(records)
    #expect(rows.map { $0["date"] } == ["2024-03-01", "2024-03-02", "2024-03-03"])
    // 1 March: the correlation's pair counts once (its members repeat at top level), the 20:00
    // pair, the lone systolic: 3 readings. Systolic (121 + 130 + 140) / 3 = 130.33 → 130;
    // diastolic (79 + 85) / 2 = 82. 2 March: nothing, empty cells. 3 March: 118/77, one reading.
    #expect(rows.map { $0["bp_readings"] } == ["3", "", "1"])
    #expect(rows.map { $0["bp_systolic_mmhg"] } == ["130", "", "118"])
    #expect(rows.map { $0["bp_diastolic_mmhg"] } == ["82", "", "77"])
  }

  @Test func glucoseIsTheMeanInMilligramsPerDecilitre() throws {
    let rows = try Self.rows([
      // 5.5 mmol/L × 18.015588 = 99.08573 mg/dL; with 110 mg/dL the mean is 104.543 → 105.
      Self.quantity("BloodGlucose", "5.5", "mmol&lt;180.1558800000541&gt;/L", "2024-03-01 07:00:00 +0000"),
      Self.quantity("BloodGlucose", "110", "mg/dL", "2024-03-01 12:00:00 +0000"),
    ])
    #expect(rows.map { $0["glucose_mg_dl"] } == ["105"])
  }

  @Test func foodCorrelationMembersCountOnceInTheDaysNutrition() throws {
    let noon = "2024-03-01 12:00:00 +0000"
    let meal = [
      Self.quantity("DietaryEnergyConsumed", "650", "kcal", noon, source: "MyFitnessPal"),
      Self.quantity("DietaryCarbohydrates", "80", "g", noon, source: "MyFitnessPal"),
      Self.quantity("DietaryProtein", "30", "g", noon, source: "MyFitnessPal"),
      Self.quantity("DietaryFatTotal", "20", "g", noon, source: "MyFitnessPal"),
    ]
    let evening = "2024-03-01 19:00:00 +0000"
    let records =
      [
        "<Correlation type=\"HKCorrelationTypeIdentifierFood\" sourceName=\"MyFitnessPal\" "
          + "creationDate=\"\(noon)\" startDate=\"\(noon)\" endDate=\"\(noon)\">"
      ] + meal + ["</Correlation>"] + meal
      + [
        // 2092 kJ = 500 kcal; 1000 mg protein = 1 g.
        Self.quantity("DietaryEnergyConsumed", "2092", "kJ", evening, source: "MyFitnessPal"),
        Self.quantity("DietaryCarbohydrates", "45.25", "g", evening, source: "MyFitnessPal"),
        Self.quantity("DietaryProtein", "1000", "mg", evening, source: "MyFitnessPal"),
        Self.quantity("DietaryFatTotal", "12.34", "g", evening, source: "MyFitnessPal"),
      ]
    let rows = try Self.rows(records)
    // 650 + 500 = 1150 kcal; 80 + 45.25 = 125.25 → 125.3 g; 30 + 1 = 31 g; 20 + 12.34 = 32.34 → 32.3 g.
    #expect(rows.count == 1)
    #expect(rows[0]["dietary_energy_kcal"] == "1150")
    #expect(rows[0]["carbohydrates_g"] == "125.3")
    #expect(rows[0]["protein_g"] == "31")
    #expect(rows[0]["fat_g"] == "32.3")
  }

  @Test func bodyCompositionIsTheDaysLastReading() throws {
    let rows = try Self.rows([
      Self.quantity("BodyFatPercentage", "0.2215", "%", "2024-03-01 07:00:00 +0000"),
      Self.quantity("BodyFatPercentage", "0.2184", "%", "2024-03-01 07:30:00 +0000"),
      Self.quantity("BodyMassIndex", "23.41", "count", "2024-03-01 07:30:00 +0000"),
      // 125.5 lb × 0.45359237 = 56.926 kg.
      Self.quantity("LeanBodyMass", "125.5", "lb", "2024-03-01 07:30:00 +0000"),
    ])
    // The fraction 0.2184 (21.84 %) to 0.001: 0.218.
    #expect(rows[0]["body_fat_fraction"] == "0.218")
    #expect(rows[0]["bmi"] == "23.4")
    #expect(rows[0]["lean_body_mass_kg"] == "56.9")
  }

  @Test func mobilityIsTheDaysMean() throws {
    let rows = try Self.rows([
      // 1.25 m/s and 4.68 km/h (1.3 m/s): mean 1.275 m/s = 4.59 km/h → 4.6.
      Self.quantity("WalkingSpeed", "1.25", "m/s", "2024-03-01 09:00:00 +0000"),
      Self.quantity("WalkingSpeed", "4.68", "km/hr", "2024-03-01 17:00:00 +0000"),
      // 68 cm and 0.72 m: mean 0.70 m = 70 cm.
      Self.quantity("WalkingStepLength", "68", "cm", "2024-03-01 09:00:00 +0000"),
      Self.quantity("WalkingStepLength", "0.72", "m", "2024-03-01 17:00:00 +0000"),
      // (0.02 + 0.05) / 2 = 0.035; (0.28 + 0.29 + 0.30) / 3 = 0.29.
      Self.quantity("WalkingAsymmetryPercentage", "0.02", "%", "2024-03-01 09:00:00 +0000"),
      Self.quantity("WalkingAsymmetryPercentage", "0.05", "%", "2024-03-01 17:00:00 +0000"),
      Self.quantity("WalkingDoubleSupportPercentage", "0.28", "%", "2024-03-01 09:00:00 +0000"),
      Self.quantity("WalkingDoubleSupportPercentage", "0.29", "%", "2024-03-01 12:00:00 +0000"),
      Self.quantity("WalkingDoubleSupportPercentage", "0.30", "%", "2024-03-01 17:00:00 +0000"),
    ])
    #expect(rows[0]["walking_speed_kmh"] == "4.6")
    #expect(rows[0]["step_length_cm"] == "70")
    #expect(rows[0]["walking_asymmetry_fraction"] == "0.035")
    #expect(rows[0]["double_support_fraction"] == "0.29")
  }

  @Test func soundIsTheEquivalentContinuousLevelNotTheMeanOfDecibels() throws {
    let rows = try Self.rows([
      // 60 dB for an hour, 90 dB for an hour: 10·log10((10^6 + 10^9) / 2) = 86.994 dB → 87
      // (the mean of the decibels would be 75).
      Self.quantity(
        "HeadphoneAudioExposure", "60", "dBASPL", "2024-03-01 10:00:00 +0000", "2024-03-01 11:00:00 +0000"),
      Self.quantity(
        "HeadphoneAudioExposure", "90", "dBASPL", "2024-03-01 11:00:00 +0000", "2024-03-01 12:00:00 +0000"),
      // 70 dB from 23:30 to 00:30: 1800 s on each date. 2 March also has an instant of 100 dB,
      // weighed as 1 s: 10·log10((1800 × 10^7 + 10^10) / 1801) = 71.916 → 71.9.
      Self.quantity(
        "EnvironmentalAudioExposure", "70", "dBASPL", "2024-03-01 23:30:00 +0000", "2024-03-02 00:30:00 +0000"),
      Self.quantity("EnvironmentalAudioExposure", "100", "dBASPL", "2024-03-02 08:00:00 +0000"),
    ])
    #expect(rows.map { $0["headphone_audio_dba"] } == ["87", ""])
    #expect(rows.map { $0["environmental_audio_dba"] } == ["70", "71.9"])
  }

  @Test func cyclingDistanceIsTheDaysSumInKilometres() throws {
    let rows = try Self.rows([
      Self.quantity(
        "DistanceCycling", "12.345", "km", "2024-03-01 10:00:00 +0000", "2024-03-01 10:40:00 +0000", source: "Watch"),
      Self.quantity(
        "DistanceCycling", "800", "m", "2024-03-01 18:00:00 +0000", "2024-03-01 18:03:00 +0000", source: "Watch"),
    ])
    // 12 345 + 800 = 13 145 m = 13.145 km → 13.15 (halves away from zero, on the decimal).
    #expect(rows[0]["cycling_distance_km"] == "13.15")
  }
}
