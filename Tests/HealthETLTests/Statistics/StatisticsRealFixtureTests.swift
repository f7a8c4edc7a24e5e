import Foundation
import HealthETL
import HealthExtract
import Testing

/// The multi-source real export: steps from an iPhone and from Garmin's "Connect" app.
@Suite(.enabled(if: StageHarness.realAvailable, "needs ../shared/fixtures/real (not part of a fresh clone)"))
struct StatisticsRealFixtureTests {
  static var export: String {
    StageHarness.realRoot.appendingPathComponent("bwassim__Health-Data-Analysis/data/export.zip").path
  }

  struct Day {
    var date: String
    var merged: Double
    var bySource: [String: Double]
    var naive: Double { bySource.values.reduce(0, +) }
  }

  static func dailySteps() throws -> [Day] {
    let out = try StatsFixture.run(
      .path(export),
      jobs: [
        try StatsFixture.job("merged", "StepCount", "1d", ["sum"]),
        try StatsFixture.job("by_source", "StepCount", "1d", ["sum"], separate: true),
      ], zone: .auto)
    defer { out.result.remove() }
    var days: [String: Day] = [:]
    for row in try out.rows("merged") {
      let date = String(row["bucket_start"]!.prefix(10))
      days[date] = Day(date: date, merged: Double(row["sum"]!)!, bySource: [:])
    }
    for row in try out.rows("by_source") {
      days[String(row["bucket_start"]!.prefix(10))]!.bySource[row["source"]!] = Double(row["sum"]!)!
    }
    return days.values.sorted { $0.date < $1.date }
  }

  @Test func mergedDailyStepsStayBetweenThePrioritySourceAndTheNaiveSum() throws {
    let days = try Self.dailySteps()
    #expect(days.count > 100)
    for day in days {
      let tolerance = 1e-6 * max(1, day.naive)
      #expect(day.merged <= day.naive + tolerance, "\(day.date)")
      // The iPhone ranks above Connect (an "other" source): it wins wherever it counted, so a
      // merged day holds at least all of its steps.
      #expect(day.merged >= (day.bySource["iPhone"] ?? 0) - tolerance, "\(day.date)")
      // Not a law in general (a top-ranked source that counts fewer steps where both count pulls
      // the day below the other source's total), but true here, where a day has one source.
      #expect(day.merged >= (day.bySource.values.max() ?? 0) - tolerance, "\(day.date)")
    }
    // What this export really holds: the iPhone counted steps from 2017-12-23 to 2018-01-14 and
    // Garmin Connect from 2020-10-24 on; no day has both, so merging removes nothing here.
    #expect(days.allSatisfy { $0.bySource.count == 1 })
    #expect(days.allSatisfy { abs($0.merged - $0.naive) <= 1e-6 * max(1, $0.naive) })
    #expect(days.first?.date == "2017-12-23" && days.last?.date == "2021-01-24")

    // The weeks quoted in the report: Monday to Sunday, one of each source.
    var table = ["date        merged    naive   iPhone  Connect"]
    let weeks = [("2018-01-08"..."2018-01-14"), ("2021-01-18"..."2021-01-24")]
    for day in days where weeks.contains(where: { $0.contains(day.date) }) {
      table.append(
        "\(day.date) \(Self.pad(day.merged)) \(Self.pad(day.naive)) \(Self.pad(day.bySource["iPhone"])) "
          + Self.pad(day.bySource["Connect"]))
    }
    #expect(table.count == 15)
    print(table.joined(separator: "\n"))
  }

  static func pad(_ value: Double?) -> String {
    let text = value.map { String(format: "%.0f", $0) } ?? "-"
    return String(repeating: " ", count: max(0, 8 - text.count)) + text
  }
}
