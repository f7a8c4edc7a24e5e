import HealthETL
import HealthModel
import Testing

/// Calendar buckets (Pipelines/docs/samples.md, "Days and buckets"; Pipelines/docs/statistics.md, "Buckets"): half-open, in the
/// run's zone, DST days of 23 and 25 hours, calendar weeks and months, anchors. Record times are
/// written in UTC (`+0000`); the comments give the local wall time.
@Suite struct StatisticsBucketTests {
  let newYork = RunZone.Request.named("America/New_York")

  @Test func dayBucketsAcrossSpringForwardLast23Hours() throws {
    // New York springs forward on 2024-03-10 at 02:00 EST (07:00Z). Local midnights:
    //   Mar 9 = 05:00Z Mar 9, Mar 10 = 05:00Z Mar 10 (EST), Mar 11 = 04:00Z Mar 11 (EDT).
    // One sample 04:00Z Mar 10 (23:00 EST Mar 9) → 05:00Z Mar 11 (01:00 EDT Mar 11): 25 h,
    // value 90000 (one a second). Shares: Mar 9 gets 1 h = 3600, Mar 10 its 23 h = 82800,
    // Mar 11 1 h = 3600; duration is the same seconds.
    let body = StatsFixture.steps(90000, "2024-03-10 04:00:00", "2024-03-11 05:00:00", source: "iPhone")
    let out = try StatsFixture.run(
      body, jobs: [try StatsFixture.job("d", "StepCount", "1d", ["sum", "duration"])], zone: newYork)
    defer { out.result.remove() }
    let rows = try out.rows("d")
    #expect(
      rows.map { $0["bucket_start"] } == [
        "2024-03-09T00:00:00-05:00", "2024-03-10T00:00:00-05:00", "2024-03-11T00:00:00-04:00",
      ])
    #expect(rows[1]["bucket_end"] == "2024-03-11T00:00:00-04:00")
    #expect(rows.map { $0["sum"] } == ["3600", "82800", "3600"])
    #expect(rows.map { $0["duration"] } == ["3600", "82800", "3600"])
  }

  @Test func dayBucketsAcrossFallBackLast25Hours() throws {
    // New York falls back on 2024-11-03 at 02:00 EDT (06:00Z). Local midnight Nov 3 = 04:00Z
    // (EDT), Nov 4 = 05:00Z (EST): 25 h. A sample over exactly that day, value 90000, stays whole.
    let body = StatsFixture.steps(90000, "2024-11-03 04:00:00", "2024-11-04 05:00:00", source: "iPhone")
    let out = try StatsFixture.run(
      body, jobs: [try StatsFixture.job("d", "StepCount", "1d", ["sum", "duration"])], zone: newYork)
    defer { out.result.remove() }
    let rows = try out.rows("d")
    #expect(rows.count == 1)
    #expect(rows.first?["bucket_start"] == "2024-11-03T00:00:00-04:00")
    #expect(rows.first?["bucket_end"] == "2024-11-04T00:00:00-05:00")
    #expect(rows.first?["sum"] == "90000")
    #expect(rows.first?["duration"] == "90000")
  }

  @Test func theRepeatedFallBackHourIsTwoHourBuckets() throws {
    // 01:30 EDT (05:30Z) and 01:30 EST (06:30Z) read the same on the wall, an hour apart: two
    // one-hour buckets, both starting at 01:00 local, told apart by their offsets.
    let body = [
      StatsFixture.heartRate(60, "2024-11-03 05:30:00"), StatsFixture.heartRate(70, "2024-11-03 06:30:00"),
    ].joined(separator: "\n")
    let out = try StatsFixture.run(
      body, jobs: [try StatsFixture.job("h", "HeartRate", "1h", ["avg"])], zone: newYork)
    defer { out.result.remove() }
    let rows = try out.rows("h")
    #expect(rows.map { $0["bucket_start"] } == ["2024-11-03T01:00:00-04:00", "2024-11-03T01:00:00-05:00"])
    #expect(rows.map { $0["bucket_end"] } == ["2024-11-03T01:00:00-05:00", "2024-11-03T02:00:00-05:00"])
    #expect(rows.map { $0["avg"] } == ["60", "70"])
  }

  @Test func weeksStartOnMondayOrOnTheAnchorsWeekday() throws {
    // 2024-03-04 and 2024-03-11 are Mondays. Instants (UTC):
    //   Sun Mar 3 12:00 → 1;  Mon Mar 4 00:00:00 → 10 (on the boundary: the new week);
    //   Sun Mar 10 23:59:59 → 100;  Mon Mar 11 08:00 → 1000.
    // Monday weeks: [Feb 26, Mar 4) 1;  [Mar 4, Mar 11) 110;  [Mar 11, Mar 18) 1000.
    // Anchored on Sunday 2024-03-03: [Mar 3, Mar 10) 1 + 10 = 11;  [Mar 10, Mar 17) 1100.
    let body = [
      StatsFixture.steps(1, "2024-03-03 12:00:00", source: "iPhone"),
      StatsFixture.steps(10, "2024-03-04 00:00:00", source: "iPhone"),
      StatsFixture.steps(100, "2024-03-10 23:59:59", source: "iPhone"),
      StatsFixture.steps(1000, "2024-03-11 08:00:00", source: "iPhone"),
    ].joined(separator: "\n")
    let out = try StatsFixture.run(
      body,
      jobs: [
        try StatsFixture.job("monday", "StepCount", "1w", ["sum"]),
        try StatsFixture.job("sunday", "StepCount", "1w", ["sum"], anchor: "2024-03-03"),
      ])
    defer { out.result.remove() }
    let monday = try out.rows("monday")
    #expect(
      monday.map { $0["bucket_start"] } == [
        "2024-02-26T00:00:00+00:00", "2024-03-04T00:00:00+00:00", "2024-03-11T00:00:00+00:00",
      ])
    #expect(
      monday.map { $0["bucket_end"] } == [
        "2024-03-04T00:00:00+00:00", "2024-03-11T00:00:00+00:00", "2024-03-18T00:00:00+00:00",
      ])
    #expect(monday.map { $0["sum"] } == ["1", "110", "1000"])
    let sunday = try out.rows("sunday")
    #expect(sunday.map { $0["bucket_start"] } == ["2024-03-03T00:00:00+00:00", "2024-03-10T00:00:00+00:00"])
    #expect(sunday.map { $0["sum"] } == ["11", "1100"])
  }

  @Test func aWeekWithSpringForwardIs167Hours() throws {
    // Mon Mar 4 00:00 EST (05:00Z) → Mon Mar 11 00:00 EDT (04:00Z): 7 × 24 − 1 = 167 h = 601200 s.
    let body = StatsFixture.steps(5, "2024-03-04 05:00:00", "2024-03-11 04:00:00", source: "iPhone")
    let out = try StatsFixture.run(
      body, jobs: [try StatsFixture.job("w", "StepCount", "1w", ["sum", "duration"])], zone: newYork)
    defer { out.result.remove() }
    let rows = try out.rows("w")
    #expect(rows.count == 1)
    #expect(rows.first?["bucket_start"] == "2024-03-04T00:00:00-05:00")
    #expect(rows.first?["bucket_end"] == "2024-03-11T00:00:00-04:00")
    #expect(rows.first?["duration"] == "601200")
    #expect(rows.first?["sum"] == "5")
  }

  @Test func monthsAreCalendarMonths() throws {
    // Instants (UTC): Jan 31 23:59:59 → 1; Feb 29 12:00 → 10 (2024 is a leap year);
    // Mar 1 00:00:00 → 100 (the new month); and 24 over Jan 31 12:00 → Feb 1 12:00, split 12/12.
    // Default anchor (the 1st): Jan 1 + 12 = 13;  Feb 10 + 12 = 22;  Mar 100.
    // Anchored on 2024-01-31 (a day some months lack, clamped to their last day): buckets
    //   [Dec 31, Jan 31), [Jan 31, Feb 29), [Feb 29, Mar 31); an instant on Dec 31 06:00 → 1000.
    //   [Jan 31, Feb 29) = 1 + 24 = 25;  [Feb 29, Mar 31) = 10 + 100 = 110.
    let body = [
      StatsFixture.steps(1000, "2023-12-31 06:00:00", source: "iPhone"),
      StatsFixture.steps(1, "2024-01-31 23:59:59", source: "iPhone"),
      StatsFixture.steps(24, "2024-01-31 12:00:00", "2024-02-01 12:00:00", source: "iPhone"),
      StatsFixture.steps(10, "2024-02-29 12:00:00", source: "iPhone"),
      StatsFixture.steps(100, "2024-03-01 00:00:00", source: "iPhone"),
    ].joined(separator: "\n")
    let out = try StatsFixture.run(
      body,
      jobs: [
        try StatsFixture.job("first", "StepCount", "1mo", ["sum"]),
        try StatsFixture.job("last", "StepCount", "1mo", ["sum"], anchor: "2024-01-31"),
      ])
    defer { out.result.remove() }
    let first = try out.rows("first")
    #expect(
      first.map { $0["bucket_start"] } == [
        "2023-12-01T00:00:00+00:00", "2024-01-01T00:00:00+00:00", "2024-02-01T00:00:00+00:00",
        "2024-03-01T00:00:00+00:00",
      ])
    #expect(first.map { $0["sum"] } == ["1000", "13", "22", "100"])
    #expect(first[2]["bucket_end"] == "2024-03-01T00:00:00+00:00")
    let last = try out.rows("last")
    #expect(
      last.map { $0["bucket_start"] } == [
        "2023-12-31T00:00:00+00:00", "2024-01-31T00:00:00+00:00", "2024-02-29T00:00:00+00:00",
      ])
    #expect(
      last.map { $0["bucket_end"] } == [
        "2024-01-31T00:00:00+00:00", "2024-02-29T00:00:00+00:00", "2024-03-31T00:00:00+00:00",
      ])
    #expect(last.map { $0["sum"] } == ["1000", "25", "110"])
  }

  @Test func aMonthWithSpringForwardIs743Hours() throws {
    // March 2024 in New York: 00:00 EST Mar 1 (05:00Z) → 00:00 EDT Apr 1 (04:00Z) = 31 × 24 − 1 h.
    let body = StatsFixture.steps(1, "2024-03-01 05:00:00", "2024-04-01 04:00:00", source: "iPhone")
    let out = try StatsFixture.run(
      body,
      jobs: [
        try StatsFixture.job("m", "StepCount", "1mo", ["duration"]),
        try StatsFixture.job("y", "StepCount", "1y", ["duration"]),
      ], zone: newYork)
    defer { out.result.remove() }
    #expect(try out.rows("m").map { $0["duration"] } == ["2674800"])
    #expect(try out.rows("m").first?["bucket_end"] == "2024-04-01T00:00:00-04:00")
    #expect(try out.rows("y").first?["bucket_start"] == "2024-01-01T00:00:00-05:00")
    #expect(try out.rows("y").first?["bucket_end"] == "2025-01-01T00:00:00-05:00")
  }

  @Test func anAnchorWithATimeShiftsDaysAndHours() throws {
    // Days from 03:00 (UTC): 02:59 on Jan 2 is still the day that began Jan 1 03:00; 03:00 opens
    // the next. 90-minute buckets from the default anchor (2000-01-03 00:00; a day is 16 of them,
    // so every midnight is a boundary): 01:40 lies in 01:30–03:00.
    let body = [
      StatsFixture.steps(1, "2024-01-02 02:59:00", source: "iPhone"),
      StatsFixture.steps(2, "2024-01-02 03:00:00", source: "iPhone"),
      StatsFixture.steps(4, "2024-01-01 01:40:00", source: "iPhone"),
    ].joined(separator: "\n")
    let out = try StatsFixture.run(
      body,
      jobs: [
        try StatsFixture.job("three", "StepCount", "1d", ["sum"], anchor: "2024-01-01T03:00"),
        try StatsFixture.job("ninety", "StepCount", "90m", ["sum"]),
      ])
    defer { out.result.remove() }
    let three = try out.rows("three")
    #expect(
      three.map { $0["bucket_start"] } == [
        "2023-12-31T03:00:00+00:00", "2024-01-01T03:00:00+00:00", "2024-01-02T03:00:00+00:00",
      ])
    #expect(three.map { $0["sum"] } == ["4", "1", "2"])
    let ninety = try out.rows("ninety")
    #expect(ninety.first?["bucket_start"] == "2024-01-01T01:30:00+00:00")
    #expect(ninety.first?["bucket_end"] == "2024-01-01T03:00:00+00:00")
  }

  @Test func aBoundaryInsideTheSpringForwardGapMovesToItsEnd() throws {
    // Days from 02:30 in New York: on Mar 10, 02:30 never happens (02:00 EST → 03:00 EDT at
    // 07:00Z), so that day's boundary is 03:00 EDT. 06:59Z (01:59 EST) is still in the bucket
    // from Mar 9 02:30 EST; 07:00Z opens the bucket 03:00 EDT Mar 10 → 02:30 EDT Mar 11.
    let body = [
      StatsFixture.steps(1, "2024-03-10 06:59:00", source: "iPhone"),
      StatsFixture.steps(2, "2024-03-10 07:00:00", source: "iPhone"),
    ].joined(separator: "\n")
    let out = try StatsFixture.run(
      body, jobs: [try StatsFixture.job("d", "StepCount", "1d", ["sum"], anchor: "2024-01-01T02:30")], zone: newYork)
    defer { out.result.remove() }
    let rows = try out.rows("d")
    #expect(rows.map { $0["bucket_start"] } == ["2024-03-09T02:30:00-05:00", "2024-03-10T03:00:00-04:00"])
    #expect(rows.map { $0["bucket_end"] } == ["2024-03-10T03:00:00-04:00", "2024-03-11T02:30:00-04:00"])
    #expect(rows.map { $0["sum"] } == ["1", "2"])
  }

  @Test func intervalsParseAsCountAndUnit() {
    #expect(BucketInterval("1m") == BucketInterval(count: 1, unit: .minute))
    #expect(BucketInterval("1min") == BucketInterval(count: 1, unit: .minute))
    #expect(BucketInterval("15m") == BucketInterval(count: 15, unit: .minute))
    #expect(BucketInterval("90s") == BucketInterval(count: 90, unit: .second))
    #expect(BucketInterval("1h") == BucketInterval(count: 1, unit: .hour))
    #expect(BucketInterval("1d") == BucketInterval(count: 1, unit: .day))
    #expect(BucketInterval("2w") == BucketInterval(count: 2, unit: .week))
    #expect(BucketInterval("1mo") == BucketInterval(count: 1, unit: .month))
    #expect(BucketInterval("1y") == BucketInterval(count: 1, unit: .year))
    #expect(BucketInterval("15m")?.description == "15m")
    #expect(BucketInterval("1min")?.description == "1m")
    for bad in ["", "m", "0d", "1M", "1 d", "-1d", "1mo2", "1.5h", "d1", "10000000s", "1months", "１d"] {
      #expect(BucketInterval(bad) == nil, "\(bad)")
    }
  }

  @Test func anchorsParseAsLocalDateAndTime() {
    #expect(BucketAnchor("2024-03-03")?.description == "2024-03-03T00:00")
    #expect(BucketAnchor("2024-01-01T03:00")?.minuteOfDay == 180)
    #expect(BucketAnchor("2024-01-01T23:59")?.description == "2024-01-01T23:59")
    for bad in ["", "2024-02-30", "2024-01-01T24:00", "2024-01-01T3:00", "2024-01-01 03:00", "2024-01-01T03:00Z"] {
      #expect(BucketAnchor(bad) == nil, "\(bad)")
    }
    #expect(BucketAnchor.defaultAnchor(for: BucketInterval("1w")!).date.isoWeekdayIndex == 0)
    #expect(BucketAnchor.defaultAnchor(for: BucketInterval("1mo")!).date.day == 1)
  }
}
