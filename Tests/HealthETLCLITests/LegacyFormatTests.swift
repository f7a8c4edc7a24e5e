import Foundation
import Testing

/// An iOS 8–9 export (Pipelines/README.md, "The iOS 8–9 format"): `Fixtures/ios8-export.xml`,
/// written after export-shapes.md — no DTD, `source=`, compact dates, and Health Mate's metadata
/// attributes with spaces in their names.
@Suite struct LegacyFormatTests {
  static let export = CLI.fixtures.appendingPathComponent("ios8-export.xml").path

  /// Worked out from the file: six records, one a byte-for-byte copy of the step record above
  /// it; the zone is the ExportDate's +0100 (no record carries HKTimeZone); the data runs from the
  /// Sleep Cycle record's start (2015-11-05 23:15) to the Runtastic run's end (2015-11-07 09:31:30).
  @Test func inspectReadsRecordsExportDateAndZone() throws {
    let report = try InspectCommandTests.inspectJSON(Self.export)
    #expect(report["exportDate"] as? String == "2015-11-07T17:19:24+01:00")
    #expect(report["timeZone"] as? String == "UTC+01:00")
    #expect(report["timeZoneReason"] as? String == "no usable HKTimeZone; fixed offset of ExportDate")
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
