import Foundation
import HealthETL
import HealthExtract
import HealthModel
import Testing

/// Every real export under ../shared/fixtures/real with `SleepAnalysis` records: the sleep
/// invariants, the raw-sample coverage check, and facts read off the XML by hand.
@Suite(.enabled(if: StageHarness.realAvailable, "../shared/fixtures/real is not beside this checkout"))
struct SleepRealFixtureTests {
  typealias M = SleepTesting.Measures

  static let withSleep = [
    "alxdrcirilo__apple-health-parser/tests/data/export.xml",
    "alxdrcirilo__apple-health-parser/tests/data/export.zip",
    "bwassim__Health-Data-Analysis/data/export.zip",
    "grll__apple-health-landing-zone/data/export.xml",
    "k0rventen__apple-health-grafana/tests/test-export.zip",
    "k0rventen__apple-health-grafana/tests/test-export-cn.zip",
    "k0rventen__apple-health-grafana/tests/test-export2.zip",
    "k0rventen__apple-health-grafana/tests/test-export3.zip",
    "k0rventen__apple-health-grafana/tests/test-export4.zip",
    "kkuichi__ms051uh/tests/data/export.xml",
    "paulstaab__healthieR/inst/example_data/Export/apple_health_export/Export.xml",
    "paulstaab__healthieR/inst/example_data/Export.zip",
    "rgosdin__docs/apple_health_export/export.xml",
    "rgosdin__docs/export.zip",
  ]

  static func run(_ relative: String, recorder: SleepSampleRecorder? = nil) throws -> SleepTesting.Output {
    let path = StageHarness.realRoot.appendingPathComponent(relative).path
    return try SleepTesting.run(.path(path), zone: .auto) { _ in recorder.map { [$0] } ?? [] }
  }

  @Test(arguments: withSleep) func keepsTheInvariants(fixture: String) throws {
    let recorder = SleepSampleRecorder()
    let output = try Self.run(fixture, recorder: recorder)
    #expect(!recorder.samples.isEmpty, "\(fixture) has sleep samples")
    #expect(SleepTesting.checkInvariants(output) > 0)
    recorder.checkCoverage(output)
    for day in output.days { #expect(day.measures.staged <= 86_400, "\(fixture) \(day.date)") }
  }

  @Test func theK0rventenCopiesAgree() throws {
    // The same sleep records in five zips (renamed main file, broken DTDs): the same output.
    let first = try Self.run(Self.withSleep[4])
    for copy in Self.withSleep[5...8] { #expect(try Self.run(copy).days == first.days, "\(copy)") }
  }

  @Test func k0rventenFirstNightIsInBedOnly() throws {
    // Zone: Europe/Paris (HKTimeZone on its sleep records). InBed 2021-01-01 02:56:10 → 08:00:12
    // written at +0200 (the export's offset) = 01:56:10 → 07:00:12 CET: 5 h 4 min 2 s = 18242 s,
    // and no asleep sample that night (the slice's first asleep sample is in April).
    let output = try Self.run(Self.withSleep[4])
    #expect(output.zone.rules.identifier == "Europe/Paris")
    #expect(output.day("2021-01-01")?.measures == M(inBed: 18242))
    #expect(output.sessions.first?.start == "2021-01-01T01:56:10+01:00")
  }

  @Test func rgosdinClockInBedAndAnOldStyleAsleepNight() throws {
    // America/New_York (3 HKTimeZone votes); June, so EDT = the written -0400.
    // 06-15: Clock in bed 08:13:44–09:00:43 = 46 min 59 s = 2819 s, nothing asleep.
    // 06-16: Health "Asleep" 06-15 22:21 → 06-16 08:21 = 36000 s unspecified; Clock in bed
    //   08:55:52–09:14:49 (1137 s) starts 34 min 52 s after it: same session, in bed 1137.
    // 06-17: Clock in bed 07:49:48–09:11:13 = 1 h 21 min 25 s = 4885 s.
    for fixture in Self.withSleep[12...13] {
      let output = try Self.run(fixture)
      #expect(output.zone.rules.identifier == "America/New_York")
      #expect(output.days.map(\.date) == ["2019-06-15", "2019-06-16", "2019-06-17"])
      #expect(output.day("2019-06-15")?.measures == M(inBed: 2819))
      #expect(
        output.day("2019-06-16")?.measures
          == M(
            asleep: 36000, unspecified: 36000, inBed: 1137, sleepStart: "2019-06-15T22:21:00-04:00",
            sleepEnd: "2019-06-16T08:21:00-04:00", sources: "Health"))
      #expect(output.day("2019-06-17")?.measures == M(inBed: 4885))
    }
  }

  @Test func paulstaabMiFitNightsWithOneSecondGaps() throws {
    // Europe/Berlin (HKTimeZone on the Clock ("Uhr") records).
    // Uhr in bed 2016-09-13 21:30:00 → 09-14 05:30:15 (+0100 as written) = 8 h 0 min 15 s = 28815 s;
    // 2016-09-14 21:30:00 → 09-15 05:37:28 = 8 h 7 min 28 s = 29248 s. In local CEST: 22:30 → 06:30:15.
    // Mi Fit "Asleep", CET = the written +0100. Night 1: 23 samples 2017-01-13 23:25:00 →
    // 01-14 08:48:59, each ending one second before the next starts (22 uncovered seconds); the
    // last one is written twice with different creationDates (one sample: Pipelines/README.md,
    // "Duplicates").
    // 23:25:00 → 08:48:59 = 9 h 23 min 59 s = 33839 s, minus 22 = 33817 s.
    // Night 2: 15 samples 01-14 22:33:00 → 01-15 08:09:59 (14 gaps; last one also repeated):
    // 9 h 36 min 59 s = 34619 s, minus 14 = 34605 s.
    for fixture in Self.withSleep[10...11] {
      let output = try Self.run(fixture)
      #expect(output.zone.rules.identifier == "Europe/Berlin")
      #expect(output.days.map(\.date) == ["2016-09-14", "2016-09-15", "2017-01-14", "2017-01-15"])
      #expect(output.day("2016-09-14")?.measures == M(inBed: 28815))
      #expect(output.day("2016-09-15")?.measures == M(inBed: 29248))
      #expect(
        output.day("2017-01-14")?.measures
          == M(
            asleep: 33817, unspecified: 33817, sleepStart: "2017-01-13T23:25:00+01:00",
            sleepEnd: "2017-01-14T08:48:59+01:00", sources: "Mi Fit"))
      #expect(
        output.day("2017-01-15")?.measures
          == M(
            asleep: 34605, unspecified: 34605, sleepStart: "2017-01-14T22:33:00+01:00",
            sleepEnd: "2017-01-15T08:09:59+01:00", sources: "Mi Fit"))
      #expect(output.sessions.first?.start == "2016-09-13T22:30:00+02:00")
    }
  }

  @Test func alxdrciriloTwoSessionsOnNewYearsNight() throws {
    // Europe/Amsterdam (HKTimeZone). Written at +0200 (the export's June offset) in January (CET):
    // iPhone in bed 2024-01-01 00:55:28 → 00:56:53 +0200 = 2023-12-31 23:55:28 → 23:56:53 CET:
    // 85 s, ends after 18:00 → 2024-01-01. Watch core 03:27:53 → 03:40:23 +0200 = 02:27:53 →
    // 02:40:23 CET: 750 s, 2 h 31 min after the in-bed end → a second session, also 2024-01-01.
    for fixture in Self.withSleep[0...1] {
      let output = try Self.run(fixture)
      #expect(output.zone.rules.identifier == "Europe/Amsterdam")
      #expect(output.days.count == 1 && output.days.first?.sessions == 2)
      #expect(
        output.day("2024-01-01")?.measures
          == M(
            asleep: 750, core: 750, deep: 0, rem: 0, unspecified: 0, awake: 0, inBed: 85,
            sleepStart: "2024-01-01T02:27:53+01:00",
            sleepEnd: "2024-01-01T02:40:23+01:00", sources: "Alexandre's Apple Watch"))
      #expect(output.sessions.map(\.date) == ["2024-01-01", "2024-01-01"])
      #expect(output.sessions.first?.start == "2023-12-31T23:55:28+01:00")
    }
  }

  @Test func grllAutoSleepNight() throws {
    // Europe/Zurich (one HKTimeZone vote); written at +0100 in April (CEST, +0200).
    // AutoSleep in bed 01:05:06 → 08:30:00 = 7 h 24 min 54 s = 26694 s; asleep 01:15:00 → 08:30:00
    // = 7 h 15 min = 26100 s. Local: 02:15:00 → 09:30:00 +02:00.
    let output = try Self.run(Self.withSleep[3])
    #expect(output.zone.rules.identifier == "Europe/Zurich")
    #expect(
      output.days.map(\.measures)
        == [
          M(
            asleep: 26100, unspecified: 26100, inBed: 26694, sleepStart: "2025-04-28T02:15:00+02:00",
            sleepEnd: "2025-04-28T09:30:00+02:00", sources: "AutoSleep")
        ])
  }

  @Test func kkuichiFirstNightWithAllStages() throws {
    // No HKTimeZone, no ExportDate: a fixed zone at the first record's +0100.
    // Night 2024-11-01 22:04 → 11-02 05:39:45, one Watch, stages back to back:
    //   in bed 22:04–22:11 = 420 s
    //   core  3+15+7+21+4+29+4+28+3+22 min = 136 min = 8160 s
    //   deep  12+22+11 min = 45 min = 2700 s
    //   REM   19+14+17+24 min = 74 min = 4440 s
    //   awake 6 + 8 min + 02:40:00–05:39:45 (2 h 59 min 45 s) = 360 + 480 + 10785 = 11625 s
    // asleep 8160 + 2700 + 4440 = 15300; + awake = 26925 = 22:11 → 05:39:45. ✓
    let output = try Self.run(Self.withSleep[9])
    #expect(output.zone.rules.identifier == "UTC+01:00")
    #expect(
      output.day("2024-11-02")?.measures
        == M(
          asleep: 15300, core: 8160, deep: 2700, rem: 4440, unspecified: 0, awake: 11625, inBed: 420,
          sleepStart: "2024-11-01T22:11:00+01:00", sleepEnd: "2024-11-02T02:40:00+01:00",
          sources: "subjekt_01's Apple Watch"))
  }

  @Test func bwassimNightOfConnectAndIPhone() throws {
    // Europe/Paris (106 HKTimeZone votes); December, CET = the written +0100.
    // 2020-12-07: iPhone in bed 01:08:49–07:00:01; Garmin Connect in bed 01:18:00–08:46:00 and
    // "Asleep" 01:18:01–02:17:00 (3539 s), 02:50–04:29 (5940), 04:32–04:52 (1200),
    // 05:03–05:57 (3240), 05:59–08:21 (8520), 08:31–08:42 (660), 08:43–08:44 (60):
    // unspecified 23159 s. In bed = union 01:08:49–08:46:00 = 7 h 37 min 11 s = 27431 s
    // (naive: 21072 + 26880 = 47952 s). Only Connect wins pieces (the iPhone has only in-bed).
    let output = try Self.run(Self.withSleep[2])
    #expect(output.zone.rules.identifier == "Europe/Paris")
    #expect(
      output.day("2020-12-07")?.measures
        == M(
          asleep: 23159, unspecified: 23159, inBed: 27431, sleepStart: "2020-12-07T01:18:01+01:00",
          sleepEnd: "2020-12-07T08:44:00+01:00", sources: "Connect"))
    #expect(output.day("2020-12-07")?.sessions == 1)
  }

  @Test func bwassimNightsWithoutStagesLeaveStageColumnsEmpty() throws {
    // Connect, the iPhone and Clock record no stages, only "Asleep" and in bed: 119 nights, 72
    // with Connect's asleep time and 47 with only time in bed. No stage column may say 0 on them
    // (they all did: AVERAGE(deep_s) came out 0), and the 47 in-bed nights have no asleep value.
    let recorder = SleepSampleRecorder()
    let output = try Self.run(Self.withSleep[2], recorder: recorder)
    #expect(Set(recorder.samples.map(\.value)) == ["inBed", "asleepUnspecified"])
    #expect(output.days.count == 119)
    for day in output.days {
      let m = day.measures
      #expect(m.core == nil && m.deep == nil && m.rem == nil && m.awake == nil, "\(day.date)")
      #expect(m.asleep == m.unspecified && m.asleep != 0, "\(day.date)")
      if m.asleep == nil { #expect(m.inBed != nil && m.sources == nil, "\(day.date)") }
    }
    #expect(output.days.filter { $0.measures.asleep == nil }.count == 47)
    #expect(output.days.filter { $0.measures.asleep != nil }.count == 72)
    recorder.checkCoverage(output)
  }

  @Test func bwassimNaiveSummingOvercountsAndSplitsNights() throws {
    // The mistakes the sleep rules avoid, measured on the multi-source export: summing raw
    // in-bed durations of the iPhone, Clock and Connect per start date counts shared nights two
    // or three times, and a night that starts before midnight is split across two dates.
    let recorder = SleepSampleRecorder()
    let output = try Self.run(Self.withSleep[2], recorder: recorder)
    let rules = output.zone.rules
    var naiveInBed: [String: Int64] = [:]
    var naiveAsleep: [String: Int64] = [:]
    for sample in recorder.samples {
      let date = rules.localDate(at: Instant(seconds: sample.start)).description
      if sample.value == "inBed" { naiveInBed[date, default: 0] += sample.end - sample.start }
      if sample.value == "asleepUnspecified" { naiveAsleep[date, default: 0] += sample.end - sample.start }
    }
    let merged = Dictionary(uniqueKeysWithValues: output.days.map { ($0.date, $0.measures) })
    // In total, merged in-bed time is well below the naive sum (shared nights counted once).
    let mergedInBed = output.days.reduce(Int64(0)) { $0 + ($1.measures.inBed ?? 0) }
    #expect(mergedInBed < naiveInBed.values.reduce(0, +))
    // Merged asleep time never exceeds the naive sum over the whole export.
    #expect(naiveAsleep.values.reduce(0, +) >= output.days.reduce(0) { $0 + ($1.measures.asleep ?? 0) })
    // 2020-12-06: the night 12-05 22:56:01 → 12-06 09:23 is split by start date: its first three
    // samples start on 12-05 (23:26:00 − 22:56:01 = 1799 s, 23:56 − 23:44 = 720 s,
    // 23:57 → 00:20 = 1380 s) and land there naively. Connect's asleep samples do not overlap,
    // so naive 12-05 exceeds the merged 12-05 (its own morning) by exactly 1799 + 720 + 1380 = 3899 s.
    #expect(naiveAsleep["2020-12-05", default: 0] - (merged["2020-12-05"]?.asleep ?? 0) == 3899)
  }
}
