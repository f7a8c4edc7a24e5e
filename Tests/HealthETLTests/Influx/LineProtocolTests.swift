import Foundation
import Testing

@testable import HealthETL

/// `LineProtocol`: the escaping of each part, checked against lines written out by hand from the
/// rules of Pipelines/influx/README.md ("Escaping"), and read back by `LineProtocolReader`.
@Suite struct LineProtocolTests {
  typealias Point = LineProtocol.Point

  static func line(_ point: Point) -> String? {
    var bytes: [UInt8] = []
    guard point.append(to: &bytes) else {
      #expect(bytes.isEmpty, "a point not written appends nothing")
      return nil
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Each case: the point, and its line as the rules write it.
  static let cases: [(Point, String)] = [
    // Spaces and commas escaped in the measurement; in tag values also `=`.
    (
      Point(
        measurement: "Step Count,x", tags: [.init("unit", "count"), .init("device", "Alex’s Apple Watch")],
        fields: [.init("value", .float(152))], time: 1_704_175_200),
      "Step\\ Count\\,x,device=Alex’s\\ Apple\\ Watch,unit=count value=152 1704175200\n"
    ),
    // A line feed and a tab become spaces, a backslash `/`, `=` and `,` are escaped.
    (
      Point(
        measurement: "m", tags: [.init("device", "a=b,c\nd\\e\tf")], fields: [.init("value", .integer(-3))], time: 0),
      "m,device=a\\=b\\,c\\ d/e\\ f value=-3i 0\n"
    ),
    // A string escapes its quotes and backslashes; its control characters become spaces; `=`,
    // commas and spaces stay as they are inside the quotes.
    (
      Point(measurement: "m", fields: [.init("text", .string("say \"hi\"\\\n, a=b"))], time: 1),
      "m text=\"say \\\"hi\\\"\\\\ , a=b\" 1\n"
    ),
    // A measurement may not start with `#` (a comment) or `_` (InfluxDB's own): an `x` goes first.
    (Point(measurement: "#m", fields: [.init("v", .float(1))], time: 2), "x#m v=1 2\n"),
    (Point(measurement: "_m", fields: [.init("v", .float(1))], time: 2), "x_m v=1 2\n"),
    // `=` in a measurement needs no escape.
    (Point(measurement: "a=b", fields: [.init("v", .float(0.97))], time: -5), "a=b v=0.97 -5\n"),
    // Floats in their shortest form; a NaN or infinite field and a nil one are left out; tags
    // sorted by key, an empty value left out, a repeated key written once.
    (
      Point(
        measurement: "m", tags: [.init("z", "1"), .init("a", ""), .init("b", "2"), .init("z", "3")],
        fields: [
          .init("nan", .float(.nan)), .init("small", .float(0.00001)), .init("big", .float(1.5e20)),
          .init("none", nil), .init("inf", .float(.infinity)), .init("small", .float(7)),
        ], time: 3),
      "m,b=2,z=1 small=1e-05,big=1.5e+20 3\n"
    ),
  ]

  @Test(arguments: 0..<cases.count) func writesTheLineByTheRules(_ index: Int) {
    let (point, expected) = Self.cases[index]
    #expect(Self.line(point) == expected)
  }

  /// What is read back is the point as written: its names as the rules leave them.
  @Test func readsBackWhatItWrote() throws {
    let line = try #require(Self.line(Self.cases[1].0))
    let point = try #require(LineProtocolReader.parse(String(line.dropLast())))
    #expect(point.measurement == "m")
    #expect(point.tags == [.init("device", "a=b,c d/e f")])
    #expect(point.fields == [.init("value", .integer(-3))])
    #expect(point.time == 0)
    let quoted = try #require(Self.line(Self.cases[2].0))
    #expect(
      LineProtocolReader.parse(String(quoted.dropLast()))?.fields == [.init("text", .string("say \"hi\"\\ , a=b"))])
    // The extremes of a double (found by the fuzz harness): written with a 3-digit exponent,
    // read back exactly.
    let extremes = try #require(
      Self.line(
        Point(
          measurement: "m", fields: [.init("a", .float(.leastNonzeroMagnitude)), .init("b", .float(1e308))], time: 1)))
    #expect(
      LineProtocolReader.parse(String(extremes.dropLast()))?.fields == [
        .init("a", .float(.leastNonzeroMagnitude)), .init("b", .float(1e308)),
      ])
    let first = try #require(Self.line(Self.cases[0].0))
    #expect(LineProtocolReader.parse(String(first.dropLast()))?.measurement == "Step Count,x")
  }

  /// No point without a value, before 1677 or after 2262, or without a measurement.
  @Test func leavesOutPointsInfluxDBCannotStore() {
    #expect(Self.line(Point(measurement: "m", fields: [.init("v", .float(.nan)), .init("w", nil)], time: 1)) == nil)
    #expect(Self.line(Point(measurement: "m", fields: [.init("v", .float(1))], time: 9_223_372_037)) == nil)
    #expect(Self.line(Point(measurement: "m", fields: [.init("v", .float(1))], time: -9_223_372_037)) == nil)
    #expect(Self.line(Point(measurement: "m", fields: [.init("v", .float(1))], time: 9_223_372_036)) != nil)
    #expect(Self.line(Point(measurement: "", fields: [.init("v", .float(1))], time: 1)) == nil)
  }

  /// Names are cut at 256 bytes, never inside a character: 255 `a` and a two-byte `é` keep the
  /// 255 `a`.
  @Test func cutsLongNamesAtACharacter() throws {
    let name = String(repeating: "a", count: 255) + "é"
    let line = try #require(Self.line(Point(measurement: name, fields: [.init("v", .float(1))], time: 1)))
    #expect(line == String(repeating: "a", count: 255) + " v=1 1\n")
    let long = String(repeating: "\"", count: 5000)
    let quoted = try #require(Self.line(Point(measurement: "m", fields: [.init("s", .string(long))], time: 1)))
    // 4096 quotes, each escaped.
    #expect(quoted.utf8.count == "m s=".utf8.count + 2 + 2 * 4096 + " 1\n".utf8.count)
  }

  @Test func tellsPlainFloats() {
    let plain = ["0", "-12", "0.97", "1.5e-05", "1E+20", "152"]
    let notPlain = ["", "+1", " 1", "1,5", "inf", "nan", "NaN", "0x10", "1.", ".5", "1e", "1e400", "--1", "1 "]
    for text in plain { #expect(Self.isPlain(text), "\(text)") }
    for text in notPlain { #expect(!Self.isPlain(text), "\(text)") }
  }

  static func isPlain(_ text: String) -> Bool {
    var copy = text
    return copy.withUTF8 { LineProtocol.isPlainFloat(UnsafeRawBufferPointer($0)) }
  }

  /// `deliver` reads a line's measurement and time without its fields: a space inside a string
  /// value does not confuse it.
  @Test func findsTheMeasurementAndTime() throws {
    var text = "a\\ b,device=x\\ y text=\"one two\" 1704175200"
    let found = text.withUTF8 { LineProtocolReader.measurementAndTime(UnsafeRawBufferPointer($0)) }
    let (end, time) = try #require(found)
    #expect(end == 4)
    #expect(time == 1_704_175_200)
    var broken = "m v=1 12x"
    #expect(broken.withUTF8 { LineProtocolReader.measurementAndTime(UnsafeRawBufferPointer($0)) } == nil)
  }

  /// Lines that are not points as HealthETL writes them are refused.
  @Test func refusesOtherLines() {
    for line in [
      "m v=1", "m  v=1 1", "m v=1 1 ", "#m v=1 1", "m,t= v=1 1", "m v=\"a 1", "m v=1i2 1", "m v=tru 1",
      "m\\x v=1 1", "m v=\"a\\nb\" 1", "m\tx v=1 1", "m v=1 99999999999999999999",
    ] {
      #expect(LineProtocolReader.parse(line) == nil, "\(line)")
    }
  }
}
