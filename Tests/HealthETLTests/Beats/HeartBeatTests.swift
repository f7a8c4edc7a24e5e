import Foundation
import HealthModel
import Testing

@testable import HealthETL

/// Beat-to-beat heart rate (Pipelines/docs/beats.md, "Beat-to-beat heart rate"): reading the clock
/// times, placing them on the timeline, the RR intervals and their SDNN and RMSSD, worked by hand.
struct HeartBeatTests {
  static func clock(_ text: String) -> Int32? {
    Array(text.utf8).withUnsafeBytes { BeatClockTime.millisecondsOfDay($0) }
  }

  @Test func clockTimesInTheFormsLocalesWrite() {
    // 19 h 47 min 41.86 s = 71,261.86 s.
    #expect(Self.clock("7:47:41.86 PM") == 71_261_860)
    #expect(Self.clock("7:47:41.86\u{202F}PM") == 71_261_860)
    #expect(Self.clock("7:47:41.86\u{00A0}pm") == 71_261_860)
    #expect(Self.clock("19:47:41.86") == 71_261_860)
    #expect(Self.clock("19:47:41,86") == 71_261_860)
    #expect(Self.clock("12:00:00.00 AM") == 0)
    #expect(Self.clock("12:30:00 PM") == 45_000_000)
    #expect(Self.clock("00:20:37,80") == 1_237_800)
    #expect(Self.clock("23:59:59.06") == 86_399_060)
    #expect(Self.clock("1:02:03.4567") == 3_723_456)  // cut at the millisecond
    #expect(Self.clock(" 1:02:03.5 ") == 3_723_500)
    for bad in [
      "24:00:00", "13:00:00 PM", "0:00:00 AM", "7:47", "7:47:41.", "7:60:00", "7:47:60", "abc", "",
      "7:47:41.86 PM x", "7:47:41.86 XM", "123:00:00", "7:4:41", "-1:00:00",
    ] {
      #expect(Self.clock(bad) == nil, "\(bad)")
    }
  }

  /// Six intervals: 1000 (first beat: 60 000 / 60), 1000, 800, 1000 (gaps that agree with the
  /// beats' bpm), 1000 (after a 2000 ms gap, where a beat was left out: 60 000 / 60), 800.
  /// Mean 5600 / 6; deviations +200/3 (four times) and −400/3 (twice): squares 160 000/9 ·… sum
  /// 480 000 / 9 = 160 000 / 3; / (6 − 1) = 32 000 / 3; SDNN = √(32 000 / 3) = 103.2795558988644.
  /// Back-to-back pairs: 1000→1000 (0), 1000→800 (−200), 800→1000 (+200), 1000→800 (−200; the
  /// 1000 before it is not back-to-back with the one before the gap): RMSSD = √(120 000 / 4) =
  /// √30 000 = 173.20508075688772.
  @Test func intervalsSDNNAndRMSSDByHand() {
    var intervals = BeatIntervals()
    let beats: [(Int64?, Double?)] = [
      (0, 60), (1000, 60), (1800, 75), (2800, 60), (4800, 60), (5600, 75),
      (5600, 75),  // the same entry again: left out
      (6400, nil),  // a bpm that cannot be read: no interval
      (nil, nil),
    ]
    let got = beats.map { intervals.add(BeatIntervals.Beat(milliseconds: $0.0, bpm: $0.1)) }
    #expect(got.map { $0?.milliseconds } == [1000, 1000, 800, 1000, 1000, 800, nil, nil, nil])
    #expect(got.map { $0?.from } == [.bpm, .times, .times, .times, .bpm, .times, nil, nil, nil])
    #expect(intervals.count == 6)
    #expect(intervals.fromTimes == 4)
    #expect(intervals.repeated == 1)
    #expect(intervals.successivePairs == 4)
    #expect(abs(intervals.sdnn! - (32_000.0 / 3).squareRoot()) < 1e-9)
    #expect(abs(intervals.rmssd! - 30_000.0.squareRoot()) < 1e-9)
  }

  /// At 60 bpm a gap agrees with the bpm within 10 ms (the times' resolution) + 30 000 / 60² =
  /// 8.33 ms (half a beat per minute): 1018 ms is the interval, 1019 ms is not.
  @Test func theToleranceIsTheTimesResolutionAndHalfABeatPerMinute() {
    var near = BeatIntervals()
    _ = near.add(.init(milliseconds: 0, bpm: 60))
    #expect(near.add(.init(milliseconds: 1018, bpm: 60)) == .init(milliseconds: 1018, from: .times))
    var far = BeatIntervals()
    _ = far.add(.init(milliseconds: 0, bpm: 60))
    #expect(far.add(.init(milliseconds: 1019, bpm: 60)) == .init(milliseconds: 1000, from: .bpm))
    // Below two intervals there is no SDNN, without a back-to-back pair no RMSSD.
    var one = BeatIntervals()
    _ = one.add(.init(milliseconds: 0, bpm: 60))
    #expect(one.sdnn == nil)
    #expect(one.rmssd == nil)
  }

  /// Clock times land on the day that puts them nearest the record's start: after midnight on the
  /// next day, and across the spring-forward gap on the zone's clock.
  @Test func clockTimesArePlacedNearTheRecordsStart() throws {
    let paris = try ZoneRules.load("Europe/Paris")
    // 2021-01-01 01:20:29 +0200 is 2020-12-31T23:20:29Z, 00:20:29 in Paris (+01:00):
    // "00:20:37,80" is 23:20:37.800Z.
    let start = Instant(seconds: 1_609_456_829)
    #expect(HeartBeatMart.place(clock: 1_237_800, near: start, zone: paris) == 1_609_456_837_800)
    // A reading started at 23:59:58 Paris time lists 00:00:00.31 of the next day: 2.31 s later.
    let lateStart = Instant(seconds: 1_609_541_998)  // 2021-01-01T22:59:58Z
    #expect(HeartBeatMart.place(clock: 310, near: lateStart, zone: paris) == 1_609_542_000_310)
    // …and 23:59:59.06 the same day.
    #expect(HeartBeatMart.place(clock: 86_399_060, near: lateStart, zone: paris) == 1_609_541_999_060)
    // 2021-03-28 01:59:30 +01:00 (00:59:30Z); at 02:00 the clock went to 03:00, so 03:00:01
    // is 01:00:01Z, 31 s later.
    let spring = Instant(seconds: 1_616_893_170)
    #expect(HeartBeatMart.place(clock: 10_801_000, near: spring, zone: paris) == 1_616_893_201_000)
    #expect(HeartBeatMart.format(1_616_893_201_000, zone: paris) == "2021-03-28T03:00:01.000+02:00")
  }

  static let record = Staging.record(
    "HKQuantityTypeIdentifierHeartRateVariabilitySDNN", source: "Apple Watch", value: "103.28", unit: "ms",
    start: "2024-01-15 23:59:58 +0100", end: "2024-01-16 00:01:00 +0100")
}

/// A `beats` job end to end on a reading written by hand, in Europe/Berlin (+01:00 in January).
struct HeartBeatMartTests {
  /// A reading that starts at 23:59:58 and lists, in 12-hour form, the beats of
  /// `intervalsSDNNAndRMSSDByHand` from 23:59:59.00 on — past midnight — then the repeat, an entry
  /// whose bpm is not a number (time `00:00:06,40` in 24-hour form with a decimal comma), and one
  /// whose time is `25:00:00`.
  static let body = """
    <Record type="HKQuantityTypeIdentifierHeartRateVariabilitySDNN" sourceName="Apple Watch" unit="ms" \
    startDate="2024-01-15 23:59:58 +0100" endDate="2024-01-16 00:01:00 +0100" value="103.28">
     <HeartRateVariabilityMetadataList>
      <InstantaneousBeatsPerMinute bpm="60" time="11:59:59.00 PM"/>
      <InstantaneousBeatsPerMinute bpm="60" time="12:00:00.00 AM"/>
      <InstantaneousBeatsPerMinute bpm="75" time="12:00:00.80 AM"/>
      <InstantaneousBeatsPerMinute bpm="60" time="12:00:01.80 AM"/>
      <InstantaneousBeatsPerMinute bpm="60" time="12:00:03.80 AM"/>
      <InstantaneousBeatsPerMinute bpm="75" time="12:00:04.60 AM"/>
      <InstantaneousBeatsPerMinute bpm="75" time="12:00:04.60 AM"/>
      <InstantaneousBeatsPerMinute bpm="many" time="00:00:06,40"/>
      <InstantaneousBeatsPerMinute bpm="60" time="25:00:00"/>
     </HeartRateVariabilityMetadataList>
    </Record>
    """

  @Test func theBeatsAndTheReadingByHand() throws {
    let result = try StageHarness.run(StageHarness.export(Self.body), zone: .named("Europe/Berlin")) { transaction in
      [
        HeartBeatMart(transaction: transaction, destinations: HeartBeatMart.defaultDestinations),
        SampleMart(
          transaction: transaction, destinations: [.init(file: "samples/{type}.csv", format: .csv)], types: nil),
      ]
    }
    defer { result.remove() }
    let id = try #require(try result.csvRows("samples/HeartRateVariabilitySDNN.csv").first?["id"])
    let beats = try result.csvRows("heart_beats.csv")
    #expect(beats.count == 9)
    #expect(beats.allSatisfy { $0["record_id"] == id })
    #expect(beats.map { $0["beat"]! } == (1...9).map(String.init))
    #expect(
      beats.map { $0["time"]! } == [
        "2024-01-15T23:59:59.000+01:00", "2024-01-16T00:00:00.000+01:00", "2024-01-16T00:00:00.800+01:00",
        "2024-01-16T00:00:01.800+01:00", "2024-01-16T00:00:03.800+01:00", "2024-01-16T00:00:04.600+01:00",
        "2024-01-16T00:00:04.600+01:00", "2024-01-16T00:00:06.400+01:00", "",
      ])
    #expect(beats.first?["local_time"] == "2024-01-15 23:59:59")
    #expect(beats.map { $0["bpm"]! } == ["60", "60", "75", "60", "60", "75", "75", "", "60"])
    // The last entry's time is unreadable, so its interval comes from its bpm: 1000 ms.
    #expect(beats.map { $0["rr_ms"]! } == ["1000", "1000", "800", "1000", "1000", "800", "", "", "1000"])
    #expect(beats.map { $0["rr_from"]! } == ["bpm", "times", "times", "times", "bpm", "times", "", "", "bpm"])
    let reading = try #require(try result.csvRows("hrv_readings.csv").first)
    #expect(reading["record_id"] == id)
    #expect(reading["start"] == "2024-01-15T23:59:58+01:00")
    #expect(reading["source"] == "Apple Watch")
    #expect(reading["apple_sdnn_ms"] == "103.28")
    #expect(reading["beats"] == "9")
    #expect(reading["beats_unread"] == "2")
    #expect(reading["beats_repeated"] == "1")
    #expect(reading["beats_outside"] == "0")
    // Seven intervals: 1000, 1000, 800, 1000, 1000, 800, 1000. Mean 6600 / 7; deviations +400/7
    // (five times) and −1000/7 (twice): squares 5 · 160 000/49 + 2 · 1 000 000/49 = 2 800 000/49;
    // / 6 = 9523.8095…; SDNN = 97.5900072948533. Pairs as in `intervalsSDNNAndRMSSDByHand` (the
    // last interval follows an unreadable entry): RMSSD = √30 000 = 173.2050807568877.
    #expect(reading["intervals"] == "7")
    #expect(reading["intervals_from_times"] == "4")
    #expect(reading["successive_pairs"] == "4")
    #expect(reading["sdnn_ms"] == "97.59")
    #expect(reading["rmssd_ms"] == "173.2051")
    #expect(reading["zone"] == "Europe/Berlin")
  }

  /// A record's own `HKTimeZone` decides how its clock times are read; without the list, no row.
  @Test func theRecordsOwnZoneReadsItsTimes() throws {
    let body = """
      <Record type="HKQuantityTypeIdentifierHeartRateVariabilitySDNN" sourceName="Apple Watch" unit="ms" \
      startDate="2024-07-01 09:00:00 +0000" endDate="2024-07-01 09:01:00 +0000" value="40">
       <MetadataEntry key="HKTimeZone" value="America/New_York"/>
       <HeartRateVariabilityMetadataList>
        <InstantaneousBeatsPerMinute bpm="60" time="5:00:01.50 AM"/>
       </HeartRateVariabilityMetadataList>
      </Record>
      <Record type="HKQuantityTypeIdentifierHeartRateVariabilitySDNN" sourceName="Apple Watch" unit="ms" \
      startDate="2024-07-01 10:00:00 +0000" endDate="2024-07-01 10:01:00 +0000" value="41"/>
      """
    let result = try StageHarness.run(StageHarness.export(body), zone: .named("UTC")) { transaction in
      [HeartBeatMart(transaction: transaction, destinations: HeartBeatMart.defaultDestinations)]
    }
    defer { result.remove() }
    // 05:00:01.50 in New York (EDT, −04:00) is 09:00:01.500Z.
    #expect(try result.csvRows("heart_beats.csv").first?["time"] == "2024-07-01T09:00:01.500+00:00")
    let readings = try result.csvRows("hrv_readings.csv")
    #expect(readings.count == 1)
    #expect(readings.first?["zone"] == "America/New_York")
    #expect(readings.first?["sdnn_ms"] == "")
  }
}

/// A beat list longer than any reading (Pipelines/docs/beats.md, "Beat-to-beat heart rate").
struct HeartBeatLimitTests {
  /// 10,002 beats a second apart at 60 bpm: the first 10,000 are kept — read back in chunks of
  /// 4096 — and the other 2 count as unread, without rows. Every interval is 1000 ms (the first
  /// from bpm, 9,999 from the times), so SDNN and RMSSD are 0.
  @Test func aLongListKeepsItsFirstTenThousandBeats() throws {
    var entries = ""
    for second in 0..<(RecordReader.mostBeatsPerRecord + 2) {
      let time = String(format: "%02d:%02d:%02d.00", second / 3600, second / 60 % 60, second % 60)
      entries += "<InstantaneousBeatsPerMinute bpm=\"60\" time=\"\(time)\"/>"
    }
    let body = """
      <Record type="HKQuantityTypeIdentifierHeartRateVariabilitySDNN" sourceName="Apple Watch" unit="ms" \
      startDate="2024-01-15 00:00:00 +0000" endDate="2024-01-15 03:00:00 +0000" value="0">
      <HeartRateVariabilityMetadataList>\(entries)</HeartRateVariabilityMetadataList></Record>
      """
    let result = try StageHarness.run(StageHarness.export(body), zone: .named("UTC")) { transaction in
      [HeartBeatMart(transaction: transaction, destinations: HeartBeatMart.defaultDestinations)]
    }
    defer { result.remove() }
    let beats = try result.csvRows("heart_beats.csv")
    #expect(beats.count == 10_000)
    // Beat 10,000 is second 9,999: 2 h 46 min 39 s.
    #expect(beats.last?["time"] == "2024-01-15T02:46:39.000+00:00")
    #expect(beats.last?["beat"] == "10000")
    #expect(beats[4096]["time"] == "2024-01-15T01:08:16.000+00:00")
    let reading = try #require(try result.csvRows("hrv_readings.csv").first)
    #expect(reading["beats"] == "10002")
    #expect(reading["beats_unread"] == "2")
    #expect(reading["intervals"] == "10000")
    #expect(reading["intervals_from_times"] == "9999")
    #expect(reading["sdnn_ms"] == "0")
    #expect(reading["rmssd_ms"] == "0")
  }
}

/// Entries whose bpm is no heart rate, and readings that each name their own zone (issue 31,
/// items 5 and 6).
struct HeartBeatBoundTests {
  /// 60 bpm a second apart at 09:00:00, :01, :02, then `bpm="1e-9"` at :08 and 60 at :09. The
  /// tiny rate stood for 6 × 10¹³ ms, so its tolerance let the 6 s gap before it pass as its
  /// interval (1000, 1000, 1000, 6000, 1000: SDNN 2236.07 ms) and its bpm was written as 0. Below
  /// 20 bpm it is unread: no bpm, no interval; the beat at :09 is 1000 ms after its time, which
  /// agrees with 60 bpm. Four intervals of 1000 ms: SDNN 0; RMSSD 0 from two pairs (:00–:01 and
  /// :01–:02; the unread entry leaves the one at :09 without a pair).
  @Test func aRateBelowTwentyIsUnread() throws {
    let entries = [
      ("60", "09:00:00.00"), ("60", "09:00:01.00"), ("60", "09:00:02.00"), ("1e-9", "09:00:08.00"),
      ("60", "09:00:09.00"),
    ].map { "<InstantaneousBeatsPerMinute bpm=\"\($0.0)\" time=\"\($0.1)\"/>" }.joined()
    let body = """
      <Record type="HKQuantityTypeIdentifierHeartRateVariabilitySDNN" sourceName="Apple Watch" unit="ms" \
      startDate="2024-07-01 09:00:00 +0000" endDate="2024-07-01 09:01:00 +0000" value="0">
      <HeartRateVariabilityMetadataList>\(entries)</HeartRateVariabilityMetadataList></Record>
      """
    let result = try StageHarness.run(StageHarness.export(body), zone: .named("UTC")) { transaction in
      [HeartBeatMart(transaction: transaction, destinations: HeartBeatMart.defaultDestinations)]
    }
    defer { result.remove() }
    let beats = try result.csvRows("heart_beats.csv")
    #expect(beats.map { $0["bpm"]! } == ["60", "60", "60", "", "60"])
    #expect(beats.map { $0["rr_ms"]! } == ["1000", "1000", "1000", "", "1000"])
    let reading = try #require(try result.csvRows("hrv_readings.csv").first)
    #expect(reading["beats_unread"] == "1")
    #expect(reading["intervals"] == "4")
    #expect(reading["sdnn_ms"] == "0")
    #expect(reading["successive_pairs"] == "2")
    #expect(reading["rmssd_ms"] == "0")
  }

  /// N readings, each with a zone name of its own, then each name again: the table compares at
  /// most one stored name a lookup (here N, from the second pass), at N = 1,000 … 8,000: ×8 names,
  /// ×8 comparisons. The search through the list it replaced compared N(N − 1)/2 + N(N + 1)/2 =
  /// N² names: ×64 (1,000,000 → 64,000,000), which the same bound refuses.
  @Test func zoneLookupsFollowTheNames() {
    func names(_ count: Int) -> [String] { (0..<count).map { "Etc/Zone\($0)" } }
    func referenceComparisons(_ names: [String]) -> Int {
      var list: [String] = []
      var comparisons = 0
      for name in names + names {
        var found = false
        for stored in list {
          comparisons += 1
          if stored == name {
            found = true
            break
          }
        }
        if !found { list.append(name) }
      }
      return comparisons
    }
    let sizes = [1_000, 2_000, 4_000, 8_000]
    let counts = sizes.map { size in
      var table = ZoneNames()
      for name in names(size) + names(size) { _ = table.number(of: name) }
      #expect(table.names.count == size && table.names[7] == "Etc/Zone7")
      return table.comparisons
    }
    #expect(counts == sizes)
    for (small, large) in zip(counts, counts.dropFirst()) { #expect(Double(large) <= 2 * 1.25 * Double(small)) }
    let reference = [sizes.first!, sizes.last!].map { referenceComparisons(names($0)) }
    #expect(reference == [1_000_000, 64_000_000])
    #expect(Double(reference[1]) > 8 * 1.25 * Double(reference[0]))
  }
}
