import Foundation
import HealthETL
import HealthExtract
import Testing

/// De-duplication stays exact when most fingerprints live in the scratch file: a tiny memory
/// budget gives the same distinct counts as an unbounded one.
@Suite struct DeduplicationTests {
  static func normalize(_ source: InputSource, budget: Int) throws -> RecordNormalizer {
    let normalizer = RecordNormalizer(stages: [], deduplicationBudget: budget)
    _ = try ExportStream(source: source, executor: testExecutor).read(into: normalizer)
    return normalizer
  }

  /// 120 days of steps from one source, then the same days from a second source (every group
  /// comes back after being written out), then exact repeats of the first source's records.
  static let revisitingExport: InputSource = {
    var body: [String] = []
    func records(_ source: String, value: Int) {
      for day in 0..<120 {
        for hour in [8, 12, 18] {
          let date = Date(timeIntervalSince1970: 1_704_067_200 + Double(day * 86_400 + hour * 3_600))
          let text = Self.format(date)
          body.append(
            Staging.record(
              "HKQuantityTypeIdentifierStepCount", source: source, value: String(value + hour), start: text, end: text))
        }
      }
    }
    records("Phone", value: 100)
    records("Watch", value: 200)
    records("Phone", value: 100)  // 360 exact duplicates
    return StageHarness.export(body.joined(separator: "\n"))
  }()

  static func format(_ date: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
    return formatter.string(from: date) + " +0000"
  }

  @Test func aTinyBudgetGivesTheSameCountsAsAnUnboundedOne() throws {
    let reference = try Self.normalize(Self.revisitingExport, budget: 1 << 30)
    let bounded = try Self.normalize(Self.revisitingExport, budget: 16)
    // Worked out by hand: 2 sources × 120 days × 3 hours distinct, 360 repeats.
    #expect(reference.distinctSamples.reduce(0, +) == 720)
    #expect(reference.duplicateSamples.reduce(0, +) == 360)
    #expect(bounded.distinctSamples == reference.distinctSamples)
    #expect(bounded.duplicateSamples == reference.duplicateSamples)
    #expect(bounded.deduplicationSpills.evictions > 0)
    #expect(bounded.deduplicationSpills.revivals > 0)
    #expect(bounded.deduplicationFailure == nil)
  }

  @Test func theBundledSampleCountsTheSameWithATinyBudget() throws {
    let reference = try Self.normalize(.path(StageHarness.sampleExport), budget: 1 << 30)
    let bounded = try Self.normalize(.path(StageHarness.sampleExport), budget: 64)
    #expect(bounded.distinctSamples == reference.distinctSamples)
    #expect(bounded.duplicateSamples == reference.duplicateSamples)
    #expect(reference.duplicateSamples.reduce(0, +) > 0)
    #expect(bounded.deduplicationSpills.evictions > 0)
  }
}
