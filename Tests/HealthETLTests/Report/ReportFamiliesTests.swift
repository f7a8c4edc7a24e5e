import Foundation
import HealthModel
import Testing

@testable import HealthETL

/// The report's data for the families beyond activity, sleep and heart (DATA.md, "days" and
/// "also_in_export"), worked out by hand.
@Suite struct ReportFamiliesTests {
  static func quantity(_ type: String, _ value: String, _ unit: String, _ at: String, source: String) -> String {
    "<Record type=\"HKQuantityTypeIdentifier\(type)\" sourceName=\"\(source)\" unit=\"\(unit)\" "
      + "creationDate=\"\(at)\" startDate=\"\(at)\" endDate=\"\(at)\" value=\"\(value)\"/>"
  }

  @Test func bloodPressureDaysAndTheTypesNoChartDraws() throws {
    let morning = "2024-05-02 07:30:00 +0900"
    let pair = [
      Self.quantity("BloodPressureSystolic", "134", "mmHg", morning, source: "OMRON connect"),
      Self.quantity("BloodPressureDiastolic", "86", "mmHg", morning, source: "OMRON connect"),
    ]
    let records =
      [
        "<Correlation type=\"HKCorrelationTypeIdentifierBloodPressure\" sourceName=\"OMRON connect\" "
          + "creationDate=\"\(morning)\" startDate=\"\(morning)\" endDate=\"\(morning)\">"
      ] + pair + ["</Correlation>"]
      + [
        // The evening: a systolic without its diastolic.
        Self.quantity("BloodPressureSystolic", "127", "mmHg", "2024-05-02 21:10:00 +0900", source: "OMRON connect"),
        // Three caffeine records and one of water: no chart draws them.
        Self.quantity("DietaryCaffeine", "95", "mg", "2024-05-02 08:00:00 +0900", source: "Caffeine"),
        Self.quantity("DietaryCaffeine", "60", "mg", "2024-05-02 14:00:00 +0900", source: "Caffeine"),
        Self.quantity("DietaryCaffeine", "95", "mg", "2024-05-03 08:00:00 +0900", source: "Caffeine"),
        Self.quantity("DietaryWater", "250", "mL", "2024-05-03 08:00:00 +0900", source: "Caffeine"),
        Self.quantity("BasalEnergyBurned", "1500", "kcal", "2024-05-03 08:00:00 +0900", source: "iPhone"),
        // Twelve and a half minutes of Breathe: a column the mindful subject adds to daily.csv.
        "<Record type=\"HKCategoryTypeIdentifierMindfulSession\" sourceName=\"Watch\" "
          + "creationDate=\"2024-05-02 12:00:00 +0900\" startDate=\"2024-05-02 12:00:00 +0900\" "
          + "endDate=\"2024-05-02 12:12:30 +0900\" value=\"HKCategoryValueNotApplicable\"/>",
      ]
    let data = try ReportMartTests.report(records, zone: "Asia/Tokyo")
    let days = try #require(data["days"] as? [String: Any])
    // 2 May: (134 + 127) / 2 = 130.5 → 131 systolic, 86 diastolic, two readings. 3 May has only
    // basal energy (a daily.csv column the page does not chart), so it is no row of `days`.
    #expect(days["date"] as? [String] == ["2024-05-02"])
    #expect(days["bp_systolic"] as? [Double] == [131])
    #expect(days["bp_diastolic"] as? [Double] == [86])
    #expect(days["bp_readings"] as? [Double] == [2])
    #expect((days["glucose_mg_dl"] as? [Any])?.first is NSNull)
    // 750 s = 12.5 min, shown whole and halves away from zero: 13, under daily.csv's name.
    #expect(days["mindful_min"] as? [Double] == [13])
    let also = try #require(data["also_in_export"] as? [[String: Any]])
    // Most samples first, then by name: caffeine (3), then basal energy and water (1 each).
    #expect(also.map { $0["type"] as? String } == ["DietaryCaffeine", "BasalEnergyBurned", "DietaryWater"])
    #expect(also.map { $0["samples"] as? Int } == [3, 1, 1])
    #expect(
      also.map { $0["file"] as? String } == [
        "samples/DietaryCaffeine.csv", "samples/BasalEnergyBurned.csv", "samples/DietaryWater.csv",
      ])
    #expect(also[1]["daily_column"] as? String == "basal_energy_kcal")
    #expect(also[0]["daily_column"] is NSNull)
  }
}
