import Foundation
import Testing

/// `--recover` end to end (Pipelines/docs/input.md, "Bad input"): a broken export is refused with
/// exit 65 and one line saying where, what and what to do; with `--recover` the run keeps what it
/// can trust, exits 0, and says what it left out in `run.json` and the report; `nightly` never
/// recovers and names `--recover` when it quarantines.
@Suite struct RecoverCommandTests {
  static let record = #"type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count""#
  static func span(_ day: Int, _ from: String, _ to: String) -> String {
    #"startDate="2024-01-0\#(day) \#(from):00 +0100" endDate="2024-01-0\#(day) \#(to):00 +0100""#
  }

  /// Three workouts, the second left unclosed by the app that wrote it (lines 8–11), records
  /// around them: 4 records of 100, 200, 300 and 400 steps on four days, the first and third
  /// workouts whole.
  static let export = """
    <?xml version="1.0" encoding="UTF-8"?>
    <HealthData locale="en_US">
     <ExportDate value="2024-01-10 10:00:00 +0100"/>
     <Record \(record) value="100" \(span(1, "10:00", "10:05"))/>
     <Workout workoutActivityType="HKWorkoutActivityTypeRunning" sourceName="Watch" duration="30" durationUnit="min" \(span(2, "10:00", "10:30"))>
      <WorkoutEvent type="HKWorkoutEventTypePause" date="2024-01-02 10:10:00 +0100"/>
     </Workout>
     <Workout workoutActivityType="HKWorkoutActivityTypeCycling" sourceName="App" duration="60" durationUnit="min" \(span(3, "10:00", "11:00"))>
      <MetadataEntry key="HKIndoorWorkout" value="0"/>
      <WorkoutEvent type="HKWorkoutEventTypePause" date="2024-01-03 10:20:00 +0100"/>
      <WorkoutStatistics type="HKQuantityTypeIdentifierDistanceCycling" \(span(3, "10:00", "11:00")) sum="20" unit="km"/>
     <Record \(record) value="200" \(span(3, "12:00", "12:05"))/>
     <Record \(record) value="300" \(span(3, "13:00", "13:05"))>
      <MetadataEntry key="HKWasUserEntered" value="1"/>
     </Record>
     <Workout workoutActivityType="HKWorkoutActivityTypeWalking" sourceName="Watch" duration="40" durationUnit="min" \(span(4, "10:00", "10:40"))>
      <WorkoutEvent type="HKWorkoutEventTypeSegment" date="2024-01-04 10:20:00 +0100"/>
     </Workout>
     <Record \(record) value="400" \(span(5, "10:00", "10:05"))/>
    </HealthData>

    """

  static func scratch(_ text: String = export, name: String = "broken.xml") throws -> (URL, String) {
    let directory = try CLI.temporaryDirectory()
    let file = directory.appendingPathComponent(name)
    try text.write(to: file, atomically: true, encoding: .utf8)
    return (directory, file.path)
  }

  static func json(_ url: URL) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
  }

  /// What every command says of the broken export without --recover: where (the Record at
  /// line 12, column 168, that cannot be the Workout's child), what, and what to do.
  static func refusal(_ path: String) -> String {
    "healthetl: error: \(path):12:168: the export is not well-formed XML: the <Workout> opened at line 8 is never "
      + "closed: a <Record> starts inside it at line 12. `healthetl run --recover` (or inspect, validate --recover) "
      + "reads past the damage and keeps everything else, listing what it left out; or export again from the Health "
      + "app.\n"
  }

  static let summary =
    "left out 4 elements (1 MetadataEntry, 1 Workout, 1 WorkoutEvent, 1 WorkoutStatistics), lines 8–11; "
    + "read past 2 XML errors (the first at line 20, column 14: the <Workout> opened at line 8 is never closed: "
    + "</HealthData> comes where </Workout> was due)"

  /// The report's `export` section (Pipelines/report/DATA.md), from the data in the page.
  static func reportExport(_ out: URL) throws -> [String: Any] {
    let html = try String(contentsOf: out.appendingPathComponent("report.html"), encoding: .utf8)
    let marker = "<script type=\"application/json\" id=\"report-data\">"
    let start = try #require(html.range(of: marker, options: .backwards))
    let end = try #require(html.range(of: "</script>", range: start.upperBound..<html.endIndex))
    let data = try JSONSerialization.jsonObject(with: Data(html[start.upperBound..<end.lowerBound].utf8))
    return try #require((data as? [String: Any])?["export"] as? [String: Any])
  }

  @Test func withoutRecoverEveryCommandRefusesWithOneLine() throws {
    let (directory, path) = try Self.scratch()
    defer { try? FileManager.default.removeItem(at: directory) }
    let out = directory.appendingPathComponent("out")
    for arguments in [
      ["run", "--quiet", "--out", out.path], ["inspect"], ["validate"],
      ["run", "--allow-truncated", "--quiet", "--out", out.path],
    ] {
      let result = try CLI.run(arguments + [path])
      #expect(result.status == 65, "\(arguments)")
      #expect(result.stderr == Self.refusal(path), "\(arguments)")
      #expect(result.stdout.isEmpty, "\(arguments)")
    }
    #expect(!FileManager.default.fileExists(atPath: out.path))
  }

  @Test func runWithRecoverKeepsWhatItCanTrustAndSaysWhatItLeftOut() throws {
    let (directory, path) = try Self.scratch()
    defer { try? FileManager.default.removeItem(at: directory) }
    let out = directory.appendingPathComponent("out")
    let result = try CLI.run(["run", "--recover", "--pipeline", CLI.samplesPipeline, "--out", out.path, path])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      result.stderr.contains("\nhealthetl: recovered: \(Self.summary); see run.json (recovery)\n"), "\(result.stderr)")
    let report = try Self.json(out.appendingPathComponent("run.json"))
    #expect(report["recovered"] as? Bool == true)
    #expect(report["truncated"] as? Bool == false)
    let recovery = try #require(report["recovery"] as? [String: Any])
    #expect(recovery["errors"] as? Int == 2)
    #expect(
      recovery["dropped"] as? [String: Int] == [
        "Workout": 1, "MetadataEntry": 1, "WorkoutEvent": 1, "WorkoutStatistics": 1,
      ])
    #expect(recovery["skippedOmitted"] as? Int == 0)
    let skipped = try #require(recovery["skipped"] as? [[String: Any]])
    #expect(skipped.count == 1)
    #expect(skipped.first?["action"] as? String == "dropped")
    #expect(skipped.first?["element"] as? String == "Workout")
    #expect(skipped.first?["firstLine"] as? Int == 8)
    #expect(skipped.first?["lastLine"] as? Int == 11)
    #expect(skipped.first?["elements"] as? Int == 4)
    #expect(skipped.first?["reason"] as? String == "never closed: a <Record> starts inside it at line 12")
    let problems = try #require(recovery["problems"] as? [[String: Any]])
    #expect(problems.first?["libxml2"] as? String == "Opening and ending tag mismatch: Workout line 8 and HealthData")
    // All 4 records (the 3 after the unclosed workout included), 2 of the 3 workouts.
    #expect((report["types"] as? [String: Int])?["StepCount"] == 4)
    #expect((report["elements"] as? [String: Int])?["Workout"] == 2)
    #expect((report["elements"] as? [String: Int])?["Record"] == 4)
    let steps = try String(contentsOf: out.appendingPathComponent("samples/StepCount.csv"), encoding: .utf8)
    #expect(steps.split(separator: "\n").count == 5)
  }

  @Test func theReportSaysTheRunReadPastDamage() throws {
    let (directory, path) = try Self.scratch()
    defer { try? FileManager.default.removeItem(at: directory) }
    let out = directory.appendingPathComponent("out")
    let result = try CLI.run(["run", "--recover", "--quiet", "--out", out.path, path])
    #expect(result.status == 0, "\(result.stderr)")
    let export = try Self.reportExport(out)
    #expect(export["recovered"] as? String == Self.summary)
    #expect(export["workouts"] as? Int == 2)
  }

  @Test func aRunWithoutDamageHasNoRecoveryInItsReport() throws {
    let (directory, path) = try Self.scratch()
    defer { try? FileManager.default.removeItem(at: directory) }
    let whole = Self.export.replacingOccurrences(
      of: " <Record \(Self.record) value=\"200\"", with: " </Workout>\n <Record \(Self.record) value=\"200\"")
    try whole.write(toFile: path, atomically: true, encoding: .utf8)
    let out = directory.appendingPathComponent("out")
    #expect(try CLI.run(["run", "--recover", "--quiet", "--out", out.path, path]).status == 0)
    let report = try Self.json(out.appendingPathComponent("run.json"))
    #expect(report["recovered"] as? Bool == false)
    let recovery = try #require(report["recovery"] as? [String: Any])
    #expect(recovery["errors"] as? Int == 0)
    #expect((recovery["skipped"] as? [Any])?.isEmpty == true)
    #expect(try Self.reportExport(out)["recovered"] == nil)
    // Without the flag, run.json says so too.
    #expect(try CLI.run(["run", "--quiet", "--out", out.path, path]).status == 0)
    let plain = try Self.json(out.appendingPathComponent("run.json"))
    #expect(plain["recovered"] as? Bool == false)
    #expect(plain["recovery"] is NSNull)
  }

  /// A stray '<' before the first record: libxml2 stops there, nothing usable is left, and the run
  /// fails as any export without data does (exit 65), with --recover too.
  @Test func nothingUsableIsStillAFailure() throws {
    let text = """
      <?xml version="1.0" encoding="UTF-8"?>
      <HealthData locale="en_US">
       <3 <Record \(Self.record) value="100" \(Self.span(1, "10:00", "10:05"))/>
      </HealthData>

      """
    let (directory, path) = try Self.scratch(text)
    defer { try? FileManager.default.removeItem(at: directory) }
    let out = directory.appendingPathComponent("out")
    let result = try CLI.run(["run", "--recover", "--quiet", "--out", out.path, path])
    #expect(result.status == 65)
    #expect(
      result.stderr
        == "healthetl: error: the export holds no records, workouts or activity summaries; nothing was written. Export "
        + "again from the Health app (profile picture → Export All Health Data).\n")
    #expect(!FileManager.default.fileExists(atPath: out.path))
  }

  @Test func inspectAndValidateWithRecover() throws {
    let (directory, path) = try Self.scratch()
    defer { try? FileManager.default.removeItem(at: directory) }
    let inspect = try CLI.run(["inspect", "--recover", path])
    #expect(inspect.status == 0, "\(inspect.stderr)")
    #expect(
      inspect.stdout.contains(
        "\nRECOVERED   \(Self.summary)\n  lines 8–11: left out <Workout> and 3 elements in it: never closed: a <Record> "
          + "starts inside it at line 12\n"), "\(inspect.stdout)")
    let contradiction = try CLI.run(["inspect", "--recover", "--strict", path])
    #expect(contradiction.status == 64)
    #expect(
      contradiction.stderr.hasPrefix(
        "healthetl: error: --strict (fail on an export that ends early) and --recover (read past damage) contradict "
          + "each other"))
    // validate lists every damaged part, and the export has problems: exit 65.
    let validate = try CLI.run(["validate", "--recover", path])
    #expect(validate.status == 65)
    #expect(
      validate.stdout == """
        \(path): 3 problem lines
          line 20, column 14: the <Workout> opened at line 8 is never closed: </HealthData> comes where </Workout> was due
          line 20, column 14: </HealthData> is missing at the end (or libxml2 took it to close another element)
            lines 8–11: <Workout> left out with 3 element(s) in it: never closed: a <Record> starts inside it at line 12

        """)
  }

  @Test func nightlyQuarantinesAndNamesRecover() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let inbox = work.appendingPathComponent("inbox")
    let out = work.appendingPathComponent("out")
    try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
    try Self.export.write(to: inbox.appendingPathComponent("broken.xml"), atomically: true, encoding: .utf8)
    let result = try NightlyTests.nightly(inbox, out)
    #expect(result.status == 65, "\(result.stderr)")
    let reason =
      "not well-formed XML at line 12, column 168: the <Workout> opened at line 8 is never closed: a <Record> starts "
      + "inside it at line 12; `healthetl run --recover` on it keeps what is readable"
    #expect(
      result.stderr.contains(
        "\nhealthetl: nightly: quarantined broken.xml (exit 65): \(reason); it is skipped until its content changes\n"),
      "\(result.stderr)")
    let nightly = try #require(try Self.json(out.appendingPathComponent("run.json"))["nightly"] as? [String: Any])
    #expect((nightly["quarantined"] as? [[String: Any]])?.first?["reason"] as? String == reason)
    // A night never reads past damage: the flag does not exist there.
    // An export cut short gets a short reason of its own that keeps its hint; before, the whole
    // message was cut at 80 characters, inside the temporary path.
    try FileManager.default.removeItem(at: inbox.appendingPathComponent("broken.xml"))
    let whole = Self.export.components(separatedBy: "\n").prefix(7).joined(separator: "\n")
    try (whole + "\n <Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"P")
      .write(to: inbox.appendingPathComponent("cut.xml"), atomically: true, encoding: .utf8)
    let cut = try NightlyTests.nightly(inbox, out)
    #expect(cut.status == 65, "\(cut.stderr)")
    let cutReason = try #require(
      (try Self.json(out.appendingPathComponent("run.json"))["nightly"] as? [String: Any]).flatMap {
        ($0["quarantined"] as? [[String: Any]])?.last?["reason"] as? String
      })
    #expect(
      cutReason
        == "the export ends too early at line 8: an attribute value whose closing quote is missing; "
        + "`healthetl run --allow-truncated` on it keeps what comes before", "\(cut.stderr)")
    let refused = try CLI.run(NightlyTests.nightlyArguments(inbox, out) + ["--recover"])
    #expect(refused.status == 64)
    #expect(refused.stderr.hasPrefix("healthetl: error: unknown option '--recover'"), "\(refused.stderr)")
  }
}
