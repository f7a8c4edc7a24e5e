import Foundation
import HealthModel
import Testing

@testable import HealthETL

/// `ClosedBuckets`: a statistic's buckets handed to a reader as the sweep closes them.
@Suite struct StatisticsClosedBucketsTests {
  /// Reads heart rate per minute and keeps what it was handed.
  final class Reader: Mart, StatisticsBucketReader {
    let options: [StatisticsOption]
    var buckets: [(start: Int64, end: Int64, values: [Double?])] = []
    var finishedAfterReading = false

    init(options: [StatisticsOption]) { self.options = options }

    var needs: [ProductNeed] {
      [
        ProductNeed(
          ClosedBuckets.self, request: .init(type: "HeartRate", interval: "1m", options: options, reader: self))
      ]
    }

    func read(start: Instant, end: Instant, values: [Double?]) throws(OutputError) {
      buckets.append((start.seconds, end.seconds, values))
    }

    func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary] {
      finishedAfterReading = context.products.read(ClosedBuckets.self) != nil
      return []
    }
  }

  /// Minute 10:00: 60 and 70 → min 60, avg 65, max 70, count 2. Minute 10:01: 64, 65, 65 →
  /// min 64, avg 194 / 3 = 64.666… written to count/min's 4 places as 64.6667, max 65, count 3.
  /// Minute 10:02 has none (no bucket); 10:05: 80 alone.
  static let body = [
    StatsFixture.heartRate(60, "2024-03-18 10:00:05"), StatsFixture.heartRate(70, "2024-03-18 10:00:40"),
    StatsFixture.heartRate(64, "2024-03-18 10:01:00"), StatsFixture.heartRate(65, "2024-03-18 10:01:20"),
    StatsFixture.heartRate(65, "2024-03-18 10:01:50"), StatsFixture.heartRate(80, "2024-03-18 10:05:30"),
  ].joined(separator: "\n")

  /// 2024-03-18T10:00:00Z.
  static let tenOClock: Int64 = 1_710_756_000

  @Test func aRunWithoutTheStatisticGetsAQueryWithoutFiles() throws {
    let reader = Reader(options: [.min, .avg, .max, .count])
    let result = try StageHarness.run(StageHarness.export(Self.body), zone: .named("UTC")) { _ in [reader] }
    defer { result.remove() }
    let minute = Self.tenOClock
    #expect(reader.buckets.map(\.start) == [minute, minute + 60, minute + 300])
    #expect(reader.buckets.map(\.end) == [minute + 60, minute + 120, minute + 360])
    #expect(reader.buckets[0].values == [60, 65, 70, 2])
    #expect(reader.buckets[1].values == [64, 64.6667, 65, 3])
    #expect(reader.buckets[2].values == [80, 80, 80, 1])
    #expect(reader.finishedAfterReading)
    // The added query writes no file.
    #expect(result.outputs.isEmpty)
  }

  /// With a job of the same statistic, its buckets are handed over: no second sweep, the same
  /// numbers as its file, in the order the reader asked for (the job's is max, min, avg, count).
  @Test func aJobOfTheStatisticFeedsTheReader() throws {
    let reader = Reader(options: [.min, .avg, .max, .count])
    var statistics: StatisticsMart?
    let job = try StatisticsQuery(
      name: "heart-rate-per-minute", type: "HeartRate", interval: "1m", options: ["max", "min", "avg", "count"])
    let result = try StageHarness.run(StageHarness.export(Self.body), zone: .named("UTC")) { transaction in
      let mart = try! StatisticsMart(jobs: [job], transaction: transaction)
      statistics = mart
      return [mart, reader]
    }
    defer { result.remove() }
    #expect(statistics?.jobs.count == 1)
    let rows = try result.csvRows("stats/heart-rate-per-minute.csv")
    #expect(rows.count == reader.buckets.count)
    for (row, bucket) in zip(rows, reader.buckets) {
      #expect(
        [row["min"], row["avg"], row["max"], row["count"]].map { StatsFixture.number($0) } == bucket.values)
    }
    #expect(reader.buckets[1].values == [64, 64.6667, 65, 3])
  }
}
