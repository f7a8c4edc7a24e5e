import Foundation
import HealthETL
import HealthExtract
import HealthModel
import Testing

/// Records and workouts that last more than 366 days are rejected at staging (Pipelines/README.md,
/// "Bad input"), except categories other than sleep, which are only passed through.
@Suite struct ImplausibleSpanTests {
  static let steps = "HKQuantityTypeIdentifierStepCount"
  static let yearZero = "0000-01-01 00:00:00 +0000"
  /// The first instant a record may start (earlier ones are "implausible date", PlausibilityTests).
  static let year2000 = "2000-01-01 00:00:00 +0000"
  static let lastSecond = "9999-12-31 23:59:59 +0000"

  @Test func quantityAndSleepRecordsOver366DaysAreRejected() throws {
    let body = [
      // 2024 is a leap year: 2024-01-01 10:00 to 2025-01-01 10:00 is exactly 366 days, kept.
      Staging.record(Self.steps, value: "5", start: "2024-01-01 10:00:00 +0000", end: "2025-01-01 10:00:00 +0000"),
      // One second more: 31,622,401 s.
      Staging.record(Self.steps, value: "6", start: "2024-01-01 10:00:00 +0000", end: "2025-01-01 10:00:01 +0000"),
      // The fuzzer's far-future end date (Tests/Fuzz/Corpus/run/regression-far-future-end-date).
      Staging.record(Self.steps, value: "12", start: "2024-03-18 07:00:00 +0100", end: "6158-03-18 07:10:00 +0200"),
      SleepTesting.sleep("InBed", Self.year2000, Self.lastSecond),
      // Passed through as written: an IUD with no end yet (HealthKit writes 4001-01-01), and any
      // other category, however long.
      Staging.record(
        "HKCategoryTypeIdentifierContraceptive", source: "Health",
        value: "HKCategoryValueContraceptiveIntrauterineDevice", unit: nil, start: "2021-01-01 00:00:00 +0000",
        end: "4001-01-01 00:00:00 +0000"),
      Staging.record(
        "HKCategoryTypeIdentifierMindfulSession", value: nil, unit: nil, start: Self.year2000, end: Self.lastSecond),
    ].joined(separator: "\n")
    let (normalizer, stage) = try Staging.run(body)
    #expect(stage.rows.map(\.type) == ["StepCount", "Contraceptive", "MindfulSession"])
    #expect(stage.rows[1].end - stage.rows[1].start == 62_482_752_000)  // 2021-01-01 to 4001-01-01
    #expect(normalizer.rejections.counts == ["implausible span": 3])
    let examples = try #require(normalizer.rejections.examples["implausible span"])
    // The body starts on line 3 of the document.
    #expect(examples.map(\.line) == [4, 5, 6])
    #expect(examples.allSatisfy { $0.element == "Record" })
    #expect(examples[0].detail == "StepCount lasts 31622401 s, more than 366 days")
    #expect(examples[2].detail == "SleepAnalysis lasts 252455615999 s, more than 366 days")
    #expect(normalizer.distinctSamples.reduce(0, +) == 3)
  }

  @Test func anAbsurdSleepRecordLeavesTheNightsAsTheyAre() throws {
    // Without the rule, an in-bed record from year 0 to 9999 joined both nights into one session
    // of 10,000 years, dated 10000-01-01.
    let nights = [
      SleepTesting.sleep("AsleepCore", "2024-03-17 23:00:00 +0000", "2024-03-18 07:00:00 +0000"),
      SleepTesting.sleep("AsleepDeep", "2024-03-18 23:00:00 +0000", "2024-03-19 06:30:00 +0000"),
    ]
    let absurd = SleepTesting.sleep("InBed", Self.year2000, Self.lastSecond, source: "Sleep App", device: nil)
    let with = try SleepTesting.run(nights + [absurd])
    let without = try SleepTesting.run(nights)
    #expect(with.days.map(\.date) == ["2024-03-18", "2024-03-19"])
    #expect(with.days.map(\.measures.asleep) == [28_800, 27_000])
    #expect(with.days == without.days)
    #expect(with.sessions == without.sessions)
  }

  @Test func workoutsOver366DaysAreRejected() throws {
    let body = [
      WorkoutFixture.heartRate("120", at: "2024-03-18 10:05:00 +0000"),
      WorkoutFixture.workout("Running", start: "2024-03-18 10:00:00 +0000", end: "2024-03-18 10:30:00 +0000"),
      // Would have taken every heart-rate sample of the export as its own.
      WorkoutFixture.workout("Walking", source: "Bogus", device: nil, start: Self.year2000, end: Self.lastSecond),
      WorkoutFixture.workout(
        "Hiking", source: "Expedition", device: nil, start: "2024-01-01 00:00:00 +0000",
        end: "2025-01-01 00:00:00 +0000"),
    ].joined(separator: "\n")
    let run = try WorkoutFixture.run(body)
    defer { run.result.remove() }
    #expect(run.rows.map(\.activityType) == ["Hiking", "Running"])
    #expect(run.rows.map(\.heartRateAverage) == [120, 120])
    let rejections = run.result.normalizer.rejections
    #expect(rejections.counts == ["implausible span": 1])
    #expect(
      rejections.examples["implausible span"]?.first?.detail
        == "HKWorkoutActivityTypeWalking lasts 252455615999 s, more than 366 days")
    #expect(rejections.examples["implausible span"]?.first?.element == "Workout")
  }

  @Test func theFarFutureRecordCostsTheStatisticsNothing() throws {
    // The fuzzer's input: 12 steps from 2024 to 6158 used to write 1.5 million daily rows of
    // 0.000008 steps each. Now it is a rejection and the steps table is empty.
    let body = StatsFixture.record(
      "StepCount", 12, "2024-03-18 07:00:00", "6158-03-18 07:10:00", source: "Phone", offset: "+0100")
    let started = ContinuousClock.now
    let out = try StatsFixture.run(body, jobs: StatsFixture.defaultQueries)
    defer { out.result.remove() }
    #expect(ContinuousClock.now - started < .seconds(10))
    #expect(try out.rows("steps-per-day").isEmpty)
    #expect(out.stage.spilledSamples == 0)
    #expect(out.result.normalizer.rejections.counts == ["implausible span": 1])
  }
}
