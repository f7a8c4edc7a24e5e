import Foundation
import Testing

/// An iOS 8–9 export (Pipelines/docs/input.md, "The iOS 8–9 format"): `Fixtures/ios8-export.xml`,
/// written after SampleData/README.md, "Shapes of real exports" — no DTD, `source=`, compact dates, and Health Mate's metadata
/// attributes with spaces in their names.
@Suite struct LegacyFormatTests {
  static let export = CLI.fixtures.appendingPathComponent("ios8-export.xml").path

  /// Worked out from the file: six records, one a byte-for-byte copy of the step record above
  /// it; the zone is the ExportDate's +0100 (no record carries HKTimeZone, and the locale's zone
  /// does not match the offsets written); the data runs from the
  /// Sleep Cycle record's start (2015-11-05 23:15) to the Runtastic run's end (2015-11-07 09:31:30).
  @Test func inspectReadsRecordsExportDateAndZone() throws {
    let report = try InspectCommandTests.inspectJSON(Self.export)
    #expect(report["exportDate"] as? String == "2015-11-07T17:19:24+01:00")
    #expect(report["timeZone"] as? String == "UTC+01:00")
    // en_GB's one zone, Europe/London, is at +0000 in November: none of the three dates (11-05,
    // 11-06 and 11-07, all at +0100) matches it.
    #expect(
      report["timeZoneReason"] as? String
        == "no usable HKTimeZone; no zone of locale en_GB (Britain (UK)) matches the 3 dates written at +0100 (Europe/London matches 0); fixed offset of ExportDate"
    )
    #expect(report["first"] as? String == "2015-11-05T23:15:00+01:00")
    #expect(report["last"] as? String == "2015-11-07T09:31:30+01:00")
    #expect(report["types"] as? [String: Int] == ["StepCount": 2, "BodyMass": 1, "HeartRate": 1, "SleepAnalysis": 1])
    #expect(report["duplicates"] as? [String: Int] == ["StepCount": 1])
    #expect((report["rejected"] as? [String: Int])?.isEmpty == true)
    #expect(report["sources"] as? [String] == ["Health Mate", "Jo’s iPhone", "Sleep Cycle"])
    #expect(report["exportVersion"] is NSNull)
    // `Health Mate App Version` twice, `Withings User Identifier` once.
    #expect(report["attributeNamesRepaired"] as? Int == 3)
    let notRead = try #require(report["notRead"] as? [String: Any])
    let attributes = try #require(notRead["attributes"] as? [String: Any])
    #expect(attributes["total"] as? Int == 3)
    #expect(
      attributes["names"] as? [String: Int]
        == ["Record/@Health_Mate_App_Version": 2, "Record/@Withings_User_Identifier": 1])
    #expect((notRead["elements"] as? [String: Any])?["total"] as? Int == 0)
    // A bare XML file has no export folder around it.
    #expect(notRead["files"] is NSNull)
  }

  /// A German phone's export of 2015: no HKTimeZone, dates at +0100 before and +0200 after the
  /// 2015-03-29 spring-forward. The locale's country and those offsets name Europe/Berlin (two
  /// votes, one per distinct offset and date: 03-28 at +0100, 03-30 at +0200; a record's start
  /// and end share theirs); without the tz database that needs the zone's rules, the run fails,
  /// exit 74.
  @Test func aSeasonalOffsetAndTheLocaleNameTheZone() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let export = work.appendingPathComponent("export.xml")
    try """
    <?xml version="1.0" encoding="UTF-8"?>
    <HealthData locale="de_DE">
     <ExportDate value="20150330171924+0200"/>
     <Record type="HKQuantityTypeIdentifierStepCount" source="Jo’s iPhone" unit="count" startDate="20150328083000+0100" endDate="20150328084000+0100" value="812"/>
     <Record type="HKQuantityTypeIdentifierStepCount" source="Jo’s iPhone" unit="count" startDate="20150330083000+0200" endDate="20150330084000+0200" value="640"/>
    </HealthData>

    """.write(to: export, atomically: true, encoding: .utf8)
    let report = try InspectCommandTests.inspectJSON(export.path)
    #expect(report["timeZone"] as? String == "Europe/Berlin")
    #expect(
      report["timeZoneReason"] as? String
        == "no HKTimeZone; locale de_DE (Germany) and 2 dates written at +0100/+0200 match Europe/Berlin")
    #expect(report["first"] as? String == "2015-03-28T08:30:00+01:00")
    #expect(report["last"] as? String == "2015-03-30T08:40:00+02:00")
    let environment = ProcessInfo.processInfo.environment.merging(["TZDIR": "/nonexistent/zoneinfo"]) { $1 }
    let missing = try CLI.run(["inspect", export.path], environment: environment)
    #expect(missing.status == 74, "\(missing.stderr)")
    #expect(missing.stderr.hasPrefix("healthetl: error: the time zone database /nonexistent/zoneinfo is missing"))
    // One offset all along needs no rules: the ExportDate's fixed offset, as before.
    #expect(try CLI.run(["inspect", Self.export], environment: environment).status == 0)
  }

  /// The default pipeline: steps of 2015-11-06 are 812 + 1200 (the copy counts once), the run
  /// is Runtastic's, and stderr names what was not read.
  @Test func theDefaultPipelineWritesTheDaysAndTheRun() throws {
    let out = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: out) }
    let result = try CLI.run(["run", "--out", out.path, Self.export])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      result.stderr.contains(
        "healthetl: not read: Record/@Health_Mate_App_Version (2), Record/@Withings_User_Identifier (1); see run.json (notRead)\n"
      ))
    let daily = try String(contentsOf: out.appendingPathComponent("daily.csv"), encoding: .utf8)
    let lines = daily.split(separator: "\n").map(String.init)
    let header = lines[0].split(separator: ",").map(String.init)
    let stepsColumn = try #require(header.firstIndex(of: "steps"))
    let day = try #require(lines.first { $0.hasPrefix("2015-11-06,") })
    #expect(day.split(separator: ",", omittingEmptySubsequences: false).map(String.init)[stepsColumn] == "2012")
    let workouts = try String(contentsOf: out.appendingPathComponent("workouts.csv"), encoding: .utf8)
    let rows = workouts.split(separator: "\n")
    #expect(rows.count == 2)
    #expect(rows[1].contains("Runtastic") && rows[1].contains("2015-11-07T09:00:00+01:00"))
  }
}
