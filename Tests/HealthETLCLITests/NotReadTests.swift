import Foundation
import Testing

/// What was not read (Pipelines/docs/input.md, "What was not read"), counted by hand on a small
/// export folder and checked against an independent count on real exports.
@Suite struct NotReadTests {
  static let xml = """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE HealthData [
    <!-- HealthKit Export Version: 14 -->
    ]>
    <HealthData locale="en_US">
     <ExportDate value="2024-03-11 09:00:00 -0700"/>
     <Record type="HKQuantityTypeIdentifierHeartRateVariabilitySDNN" sourceName="Watch" unit="ms" startDate="2024-03-10 07:00:00 -0700" endDate="2024-03-10 07:01:00 -0700" value="41.2">
      <HeartRateVariabilityMetadataList>
       <InstantaneousBeatsPerMinute bpm="61" time="7:00:01.12 AM"/>
       <InstantaneousBeatsPerMinute bpm="63" time="7:00:02.08 AM"/>
      </HeartRateVariabilityMetadataList>
      <Annotation note="an element no reader knows, inside a record"/>
     </Record>
     <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Cuff" sourceVersion="2" creationDate="2024-03-10 08:00:00 -0700" startDate="2024-03-10 08:00:00 -0700" endDate="2024-03-10 08:00:00 -0700">
      <Record type="HKQuantityTypeIdentifierBloodPressureSystolic" sourceName="Cuff" unit="mmHg" startDate="2024-03-10 08:00:00 -0700" endDate="2024-03-10 08:00:00 -0700" value="120"/>
     </Correlation>
     <Workout workoutActivityType="HKWorkoutActivityTypeWalking" sourceName="Watch" startDate="2024-03-10 09:00:00 -0700" endDate="2024-03-10 09:30:00 -0700" newTotal="3">
      <WorkoutRoute sourceName="Watch" sourceVersion="10.1" startDate="2024-03-10 09:00:00 -0700" endDate="2024-03-10 09:30:00 -0700">
       <FileReference path="/workout-routes/route_1.gpx"/>
      </WorkoutRoute>
     </Workout>
     <Audiogram type="HKDataTypeIdentifierAudiogram" sourceName="Mimi" startDate="2024-03-10 10:00:00 -0700" endDate="2024-03-10 10:00:00 -0700">
      <SensitivityPoint frequencyValue="1000" frequencyUnit="Hz" leftEarValue="10" leftEarUnit="dBHL"/>
     </Audiogram>
    </HealthData>

    """

  static func notRead(_ report: [String: Any], _ kind: String) -> (total: Int?, names: [String: Int]?) {
    let part = (report["notRead"] as? [String: Any])?[kind] as? [String: Any]
    return (part?["total"] as? Int, part?["names"] as? [String: Int])
  }

  /// By hand: the unknown `Annotation` inside a record is the one element no reader takes (the
  /// `Audiogram` is kept whole, its `SensitivityPoint` counted as a child). Attributes (the beats'
  /// `bpm` and `time` are read, by the beats job): the correlation's `sourceVersion` and
  /// `creationDate`; the workout's unknown `newTotal`; the route's `sourceVersion`; the four of
  /// the `SensitivityPoint` — 8. Files: `export_cda.xml` and a text file beside the ECGs; the
  /// route file, the two ECG files and the clinical record are read, the `._` resource fork is no
  /// file of the export — 2.
  @Test func anExportFolderCountedByHand() throws {
    let root = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: root) }
    let folder = root.appendingPathComponent("apple_health_export")
    for sub in ["workout-routes", "electrocardiograms", "clinical-records"] {
      try FileManager.default.createDirectory(
        at: folder.appendingPathComponent(sub), withIntermediateDirectories: true)
    }
    try Self.xml.write(to: folder.appendingPathComponent("export.xml"), atomically: true, encoding: .utf8)
    for file in [
      "export_cda.xml", "._export.xml", "electrocardiograms/ecg_2024-03-10.csv",
      "electrocardiograms/ecg_2024-03-11.csv",
      "clinical-records/Observation-1.json", "electrocardiograms/readme.txt",
    ] {
      try "x\n".write(to: folder.appendingPathComponent(file), atomically: true, encoding: .utf8)
    }
    try "<gpx/>\n".write(
      to: folder.appendingPathComponent("workout-routes/route_1.gpx"), atomically: true, encoding: .utf8)
    let report = try InspectCommandTests.inspectJSON(root.path)
    let elements = Self.notRead(report, "elements")
    #expect(elements.total == 1)
    #expect(elements.names == ["Annotation": 1])
    let attributes = Self.notRead(report, "attributes")
    #expect(attributes.total == 8)
    #expect(
      attributes.names == [
        "Correlation/@sourceVersion": 1, "Correlation/@creationDate": 1, "Workout/@newTotal": 1,
        "WorkoutRoute/@sourceVersion": 1, "SensitivityPoint/@frequencyValue": 1, "SensitivityPoint/@frequencyUnit": 1,
        "SensitivityPoint/@leftEarValue": 1, "SensitivityPoint/@leftEarUnit": 1,
      ])
    let files = Self.notRead(report, "files")
    #expect(files.total == 2)
    #expect(files.names == ["export_cda.xml": 1, "electrocardiograms/*.txt": 1])
    #expect((report["notRead"] as? [String: Any])?["filesListedWhole"] as? Bool == true)
    // The text form: the five most frequent names on one line.
    let text = try CLI.run(["inspect", root.path])
    #expect(
      text.stdout.contains(
        "Not read    Annotation (1), Correlation/@creationDate (1), Correlation/@sourceVersion (1), SensitivityPoint/@frequencyUnit (1), SensitivityPoint/@frequencyValue (1) … and 6 more\n"
      ))
  }

  /// The bundled sample: everything in its XML is read; its zip holds `export_cda.xml`, which no
  /// reader takes, and route files, which are read.
  @Test func theBundledSample() throws {
    let report = try InspectCommandTests.inspectJSON(CLI.sampleExport)
    #expect(Self.notRead(report, "files").names == ["export_cda.xml": 1])
    #expect(Self.notRead(report, "elements").total == 0)
  }

  /// A hostile export: a new attribute name on every record keeps the list bounded.
  @Test func manyNamesStayBounded() throws {
    let root = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: root) }
    var xml = "<HealthData>\n"
    for index in 0..<3000 {
      xml +=
        " <Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"P\" unit=\"count\" startDate=\"2024-03-10 07:00:00 +0000\" endDate=\"2024-03-10 07:01:00 +0000\" value=\"\(index)\" extra\(index)=\"1\"/>\n"
    }
    xml += "</HealthData>\n"
    let file = root.appendingPathComponent("export.xml")
    try xml.write(to: file, atomically: true, encoding: .utf8)
    let report = try InspectCommandTests.inspectJSON(file.path)
    let part = try #require((report["notRead"] as? [String: Any])?["attributes"] as? [String: Any])
    #expect(part["total"] as? Int == 3000)
    #expect((part["names"] as? [String: Int])?.count == 50)
    #expect(part["omitted"] as? Int == 2950)
  }
}

/// Real exports: the beats under HRV records are read (the beats job takes them in), so none is
/// listed as not read and the heart-rate pipeline writes as many as an independent byte scan
/// finds; a zip holding only the export and its routes has no file left unread.
@Suite(.enabled(if: CLI.realAvailable, "../shared/fixtures/real is not beside this checkout"))
struct NotReadRealFixtureTests {
  @Test func beatsAndFilesOfARealExport() throws {
    let zip = CLI.realRoot.appendingPathComponent("k0rventen__apple-health-grafana/tests/test-export.zip").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
      "python3", "-c",
      "import re,sys,zipfile; print(len(re.findall(rb'<InstantaneousBeatsPerMinute\\s', zipfile.ZipFile(sys.argv[1]).read('apple_health_export/export.xml'))))",
      zip,
    ]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let scanned = Int(
      String(decoding: pipe.fileHandleForReading.readToEndRetryingInterrupts(), as: UTF8.self)
        .trimmingCharacters(in: .whitespacesAndNewlines))
    process.waitUntilExit()
    // SOURCES.md counts 13,081 such elements in this export.
    #expect(scanned == 13_081)
    let report = try InspectCommandTests.inspectJSON(zip)
    #expect(NotReadTests.notRead(report, "attributes").total == 0)
    #expect(NotReadTests.notRead(report, "files").total == 0)
    #expect(NotReadTests.notRead(report, "elements").total == 0)
    let out = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: out) }
    let result = try CLI.run(["run", "--quiet", "--pipeline", CLI.pipeline("heart-rate"), "--out", out.path, zip])
    #expect(result.status == 0, "\(result.stderr)")
    let beats = try String(contentsOf: out.appendingPathComponent("heart_beats.csv"), encoding: .utf8)
    // One header line, then one line per beat.
    #expect(beats.split(separator: "\n").count - 1 == scanned)
  }
}
