import Foundation
import HealthModel
import Testing

@testable import HealthETL

/// `InfluxMart`: the samples in the layout Grafana dashboards query, as the export streams, and
/// the computed series as their own measurements (Pipelines/influx/README.md).
@Suite struct InfluxMartTests {
  static func record(
    _ type: String, source: String, unit: String?, start: String, end: String, value: String
  ) -> String {
    "<Record type=\"\(type)\" sourceName=\"\(source)\"" + (unit.map { " unit=\"\($0)\"" } ?? "")
      + " startDate=\"\(start) +0000\" endDate=\"\(end) +0000\" value=\"\(value)\"/>"
  }

  static let watch = "Alex’s Apple Watch"

  /// 2024-03-18T08:00:00Z.
  static let eight: Int64 = 1_710_748_800

  static func run(_ body: String) throws -> (lines: [String], mart: InfluxMart, result: StageHarness.Result) {
    var made: InfluxMart?
    let result = try StageHarness.run(StageHarness.export(body), zone: .named("UTC")) { transaction in
      let mart = InfluxMart(transaction: transaction, file: "influx.lp")
      made = mart
      return [mart]
    }
    let lines = try result.text("influx.lp").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    return (lines, made!, result)
  }

  /// Each sample a line as written; the second step sample starting in the same second as the
  /// first, in the same series, gets `n=2` (else InfluxDB would keep one of them); a source with
  /// a comma, quotes and a line feed (`&#10;`) stays on its line; a category value is a string,
  /// a value that is no number the string field `text`; then one `data-sources` point per
  /// source at its latest start.
  @Test func writesTheSamplesAsTheyStream() throws {
    let body = [
      Self.record(
        "HKQuantityTypeIdentifierStepCount", source: Self.watch, unit: "count", start: "2024-03-18 08:00:00",
        end: "2024-03-18 08:05:00", value: "100"),
      Self.record(
        "HKQuantityTypeIdentifierStepCount", source: Self.watch, unit: "count", start: "2024-03-18 08:00:00",
        end: "2024-03-18 08:00:30", value: "50"),
      Self.record(
        "HKCategoryTypeIdentifierSleepAnalysis", source: "Sleep, &quot;App&quot;&#10;2", unit: nil,
        start: "2024-03-18 01:00:00", end: "2024-03-18 02:00:00", value: "HKCategoryValueSleepAnalysisAsleepCore"),
      Self.record(
        "HKQuantityTypeIdentifierBodyMass", source: "Withings", unit: "lb", start: "2024-03-18 07:00:00",
        end: "2024-03-18 07:00:00", value: "167.6"),
      Self.record(
        "HKDataTypeFoo", source: "Withings", unit: nil, start: "2024-03-18 07:30:00", end: "2024-03-18 07:30:00",
        value: "high, \\low"),
    ].joined(separator: "\n")
    let (lines, mart, result) = try Self.run(body)
    defer { result.remove() }
    let eight = Self.eight
    #expect(
      Array(lines.prefix(5)) == [
        "StepCount,device=Alex’s\\ Apple\\ Watch,unit=count value=100 \(eight)",
        "StepCount,device=Alex’s\\ Apple\\ Watch,n=2,unit=count value=50 \(eight)",
        "SleepAnalysis,device=Sleep\\,\\ \"App\"\\ 2 value=\"asleepCore\" \(eight - 7 * 3600)",
        "BodyMass,device=Withings,unit=lb value=167.6 \(eight - 3600)",
        "Foo,device=Withings text=\"high, \\\\low\" \(eight - 1800)",
      ])
    #expect(
      lines.filter { $0.hasPrefix("data-sources") } == [
        "data-sources,device=Alex’s\\ Apple\\ Watch value=1i \(eight)",
        "data-sources,device=Sleep\\,\\ \"App\"\\ 2 value=1i \(eight - 7 * 3600)",
        "data-sources,device=Withings value=1i \(eight - 1800)",
      ])
    #expect(lines.last == "", "the file ends with a line feed")
    // Every line one point, read back whole.
    for line in lines.dropLast() { #expect(LineProtocolReader.parse(line) != nil, "\(line)") }
    let section = try #require(mart.runReportSection?.value as? [String: Any])
    #expect(section["points"] as? Int == lines.count - 1)
    #expect(section["repeatedStarts"] as? Int == 1)
    let measurements = try #require(section["measurements"] as? [String: Int])
    #expect(measurements["StepCount"] == 2)
    #expect(measurements["data-sources"] == 3)
  }

  /// A date of the daily table at the instant it begins in the run's zone (Paris: 2024-03-18
  /// begins 2024-03-17T23:00Z = 1710716400); only columns with a value, each as `daily.csv`
  /// shows it (5432.1 m is 5.43 km), `workouts` an integer, `bedtime` Unix seconds.
  @Test func writesADayOfTheDailyTable() throws {
    let paris = try ZoneRules.load("Europe/Paris")
    var day = DailyValues(date: CivilDate(year: 2024, month: 3, day: 18))
    day.set(.steps, written: 1234)
    day.set(.distanceKm, written: 5432.1)
    day.set(.workouts, written: 2)
    day.bedtime = Instant(seconds: 1_710_798_281)
    var bytes: [UInt8] = []
    #expect(InfluxMart.dailyPoint(day, rules: paris).append(to: &bytes))
    #expect(
      String(decoding: bytes, as: UTF8.self)
        == "healthetl_daily steps=1234,distance_km=5.43,bedtime=1710798281i,workouts=2i 1710716400\n")
    // A date without any value is no point.
    bytes = []
    #expect(!InfluxMart.dailyPoint(DailyValues(date: day.date), rules: paris).append(to: &bytes))
  }

  /// A workout at its start, tagged by activity type and source, its numbers as `workouts.csv`
  /// writes them.
  @Test func writesAWorkout() throws {
    let body = """
      <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="30" durationUnit="min" \
      sourceName="\(Self.watch)" startDate="2024-03-18 08:00:00 +0000" endDate="2024-03-18 08:31:00 +0000">
       <WorkoutStatistics type="HKQuantityTypeIdentifierDistanceWalkingRunning" startDate="2024-03-18 08:00:00 +0000" \
      endDate="2024-03-18 08:31:00 +0000" sum="5.2" unit="km"/>
      </Workout>
      """
    let (lines, _, result) = try Self.run(body)
    defer { result.remove() }
    let workout = try #require(lines.first { $0.hasPrefix("healthetl_workouts") })
    let point = try #require(LineProtocolReader.parse(workout))
    #expect(point.tags == [.init("activity_type", "Running"), .init("device", Self.watch)])
    #expect(point.time == Self.eight)
    #expect(point.fields.first { $0.key == "duration_s" }?.value == .float(1800))
    #expect(point.fields.first { $0.key == "elapsed_s" }?.value == .integer(1860))
    #expect(point.fields.first { $0.key == "distance_m" }?.value == .float(5200))
    #expect(point.fields.contains { $0.key == "workout_id" })
  }
}
