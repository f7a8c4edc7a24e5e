import Foundation
import HealthModel
import Testing

@testable import HealthETL

/// The days worth a look (Pipelines/docs/nightly.md, "Worth a look"), worked out by hand; UTC.
@Suite struct DailyOdditiesTests {
  static func record(_ type: String, _ source: String, _ value: String, _ unit: String, _ start: String, _ end: String)
    -> String
  {
    Staging.record(
      "HKQuantityTypeIdentifier" + type, source: source, value: value, unit: unit, start: start + " +0000",
      end: end + " +0000")
  }

  /// - 03-18: the phone's 1,000 steps, and one app's 4 km written three times a minute apart
  ///   (12:00–12:30, 12:01–12:31, 12:02–12:32: each overlaps the one before by 29 of 30 minutes).
  ///   HealthKit adds them: 12,000 m, above 1,000 × 2.5 m + 1,000 m = 3,500 m — flagged twice, as
  ///   an overlap and as distance beyond the steps (which names the overlap).
  /// - 03-19: 10,000 steps and 7 km in two samples end to end (no overlap), 7,000 ≤ 26,000 m.
  /// - 03-20: the phone's steps 09:00–09:10 and 09:04–09:14 overlap by 6 of 10 minutes (more than
  ///   half): flagged, and the date's steps are left out of step averages. 09:30–09:40 and
  ///   09:39–09:49 overlap by 1 minute only: not flagged.
  static let body = [
    record("StepCount", "Phone", "1000", "count", "2024-03-18 09:00:00", "2024-03-18 09:30:00"),
    record("DistanceWalkingRunning", "RunApp", "4", "km", "2024-03-18 12:00:00", "2024-03-18 12:30:00"),
    record("DistanceWalkingRunning", "RunApp", "4", "km", "2024-03-18 12:01:00", "2024-03-18 12:31:00"),
    record("DistanceWalkingRunning", "RunApp", "4", "km", "2024-03-18 12:02:00", "2024-03-18 12:32:00"),
    record("StepCount", "Phone", "10000", "count", "2024-03-19 10:00:00", "2024-03-19 11:00:00"),
    record("DistanceWalkingRunning", "Phone", "4000", "m", "2024-03-19 10:00:00", "2024-03-19 10:30:00"),
    record("DistanceWalkingRunning", "Phone", "3000", "m", "2024-03-19 10:30:00", "2024-03-19 11:00:00"),
    record("StepCount", "Phone", "600", "count", "2024-03-20 09:00:00", "2024-03-20 09:10:00"),
    record("StepCount", "Phone", "600", "count", "2024-03-20 09:04:00", "2024-03-20 09:14:00"),
    record("StepCount", "Phone", "500", "count", "2024-03-20 09:30:00", "2024-03-20 09:40:00"),
    record("StepCount", "Phone", "500", "count", "2024-03-20 09:39:00", "2024-03-20 09:49:00"),
  ].joined(separator: "\n")

  @Test func overlapsAndDistanceBeyondTheStepsAreFlaggedWithTheirDays() throws {
    var daily: DailyMart?
    let result = try StageHarness.run(StageHarness.export(Self.body), zone: .named("UTC")) { _ in
      daily = DailyMart(destinations: [])
      return [daily!]
    }
    defer { result.remove() }
    let found = try #require(daily?.oddities?.found)
    let byKey = Dictionary(uniqueKeysWithValues: found.map { ($0.rule.key, $0.items) })
    #expect(
      byKey["distanceBeyondSteps"]?.map(\.detail) == [
        "12.0 km walked or run, 1,000 steps (2.5 km at 2.5 m a step); RunApp wrote 3 samples that overlap each "
          + "other (12.0 km together), from 12:00 to 12:32; HealthKit adds them too"
      ])
    #expect(
      byKey["oneSourceOverlaps"]?.map { "\($0.date!) \($0.detail)" } == [
        "2024-03-18 DistanceWalkingRunning: RunApp wrote 3 samples that overlap each other (12.0 km together), "
          + "from 12:00 to 12:32; HealthKit adds them too",
        "2024-03-20 StepCount: Phone wrote 2 samples that overlap each other (1,200 steps together), from 09:00 "
          + "to 09:14; HealthKit adds them too",
      ])
    // The values stay: 12 km on 03-18, as HealthKit adds them.
    #expect(daily?.days.first { $0.date.description == "2024-03-18" }?[.distanceKm] == 12)
  }

  /// Two sources' overlapping steps on one day, each the last of its source, so both are only
  /// closed at the end of the stream: the day names the source seen first in the export (Zeta),
  /// on every run. They were closed in a dictionary's order, which Swift seeds anew in every
  /// process, so the day named either source (Alpha in one of six runs of the old code here).
  @Test func aDayOfSeveralSourcesOverlapsNamesTheSourceSeenFirst() throws {
    let body = [
      Self.record("StepCount", "Zeta", "600", "count", "2024-03-21 08:00:00", "2024-03-21 08:10:00"),
      Self.record("StepCount", "Zeta", "600", "count", "2024-03-21 08:02:00", "2024-03-21 08:12:00"),
      Self.record("StepCount", "Alpha", "300", "count", "2024-03-21 15:00:00", "2024-03-21 15:10:00"),
      Self.record("StepCount", "Alpha", "300", "count", "2024-03-21 15:01:00", "2024-03-21 15:11:00"),
    ].joined(separator: "\n")
    var daily: DailyMart?
    let result = try StageHarness.run(StageHarness.export(body), zone: .named("UTC")) { _ in
      daily = DailyMart(destinations: [])
      return [daily!]
    }
    defer { result.remove() }
    let found = try #require(daily?.oddities?.found)
    #expect(
      found.first { $0.rule.key == "oneSourceOverlaps" }?.items.map { "\($0.date!) \($0.detail)" } == [
        "2024-03-21 StepCount: Zeta wrote 4 samples that overlap each other (1,800 steps together), from 08:00 "
          + "to 08:12 and 1 more times that day; HealthKit adds them too"
      ])
  }

  @Test func theDaysOfOverlappingStepsReachTheProduct() throws {
    final class Reader: Mart {
      var days: DailyDays?
      var needs: [ProductNeed] { [ProductNeed(DailyDays.self)] }
      func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary] {
        days = context.products.read(DailyDays.self)
        return []
      }
    }
    let reader = Reader()
    let result = try StageHarness.run(StageHarness.export(Self.body), zone: .named("UTC")) { _ in [reader] }
    defer { result.remove() }
    #expect(reader.days?.overlappingSteps == [CivilDate(year: 2024, month: 3, day: 20)])
    #expect(reader.days?.oddities.count(DailyOddities.sourceOverlaps) == 2)
  }
}
