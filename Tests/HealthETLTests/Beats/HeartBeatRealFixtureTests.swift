import Foundation
import HealthETL
import HealthExtract
import HealthModel
import Testing

/// Beat-to-beat heart rate of the real exports in `../shared/fixtures/real` that list beats.
@Suite(.enabled(if: StageHarness.realAvailable, "../shared/fixtures/real is not beside this checkout"))
struct HeartBeatRealFixtureTests {
  static func run(_ relative: String) throws -> StageHarness.Result {
    try StageHarness.run(.path(StageHarness.realRoot.appendingPathComponent(relative).path)) { transaction in
      [HeartBeatMart(transaction: transaction, destinations: HeartBeatMart.defaultDestinations)]
    }
  }

  /// k0rventen's test export: 400 HRV readings with 13,081 beats written `00:20:37,80` (24-hour,
  /// decimal comma) on the DST-aware clock of Europe/Paris while the record dates carry the
  /// export's +0200 (so the January beats read an hour before the record's start as written).
  /// Read in the run's zone (Europe/Paris, from the export's HKTimeZone votes) every beat lands
  /// inside its record, one reading runs past midnight (23:59:59.06 → 00:00:00.31), and the SDNN of
  /// the intervals is within 3.1 ms of Apple's on every reading: median |difference| 0.49 ms,
  /// 307 of 400 within 1 ms (worked out independently in Python from the XML).
  @Test func k0rventenReadingsAgreeWithApplesSDNN() throws {
    let result = try Self.run("k0rventen__apple-health-grafana/tests/test-export.zip")
    defer { result.remove() }
    #expect(result.zone.rules.identifier == "Europe/Paris")
    let readings = try result.csvRows("hrv_readings.csv")
    #expect(readings.count == 400)
    #expect(readings.reduce(0) { $0 + Int($1["beats"]!)! } == 13_081)
    #expect(readings.allSatisfy { $0["beats_unread"] == "0" && $0["beats_repeated"] == "0" })
    #expect(readings.allSatisfy { $0["beats_outside"] == "0" })
    #expect(readings.reduce(0) { $0 + Int($1["intervals"]!)! } == 13_081)
    #expect(readings.reduce(0) { $0 + Int($1["intervals_from_times"]!)! } == 11_943)
    #expect(readings.reduce(0) { $0 + Int($1["successive_pairs"]!)! } == 11_943)
    let differences = readings.map { abs(Double($0["sdnn_ms"]!)! - Double($0["apple_sdnn_ms"]!)!) }.sorted()
    #expect(differences.last! < 3.1)
    #expect(differences.filter { $0 <= 1 }.count == 307)
    #expect(abs(differences[199] + differences[200] - 2 * 0.4851) < 0.01)
    let beats = try result.csvRows("heart_beats.csv")
    #expect(beats.count == 13_081)
    #expect(beats.first?["time"] == "2021-01-01T00:20:37.800+01:00")
    #expect(beats.first?["rr_from"] == "bpm")
    #expect(beats.contains { $0["time"] == "2021-01-02T00:00:00.310+01:00" && $0["rr_ms"] == "1250" })
  }

  /// The two other exports that list beats: opendroid's anonymised one (10 beats in 12-hour form
  /// for a 65-s reading: Apple's SDNN 26.467 ms came from beats not listed) and grll's hand-written
  /// one (two beats at 7:47 PM for a reading at 07:55 AM: outside their record, and said so).
  @Test func theOtherExportsWithBeats() throws {
    let opendroid = try Self.run("opendroid__hk/public/sampleexport.xml")
    defer { opendroid.remove() }
    let reading = try #require(try opendroid.csvRows("hrv_readings.csv").first)
    #expect(reading["beats"] == "10")
    #expect(reading["intervals_from_times"] == "9")
    #expect(reading["beats_outside"] == "0")
    #expect(reading["apple_sdnn_ms"] == "26.467")
    let grll = try Self.run("grll__apple-health-landing-zone/data/export.xml")
    defer { grll.remove() }
    let made = try #require(try grll.csvRows("hrv_readings.csv").first)
    #expect(made["beats"] == "2")
    #expect(made["beats_outside"] == "2")
    // Two intervals from bpm: 60 000 / 72 and 60 000 / 68; SDNN = (882.35 − 833.33) / √2 = 34.662.
    #expect(made["sdnn_ms"] == "34.6621")
  }
}
