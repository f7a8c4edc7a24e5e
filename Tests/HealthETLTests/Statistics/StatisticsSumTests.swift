import HealthETL
import Testing

/// `sum` (Pipelines/docs/statistics.md, "Interval statistics", with "Source priority"): every expected
/// number is worked out by hand in the comments. Zone UTC unless said otherwise, so wall times are
/// the instants written.
@Suite struct StatisticsSumTests {
  let watch = "Alex’s Apple Watch"
  let phone = "Alex’s iPhone"

  @Test func aSampleAcrossAnHourBoundaryIsSplitProRata() throws {
    // 100 steps over 13:57–14:02 (300 s): 180 s before 14:00 → 100 × 180/300 = 60,
    // 120 s after → 100 × 120/300 = 40.
    let body = StatsFixture.steps(100, "2024-01-01 13:57:00", "2024-01-01 14:02:00", source: phone)
    let out = try StatsFixture.run(body, jobs: [try StatsFixture.job("hourly", "StepCount", "1h", ["sum"])])
    defer { out.result.remove() }
    let rows = try out.rows("hourly")
    #expect(rows.count == 2)
    #expect(rows[0]["bucket_start"] == "2024-01-01T13:00:00+00:00")
    #expect(rows[0]["bucket_end"] == "2024-01-01T14:00:00+00:00")
    #expect(rows[0]["sum"] == "60")
    #expect(rows[1]["bucket_start"] == "2024-01-01T14:00:00+00:00")
    #expect(rows[1]["sum"] == "40")
    #expect(rows[0]["type"] == "StepCount")
  }

  @Test func onlyTheHalfOfAnIPhoneSampleTheWatchDoesNotCoverCounts() throws {
    // iPhone 10:00–10:10 = 100 steps, Watch 10:05–10:15 = 80 steps; the Watch ranks first.
    //   10:00–10:05  only the iPhone:  100 × 5/10 = 50
    //   10:05–10:10  both; Watch wins:  80 × 5/10 = 40  (the iPhone's other 50 are dropped)
    //   10:10–10:15  only the Watch:    80 × 5/10 = 40
    // Day: 50 + 40 + 40 = 130 (naive would be 180). Five-minute buckets: 50, 40, 40.
    let body = [
      StatsFixture.steps(100, "2024-01-01 10:00:00", "2024-01-01 10:10:00", source: phone),
      StatsFixture.steps(80, "2024-01-01 10:05:00", "2024-01-01 10:15:00", source: watch),
    ].joined(separator: "\n")
    let out = try StatsFixture.run(
      body,
      jobs: [
        try StatsFixture.job("daily", "StepCount", "1d", ["sum"]),
        try StatsFixture.job("five", "StepCount", "5m", ["sum"]),
      ])
    defer { out.result.remove() }
    #expect(try out.rows("daily").map { $0["sum"] } == ["130"])
    #expect(try out.rows("daily").first?["bucket_start"] == "2024-01-01T00:00:00+00:00")
    #expect(try out.rows("daily").first?["bucket_end"] == "2024-01-02T00:00:00+00:00")
    #expect(try out.rows("five").map { $0["sum"] } == ["50", "40", "40"])
    #expect(
      try out.rows("five").map { $0["bucket_start"] } == [
        "2024-01-01T10:00:00+00:00", "2024-01-01T10:05:00+00:00", "2024-01-01T10:10:00+00:00",
      ])
  }

  @Test func watchOffWristStretchesAreFilledFromTheIPhone() throws {
    // iPhone 09:00–12:00 = 600 steps (200 an hour); Watch 09:00–10:00 = 250 and 11:00–12:00 = 150,
    // off the wrist 10:00–11:00.
    //   09:00  Watch 250
    //   10:00  iPhone 600 × 60/180 = 200
    //   11:00  Watch 150
    // Day 600 — not 1000 (everything) and not 400 (Watch alone).
    let body = [
      StatsFixture.steps(600, "2024-01-01 09:00:00", "2024-01-01 12:00:00", source: phone),
      StatsFixture.steps(250, "2024-01-01 09:00:00", "2024-01-01 10:00:00", source: watch),
      StatsFixture.steps(150, "2024-01-01 11:00:00", "2024-01-01 12:00:00", source: watch),
    ].joined(separator: "\n")
    let out = try StatsFixture.run(
      body,
      jobs: [
        try StatsFixture.job("daily", "StepCount", "1d", ["sum"]),
        try StatsFixture.job("hourly", "StepCount", "1h", ["sum"]),
      ])
    defer { out.result.remove() }
    #expect(try out.rows("daily").map { $0["sum"] } == ["600"])
    #expect(try out.rows("hourly").map { $0["sum"] } == ["250", "200", "150"])
  }

  @Test func aManualEntryBeatsTheWatchAndTheIPhone() throws {
    // Typed in on the iPhone (same source name, HKWasUserEntered = 1: a group of its own, ranked
    // first): 09:30–10:30 = 1000. Watch 09:00–10:00 = 300. iPhone 09:00–11:00 = 400.
    //   09:00–09:30  Watch beats iPhone:  300 × 30/60  = 150
    //   09:30–10:00  manual:             1000 × 30/60  = 500
    //   10:00–10:30  manual:             1000 × 30/60  = 500
    //   10:30–11:00  iPhone alone:        400 × 30/120 = 100
    // Hours: 09:00 → 650, 10:00 → 600; day 1250.
    let body = [
      StatsFixture.steps(400, "2024-01-01 09:00:00", "2024-01-01 11:00:00", source: phone),
      StatsFixture.steps(300, "2024-01-01 09:00:00", "2024-01-01 10:00:00", source: watch),
      StatsFixture.steps(1000, "2024-01-01 09:30:00", "2024-01-01 10:30:00", source: phone, userEntered: true),
    ].joined(separator: "\n")
    let out = try StatsFixture.run(
      body,
      jobs: [
        try StatsFixture.job("daily", "StepCount", "1d", ["sum"]),
        try StatsFixture.job("hourly", "StepCount", "1h", ["sum"]),
      ])
    defer { out.result.remove() }
    #expect(try out.rows("hourly").map { $0["sum"] } == ["650", "600"])
    #expect(try out.rows("daily").map { $0["sum"] } == ["1250"])
  }

  @Test func theDeviceModelRanksAGroupBeforeItsName() throws {
    // "Phone Sync" has no Watch or iPhone in its name, but its device says model:Watch, so it
    // ranks as an Apple Watch, ahead of the iPhone. iPhone 10:00–11:00 = 100, "Phone Sync"
    // 10:30–11:00 = 70: 100 × 30/60 + 70 = 120. (Were it ranked "other": 100.)
    let body = [
      StatsFixture.steps(100, "2024-01-01 10:00:00", "2024-01-01 11:00:00", source: phone),
      StatsFixture.record(
        "StepCount", 70, "2024-01-01 10:30:00", "2024-01-01 11:00:00", source: "Phone Sync", model: "Watch"),
    ].joined(separator: "\n")
    let out = try StatsFixture.run(body, jobs: [try StatsFixture.job("daily", "StepCount", "1d", ["sum"])])
    defer { out.result.remove() }
    #expect(try out.rows("daily").map { $0["sum"] } == ["120"])
  }

  @Test func aPipelinePriorityListOverridesTheDefaultOrder() throws {
    // Same samples as the half-overlap test, with sourcePriority ["iphone"]: the iPhone now wins.
    //   10:00–10:10 iPhone 100;  10:10–10:15 Watch 80 × 5/10 = 40.  Day 140.
    let body = [
      StatsFixture.steps(100, "2024-01-01 10:00:00", "2024-01-01 10:10:00", source: phone),
      StatsFixture.steps(80, "2024-01-01 10:05:00", "2024-01-01 10:15:00", source: watch),
    ].joined(separator: "\n")
    var settings = RunSettings()
    settings.sourcePriority = SourcePriority(overrides: ["iphone"])
    let out = try StatsFixture.run(
      body, jobs: [try StatsFixture.job("daily", "StepCount", "1d", ["sum"])], settings: settings)
    defer { out.result.remove() }
    #expect(try out.rows("daily").map { $0["sum"] } == ["140"])
  }

  @Test func everySampleOfTheWinningGroupAddsItsShare() throws {
    // Watch A 10:00–10:10 = 100 and Watch B 10:05–10:15 = 50 overlap each other; iPhone
    // 10:00–10:15 = 300 is covered all along, so it gives nothing.
    //   10:00–10:05  A: 100 × 5/10 = 50
    //   10:05–10:10  A: 50  +  B: 50 × 5/10 = 25
    //   10:10–10:15  B: 25
    // Total 150 (all of A and B).
    let body = [
      StatsFixture.steps(300, "2024-01-01 10:00:00", "2024-01-01 10:15:00", source: phone),
      StatsFixture.steps(100, "2024-01-01 10:00:00", "2024-01-01 10:10:00", source: watch),
      StatsFixture.steps(50, "2024-01-01 10:05:00", "2024-01-01 10:15:00", source: watch),
    ].joined(separator: "\n")
    let out = try StatsFixture.run(body, jobs: [try StatsFixture.job("five", "StepCount", "5m", ["sum"])])
    defer { out.result.remove() }
    #expect(try out.rows("five").map { $0["sum"] } == ["50", "75", "25"])
  }

  @Test func anInstantCountsWholeInTheBucketOfItsInstantAndIsNeverMergedAway() throws {
    // Watch 10:00–11:00 = 600. iPhone instants: 7 at 10:30 (inside the Watch's hour, still
    // counted), 3 at exactly 11:00 (half-open: the 11:00 bucket).
    // 10:00 → 600 + 7 = 607; 11:00 → 3.
    let body = [
      StatsFixture.steps(600, "2024-01-01 10:00:00", "2024-01-01 11:00:00", source: watch),
      StatsFixture.steps(7, "2024-01-01 10:30:00", source: phone),
      StatsFixture.steps(3, "2024-01-01 11:00:00", source: phone),
    ].joined(separator: "\n")
    let out = try StatsFixture.run(body, jobs: [try StatsFixture.job("hourly", "StepCount", "1h", ["sum"])])
    defer { out.result.remove() }
    let rows = try out.rows("hourly")
    #expect(rows.map { $0["sum"] } == ["607", "3"])
    #expect(rows.map { $0["bucket_start"] } == ["2024-01-01T10:00:00+00:00", "2024-01-01T11:00:00+00:00"])
  }

  @Test func separateBySourceSumsEverySourceOnItsOwn() throws {
    // The half-overlap samples again, plus the iPhone's manual entry of 20 at 23:00 (same source
    // name: separateBySource groups by name). Nothing is merged:
    //   day: Watch 80, iPhone 100 + 20 = 120 — rows in source-name byte order, and
    //   "Alex’s Apple Watch" < "Alex’s iPhone" because 'A' (0x41) < 'i' (0x69).
    //   Five-minute buckets: 10:00 iPhone 50; 10:05 iPhone 50, Watch 40; 10:10 Watch 40;
    //   23:00 iPhone 20.
    let body = [
      StatsFixture.steps(100, "2024-01-01 10:00:00", "2024-01-01 10:10:00", source: phone),
      StatsFixture.steps(80, "2024-01-01 10:05:00", "2024-01-01 10:15:00", source: watch),
      StatsFixture.steps(20, "2024-01-01 23:00:00", "2024-01-01 23:00:00", source: phone, userEntered: true),
    ].joined(separator: "\n")
    let out = try StatsFixture.run(
      body,
      jobs: [
        try StatsFixture.job("daily", "StepCount", "1d", ["sum", "count"], separate: true),
        try StatsFixture.job("five", "StepCount", "5m", ["sum"], separate: true),
      ])
    defer { out.result.remove() }
    let daily = try out.rows("daily")
    #expect(daily.map { $0["source"] } == [watch, phone])
    #expect(daily.map { $0["sum"] } == ["80", "120"])
    #expect(daily.map { $0["count"] } == ["1", "2"])
    let header = try out.text("daily").split(separator: "\n").first
    #expect(header == "date,type,bucket_start,bucket_end,source,sum,count")
    let five = try out.rows("five")
    #expect(
      five.map { "\($0["bucket_start"]!.dropFirst(11).prefix(5)) \($0["source"]!) \($0["sum"]!)" } == [
        "10:00 \(phone) 50", "10:05 \(watch) 40", "10:05 \(phone) 50", "10:10 \(watch) 40", "23:00 \(phone) 20",
      ])
  }

  @Test func cumulativeTypesAlsoTakeCountMostRecentAndDuration() throws {
    // Steps 10:00–10:10 (iPhone, 100) and 10:05–10:20 (Watch, 80): count 2 (all sources, never
    // merged); mostRecent is the later start (80 at 10:05); duration is the union 10:00–10:20
    // = 1200 s; sum 100 × 5/10 + 80 = 130.
    let body = [
      StatsFixture.steps(100, "2024-01-01 10:00:00", "2024-01-01 10:10:00", source: phone),
      StatsFixture.steps(80, "2024-01-01 10:05:00", "2024-01-01 10:20:00", source: watch),
    ].joined(separator: "\n")
    let out = try StatsFixture.run(
      body,
      jobs: [
        try StatsFixture.job("h", "StepCount", "1h", ["duration", "mostRecentTime", "sum", "count", "mostRecent"])
      ])
    defer { out.result.remove() }
    let rows = try out.rows("h")
    #expect(
      try out.text("h").hasPrefix(
        "local_time,type,bucket_start,bucket_end,duration,mostRecentTime,sum,count,mostRecent\n"))
    #expect(rows.count == 1)
    #expect(rows.first?["duration"] == "1200")
    #expect(rows.first?["mostRecentTime"] == "2024-01-01T10:05:00+00:00")
    #expect(rows.first?["sum"] == "130")
    #expect(rows.first?["count"] == "2")
    #expect(rows.first?["mostRecent"] == "80")
  }
}
