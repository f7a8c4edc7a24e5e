import HealthETL
import Testing

/// Samples that reach many buckets, through staging, the statistics stage and its CSV: each
/// bucket gets exactly its share, worked out by hand below (zone UTC). The sweep hands these
/// shares out one bucket at a time as the stream passes (Pipelines/README.md, "Late samples,
/// memory, disk"), so these pin down that the lazy hand-out gives every bucket what it is owed.
@Suite struct StatisticsManyBucketsTests {
  let watch = "Alex’s Apple Watch"
  let phone = "Alex’s iPhone"

  /// The iPhone's 240 steps over 2024-03-01 12:00 – 03-06 12:00 (120 h, 2 steps an hour); the
  /// Watch's 60 steps over 03-03 06:00–12:00; 5 steps typed at one instant on 03-10 08:00.
  var body: String {
    [
      StatsFixture.steps(240, "2024-03-01 12:00:00", "2024-03-06 12:00:00", source: phone),
      StatsFixture.steps(60, "2024-03-03 06:00:00", "2024-03-03 12:00:00", source: watch),
      StatsFixture.steps(5, "2024-03-10 08:00:00", source: phone),
    ].joined(separator: "\n")
  }

  static func day(_ day: Int) -> String { "2024-03-\(day < 10 ? "0" : "")\(day)T00:00:00+00:00" }

  @Test func aFiveDaySampleIsSharedOutDayByDayAndTheWatchWinsItsHours() throws {
    // Per day: 03-01 12 h → 24; 03-02, 03-04, 03-05 24 h → 48; 03-06 12 h → 24. On 03-03 the
    // Watch (ranked first) wins 06:00–12:00: iPhone 00–06 = 12, Watch 60, iPhone 12–24 = 24 → 96.
    // Duration is the time covered by any sample; count the samples starting that day. Nothing
    // reaches 03-07 to 03-09: no rows. The instant counts whole on 03-10 and covers no time.
    let out = try StatsFixture.run(
      body, jobs: [try StatsFixture.job("d", "StepCount", "1d", ["sum", "duration", "count"])])
    defer { out.result.remove() }
    let rows = try out.rows("d")
    #expect(rows.map { $0["bucket_start"] } == [1, 2, 3, 4, 5, 6, 10].map(Self.day))
    #expect(rows.map { $0["bucket_end"] } == [2, 3, 4, 5, 6, 7, 11].map(Self.day))
    #expect(rows.map { $0["sum"] } == ["24", "48", "96", "48", "48", "24", "5"])
    #expect(rows.map { $0["duration"] } == ["43200", "86400", "86400", "86400", "86400", "43200", "0"])
    #expect(rows.map { $0["count"] } == ["1", "0", "1", "0", "0", "0", "1"])
  }

  @Test func bySourceEachSourceKeepsItsWholeShare() throws {
    // Separate by source nothing is merged away: the iPhone keeps 48 on 03-03 and the Watch has a
    // row of its own there (60 steps over 6 h), before the iPhone's (sources in name order).
    let job = try StatsFixture.job("d", "StepCount", "1d", ["sum", "duration"], separate: true)
    let out = try StatsFixture.run(body, jobs: [job])
    defer { out.result.remove() }
    let rows = try out.rows("d")
    #expect(rows.map { $0["bucket_start"] } == [1, 2, 3, 3, 4, 5, 6, 10].map(Self.day))
    #expect(rows.map { $0["source"] } == [phone, phone, watch, phone, phone, phone, phone, phone])
    #expect(rows.map { $0["sum"] } == ["24", "48", "60", "48", "48", "48", "24", "5"])
    #expect(rows.map { $0["duration"] } == ["43200", "86400", "21600", "86400", "86400", "86400", "43200", "0"])
  }

  @Test func aLongHeartRateSampleHoldsItsValueInEveryDayItReaches() throws {
    // 72 bpm over 03-01 18:00 – 03-04 06:00 (60 h): held to its end, as no sample starts sooner:
    // 6 h, 24 h, 24 h, 6 h. The 90 bpm instant on 03-05 10:00 holds 10 min and covers no time.
    let body = [
      StatsFixture.record(
        "HeartRate", 72, "2024-03-01 18:00:00", "2024-03-04 06:00:00", source: watch, unit: "count/min"),
      StatsFixture.heartRate(90, "2024-03-05 10:00:00", source: watch),
    ].joined(separator: "\n")
    let out = try StatsFixture.run(
      body, jobs: [try StatsFixture.job("d", "HeartRate", "1d", ["twavg", "duration", "count"])])
    defer { out.result.remove() }
    let rows = try out.rows("d")
    #expect(rows.map { $0["bucket_start"] } == [1, 2, 3, 4, 5].map(Self.day))
    #expect(rows.map { $0["twavg"] } == ["72", "72", "72", "72", "90"])
    #expect(rows.map { $0["duration"] } == ["21600", "86400", "86400", "21600", "0"])
    #expect(rows.map { $0["count"] } == ["1", "0", "0", "0", "1"])
  }
}
