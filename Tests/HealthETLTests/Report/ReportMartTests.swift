import Foundation
import HealthExtract
import HealthModel
import Testing

@testable import HealthETL

/// The report's data (Pipelines/report/DATA.md) on small staged exports, values worked out by hand.
@Suite struct ReportMartTests {
  /// The rounding that goes through `NumberText.rounded` writes what rounding the decimal text
  /// digit by digit writes, for every precision a report column has: values at, next to and between
  /// the halves of each number of places, coordinates, tiny and huge values, both signs.
  @Test func roundedNumbersAreTheDecimalTextRounded() {
    var generator = SystemRandomNumberGenerator()
    var values: [Double] = [0, -0.0, 1e-300, 0.00005, 0.000049999, 0.0001, 0.00009999, 1e15, 9.5e14, 1e16, 1e300]
    for half in 0..<1_500 {
      let value = (Double(half) + 0.5) / 100
      values += [value, value.nextUp, value.nextDown, value / 1000, (value / 1000).nextDown]
    }
    for _ in 0..<3_000 {
      values.append(Double.random(in: 1...10, using: &generator) * pow(10, Double(Int.random(in: -7...16))))
      values.append(Double.random(in: -90...90, using: &generator))
    }
    let precisions: [NumberPrecision] = [.asRecorded, .decimals(0), .decimals(1), .decimals(2), .significantDigits(12)]
    for value in values + values.map(-) {
      for precision in precisions {
        for places in [0, 1, 2, 5] {
          let shown = ReportJSON.rounded(value, csv: precision, places: places).text
          let expected = ReportJSON.roundedByText(value, csv: precision, places: places).text
          guard shown == expected else {
            Issue.record("\(value) at \(precision), \(places) places: \(shown), not \(expected)")
            return
          }
        }
      }
    }
  }

  static let template =
    Array(
      "<html><script><!--HEALTHETL:CHART_JS--></script>\n<script type=\"application/json\" id=\"report-data\">"
        .utf8) + Array("<!--HEALTHETL:REPORT_DATA--></script></html>\n".utf8)
  static let library = Array("window.Chart = function () {};".utf8)

  /// Runs the report with the marts it reads, as `healthetl run` builds them (`MartGraph`), and
  /// returns the data JSON read back out of `report.html`.
  static func report(_ records: [String], zone: String) throws -> [String: Any] {
    let page = try ReportPage(template: template, templatePath: "t.html", library: library, libraryPath: "c.js")
    let result = try StageHarness.run(
      StageHarness.export(records.joined(separator: "\n")), zone: .named(zone)
    ) { transaction in
      // The harness wires it as a run does: the marts it reads are added by their kinds.
      [ReportMart(transaction: transaction, page: page)]
    }
    defer { result.remove() }
    let html = try result.text("report.html")
    let start = try #require(html.range(of: "id=\"report-data\">"))
    let end = try #require(html.range(of: "</script></html>"))
    let json = String(html[start.upperBound..<end.lowerBound])
    return try #require(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
  }

  static let watch = SleepTesting.watch
  static let phone = SleepTesting.phone

  static func steps(_ start: String, _ end: String, _ value: String, phone: Bool) -> String {
    Staging.record(
      "HKQuantityTypeIdentifierStepCount", source: phone ? Self.phone : watch, value: value, unit: "count",
      start: start, end: end, device: phone ? SleepTesting.phoneDevice : SleepTesting.watchDevice)
  }

  static func heartRate(_ at: String, _ bpm: String) -> String {
    Staging.record(
      "HKQuantityTypeIdentifierHeartRate", source: watch, value: bpm, unit: "count/min", start: at, end: at,
      device: SleepTesting.watchDevice)
  }

  @Test func hoursAreHundredthsInIntegers() {
    // (s + 18) / 36 hundredths: 17 s is 0.0047 h → 0; 18 s is 0.005 h → 0.01 (no tie can occur).
    #expect(ReportMart.hours(17).text == "0")
    #expect(ReportMart.hours(18).text == "0.01")
    #expect(ReportMart.hours(5400).text == "1.5")
    #expect(ReportMart.hours(3582).text == "1")
    #expect(ReportMart.hours(7835).text == "2.18")
    #expect(ReportMart.hours(nil).text == "null")
  }

  @Test func roundingIsHalfAwayFromZeroOnTheDecimalText() {
    // 1.005 is 1.00499999999999989… in binary: rounding the double would give 1.0.
    #expect(ReportJSON.rounded(1.005, csv: .asRecorded, places: 2).text == "1.01")
    #expect(ReportJSON.rounded(-2.5, csv: .asRecorded, places: 0).text == "-3")
    #expect(ReportJSON.rounded(-0.04, csv: .asRecorded, places: 1).text == "0")
    #expect(ReportJSON.rounded(9.96, csv: .asRecorded, places: 1).text == "10")
    // The CSV's 12 significant digits first: 59.99999999999999 prints as 60.
    #expect(ReportJSON.rounded(59.99999999999999, csv: .significantDigits(12), places: 1).text == "60")
    #expect(ReportJSON.rounded(.nan, csv: .asRecorded, places: 1).text == "null")
    #expect(ReportJSON.rounded(text: "12.35", places: 1).text == "12.4")
    // A value whose own text has an exponent keeps one (JSON allows it).
    #expect(ReportJSON.rounded(0.000012, csv: .asRecorded, places: 5).text == "1e-05")
    #expect(ReportJSON.rounded(0.00012, csv: .asRecorded, places: 4).text == "0.0001")
    #expect(ReportJSON.rounded(47.123455, csv: .asRecorded, places: 5).text == "47.12346")
    #expect(ReportJSON.rounded(text: "abc", places: 1).text == "null")
  }

  /// The page `write(json:to:)` writes, as a file of a run.
  static func written(_ page: ReportPage, _ json: ReportJSON) throws -> [UInt8] {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("report-page-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder.path)
    let file = try transaction.create("report.html")
    try page.write(json: json, to: file)
    try file.close()
    try transaction.commit()
    return Array(try Data(contentsOf: folder.appendingPathComponent("report.html")))
  }

  /// A streamed part (a workout column) goes to the page in pieces of 256 KB: escaped the same
  /// wherever a piece ends, the page is the one the whole text in memory would make.
  @Test func aStreamedPartIsWrittenInPiecesAsTheWholeTextWouldBe() throws {
    let page = try ReportPage(
      template: Self.template, templatePath: "t.html", library: Self.library, libraryPath: "c.js")
    // 50,000 arrays of about 18 bytes with a `<` each: about 900 KB, more than three pieces.
    let json = ReportJSON.object([
      ("a", .integer(1)),
      (
        "streamed",
        .streamed(
          .init { (writer) throws(OutputError) in
            for index in 0..<50_000 {
              try ReportJSON.array([.string("<\(index)"), .number("1.5"), .null]).write(to: &writer)
            }
          })
      ),
      ("b", .string("</script>")),
    ])
    let text = json.bytes
    #expect(text.count > 3 * ReportJSON.Writer.pieceBytes)
    var expected = Self.template
    let marker = Array("<!--HEALTHETL:CHART_JS-->".utf8)
    let slot = try #require(ReportPage.ranges(of: marker, in: expected).first)
    expected.replaceSubrange(slot, with: Self.library)
    let data = try #require(ReportPage.ranges(of: Array("<!--HEALTHETL:REPORT_DATA-->".utf8), in: expected).first)
    let escaped = String(decoding: text, as: UTF8.self).replacingOccurrences(of: "<", with: "\\u003c")
    expected.replaceSubrange(data, with: Array(escaped.utf8))
    #expect(try Self.written(page, json) == expected)
  }

  @Test func thePageIsFilledInOnePassAndTheDataCannotEndItsScript() throws {
    let page = try ReportPage(
      template: Self.template, templatePath: "t.html", library: Array("x<!--HEALTHETL:REPORT_DATA-->".utf8.prefix(1)),
      libraryPath: "c.js")
    let json = ReportJSON.object([("detail", .string("</script><!--HEALTHETL:CHART_JS-->"))])
    let html = String(decoding: try Self.written(page, json), as: UTF8.self)
    #expect(
      html
        == "<html><script>x</script>\n<script type=\"application/json\" id=\"report-data\">"
        + "{\"detail\":\"\\u003c/script>\\u003c!--HEALTHETL:CHART_JS-->\"}</script></html>\n")
  }

  @Test func unusableFilesAreRefusedByName() {
    #expect(throws: ReportPageError.unsafeLibrary(path: "/x/chart.js", sequence: "</script")) {
      try ReportPage(
        template: Self.template, templatePath: "t.html", library: Array("a='</SCRIPT>'".utf8),
        libraryPath: "/x/chart.js")
    }
    #expect(throws: ReportPageError.unsafeLibrary(path: "c.js", sequence: "<!--")) {
      try ReportPage(template: Self.template, templatePath: "t.html", library: Array("<!--".utf8), libraryPath: "c.js")
    }
    #expect(throws: ReportPageError.placeholder(path: "t.html", placeholder: ReportPage.dataPlaceholder, found: 0)) {
      try ReportPage(
        template: Array("<!--HEALTHETL:CHART_JS-->".utf8), templatePath: "t.html", library: [], libraryPath: "c.js")
    }
    let missing = ReportPageError.unreadable(
      path: ReportTables.debianChartLibrary + ".absent", reason: "no such file", hint: "")
    let template = FileManager.default.temporaryDirectory.appendingPathComponent("report-\(UUID().uuidString).html")
    #expect(throws: Never.self) { try Data(Self.template).write(to: template) }
    defer { try? FileManager.default.removeItem(at: template) }
    #expect(throws: missing) {
      try ReportPage(templatePath: template.path, libraryPath: ReportTables.debianChartLibrary + ".absent")
    }
    #expect(missing.description.contains("chart.min.js.absent: no such file"))
  }

  @Test func heartRatePerMinuteCountsElapsedMinutesAcrossTheSpringForward() throws {
    // New York, 2024-03-10: midnight is 05:00Z (EST); at 07:00Z the clocks jump from 02:00 to 03:00.
    let data = try Self.report(
      [
        Self.heartRate("2024-03-10 01:30:00 -0500", "60"),
        Self.heartRate("2024-03-10 03:15:00 -0400", "70"),
        Self.heartRate("2024-03-10 03:15:30 -0400", "72.5"),
      ], zone: "America/New_York")
    let heart = try #require(data["heart_rate"] as? [String: Any])
    #expect(heart["days_limit"] as? Int == 14)
    let days = try #require(heart["days"] as? [[String: Any]])
    #expect(days.count == 1)
    #expect(days[0]["date"] as? String == "2024-03-10")
    // 06:30Z − 05:00Z = 90 min; 07:15Z − 05:00Z = 135 min (wall clock 03:15, one hour skipped).
    #expect(days[0]["minute"] as? [Int] == [90, 135])
    #expect(days[0]["bpm_max"] as? [Double] == [60, 72.5])
    #expect(days[0]["utc_offsets"] as? [[Int]] == [[0, -300], [135, -240]])
  }

  @Test func nightsQualityAndMergedStepsFromOneParse() throws {
    let records = [
      // Sleep, one source wins everywhere: core 5400 s, deep 1817 s, REM 618 s; AutoSleep lies
      // inside the deep stretch (it overlaps it, and is outranked there).
      SleepTesting.sleep("AsleepCore", "2024-03-08 23:00:00 -0500", "2024-03-09 00:30:00 -0500"),
      SleepTesting.sleep("AsleepDeep", "2024-03-09 00:30:00 -0500", "2024-03-09 01:00:17 -0500"),
      SleepTesting.sleep("AsleepREM", "2024-03-09 01:00:17 -0500", "2024-03-09 01:10:35 -0500"),
      SleepTesting.sleep(
        "AsleepUnspecified", "2024-03-09 00:40:00 -0500", "2024-03-09 00:50:00 -0500", source: "AutoSleep",
        device: nil),
      // Steps on 2024-03-11 (EDT): Watch A 10:00–10:10 100, B 11:00–11:05 50; iPhone C 10:05–10:15
      // 200, D 12:00–12:10 30, E an instant of 5.
      Self.steps("2024-03-11 10:00:00 -0400", "2024-03-11 10:10:00 -0400", "100", phone: false),
      Self.steps("2024-03-11 11:00:00 -0400", "2024-03-11 11:05:00 -0400", "50", phone: false),
      Self.steps("2024-03-11 10:05:00 -0400", "2024-03-11 10:15:00 -0400", "200", phone: true),
      Self.steps("2024-03-11 12:00:00 -0400", "2024-03-11 12:10:00 -0400", "30", phone: true),
      Self.steps("2024-03-11 13:00:00 -0400", "2024-03-11 13:00:00 -0400", "5", phone: true),
    ]
    let data = try Self.report(records, zone: "America/New_York")

    let nights = try #require(data["nights"] as? [String: Any])
    #expect(nights["date"] as? [String] == ["2024-03-09"])
    // (5400+18)/36 = 150; (1817+18)/36 = 50; (618+18)/36 = 17; (7835+18)/36 = 218 hundredths.
    #expect(nights["core_h"] as? [Double] == [1.5])
    #expect(nights["deep_h"] as? [Double] == [0.5])
    #expect(nights["rem_h"] as? [Double] == [0.17])
    #expect(nights["asleep_h"] as? [Double] == [2.18])
    #expect(nights["unspecified_h"] as? [Double] == [0])
    #expect((nights["in_bed_h"] as? [Any])?.first is NSNull)
    #expect(nights["bedtime"] as? [String] == ["2024-03-08 23:00"])
    #expect(nights["wake"] as? [String] == ["2024-03-09 01:10"])

    // Merged: Watch 50 + 50 (it wins 10:05–10:10) + 50; iPhone 100 (10:10–10:15) + 30 + 5.
    let days = try #require(data["days"] as? [String: Any])
    #expect(days["date"] as? [String] == ["2024-03-11"])
    #expect(days["steps"] as? [Int] == [285])

    let quality = try #require(data["quality"] as? [String: Any])
    let types = try #require(quality["types"] as? [[String: Any]])
    #expect(types.map { $0["type"] as? String } == ["StepCount", "SleepAnalysis"])
    // A and C share 10:05–10:10; B, D and the instant E overlap nothing.
    #expect(types[0]["overlapping"] as? Int == 2)
    #expect(types[0]["merged"] as? Bool == true)
    let stepSources = try #require(types[0]["sources"] as? [[String: Any]])
    #expect(stepSources.map { $0["name"] as? String } == [Self.phone, Self.watch])
    #expect(stepSources.map { $0["samples"] as? Int } == [3, 2])
    // iPhone 135 of 235 counted = 0.5745; the Watch all of its 150.
    #expect(stepSources.map { $0["counted_share"] as? Double } == [0.574, 1])
    // Sleep: the deep stretch and the AutoSleep sample inside it.
    #expect(types[1]["overlapping"] as? Int == 2)
    #expect(types[1]["merged"] as? Bool == false)
    let sleepSources = try #require(types[1]["sources"] as? [[String: Any]])
    #expect(sleepSources.map { $0["samples"] as? Int } == [3, 1])
    #expect(sleepSources.allSatisfy { $0["counted_share"] is NSNull })
  }
}
