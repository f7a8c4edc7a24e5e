import Foundation
import HealthExtract
import HealthModel
import Testing

@testable import HealthETL

/// Laps from Lap events, splits and the GPX reader on small hand-worked cases
/// (Pipelines/README.md, "Swimming", "Routes", "Splits").
@Suite struct WorkoutRouteTests {
  typealias F = WorkoutFixture

  // MARK: Splits

  /// 0 m at t 0 (10 m high), 600 m at t 100 (20 m), 1200 m at t 200 (50 m): the kilometre falls
  /// two thirds of the way into the second step, at t 166.67 and 40 m high.
  @Test func boundaryBetweenTwoPoints() {
    var accumulator = SplitAccumulator(unit: 1000, pauses: PauseIntervals())
    accumulator.add(time: 0, step: 0, elevation: 10)
    accumulator.add(time: 100, step: 600, elevation: 20)
    accumulator.add(time: 200, step: 600, elevation: 50)
    let splits = accumulator.finish()
    #expect(splits.count == 2)
    let first = splits[0]
    #expect(first.start == 0)
    #expect(abs(first.end - 500.0 / 3) < 1e-9)
    #expect(first.distanceMeters == 1000)
    #expect(abs(first.movingSeconds - 500.0 / 3) < 1e-9)
    #expect(first.elevationStart == 10)
    #expect(abs(first.elevationEnd! - 40) < 1e-9)
    // 10 → 20 → 40: 30 up, nothing down.
    #expect(abs(first.elevationGainMeters! - 30) < 1e-9)
    #expect(first.elevationLossMeters == 0)
    let last = splits[1]
    #expect(abs(last.start - 500.0 / 3) < 1e-9)
    #expect(last.end == 200)
    #expect(abs(last.distanceMeters - 200) < 1e-9)
    #expect(abs(last.movingSeconds - 100.0 / 3) < 1e-9)
    #expect(abs(last.elevationGainMeters! - 10) < 1e-9)
  }

  /// A manual pause 50–80 s and a motion pause 70–90 s inside the first kilometre: merged, 40 s
  /// are not moving time; the elapsed time keeps them.
  @Test func pauseInsideASplit() {
    let pauses = PauseIntervals(
      manual: [(pauses: true, time: 50), (pauses: false, time: 80)],
      motion: [(pauses: true, time: 70), (pauses: false, time: 90)], workoutEnd: 200)
    #expect(pauses.pausedSeconds(from: 0, to: 200) == 40)
    var accumulator = SplitAccumulator(unit: 1000, pauses: pauses)
    accumulator.add(time: 0, step: 0, elevation: nil)
    accumulator.add(time: 100, step: 600, elevation: nil)
    accumulator.add(time: 200, step: 600, elevation: nil)
    let splits = accumulator.finish()
    #expect(abs(splits[0].movingSeconds - (500.0 / 3 - 40)) < 1e-9)
    #expect(splits[0].elevationGainMeters == nil)
    let split = WorkoutSplit(splits[0], from: "route", unit: .km)
    #expect(abs(split.elapsedSeconds - 500.0 / 3) < 1e-9)
    // 126.67 moving seconds for 1000 m: that is the pace per km, and 7.894… m/s.
    #expect(abs(split.paceSeconds! - (500.0 / 3 - 40)) < 1e-9)
    #expect(abs(split.speed! - 1000 / (500.0 / 3 - 40)) < 1e-9)
    #expect(split.elevationChangeMeters == nil)
  }

  /// One step of 2500 m over 250 s crosses two kilometres (at 100 s and 200 s) and one mile
  /// (1609.344 m at 160.9344 s).
  @Test func oneStepCrossesSeveralBoundaries() {
    var km = SplitAccumulator(unit: 1000, pauses: PauseIntervals())
    var mile = SplitAccumulator(unit: SplitUnit.mi.meters, pauses: PauseIntervals())
    km.add(time: 0, step: 0, elevation: nil)
    km.add(time: 250, step: 2500, elevation: nil)
    mile.add(time: 0, step: 0, elevation: nil)
    mile.add(time: 250, step: 2500, elevation: nil)
    let kilometres = km.finish()
    #expect(kilometres.map(\.end) == [100, 200, 250])
    #expect(kilometres.map(\.distanceMeters) == [1000, 1000, 500])
    let miles = mile.finish()
    #expect(miles.count == 2)
    #expect(abs(miles[0].end - 160.9344) < 1e-9)
    #expect(abs(miles[1].distanceMeters - (2500 - 1609.344)) < 1e-9)
  }

  /// Two points 0.01° of latitude apart on one meridian: 6371008.8 × 0.01 × π / 180 m.
  @Test func haversineOnAMeridian() {
    #expect(abs(RouteAggregate.distance(52.50, 13.4, 52.51, 13.4) - 6_371_008.8 * 0.01 * Double.pi / 180) < 1e-6)
  }

  // MARK: Laps

  static func strokes(_ value: String, _ start: String, _ end: String, style: String? = nil) -> String {
    Staging.record(
      "HKQuantityTypeIdentifierSwimmingStrokeCount", source: "Apple Watch", value: value, unit: "count",
      start: "2024-02-01 \(start) +0000", end: "2024-02-01 \(end) +0000",
      metadata: style.map { [("HKSwimmingStrokeStyle", $0)] } ?? [])
  }

  static func lap(_ time: String, style: String, swolf: String? = nil, day: String = "2024-02-01") -> String {
    var metadata = [("HKSwimmingStrokeStyle", style)]
    if let swolf { metadata.append(("HKSWOLFScore", swolf)) }
    return F.event("Lap", "\(day) \(time) +0000", minutes: "0.5", metadata: metadata)
  }

  /// Three Lap events (freestyle, kickboard, breaststroke) and a stroke sample no event covers;
  /// a second swim with Lap events only takes its strokes from its statistic.
  @Test func lapsFromEventsFirst() throws {
    let body = [
      Self.strokes("18", "07:00:10", "07:00:40", style: "2"),  // → E1
      Self.strokes("10", "07:02:00", "07:02:20", style: "4"),  // → E3
      Self.strokes("5", "07:02:20", "07:02:30"),  // → E3 too
      Self.strokes("20", "07:05:00", "07:05:30", style: "1"),  // no event: a length of its own
      F.workout(
        "Swimming", duration: "10", start: "2024-02-01 07:00:00 +0000", end: "2024-02-01 07:10:00 +0000",
        children: [
          F.meta("HKLapLength", "25 m"),
          Self.lap("07:00:10", style: "2", swolf: "40"),
          Self.lap("07:01:00", style: "6"),  // kickboard: no stroke samples
          Self.lap("07:02:00", style: "4", swolf: "50"),
          F.statistic(
            "SwimmingStrokeCount", start: "2024-02-01 07:00:00 +0000", end: "2024-02-01 07:10:00 +0000", sum: "999",
            unit: "count"),
        ]),
      F.workout(
        "Swimming", duration: "10", start: "2024-02-02 07:00:00 +0000", end: "2024-02-02 07:10:00 +0000",
        children: [
          F.meta("HKLapLength", "50 m"),
          Self.lap("07:00:10", style: "4", day: "2024-02-02"), Self.lap("07:01:10", style: "0", day: "2024-02-02"),
          F.statistic(
            "SwimmingStrokeCount", start: "2024-02-02 07:00:00 +0000", end: "2024-02-02 07:10:00 +0000", sum: "40",
            unit: "count"),
        ]),
    ]
    let run = try F.run(body.joined(separator: "\n"))
    defer { run.result.remove() }
    #expect(run.rows.count == 2)
    let first = run.rows[0]
    #expect(first.laps.map(\.origin) == [.event, .event, .event, .strokeSample])
    #expect(first.laps.map(\.strokes) == [18, nil, 15, 20])
    #expect(first.laps.map(\.style) == [.freestyle, .kickboard, .breaststroke, .mixed])
    #expect(first.laps.map(\.swolf) == [40, nil, 50, nil])
    #expect(first.laps.map(\.start.seconds) == [1_706_770_810, 1_706_770_860, 1_706_770_920, 1_706_771_100])
    #expect(first.laps.map { $0.end.seconds - $0.start.seconds } == [30, 30, 30, 30])
    #expect(first.laps.map(\.distanceMeters) == [25, 25, 25, 25])
    #expect(first.laps.allSatisfy { $0.distanceFrom == "pool_length" })
    // The samples win over the statistic's 999.
    #expect(first.strokes == 53)
    #expect(first.strokesFrom == "samples")
    #expect(first.strokesByStyle == [0, 20, 18, 0, 15, 0, 0])
    let second = run.rows[1]
    #expect(second.laps.count == 2)
    #expect(second.laps.allSatisfy { $0.strokes == nil })
    #expect(second.strokes == 40)
    #expect(second.strokesFrom == "statistics")
    #expect(second.strokesByStyle == nil)
    let laps = try run.text("swim_laps.csv").split(separator: "\n")
    #expect(laps.count == 7)
    #expect(laps[2].hasSuffix(",,kickboard,25,,event,pool_length"))
    #expect(laps[4].hasSuffix(",20,mixed,25,,stroke_sample,pool_length"))
  }

  // MARK: Device type

  @Test func deviceTypeFromEveryClue() {
    typealias R = WorkoutServerRecord
    // The real 2018 walk: source "Apple", watchOS 4.3.1, no device.
    #expect(R.deviceTypeCode(device: nil, sourceName: "Apple", sourceVersion: "4.3.1") == "WATCH")
    #expect(R.deviceTypeCode(device: nil, sourceName: "Apple", sourceVersion: "17.2") == "PHONE")
    #expect(R.deviceTypeCode(device: nil, sourceName: "Apple", sourceVersion: "10.1") == "ETC")
    #expect(R.deviceTypeCode(device: nil, sourceName: "Garmin Connect", sourceVersion: "5") == "ETC")
    #expect(R.deviceTypeCode(device: nil, sourceName: "Ann’s Apple Watch", sourceVersion: nil) == "WATCH")
  }

  // MARK: GPX

  static func gpx(_ body: String) -> [UInt8] {
    Array(
      ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\" xmlns=\"http://www.topografix.com/GPX/1/1\">\n"
        + body + "</gpx>\n").utf8)
  }

  @Test func gpxPointsAndSegments() {
    let bytes = Self.gpx(
      """
      <trk><trkseg>
      <trkpt lat=" 52.5 " lon="13.4"><ele>34.5</ele><time>2024-03-18T18:06:10.250+01:00</time><extensions><speed>-1</speed><course>12.5</course><hAcc>4</hAcc><vAcc>2</vAcc></extensions></trkpt>
      <trkpt lon="13.41" lat="52.51"><time>2024-03-18T17:06:11Z</time></trkpt>
      </trkseg><trkseg>
      <trkpt lon="13.42" lat="52.52"><time>yesterday</time></trkpt>
      </trkseg></trk>

      """)
    var points: [RoutePoint] = []
    let result = GPXReader.read(bytes: bytes) { points.append(RoutePoint(gpx: $0)) }
    #expect(result == GPXReadResult(points: 3, problem: nil))
    // 2024-03-18T17:06:10Z = 1710781570.
    #expect(
      points[0]
        == RoutePoint(
          time: 1_710_781_570.25, latitude: 52.5, longitude: 13.4, elevation: 34.5, speed: -1, course: 12.5,
          horizontalAccuracy: 4, verticalAccuracy: 2, startsSegment: true))
    #expect(points[1].time == 1_710_781_571)
    #expect(points[1].startsSegment == false)
    #expect(points[2].time == nil)
    #expect(points[2].startsSegment == true)
  }

  @Test func badGPXIsAOneLineProblem() {
    let cut = GPXReader.read(bytes: Array("<gpx><trk><trkseg>\n<trkpt lat=\"1\" lon=\"2\"></trkpt>\n<trkpt".utf8)) {
      _ in
    }
    #expect(cut.points == 1)
    #expect(cut.problem?.hasPrefix("cut short at line 3: ") == true)
    let broken = GPXReader.read(bytes: Array("<gpx><trk>\n<trkpt lat=\"1\" lon=\"2\">\n</trk></gpx>".utf8)) { _ in }
    #expect(broken.points == 0)
    #expect(broken.problem?.hasPrefix("broken XML at line 3: ") == true)
    let kml = GPXReader.read(bytes: Array("<?xml version=\"1.0\"?><kml><trkpt lat=\"1\" lon=\"2\"/></kml>".utf8)) { _ in
    }
    #expect(kml == GPXReadResult(points: 0, problem: "not a GPX file: its root element is <kml>"))
    #expect(GPXReader.read(bytes: []) { _ in } == GPXReadResult(points: 0, problem: "the file is empty"))
    let text = GPXReader.read(bytes: Array("route".utf8)) { _ in }
    #expect(text.problem?.hasPrefix("not XML at line 1: ") == true)
    for result in [cut, broken, kml, text] { #expect(result.problem?.contains("\n") == false) }
  }

  /// Found by the GPX fuzzer: an EBCDIC file (which libxml2 decodes by itself) carried a DOCTYPE
  /// past the UTF-8 byte filter, its entity declaration was parsed and libxml2's side document
  /// leaked. Files that are not UTF-8 are now refused before libxml2 sees them.
  @Test func aGPXFileThatIsNotUTF8IsRefusedByName() throws {
    let text = "<?xml version=\"1.0\"?><!DOCTYPE gpx [<!ENTITY a \"aaaa\">]><gpx><trkpt lat=\"1\" lon=\"2\"/></gpx>"
    let ebcdic = try #require(Self.ebcdic(text))
    #expect(
      GPXReader.read(bytes: ebcdic) { _ in }
        == GPXReadResult(problem: "not UTF-8: the file is EBCDIC text (route files from the Health app are UTF-8)"))
    let utf16 = try #require(text.data(using: .utf16LittleEndian))
    #expect(GPXReader.read(bytes: Array(utf16)) { _ in }.problem?.hasPrefix("not UTF-8: the file is UTF-16LE") == true)
    let latin1 = text.replacingOccurrences(of: "version=\"1.0\"", with: "version=\"1.0\" encoding=\"ISO-8859-1\"")
    #expect(GPXReader.read(bytes: Array(latin1.utf8)) { _ in }.problem?.contains("ISO-8859-1") == true)
    // The same document in UTF-8 has its DOCTYPE blanked and is read.
    #expect(GPXReader.read(bytes: Array(text.utf8)) { _ in } == GPXReadResult(points: 1))
  }

  /// `text` in EBCDIC code page 037, for the characters it uses (letters, digits, `<?!="[]>/ .`).
  static func ebcdic(_ text: String) -> [UInt8]? {
    let special: [Character: UInt8] = [
      "<": 0x4C, "?": 0x6F, "!": 0x5A, "=": 0x7E, "\"": 0x7F, "[": 0xBA, "]": 0xBB, ">": 0x6E, "/": 0x61,
      " ": 0x40, ".": 0x4B,
    ]
    let rows: [(String, UInt8)] = [
      ("abcdefghi", 0x81), ("jklmnopqr", 0x91), ("stuvwxyz", 0xA2),
      ("ABCDEFGHI", 0xC1), ("JKLMNOPQR", 0xD1), ("STUVWXYZ", 0xE2), ("0123456789", 0xF0),
    ]
    var bytes: [UInt8] = []
    for character in text {
      if let byte = special[character] {
        bytes.append(byte)
      } else if let (row, first) = rows.first(where: { $0.0.contains(character) }) {
        bytes.append(first + UInt8(row.distance(from: row.startIndex, to: row.firstIndex(of: character)!)))
      } else {
        return nil
      }
    }
    return bytes
  }
}
