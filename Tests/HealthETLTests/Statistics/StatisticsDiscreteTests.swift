import Foundation
import HealthETL
import HealthModel
import Testing

/// Discrete options (Pipelines/docs/statistics.md, "Interval statistics"): avg/min/max/count over samples
/// starting in the bucket, twavg, mostRecent and its ties, duration; and job validation before any
/// input is read. Zone UTC.
@Suite struct StatisticsDiscreteTests {
  @Test func heartRatePerMinuteLeavesAnEmptyMinuteOut() throws {
    // 10:00:10 → 60 (Watch), 10:00:40 → 80 (Watch), 10:00:50 → 90 (a chest strap app),
    // nothing in 10:01, 10:02:05 → 100.
    //   10:00  max 90, min 60, avg (60 + 80 + 90) / 3 = 76.666… (12 significant digits), count 3
    //   10:01  absent (no invented zeros)
    //   10:02  100, 100, 100, 1
    let body = [
      StatsFixture.heartRate(60, "2024-01-01 10:00:10"),
      StatsFixture.heartRate(80, "2024-01-01 10:00:40"),
      StatsFixture.heartRate(90, "2024-01-01 10:00:50", source: "Polar Beat"),
      StatsFixture.heartRate(100, "2024-01-01 10:02:05"),
    ].joined(separator: "\n")
    let job = try StatsFixture.job("hr", "HeartRate", "1m", ["max", "min", "avg", "count"])
    let out = try StatsFixture.run(body, jobs: [job])
    defer { out.result.remove() }
    let text = try out.text("hr")
    #expect(
      text == """
        local_time,type,bucket_start,bucket_end,max,min,avg,count
        2024-01-01 10:00:00,HeartRate,2024-01-01T10:00:00+00:00,2024-01-01T10:01:00+00:00,90,60,76.6667,3
        2024-01-01 10:02:00,HeartRate,2024-01-01T10:02:00+00:00,2024-01-01T10:03:00+00:00,100,100,100,1

        """)
  }

  @Test func defaultJobsAreHeartRatePerMinuteAndTheDailyTotalsAndAverages() {
    let jobs = StatsFixture.defaultQueries
    #expect(jobs.count == 9)
    let summary = jobs.map { "\($0.type.shortName) \($0.interval) \($0.options.map(\.rawValue))" }
    #expect(
      summary == [
        "HeartRate 1m [\"max\", \"min\", \"avg\", \"count\"]",
        "StepCount 1d [\"sum\"]", "DistanceWalkingRunning 1d [\"sum\"]", "ActiveEnergyBurned 1d [\"sum\"]",
        "FlightsClimbed 1d [\"sum\"]", "RestingHeartRate 1d [\"avg\"]", "HeartRateVariabilitySDNN 1d [\"avg\"]",
        "DistanceSwimming 1d [\"sum\"]", "SwimmingStrokeCount 1d [\"sum\"]",
      ])
    #expect(
      jobs.allSatisfy {
        !$0.separateBySource
          && StatisticsTables.destinations(of: $0) == [.init(file: "stats/\($0.name).csv", format: .csv)]
      })
    #expect(jobs.first?.name == "heart-rate-per-minute")
  }

  @Test func mostRecentTakesTheLatestStartThenEndThenCreationThenPriority() throws {
    // 10:00 hour: A 10:10–10:20 = 1, B 10:10–10:25 = 2, C 10:05–10:50 = 9: latest start is
    //   10:10 (C starts earlier though it ends later); of A and B, B ends later → 2 at 10:10.
    // 11:00 hour: D and E both 11:10–11:20; D created 11:30 = 3, E created 11:40 = 4 → 4.
    // 12:00 hour: F 12:10–12:20 created 12:30 = 5, G same interval with no creation date = 6
    //   (none counts as earliest) → 5.
    // 13:00 hour: iPhone 13:10 = 7 and Watch 13:10 = 8, same creation: the Watch ranks first → 8.
    let iPhone = "Alex’s iPhone"
    let watch = "Alex’s Apple Watch"
    let body = [
      StatsFixture.record("RestingHeartRate", 1, "2024-01-01 10:10:00", "2024-01-01 10:20:00", source: watch),
      StatsFixture.record("RestingHeartRate", 2, "2024-01-01 10:10:00", "2024-01-01 10:25:00", source: watch),
      StatsFixture.record("RestingHeartRate", 9, "2024-01-01 10:05:00", "2024-01-01 10:50:00", source: watch),
      StatsFixture.record(
        "RestingHeartRate", 3, "2024-01-01 11:10:00", "2024-01-01 11:20:00", source: watch,
        created: "2024-01-01 11:30:00"),
      StatsFixture.record(
        "RestingHeartRate", 4, "2024-01-01 11:10:00", "2024-01-01 11:20:00", source: watch,
        created: "2024-01-01 11:40:00"),
      StatsFixture.record(
        "RestingHeartRate", 5, "2024-01-01 12:10:00", "2024-01-01 12:20:00", source: watch,
        created: "2024-01-01 12:30:00"),
      StatsFixture.record("RestingHeartRate", 6, "2024-01-01 12:10:00", "2024-01-01 12:20:00", source: watch),
      StatsFixture.record(
        "RestingHeartRate", 7, "2024-01-01 13:10:00", source: iPhone, created: "2024-01-01 13:30:00"),
      StatsFixture.record(
        "RestingHeartRate", 8, "2024-01-01 13:10:00", source: watch, created: "2024-01-01 13:30:00"),
    ].joined(separator: "\n")
    let out = try StatsFixture.run(
      body, jobs: [try StatsFixture.job("recent", "RestingHeartRate", "1h", ["mostRecent", "mostRecentTime"])])
    defer { out.result.remove() }
    let rows = try out.rows("recent")
    #expect(rows.map { $0["mostRecent"] } == ["2", "4", "5", "8"])
    #expect(
      rows.map { $0["mostRecentTime"] } == [
        "2024-01-01T10:10:00+00:00", "2024-01-01T11:10:00+00:00", "2024-01-01T12:10:00+00:00",
        "2024-01-01T13:10:00+00:00",
      ])
  }

  @Test func twavgHoldsEachValueUntilTheNextSampleAtMostTenMinutes() throws {
    // Heart rate, hourly buckets, one source:
    //   10:00 → 60, next at 10:30: holds 10 min (the cap), 600 s
    //   10:30 → 90, next at 10:45: holds 600 s
    //   10:45 → 120, next at 10:47: holds 120 s
    //   10:47 → 30, next at 10:55: holds 480 s
    //   10:55 → 100, next at 11:02: holds 7 min, 300 s in the 10:00 hour and 120 s in 11:00
    //   11:02 → 50, nothing after: holds 600 s (to 11:12)
    // 10:00: (60·600 + 90·600 + 120·120 + 30·480 + 100·300) / (600 + 600 + 120 + 480 + 300)
    //      = (36000 + 54000 + 14400 + 14400 + 30000) / 2100 = 148800 / 2100 = 70.857142857142…
    //      → 70.8571 (count/min to 0.0001);   plain avg (60 + 90 + 120 + 30 + 100) / 5 = 80
    // 11:00: (100·120 + 50·600) / 720 = 42000 / 720 = 58.3333…→ 58.3333;   avg 50
    // 12:00: no row — 11:02's hold ends at 11:12, and holding is not data.
    let body = [
      StatsFixture.heartRate(60, "2024-01-01 10:00:00"), StatsFixture.heartRate(90, "2024-01-01 10:30:00"),
      StatsFixture.heartRate(120, "2024-01-01 10:45:00"), StatsFixture.heartRate(30, "2024-01-01 10:47:00"),
      StatsFixture.heartRate(100, "2024-01-01 10:55:00"), StatsFixture.heartRate(50, "2024-01-01 11:02:00"),
    ].joined(separator: "\n")
    let out = try StatsFixture.run(body, jobs: [try StatsFixture.job("tw", "HeartRate", "1h", ["twavg", "avg"])])
    defer { out.result.remove() }
    let rows = try out.rows("tw")
    #expect(rows.map { $0["twavg"] } == ["70.8571", "58.3333"])
    #expect(rows.map { $0["avg"] } == ["80", "50"])
  }

  @Test func twavgHoldsAcrossSourcesAndSharesASpanAtTheSameStart() throws {
    // "Next" is the next later start of any source. Watch 10:00 → 60 and chest strap 10:00 → 80
    // start together: both hold until 10:04 (Watch 70) for 240 s each; 70 holds 600 s.
    //   (60·240 + 80·240 + 70·600) / (240 + 240 + 600) = (14400 + 19200 + 42000) / 1080 = 70
    // With separateBySource each source holds until its own next sample:
    //   Watch: 60 until 10:04 (240 s), 70 for 600 s → (14400 + 42000) / 840 = 67.142857… → 67.1429
    //   strap: 80 for 600 s → 80
    let body = [
      StatsFixture.heartRate(60, "2024-01-01 10:00:00"), StatsFixture.heartRate(70, "2024-01-01 10:04:00"),
      StatsFixture.heartRate(80, "2024-01-01 10:00:00", source: "Strap"),
    ].joined(separator: "\n")
    let out = try StatsFixture.run(
      body,
      jobs: [
        try StatsFixture.job("merged", "HeartRate", "1h", ["twavg"]),
        try StatsFixture.job("each", "HeartRate", "1h", ["twavg"], separate: true),
      ])
    defer { out.result.remove() }
    #expect(try out.rows("merged").map { $0["twavg"] } == ["70"])
    let each = try out.rows("each")
    #expect(each.map { $0["source"] } == ["Alex’s Apple Watch", "Strap"])
    #expect(each.map { $0["twavg"] } == ["67.1429", "80"])
  }

  @Test func durationIsTheUnionOfTheIntervalsInTheBucket() throws {
    // Watch 10:00–10:10 and iPhone 10:05–10:20 overlap: union 10:00–10:20 = 1200 s; an instant at
    // 10:30 adds nothing; 10:50–11:10 adds 600 s to 10:00 and 600 s to 11:00.
    let body = [
      StatsFixture.record("HeartRate", 60, "2024-01-01 10:00:00", "2024-01-01 10:10:00", source: "Watch"),
      StatsFixture.record("HeartRate", 70, "2024-01-01 10:05:00", "2024-01-01 10:20:00", source: "iPhone"),
      StatsFixture.record("HeartRate", 80, "2024-01-01 10:30:00", source: "iPhone"),
      StatsFixture.record("HeartRate", 90, "2024-01-01 10:50:00", "2024-01-01 11:10:00", source: "Watch"),
    ].joined(separator: "\n")
    let out = try StatsFixture.run(
      body, jobs: [try StatsFixture.job("d", "HeartRate", "1h", ["duration", "count", "avg"])])
    defer { out.result.remove() }
    let rows = try out.rows("d")
    #expect(rows.map { $0["duration"] } == ["1800", "600"])
    // 11:00 has data for duration (10:50–11:10 reaches into it) but no sample starts there:
    // count 0 and an empty average, never a made-up 0.
    #expect(rows.map { $0["count"] } == ["4", "0"])
    #expect(rows.map { $0["avg"] } == ["75", ""])
  }

  @Test func aJobWritesEveryFileThePipelineLists() throws {
    // 10:50–11:10: the 11:00 hour has data for duration only (count 0, no average), in json and
    // ndjson: numbers bare, instants as strings, a value that cannot be computed is null.
    let body = [
      StatsFixture.record("HeartRate", 90, "2024-01-01 10:50:00", "2024-01-01 11:10:00", source: "Watch")
    ].joined(separator: "\n")
    let job = try StatisticsQuery(
      name: "hr", type: "HeartRate", interval: "1h", options: ["count", "avg", "mostRecentTime", "duration"],
      destinations: [
        .init(file: "hr.csv", format: .csv), .init(file: "hr.json", format: .json),
        .init(file: "more/hr.ndjson", format: .ndjson),
      ])
    let out = try StatsFixture.run(body, jobs: [job])
    defer { out.result.remove() }
    #expect(out.result.outputs.map(\.path) == ["hr.csv", "hr.json", "more/hr.ndjson"])
    #expect(out.result.outputs.map(\.rows) == [2, 2, 2])
    #expect(
      try out.result.text("more/hr.ndjson").split(separator: "\n").last
        == #"{"local_time": "2024-01-01 11:00:00", "type": "HeartRate", "bucket_start": "2024-01-01T11:00:00+00:00", "#
        + #""bucket_end": "2024-01-01T12:00:00+00:00", "count": 0, "avg": null, "mostRecentTime": null, "#
        + #""duration": 600}"#)
    let json = try JSONSerialization.jsonObject(with: Data(try out.result.text("hr.json").utf8)) as? [[String: Any]]
    #expect(json?.first?["avg"] as? Double == 90)
    #expect(json?.first?["mostRecentTime"] as? String == "2024-01-01T10:50:00+00:00")
  }

  @Test func illegalOptionTypeCombinationsAreRejectedBeforeAnyInputIsRead() {
    // Nothing here reads an export: the job definitions themselves throw.
    func error(_ type: String, _ options: [String], interval: String = "1d", anchor: String? = nil, name: String = "j")
      -> StatisticsQueryError?
    {
      do {
        _ = try StatisticsQuery(name: name, type: type, interval: interval, anchor: anchor, options: options)
        return nil
      } catch {
        return error
      }
    }
    #expect(
      error("StepCount", ["avg"])
        == .optionNotApplicable(job: "j", type: "StepCount", option: "avg", style: .cumulative))
    #expect(
      error("HeartRate", ["max", "sum"])
        == .optionNotApplicable(job: "j", type: "HeartRate", option: "sum", style: .discreteTemporallyWeighted))
    for option in ["avg", "min", "max", "twavg"] {
      #expect(error("DistanceWalkingRunning", [option]) != nil, "\(option)")
    }
    #expect(error("HKQuantityTypeIdentifierBodyMass", ["sum"]) != nil)
    #expect(error("StepCount", ["median"]) == .unknownOption(job: "j", option: "median"))
    #expect(error("StepCount", []) == .noOptions(job: "j"))
    #expect(error("StepCount", ["sum", "sum"]) == .duplicateOption(job: "j", option: "sum"))
    #expect(error("Steps", ["sum"]) == .unknownType(job: "j", type: "Steps"))
    #expect(error("SleepAnalysis", ["duration"]) == .notAQuantityType(job: "j", type: "SleepAnalysis"))
    #expect(error("StepCount", ["sum"], interval: "1M") == .invalidInterval(job: "j", interval: "1M"))
    #expect(error("StepCount", ["sum"], anchor: "Monday") == .invalidAnchor(job: "j", anchor: "Monday"))
    #expect(error("StepCount", ["sum"], name: "../steps") == .invalidName(job: "../steps"))
    #expect(throws: StatisticsQueryError.invalidOutput(job: "j", path: "../x.csv")) {
      try StatisticsQuery(
        name: "j", type: "StepCount", interval: "1d", options: ["sum"], destinations: [.init(file: "../x.csv")])
    }
    // Legal for both styles: count, mostRecent, mostRecentTime, duration.
    for type in ["StepCount", "HeartRate"] {
      #expect(error(type, ["count", "mostRecent", "mostRecentTime", "duration"]) == nil)
    }
    #expect(error("HKQuantityTypeIdentifierStepCount", ["sum"]) == nil)

    // The message names the job, the type and the option, and says what would work.
    let message = error("StepCount", ["avg"], name: "steps_daily")!.description
    #expect(message.contains("\"steps_daily\"") && message.contains("StepCount") && message.contains("\"avg\""))
    #expect(message.contains("sum"))
  }

  @Test func twoJobsCannotWriteOneFile() throws {
    let a = try StatsFixture.job("same", "StepCount", "1d", ["sum"])
    let b = try StatsFixture.job("same", "HeartRate", "1m", ["avg"])
    let c = try StatisticsQuery(
      name: "other", type: "HeartRate", interval: "1h", options: ["avg"],
      destinations: [.init(file: "stats/same.csv")])
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stats-dup-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder.path)
    defer { transaction.abandon() }
    #expect(throws: StatisticsQueryError.duplicateName(job: "same")) {
      _ = try StatisticsMart(jobs: [a, b], transaction: transaction)
    }
    #expect(throws: StatisticsQueryError.duplicateName(job: "other")) {
      _ = try StatisticsMart(jobs: [a, c], transaction: transaction)
    }
  }
}
