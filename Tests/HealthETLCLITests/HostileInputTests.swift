import Foundation
import Testing

/// What the real binary says and does when an export, a file name, a command line or the output
/// folder is hostile or broken (README.md, "Exit codes"; Pipelines/docs/input.md, "Bad input").
@Suite struct HostileInputTests {
  static let header = """
    <?xml version="1.0" encoding="UTF-8"?>
    <HealthData locale="en_US">
     <ExportDate value="2024-03-20 08:00:00 +0100"/>

    """

  static func write(_ text: String, to url: URL) throws { try text.write(to: url, atomically: true, encoding: .utf8) }

  /// Every record rejected: one without `sourceName`, one of 1e308 bpm, one dated year 1.
  static let nothingUsable =
    header + """
       <Record type="HKQuantityTypeIdentifierStepCount" unit="count" startDate="2024-03-18 10:00:00 +0100" endDate="2024-03-18 10:05:00 +0100" value="5"/>
       <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="W" unit="count/min" startDate="2024-03-18 10:00:00 +0100" endDate="2024-03-18 10:00:00 +0100" value="1e308"/>
       <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="W" unit="count/min" startDate="0001-03-18 10:00:00 +0100" endDate="0001-03-18 10:00:00 +0100" value="60"/>
      </HealthData>

      """

  @Test func aRunInWhichNothingIsUsableIsExit65AndWritesNothing() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let export = work.appendingPathComponent("export.xml")
    try Self.write(Self.nothingUsable, to: export)
    let out = work.appendingPathComponent("out")
    let result = try CLI.run(["run", "--quiet", "--out", out.path, export.path])
    #expect(result.status == 65)
    #expect(
      result.stderr
        == "healthetl: error: nothing in the export can be used: every one of its 3 records and workouts was rejected (line 4: Record rejected, missing attribute: no sourceName attribute); nothing was written. `healthetl validate` lists every problem.\n"
    )
    #expect(!FileManager.default.fileExists(atPath: out.path))

    let empty = work.appendingPathComponent("empty.xml")
    try Self.write(Self.header + "</HealthData>\n", to: empty)
    let none = try CLI.run(["run", "--quiet", "--out", out.path, empty.path])
    #expect(none.status == 65)
    #expect(none.stderr.contains("the export holds no records, workouts or activity summaries"))
  }

  /// An export nothing can be used of is quarantined by the night, which goes on to the next one.
  @Test func theNightQuarantinesAnUnusableExportAndGoesOn() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let inbox = work.appendingPathComponent("inbox")
    try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
    try Self.write(Self.nothingUsable, to: inbox.appendingPathComponent("a-unusable.xml"))
    try FileManager.default.copyItem(
      atPath: RunCommandTests.tiny, toPath: inbox.appendingPathComponent("b-good.xml").path)
    let out = work.appendingPathComponent("out")
    let result = try CLI.run(["nightly", "--inbox", inbox.path, "--out", out.path, "--pipeline", CLI.pipeline("sleep")])
    #expect(result.status == 65, "\(result.stderr)")
    #expect(result.stderr.contains("processed 1 export(s) (b-good.xml)"))
    #expect(result.stderr.contains("quarantined a-unusable.xml (exit 65): nothing in the export can be used"))
  }

  /// A name with a line break is one line of stderr, escaped: it cannot forge another.
  @Test func anInboxNameCannotForgeALineOfStderr() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let inbox = work.appendingPathComponent("inbox")
    try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
    let forged = "x\nhealthetl: nightly: processed 9 export(s)\u{1B}[2J.zip"
    try Self.write("not an export", to: inbox.appendingPathComponent(forged))
    let result = try CLI.run([
      "nightly", "--inbox", inbox.path, "--out", work.appendingPathComponent("out").path, "--pipeline",
      CLI.pipeline("sleep"),
    ])
    #expect(result.status == 65)
    let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    #expect(lines.count == 2, "\(result.stderr)")
    #expect(lines.filter { $0.hasPrefix("healthetl: nightly: processed") }.count == 1)
    #expect(result.stderr.contains("quarantined x\\nhealthetl: nightly: processed 9 export(s)\\u{1B}[2J.zip"))
    #expect(!result.stderr.contains("\u{1B}"))
  }

  @Test func pipelinesThatClashTogetherFailTheCheckAsTheyFailARun() throws {
    let sleep = CLI.pipeline("sleep")
    let check = try CLI.run(["pipelines", "check", sleep, sleep])
    #expect(check.status == 64)
    #expect(check.stdout == "\(sleep): ok (1 jobs)\n\(sleep): ok (1 jobs)\n")
    #expect(check.stderr.contains("'sleep_daily.csv' is also written by job 'sleep'"))
    let together = try CLI.run(["pipelines", "check", sleep, CLI.pipeline("workouts")])
    #expect(together.status == 0, "\(together.stderr)")
    #expect(together.stdout.hasSuffix("together: ok (2 jobs)\n"))
  }

  @Test(arguments: [
    (["--start", "9999-12-31", "--days", "5"], "5 days from 9999-12-31 end after 9998-12-31"),
    (["--start", "1999-12-31"], "the start date must be 2000-01-01 or later"),
  ])
  func sampleOptionsThatMakeNoExportAreAUsageError(options: [String], message: String) throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let result = try CLI.run(["sample"] + options + ["--out", work.appendingPathComponent("s.xml").path])
    #expect(result.status == 64)
    #expect(result.stderr.contains(message), "\(result.stderr)")
  }

  /// A zip whose end is missing (an interrupted download) is cut short even when the export's
  /// XML came through whole: the routes after it did not.
  @Test(arguments: [300, 2_000])
  func aZipMissingItsEndIsTruncated(missing: Int) throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let whole = try Data(contentsOf: URL(fileURLWithPath: CLI.sampleExport))
    let cut = work.appendingPathComponent("export.zip")
    try whole.prefix(whole.count - missing).write(to: cut)
    let out = work.appendingPathComponent("out")
    let result = try CLI.run(["run", "--quiet", "--pipeline", CLI.pipeline("workouts"), "--out", out.path, cut.path])
    #expect(result.status == 65)
    #expect(result.stderr.contains("the zip archive is cut short"), "\(result.stderr)")
    #expect(!FileManager.default.fileExists(atPath: out.path))
    let kept = try CLI.run([
      "run", "--quiet", "--allow-truncated", "--pipeline", CLI.pipeline("workouts"), "--out", out.path, cut.path,
    ])
    #expect(kept.status == 0, "\(kept.stderr)")
    let report = try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("run.json")))
    #expect((report as? [String: Any])?["truncated"] as? Bool == true)
  }

  @Test(arguments: [Data([0x50]), Data("%PDF-1.4\n%âãÏÓ\n".utf8)])
  func aFileNamedZipThatIsNoZipIsSaidToBeNoZip(content: Data) throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let file = work.appendingPathComponent("export.zip")
    try content.write(to: file)
    let result = try CLI.run(["inspect", file.path])
    #expect(result.status == 65)
    #expect(result.stderr.contains("its name ends in .zip, but it is not a zip archive"), "\(result.stderr)")
  }

  /// A text over a cell's 32,767 characters is cut in health.xlsx, whole in the CSV, and counted.
  @Test func textsCutToACellAreCountedInRunJSON() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let source = String(repeating: "Sleep app ", count: 4_000)  // 40,000 characters
    let export = work.appendingPathComponent("export.xml")
    try Self.write(
      Self.header + """
         <Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="\(source)" startDate="2024-03-17 23:00:00 +0100" endDate="2024-03-18 06:30:00 +0100" value="HKCategoryValueSleepAnalysisAsleepUnspecified"/>
        </HealthData>

        """, to: export)
    let out = work.appendingPathComponent("out")
    let result = try CLI.run(["run", "--quiet", "--out", out.path, export.path])
    #expect(result.status == 0, "\(result.stderr)")
    let report = try #require(
      try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("run.json"))) as? [String: Any]
    )
    let sheets = try #require((report["workbook"] as? [String: Any])?["sheets"] as? [[String: Any]])
    let cut = Dictionary(
      uniqueKeysWithValues: sheets.map { ($0["table"] as? String ?? "", $0["truncatedTexts"] as? Int) })
    #expect(cut["Sleep"] == 1)
    #expect(cut["Daily"] == 0)
    let csv = try String(contentsOf: out.appendingPathComponent("sleep_daily.csv"), encoding: .utf8)
    #expect(csv.contains(source.trimmingCharacters(in: .whitespaces)))
  }

  /// An output folder the run may not change (`chattr +i`) is exit 73, not a failure part-way.
  @Test func anImmutableOutputFolderIsExit73() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let out = work.appendingPathComponent("out")
    let sleep = ["run", "--quiet", "--pipeline", CLI.pipeline("sleep"), "--out", out.path, CLI.sampleExport]
    #expect(try CLI.run(sleep).status == 0)
    guard try Self.chattr("+i", out.path) else { return }  // not root, or a file system without it
    defer { _ = try? Self.chattr("-i", out.path) }
    let result = try CLI.run(sleep)
    #expect(result.status == 73, "\(result.stderr)")
    #expect(result.stderr.contains("cannot create output"))
  }

  static func chattr(_ flag: String, _ path: String) throws -> Bool {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["chattr", flag, path]
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus == 0
  }
}
