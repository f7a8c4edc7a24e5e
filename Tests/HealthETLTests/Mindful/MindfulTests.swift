import Foundation
import HealthETL
import Testing

/// Mindful minutes as a subject of its own: its table, and the column it adds to the table of
/// days (Pipelines/docs/daily.md, "Mindful minutes").
@Suite struct MindfulTests {
  @Test func mindfulMinutesAreTheSecondsTheSessionsCoverPerDate() throws {
    func session(_ start: String, _ end: String, source: String = "Breathe") -> String {
      "<Record type=\"HKCategoryTypeIdentifierMindfulSession\" sourceName=\"\(source)\" sourceVersion=\"1\" "
        + "creationDate=\"\(end)\" startDate=\"\(start)\" endDate=\"\(end)\" value=\"HKCategoryValueNotApplicable\"/>"
    }
    let records = [
      // 1 March (Berlin, UTC+1): 10:00–10:10 and, from another app, 10:05–10:20 overlap: 10:00–10:20
      // is 1200 s. 23:50–00:05 crosses midnight: 600 s on 1 March, 300 s on 2 March.
      session("2024-03-01 10:00:00 +0100", "2024-03-01 10:10:00 +0100"),
      session("2024-03-01 10:05:00 +0100", "2024-03-01 10:20:00 +0100", source: "Headspace"),
      session("2024-03-01 23:50:00 +0100", "2024-03-02 00:05:00 +0100"),
      // 4 March: 89 s, 1.48 min.
      session("2024-03-04 07:00:00 +0100", "2024-03-04 07:01:29 +0100"),
    ]
    let result = try StageHarness.run(
      StageHarness.export(records.joined(separator: "\n")), zone: .named("Europe/Berlin")
    ) {
      transaction in
      [
        // Daily as the registry makes it: mindful minutes reach it as a column another subject
        // adds, from a mindful mart the run adds without files; the mindful job writes its own.
        DailyMart(
          destinations: [.init(table: .daily, file: "daily.csv", format: .csv)], contributions: [MindfulMinutes.self]),
        MindfulMart(destinations: [.init(table: .days, file: "mindful_daily.csv", format: .csv)]),
      ]
    }
    defer { result.remove() }
    let rows = try result.csvRows("daily.csv")
    #expect(rows.map { $0["date"] } == ["2024-03-01", "2024-03-02", "2024-03-03", "2024-03-04"])
    // 1200 + 600 = 1800 s = 30 min; 300 s = 5 min; nothing; 1.48 → 1.
    #expect(rows.map { $0["mindful_min"] } == ["30", "5", "", "1"])
    // The column comes last, after daily's own.
    #expect(try result.text("daily.csv").prefix { $0 != "\n" }.hasSuffix(",mindful_min"))
    // Its own table: a row per date with a session; sessions count by start date (the midnight
    // one starts on 1 March).
    let days = try result.csvRows("mindful_daily.csv")
    #expect(days.map { $0["date"] } == ["2024-03-01", "2024-03-02", "2024-03-04"])
    #expect(days.map { $0["mindful_min"] } == ["30", "5", "1"])
    #expect(days.map { $0["sessions"] } == ["3", "0", "1"])
  }

  /// The registry hands the daily kind what every kind adds: `mindful_min` is in the declared
  /// table (so the docs, the workbook and health.sqlite have it), last.
  @Test func theDailyKindOfTheRegistryDeclaresTheAddedColumn() throws {
    let daily = try #require(JobKinds.named("daily"))
    #expect(daily.tables[0].columnNames.last == "mindful_min")
    #expect(JobKinds.named("mindful")?.tables.map(\.name) == ["days"])
  }
}
