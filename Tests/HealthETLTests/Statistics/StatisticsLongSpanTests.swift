import Foundation
import HealthModel
import Testing

@testable import HealthETL

/// A sample that spans thousands of years through the statistics sweep: rows are handed out one
/// bucket at a time, so the rows held and the memory used do not grow with the sample's span, and
/// the buckets nothing reaches cost nothing. Staging rejects such records ("Bad input"), so these
/// tests drive `StatisticsSweep` directly, as `StatisticsMart.finish` does.
///
/// The suite's limit only turns a hang into a failure (3.65 million rows take 10–60 s of a debug
/// build among the suite's parallel tests); speed is measured by `make bench`.
@Suite(.timeLimit(.minutes(10))) struct StatisticsLongSpanTests {
  /// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z, the first and last instants of the date
  /// range in UTC; the sample between them lasts 3,652,425 days less one second.
  static let yearZero: Int64 = -62_167_219_200
  static let lastSecond: Int64 = 253_402_300_799
  static let length: Int64 = 315_569_519_999
  static let days = 3_652_425
  /// 2024-03-18T10:00:00Z.
  static let march18: Int64 = 1_710_756_000

  /// One row as the sweep hands it to its table.
  struct Row: Equatable {
    var start: Int64
    var end: Int64
    var source: String?
    var values: [StatisticsValue]

    func number(_ index: Int) -> Double? {
      if case .number(let value) = values[index] { return value }
      return nil
    }

    func count(_ index: Int) -> Int64? {
      if case .count(let value) = values[index] { return value }
      return nil
    }
  }

  /// Runs one job's sweep and keeps what the tests look at: the number of rows, the first and
  /// the last few, rows picked by start, the sum of column `sumColumn`, the most rows ever held.
  final class Probe {
    var rows = 0
    var first: [Row] = []
    var last: [Row] = []
    var picked: [Row] = []
    var total = 0.0
    var peakOpenRows = 0
    var sweep: StatisticsSweep?
    let keep = 3
    let pick: Set<Int64>
    let sumColumn: Int?
    /// Stop (by throwing from the table) after this many rows.
    let stopAfter: Int?

    init(pick: Set<Int64> = [], sumColumn: Int? = nil, stopAfter: Int? = nil) {
      self.pick = pick
      self.sumColumn = sumColumn
      self.stopAfter = stopAfter
    }

    func take(_ bucket: borrowing StatisticsBucket) throws(OutputError) {
      let row = Row(
        start: bucket.start.seconds, end: bucket.end.seconds, source: bucket.source,
        values: bucket.options.indices.map(bucket.value(at:)))
      rows += 1
      peakOpenRows = max(peakOpenRows, sweep?.openRows ?? 0)
      if first.count < keep { first.append(row) }
      last.append(row)
      if last.count > keep { last.removeFirst() }
      if pick.contains(row.start) { picked.append(row) }
      if let sumColumn, let value = row.number(sumColumn) { total += value }
      if let stopAfter, rows >= stopAfter { throw .ioError(path: "probe", reason: "enough rows") }
    }
  }

  /// Feeds `records` (in start order) through a sweep of `job`; groups are numbered in source
  /// order and ranked in that order (group 0 first).
  static func sweep(_ job: StatisticsQuery, sources: [String], _ records: [SpillRecord], into probe: Probe) throws {
    let groups = (0..<sources.count).map { Int32($0) }
    let sweep = StatisticsSweep(
      job: job, rules: .utc, groupRanks: groups, groupSources: groups, sourceNames: sources, emit: probe.take)
    probe.sweep = sweep
    for record in records { try sweep.add(record) }
    try sweep.finish()
  }

  static func record(_ start: Int64, _ end: Int64, _ value: Double, group: Int32 = 0) -> SpillRecord {
    SpillRecord(start: start, end: end, value: value, created: SpillRecord.missingCreation, stream: 0, group: group)
  }

  static func megabytes(pages: Int) -> Double { Double(pages * Int(sysconf(Int32(_SC_PAGESIZE)))) / 1_048_576 }

  /// Runs `body` and returns how far the resident set grew above where it started, in MB.
  static func residentGrowth(_ body: () throws -> Void) rethrows -> Double {
    let before = megabytes(pages: ResidentSampler.residentPages())
    let sampler = ResidentSampler()
    sampler.start()
    defer { _ = sampler.stop() }
    try body()
    return sampler.stop() - before
  }

  @Test func stepsPerDayOverTenThousandYearsAreWrittenOneDayAtATime() throws {
    // The long sample (group 1) holds V = 3,652,425 steps over L = 315,569,519,999 s: a whole day
    // gets V × 86,400 / L ≈ 1.0000000000032, the last day (to 23:59:59) V × 86,399 / L. On
    // 2024-03-18 the iPhone (group 0, ranked first) wins 10:00–11:00 with its 1,000 steps, so the
    // long sample keeps only its 23 other hours there; everything adds up to V + 1,000 less that hour.
    let value = Double(Self.days)
    let job = try StatsFixture.job("d", "StepCount", "1d", ["count", "sum", "duration"])
    let dayOf18 = Self.march18 - 10 * 3600
    let probe = Probe(pick: [dayOf18], sumColumn: 1)
    let growth = try Self.residentGrowth {
      try Self.sweep(
        job, sources: ["iPhone", "Long"],
        [
          Self.record(Self.yearZero, Self.lastSecond, value, group: 1),
          Self.record(Self.march18, Self.march18 + 3600, 1000, group: 0),
        ], into: probe)
    }
    let share = value / Double(Self.length)
    #expect(probe.rows == Self.days)
    #expect(probe.peakOpenRows <= 1)
    #expect(growth < 256, "the resident set grew by \(growth) MB")
    let first = try #require(probe.first.first)
    #expect(first.start == Self.yearZero && first.end == Self.yearZero + 86_400)
    #expect(first.count(0) == 1 && first.count(2) == 86_400)
    #expect(abs(first.number(1)! - share * 86_400) < 1e-12)
    let second = probe.first[1]
    #expect(second.start == Self.yearZero + 86_400 && second.count(0) == 0 && second.count(2) == 86_400)
    let last = try #require(probe.last.last)
    #expect(last.start == Self.lastSecond - 86_399 && last.end == Self.lastSecond + 1)
    #expect(last.count(0) == 0 && last.count(2) == 86_399)
    #expect(abs(last.number(1)! - share * 86_399) < 1e-12)
    let day18 = try #require(probe.picked.first)
    #expect(day18.count(0) == 1 && day18.count(2) == 86_400)
    #expect(abs(day18.number(1)! - (1000 + share * 82_800)) < 1e-9)
    // Adding up 3.65 million rows here rounds at each step: about 1e-5 in all, 3e-12 of the total.
    #expect(abs(probe.total - (value + 1000 - share * 3600)) < 1e-3)
  }

  @Test func heartRatePerDayBySourceOverTenThousandYears() throws {
    // By source, the long sample (60 bpm) holds its value to its own end: twavg 60 in every day;
    // the Watch's instant on 2024-03-18 10:05 holds 120 for 10 min in a row of its own, after the
    // long sample's row of that day. Instants add no duration.
    let job = try StatsFixture.job("d", "HeartRate", "1d", ["twavg", "count", "duration"], separate: true)
    let dayOf18 = Self.march18 - 10 * 3600
    let probe = Probe(pick: [dayOf18])
    let growth = try Self.residentGrowth {
      try Self.sweep(
        job, sources: ["Long", "Watch"],
        [
          Self.record(Self.yearZero, Self.lastSecond, 60, group: 0),
          Self.record(Self.march18 + 300, Self.march18 + 300, 120, group: 1),
        ], into: probe)
    }
    #expect(probe.rows == Self.days + 1)
    #expect(probe.peakOpenRows <= 2)
    #expect(growth < 256, "the resident set grew by \(growth) MB")
    #expect(
      probe.first.first
        == Row(
          start: Self.yearZero, end: Self.yearZero + 86_400, source: "Long",
          values: [.number(60), .count(1), .count(86_400)]))
    #expect(
      probe.last.last
        == Row(
          start: Self.lastSecond - 86_399, end: Self.lastSecond + 1, source: "Long",
          values: [.number(60), .count(0), .count(86_399)]))
    #expect(
      probe.picked == [
        Row(start: dayOf18, end: dayOf18 + 86_400, source: "Long", values: [.number(60), .count(0), .count(86_400)]),
        Row(start: dayOf18, end: dayOf18 + 86_400, source: "Watch", values: [.number(120), .count(1), .count(0)]),
      ])
  }

  /// Per hour and per minute the sample reaches 87.7 million and 5.26 billion buckets: the rows
  /// are data, but the sweep must start writing them at once and hold one at a time. The table
  /// stops the run after 200,000 rows.
  @Test(arguments: ["1h", "1m"])
  func finerBucketsOfTheSampleAreWrittenAsTheyClose(interval: String) throws {
    let seconds: Int64 = interval == "1h" ? 3600 : 60
    // The earliest instant the date parser accepts: 0000-01-01 00:00:00 +1400, in UTC the
    // year before year 0.
    let earliest = Self.yearZero - 14 * 3600
    let length = Self.lastSecond - earliest
    let value = Double(length)
    let steps = Probe(sumColumn: 0, stopAfter: 200_000)
    let heart = Probe(stopAfter: 200_000)
    let growth = Self.residentGrowth {
      #expect(throws: OutputError.self) {
        try Self.sweep(
          StatsFixture.job("s", "StepCount", interval, ["sum", "duration", "count"], separate: true),
          sources: ["Long"], [Self.record(earliest, Self.lastSecond, value)], into: steps)
      }
      #expect(throws: OutputError.self) {
        try Self.sweep(
          StatsFixture.job("h", "HeartRate", interval, ["twavg", "count", "duration"]),
          sources: ["Long"], [Self.record(earliest, Self.lastSecond, 72)], into: heart)
      }
    }
    #expect(growth < 256, "the resident set grew by \(growth) MB")
    for probe in [steps, heart] {
      #expect(probe.rows == 200_000)
      #expect(probe.peakOpenRows <= 1)
    }
    // value = length: one step a second, so each bucket's share is its seconds.
    #expect(
      steps.first == [
        Row(
          start: earliest, end: earliest + seconds, source: "Long",
          values: [.number(Double(seconds)), .count(seconds), .count(1)]),
        Row(
          start: earliest + seconds, end: earliest + 2 * seconds, source: "Long",
          values: [.number(Double(seconds)), .count(seconds), .count(0)]),
        Row(
          start: earliest + 2 * seconds, end: earliest + 3 * seconds, source: "Long",
          values: [.number(Double(seconds)), .count(seconds), .count(0)]),
      ])
    #expect(abs(steps.total - Double(200_000 * seconds)) < 1e-3)
    #expect(
      heart.last.last
        == Row(
          start: earliest + 199_999 * seconds, end: earliest + 200_000 * seconds, source: nil,
          values: [.number(72), .count(0), .count(seconds)]))
  }

  /// The last buckets of the date range, per minute and per hour: 9999-12-31 00:00:00 to
  /// 23:59:59 UTC, 86,399 s, one step a second. The last bucket ends at 10000-01-01T00:00:00Z
  /// and holds 59 s (3,599 s per hour).
  @Test(arguments: ["1h", "1m"])
  func theLastBucketsOfYear9999(interval: String) throws {
    let seconds: Int64 = interval == "1h" ? 3600 : 60
    let from = Self.lastSecond - 86_399
    let probe = Probe(sumColumn: 0)
    try Self.sweep(
      StatsFixture.job("s", "StepCount", interval, ["sum", "duration"]), sources: ["Phone"],
      [Self.record(from, Self.lastSecond, 86_399)], into: probe)
    #expect(probe.rows == Int(86_400 / seconds))
    #expect(
      probe.last.last
        == Row(
          start: Self.lastSecond + 1 - seconds, end: Self.lastSecond + 1, source: nil,
          values: [.number(Double(seconds - 1)), .count(seconds - 1)]))
    #expect(abs(probe.total - 86_399) < 1e-6)
  }

  /// Per second, three short samples in years 0, 2024 and 9999: the sweep jumps over the 315
  /// billion seconds between them instead of visiting them, and writes the 21 seconds they cover.
  @Test func bucketsNothingReachesAreSkipped() throws {
    let probe = Probe(sumColumn: 0)
    let started = ContinuousClock.now
    try Self.sweep(
      StatsFixture.job("s", "StepCount", "1s", ["sum", "duration"]), sources: ["Phone"],
      [
        Self.record(Self.yearZero, Self.yearZero + 2, 2),
        Self.record(Self.march18, Self.march18 + 10, 10),
        Self.record(Self.lastSecond - 8, Self.lastSecond + 1, 9),
      ], into: probe)
    #expect(ContinuousClock.now - started < .seconds(5))
    #expect(probe.rows == 21)
    #expect(probe.first.map(\.start) == [Self.yearZero, Self.yearZero + 1, Self.march18])
    #expect(probe.last.map(\.start) == [Self.lastSecond - 2, Self.lastSecond - 1, Self.lastSecond])
    #expect(probe.last.last?.values == [.number(1), .count(1)])
    #expect(abs(probe.total - 21) < 1e-9)
  }
}
