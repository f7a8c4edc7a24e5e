import Foundation
import HealthETL
import HealthModel
import Testing

/// `sleep_daily.csv` / `sleep_sessions.csv` end to end (Pipelines/docs/sleep.md, "Sleep jobs"), every
/// number worked by hand.
/// Records are written in UTC and the run uses `--tz UTC` unless a test is about zones.
@Suite struct SleepNightAggregatorTests {
  typealias M = SleepTesting.Measures
  static let watch = SleepTesting.watch

  /// The Watch's night of 2024-03-04 → 05 (UTC), stages back to back:
  ///   core  23:10–00:40  5400 s    deep 00:40–01:30  3000 s    core 01:30–03:00  5400 s
  ///   awake 03:00–03:05   300 s    REM  03:05–04:05  3600 s    core 04:05–07:05 10800 s
  /// core = 5400 + 5400 + 10800 = 21600; asleep = 21600 + 3000 + 3600 = 28200; awake 300;
  /// 28200 + 300 = 28500 = 7 h 55 min = the whole span 23:10–07:05.
  static let watchNight = [
    SleepTesting.sleep("AsleepCore", "2024-03-04 23:10:00 +0000", "2024-03-05 00:40:00 +0000"),
    SleepTesting.sleep("AsleepDeep", "2024-03-05 00:40:00 +0000", "2024-03-05 01:30:00 +0000"),
    SleepTesting.sleep("AsleepCore", "2024-03-05 01:30:00 +0000", "2024-03-05 03:00:00 +0000"),
    SleepTesting.sleep("Awake", "2024-03-05 03:00:00 +0000", "2024-03-05 03:05:00 +0000"),
    SleepTesting.sleep("AsleepREM", "2024-03-05 03:05:00 +0000", "2024-03-05 04:05:00 +0000"),
    SleepTesting.sleep("AsleepCore", "2024-03-05 04:05:00 +0000", "2024-03-05 07:05:00 +0000"),
  ]
  static let watchNightMeasures = M(
    asleep: 28200, core: 21600, deep: 3000, rem: 3600, unspecified: 0, awake: 300,
    sleepStart: "2024-03-04T23:10:00+00:00", sleepEnd: "2024-03-05T07:05:00+00:00", sources: watch)

  @Test func aWatchNightAcrossMidnightBelongsToTheMorning() throws {
    // Written out of time order on purpose: stages arrive in document order, not sorted.
    let output = try SleepTesting.run(Self.watchNight.reversed())
    // One session 23:10–07:05, ending before 18:00 on 03-05 → dated 03-05 (not split at midnight).
    #expect(output.days.count == 1)
    #expect(output.days[0].date == "2024-03-05" && output.days[0].sessions == 1)
    #expect(output.days[0].measures == Self.watchNightMeasures)
    #expect(output.sessions.count == 1)
    #expect(output.sessions[0].start == "2024-03-04T23:10:00+00:00")
    #expect(output.sessions[0].end == "2024-03-05T07:05:00+00:00")
    #expect(output.sessions[0].date == "2024-03-05")
    #expect(output.sessions[0].measures == Self.watchNightMeasures)
    SleepTesting.checkInvariants(output)
  }

  @Test func theSameNightFromAThirdPartyAppAndIPhoneInBedCountsOnce() throws {
    // Added to the Watch night:
    //   AutoSleep (no device → "other", below the Watch): asleepUnspecified 23:00–07:30, inBed 22:50–07:40
    //   iPhone (model iPhone): inBed 22:45–07:20
    // Pieces: 22:45–23:00 only in bed → none; 23:00–23:10 AutoSleep unspecified 600 s;
    // 23:10–07:05 the Watch everywhere (its awake 03:00–03:05 beats AutoSleep's asleep);
    // 07:05–07:30 AutoSleep unspecified 1500 s; 07:30–07:40 in bed only.
    // unspecified = 600 + 1500 = 2100; asleep = 21600 + 3000 + 3600 + 2100 = 30300; awake 300.
    // in bed = union(22:45–07:20, 22:50–07:40) = 22:45–07:40 = 8 h 55 min = 32100 s.
    // Sources that won a piece, by priority: the Watch, then AutoSleep; the iPhone won none.
    // (Naive summing would give 28200 + 30600 = 58800 s asleep and 31500 + 31800 = 63300 s in bed.)
    let extra = [
      SleepTesting.sleep(
        "AsleepUnspecified", "2024-03-04 23:00:00 +0000", "2024-03-05 07:30:00 +0000", source: "AutoSleep",
        device: nil),
      SleepTesting.sleep(
        "InBed", "2024-03-04 22:50:00 +0000", "2024-03-05 07:40:00 +0000", source: "AutoSleep", device: nil),
      SleepTesting.sleep(
        "InBed", "2024-03-04 22:45:00 +0000", "2024-03-05 07:20:00 +0000", source: SleepTesting.phone,
        device: SleepTesting.phoneDevice, metadata: [("HKTimeZone", "UTC")]),
    ]
    let output = try SleepTesting.run(extra + Self.watchNight)
    let expected = M(
      asleep: 30300, core: 21600, deep: 3000, rem: 3600, unspecified: 2100, awake: 300, inBed: 32100,
      sleepStart: "2024-03-04T23:00:00+00:00", sleepEnd: "2024-03-05T07:30:00+00:00",
      sources: "\(Self.watch);AutoSleep")
    #expect(output.days.count == 1)
    #expect(output.days.first?.date == "2024-03-05")
    #expect(output.days.first?.measures == expected)
    // The session runs from the first in-bed start to the last in-bed end.
    #expect(output.sessions.first?.start == "2024-03-04T22:45:00+00:00")
    #expect(output.sessions.first?.end == "2024-03-05T07:40:00+00:00")
    SleepTesting.checkInvariants(output)
  }

  @Test func byteIdenticalDuplicatesCountOnce() throws {
    // Every Watch record twice, byte for byte, plus a third copy of the first stage that differs
    // only in creationDate (still the same sample by the identity key of Pipelines/README.md,
    // "Duplicates"). Same numbers as one copy.
    let copy = SleepTesting.sleep(
      "AsleepCore", "2024-03-04 23:10:00 +0000", "2024-03-05 00:40:00 +0000", created: "2024-03-05 08:00:00 +0000")
    let output = try SleepTesting.run(Self.watchNight + Self.watchNight + [copy])
    #expect(output.days.count == 1)
    #expect(output.days.first?.measures == Self.watchNightMeasures)
  }

  @Test func anAfternoonNapBelongsToItsDayAnEveningNapToTheNext() throws {
    // The Watch night (ends 07:05 on 03-05) plus
    //   an afternoon nap: core 14:00–14:40 on 03-05 = 2400 s, ends before 18:00 → 03-05;
    //   an evening nap: core 17:30–18:20 on 03-05 = 3000 s, ends after 18:00 → 03-06.
    // Gaps: 07:05 → 14:00 and 14:40 → 17:30 are both over 60 min: three sessions.
    // 03-05: core 21600 + 2400 = 24000, asleep 28200 + 2400 = 30600, 2 sessions, asleep from
    // 23:10 (night) to 14:40 (nap). 03-06: core 3000, 17:30–18:20 on 03-05.
    let naps = [
      SleepTesting.sleep("AsleepCore", "2024-03-05 14:00:00 +0000", "2024-03-05 14:40:00 +0000"),
      SleepTesting.sleep("AsleepCore", "2024-03-05 17:30:00 +0000", "2024-03-05 18:20:00 +0000"),
    ]
    let output = try SleepTesting.run(naps + Self.watchNight)
    #expect(output.days.map(\.date) == ["2024-03-05", "2024-03-06"])
    #expect(output.days.map(\.sessions) == [2, 1])
    #expect(
      output.day("2024-03-05")?.measures
        == M(
          asleep: 30600, core: 24000, deep: 3000, rem: 3600, unspecified: 0, awake: 300,
          sleepStart: "2024-03-04T23:10:00+00:00", sleepEnd: "2024-03-05T14:40:00+00:00", sources: Self.watch))
    #expect(
      output.day("2024-03-06")?.measures
        == M(
          asleep: 3000, core: 3000, deep: 0, rem: 0, unspecified: 0, awake: 0,
          sleepStart: "2024-03-05T17:30:00+00:00", sleepEnd: "2024-03-05T18:20:00+00:00", sources: Self.watch))
    // Sessions in start order with their dates.
    #expect(output.sessions.map(\.date) == ["2024-03-05", "2024-03-05", "2024-03-06"])
    #expect(output.sessions.map(\.measures.asleep) == [28200, 2400, 3000])
    SleepTesting.checkInvariants(output)
  }

  @Test func oldStyleAsleepSamplesAreUnspecifiedSleep() throws {
    // Before iOS 16: `HKCategoryValueSleepAnalysisAsleep` (raw 1). Mi Fit, 23:30–03:00 (12600 s)
    // and 03:00–06:45 (13500 s): unspecified = asleep = 26100, no stages, dated 03-05.
    let output = try SleepTesting.run([
      SleepTesting.sleep(
        "Asleep", "2024-03-04 23:30:00 +0000", "2024-03-05 03:00:00 +0000", source: "Mi Fit", device: nil),
      SleepTesting.sleep(
        "Asleep", "2024-03-05 03:00:00 +0000", "2024-03-05 06:45:00 +0000", source: "Mi Fit", device: nil),
    ])
    #expect(output.days.count == 1)
    #expect(
      output.day("2024-03-05")?.measures
        == M(
          asleep: 26100, unspecified: 26100, sleepStart: "2024-03-04T23:30:00+00:00",
          sleepEnd: "2024-03-05T06:45:00+00:00", sources: "Mi Fit"))
  }

  @Test func inBedOnlyGivesInBedTimeAndEmptyMeasures() throws {
    // iPhone in bed 22:00–06:30 = 8 h 30 min = 30600 s, nothing else: in_bed_s set, every other
    // measure empty — nothing says asleep or awake, so asleep is not 0 but not measured.
    let output = try SleepTesting.run([
      SleepTesting.sleep(
        "InBed", "2024-03-04 22:00:00 +0000", "2024-03-05 06:30:00 +0000", source: SleepTesting.phone,
        device: SleepTesting.phoneDevice)
    ])
    #expect(output.days.count == 1)
    #expect(output.days.first?.date == "2024-03-05" && output.days.first?.sessions == 1)
    #expect(output.days.first?.measures == M(inBed: 30600))
    SleepTesting.checkInvariants(output)
  }

  @Test func aNightWithoutStagesHasEmptyStageColumns() throws {
    // A Garmin-style night: Connect "Asleep" 23:30–06:30 (25200 s) inside iPhone in bed
    // 23:00–07:00 (28800 s). Nothing records core, deep, REM or awake: those cells are empty, not
    // 0, so an average of deep sleep over the nights skips this one.
    let output = try SleepTesting.run([
      SleepTesting.sleep(
        "AsleepUnspecified", "2024-03-04 23:30:00 +0000", "2024-03-05 06:30:00 +0000", source: "Connect",
        device: nil),
      SleepTesting.sleep(
        "InBed", "2024-03-04 23:00:00 +0000", "2024-03-05 07:00:00 +0000", source: SleepTesting.phone,
        device: SleepTesting.phoneDevice),
    ])
    let expected = M(
      asleep: 25200, unspecified: 25200, inBed: 28800, sleepStart: "2024-03-04T23:30:00+00:00",
      sleepEnd: "2024-03-05T06:30:00+00:00", sources: "Connect")
    #expect(output.days.map(\.measures) == [expected])
    #expect(output.sessions.map(\.measures) == [expected])
    SleepTesting.checkInvariants(output)
  }

  @Test func anAwakeOnlyNightSleepsARealZero() throws {
    // Sleep++ says awake 01:00–02:30 (5400 s) and nothing else: a tracker measured the night and
    // found no sleep, so asleep and unspecified are 0, awake 5400; no stage tracker was involved,
    // so core, deep and REM stay empty.
    let output = try SleepTesting.run([
      SleepTesting.sleep(
        "Awake", "2024-03-05 01:00:00 +0000", "2024-03-05 02:30:00 +0000", source: "Sleep++", device: nil)
    ])
    #expect(output.days.map(\.measures) == [M(asleep: 0, unspecified: 0, awake: 5400, sources: "Sleep++")])
    SleepTesting.checkInvariants(output)
  }

  @Test func aDateSumsAStagedNightAndAnUnstagedNap() throws {
    // The Watch night (staged) and a Connect nap "Asleep" 13:00–13:30 (1800 s) on 03-05: the date
    // has stages from the night, so its stage columns are the night's, unspecified 1800; the
    // nap's own session row leaves them empty.
    let nap = SleepTesting.sleep(
      "AsleepUnspecified", "2024-03-05 13:00:00 +0000", "2024-03-05 13:30:00 +0000", source: "Connect", device: nil)
    let output = try SleepTesting.run(Self.watchNight + [nap])
    #expect(
      output.day("2024-03-05")?.measures
        == M(
          asleep: 30000, core: 21600, deep: 3000, rem: 3600, unspecified: 1800, awake: 300,
          sleepStart: "2024-03-04T23:10:00+00:00", sleepEnd: "2024-03-05T13:30:00+00:00",
          sources: "\(Self.watch);Connect"))
    #expect(
      output.sessions.last?.measures
        == M(
          asleep: 1800, unspecified: 1800, sleepStart: "2024-03-05T13:00:00+00:00",
          sleepEnd: "2024-03-05T13:30:00+00:00", sources: "Connect"))
    SleepTesting.checkInvariants(output)
  }

  @Test func aNightAcrossSpringForwardIsSevenRealHours() throws {
    // New York, 2024-03-10: at 02:00 EST clocks jump to 03:00 EDT. Core from 23:00 EST on 03-09
    // (04:00Z) to 07:00 EDT on 03-10 (11:00Z): 8 h on the wall clock, 7 h = 25200 s of time.
    // The export writes every date at one offset (-0500, say exported in winter) as phones do.
    let output = try SleepTesting.run(
      [
        SleepTesting.sleep("AsleepCore", "2024-03-09 23:00:00 -0500", "2024-03-10 06:00:00 -0500")
      ], zone: "America/New_York")
    #expect(output.days.count == 1)
    // Output instants carry the offset in force at each: -05:00 before, -04:00 after the change.
    #expect(
      output.day("2024-03-10")?.measures
        == M(
          asleep: 25200, core: 25200, deep: 0, rem: 0, unspecified: 0, awake: 0,
          sleepStart: "2024-03-09T23:00:00-05:00", sleepEnd: "2024-03-10T07:00:00-04:00", sources: Self.watch))
  }

  @Test func aNightAcrossFallBackIsNineRealHours() throws {
    // New York, 2024-11-03: at 02:00 EDT clocks go back to 01:00 EST. Core from 23:00 EDT on
    // 11-02 (03:00Z) to 07:00 EST on 11-03 (12:00Z): 9 h = 32400 s.
    let output = try SleepTesting.run(
      [
        SleepTesting.sleep("AsleepCore", "2024-11-02 23:00:00 -0400", "2024-11-03 08:00:00 -0400")
      ], zone: "America/New_York")
    #expect(
      output.day("2024-11-03")?.measures
        == M(
          asleep: 32400, core: 32400, deep: 0, rem: 0, unspecified: 0, awake: 0,
          sleepStart: "2024-11-02T23:00:00-04:00", sleepEnd: "2024-11-03T07:00:00-05:00", sources: Self.watch))
  }

  @Test func aTripAbroadIsDatedInTheRunZoneNotTheSamplesOwn() throws {
    // Home is Berlin; a nap in Tokyo 19:00–20:00 JST on 03-05 carries HKTimeZone Asia/Tokyo and is
    // written at the export's +0100: 11:00–12:00 +0100. In Tokyo it would end after 18:00 and
    // belong to 03-06; sleep is dated in the run's zone (Pipelines/docs/samples.md, "Time zone"), where
    // it ends at 12:00 → 03-05. Core 3600 s; instants in Berlin time.
    let output = try SleepTesting.run(
      [
        SleepTesting.sleep(
          "AsleepCore", "2024-03-05 11:00:00 +0100", "2024-03-05 12:00:00 +0100",
          metadata: [("HKTimeZone", "Asia/Tokyo")])
      ], zone: "Europe/Berlin")
    #expect(output.days.map(\.date) == ["2024-03-05"])
    #expect(
      output.days.first?.measures
        == M(
          asleep: 3600, core: 3600, deep: 0, rem: 0, unspecified: 0, awake: 0,
          sleepStart: "2024-03-05T11:00:00+01:00", sleepEnd: "2024-03-05T12:00:00+01:00", sources: Self.watch))
  }

  /// The Watch says awake 02:00–02:30 inside AutoSleep's asleep 01:00–03:00.
  static let awakeVersusAsleep = [
    SleepTesting.sleep(
      "AsleepUnspecified", "2024-03-05 01:00:00 +0000", "2024-03-05 03:00:00 +0000", source: "AutoSleep",
      device: nil),
    SleepTesting.sleep("Awake", "2024-03-05 02:00:00 +0000", "2024-03-05 02:30:00 +0000"),
  ]

  @Test func aHigherPrioritySourceSayingAwakeWinsOverALowerSayingAsleep() throws {
    // 01:00–02:00 AutoSleep asleep 3600 s; 02:00–02:30 the Watch's awake 1800 s;
    // 02:30–03:00 AutoSleep asleep 1800 s. Asleep 5400, awake 1800; both won pieces.
    let output = try SleepTesting.run(Self.awakeVersusAsleep)
    #expect(
      output.day("2024-03-05")?.measures
        == M(
          asleep: 5400, unspecified: 5400, awake: 1800, sleepStart: "2024-03-05T01:00:00+00:00",
          sleepEnd: "2024-03-05T03:00:00+00:00", sources: "\(Self.watch);AutoSleep"))
  }

  @Test func aSourcePriorityOverrideFlipsTheWinner() throws {
    // `sourcePriority: ["autosleep"]` puts AutoSleep first: it covers all of 01:00–03:00, so it
    // wins every piece: asleep 7200, awake empty (no awake stretch won, and AutoSleep records no
    // stages); the Watch wins nothing and is not listed.
    var settings = RunSettings()
    settings.sourcePriority = SourcePriority(overrides: ["autosleep"])
    let output = try SleepTesting.run(Self.awakeVersusAsleep, settings: settings)
    #expect(
      output.day("2024-03-05")?.measures
        == M(
          asleep: 7200, unspecified: 7200, sleepStart: "2024-03-05T01:00:00+00:00",
          sleepEnd: "2024-03-05T03:00:00+00:00", sources: "AutoSleep"))
  }

  @Test func aManualEntryOutranksTheWatch() throws {
    // "Health" with HKWasUserEntered=1 says asleep 00:00–08:00 (28800 s); the Watch's core
    // 01:00–02:00 loses to it. HKWasUserEntered=0 on another source does not count as manual:
    // "Sleep++" (other) with value 0 loses to the manual entry too, so nothing else wins.
    let output = try SleepTesting.run([
      SleepTesting.sleep(
        "AsleepUnspecified", "2024-03-05 00:00:00 +0000", "2024-03-05 08:00:00 +0000", source: "Health",
        device: nil, metadata: [("HKWasUserEntered", "1")]),
      SleepTesting.sleep("AsleepCore", "2024-03-05 01:00:00 +0000", "2024-03-05 02:00:00 +0000"),
      SleepTesting.sleep(
        "Awake", "2024-03-05 03:00:00 +0000", "2024-03-05 04:00:00 +0000", source: "Sleep++", device: nil,
        metadata: [("HKWasUserEntered", "0")]),
    ])
    #expect(
      output.day("2024-03-05")?.measures
        == M(
          asleep: 28800, unspecified: 28800, sleepStart: "2024-03-05T00:00:00+00:00",
          sleepEnd: "2024-03-05T08:00:00+00:00", sources: "Health"))
  }

  @Test func aGapOfExactlySixtyMinutesKeepsOneSession() throws {
    // Core 01:00–02:00, then 03:00–04:00: exactly 60 min apart → one session 01:00–04:00,
    // core 7200. Then 05:00:01–06:00:01: 60 min 1 s after 04:00 → a second session, same date:
    // core 7200 + 3600 = 10800, 2 sessions.
    let output = try SleepTesting.run([
      SleepTesting.sleep("AsleepCore", "2024-03-05 01:00:00 +0000", "2024-03-05 02:00:00 +0000"),
      SleepTesting.sleep("AsleepCore", "2024-03-05 03:00:00 +0000", "2024-03-05 04:00:00 +0000"),
      SleepTesting.sleep("AsleepCore", "2024-03-05 05:00:01 +0000", "2024-03-05 06:00:01 +0000"),
    ])
    #expect(output.sessions.map(\.start) == ["2024-03-05T01:00:00+00:00", "2024-03-05T05:00:01+00:00"])
    #expect(output.sessions.map(\.end) == ["2024-03-05T04:00:00+00:00", "2024-03-05T06:00:01+00:00"])
    #expect(output.sessions.map(\.measures.core) == [7200, 3600])
    #expect(output.days.count == 1 && output.days[0].sessions == 2 && output.days[0].measures.core == 10800)
    SleepTesting.checkInvariants(output)
  }

  @Test func aSessionEndingExactlyAtSixBelongsToTheNextDate() throws {
    // 15:00–17:59:59 on 03-05 ends one second before 18:00 → 03-05 (2 h 59 min 59 s = 10799 s).
    // 16:00–18:00:00 on 03-06 ends exactly at 18:00 → 03-07 (7200 s).
    let output = try SleepTesting.run([
      SleepTesting.sleep("AsleepCore", "2024-03-05 15:00:00 +0000", "2024-03-05 17:59:59 +0000"),
      SleepTesting.sleep("AsleepCore", "2024-03-06 16:00:00 +0000", "2024-03-06 18:00:00 +0000"),
    ])
    #expect(output.days.map(\.date) == ["2024-03-05", "2024-03-07"])
    #expect(output.days.map(\.measures.core) == [10799, 7200])
  }

  @Test func zeroLengthSamplesJoinSessionsButNeverWin() throws {
    // Core 01:00–02:00 and 03:40–04:00 are 100 min apart; a zero-length Watch awake sample at
    // 02:50 sits 50 min from each, so there is one session 01:00–04:00 (core 3600 + 1200 = 4800)
    // and the awake sample wins nothing (awake 0: the Watch records stages, so awake is measured).
    // A zero-length core sample alone at 12:00 is a session of its own with nothing in it: the
    // date still gets it counted (2 sessions), but no time, and the session's measures are empty.
    let output = try SleepTesting.run([
      SleepTesting.sleep("AsleepCore", "2024-03-05 01:00:00 +0000", "2024-03-05 02:00:00 +0000"),
      SleepTesting.sleep("Awake", "2024-03-05 02:50:00 +0000", "2024-03-05 02:50:00 +0000"),
      SleepTesting.sleep("AsleepCore", "2024-03-05 03:40:00 +0000", "2024-03-05 04:00:00 +0000"),
      SleepTesting.sleep("AsleepCore", "2024-03-05 12:00:00 +0000", "2024-03-05 12:00:00 +0000"),
    ])
    #expect(output.sessions.count == 2)
    #expect(output.sessions.first?.start == "2024-03-05T01:00:00+00:00")
    #expect(output.sessions.first?.end == "2024-03-05T04:00:00+00:00")
    #expect(output.sessions.last?.measures == M())
    #expect(output.days.count == 1 && output.days[0].sessions == 2)
    #expect(
      output.days[0].measures
        == M(
          asleep: 4800, core: 4800, deep: 0, rem: 0, unspecified: 0, awake: 0,
          sleepStart: "2024-03-05T01:00:00+00:00", sleepEnd: "2024-03-05T04:00:00+00:00", sources: Self.watch))
    SleepTesting.checkInvariants(output)
  }

  @Test func otherRecordsAndUnknownSleepValuesAreIgnored() throws {
    // A step count and a SleepAnalysis record with a value that is no sleep stage do not make
    // sessions; the one real sample (core 01:00–02:00, 3600 s) does.
    let output = try SleepTesting.run([
      Staging.record("HKQuantityTypeIdentifierStepCount", start: "2024-03-05 10:00:00 +0000"),
      SleepTesting.sleep("Snoring", "2024-03-05 12:00:00 +0000", "2024-03-05 13:00:00 +0000"),
      SleepTesting.sleep("AsleepCore", "2024-03-05 01:00:00 +0000", "2024-03-05 02:00:00 +0000"),
    ])
    #expect(output.sessions.count == 1)
    #expect(output.days.map(\.measures.core) == [3600])
  }

  @Test func noSleepDataGivesHeadersOnly() throws {
    let output = try SleepTesting.run([Staging.record("HKQuantityTypeIdentifierStepCount")])
    #expect(output.days.isEmpty && output.sessions.isEmpty)
  }

  @Test func jsonVariantsUseNullForMissingValues() throws {
    // The in-bed-only night (in bed 30600 s) and an asleep-only nap on 03-06 (core 14:00–14:30,
    // 1800 s, no in-bed sample → in_bed_s null).
    let output = try SleepTesting.run(
      [
        SleepTesting.sleep(
          "InBed", "2024-03-04 22:00:00 +0000", "2024-03-05 06:30:00 +0000", source: SleepTesting.phone,
          device: SleepTesting.phoneDevice),
        SleepTesting.sleep("AsleepCore", "2024-03-06 14:00:00 +0000", "2024-03-06 14:30:00 +0000"),
      ], json: true)
    let daily = try #require(output.dailyJSON)
    #expect(daily.count == 2)
    #expect(daily[0]["date"] as? String == "2024-03-05")
    #expect(daily[0]["in_bed_s"] as? Int == 30600)
    #expect(daily[0]["asleep_s"] is NSNull && daily[0]["core_s"] is NSNull && daily[0]["awake_s"] is NSNull)
    #expect(daily[0]["sleep_start"] is NSNull && daily[0]["sources"] is NSNull)
    #expect(daily[1]["in_bed_s"] is NSNull)
    #expect(daily[1]["core_s"] as? Int == 1800 && daily[1]["sessions"] as? Int == 1)
    // A staged nap: deep and REM are real zeros.
    #expect(daily[1]["deep_s"] as? Int == 0 && daily[1]["rem_s"] as? Int == 0)
    #expect(daily[1]["sleep_start"] as? String == "2024-03-06T14:00:00+00:00")
    #expect(daily[1]["sources"] as? String == Self.watch)
    let sessions = try #require(output.sessionsJSON)
    #expect(sessions.count == 2)
    #expect(sessions[0]["session_start"] as? String == "2024-03-04T22:00:00+00:00")
    #expect(sessions[1]["session_end"] as? String == "2024-03-06T14:30:00+00:00")
    #expect(sessions[1]["date"] as? String == "2024-03-06")
    // Both JSON files have exactly the CSV columns as keys.
    #expect(Set(daily[0].keys) == Set(SleepTables.daily.columnNames))
    #expect(Set(sessions[0].keys) == Set(SleepTables.sessions.columnNames))
  }

  @Test func pipelineDestinationsChooseFilesAndFormats() throws {
    // A job writing only the sessions table, as NDJSON, under another name: one line per session.
    // The nap core 14:00–14:30 = 1800 s, seconds as JSON numbers, no in-bed sample → null.
    let result = try StageHarness.run(
      StageHarness.export(
        SleepTesting.sleep("AsleepCore", "2024-03-06 14:00:00 +0000", "2024-03-06 14:30:00 +0000")),
      zone: .named("UTC")
    ) { transaction in
      [
        SleepMart(
          destinations: [.init(table: .sessions, file: "nights/sessions.ndjson", format: .ndjson)])
      ]
    }
    defer { result.remove() }
    #expect(result.outputs == [OutputSummary(path: "nights/sessions.ndjson", rows: 1)])
    let lines = try result.text("nights/sessions.ndjson").split(separator: "\n")
    #expect(lines.count == 1)
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
    #expect(object["core_s"] as? Int == 1800 && object["in_bed_s"] is NSNull)
    #expect(object["session_start"] as? String == "2024-03-06T14:00:00+00:00")
    #expect(object["sources"] as? String == Self.watch)
  }
}
