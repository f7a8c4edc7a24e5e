import Foundation
import Testing

/// Every way a run cannot go on ends with one clear line on stderr and the documented exit code,
/// and leaves nothing behind (README.md, "Exit codes"; Pipelines/docs/input.md, "Bad input" and
/// "Output files"). Each test reproduces a case that used to end otherwise.
@Suite struct RefusalTests {
  static let tiny = RunCommandTests.tiny

  /// Runs `script` with `/bin/sh -c`, `$B` being the binary; stdout and stderr captured.
  static func shell(_ script: String, in directory: URL? = nil, environment: [String: String] = [:]) throws
    -> CLI.Result
  {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", script]
    process.environment = ProcessInfo.processInfo.environment.merging(["B": CLI.binary]) { $1 }
      .merging(environment) { $1 }
    if let directory { process.currentDirectoryURL = directory }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let stdout = out.fileHandleForReading.readToEndRetryingInterrupts()
    let stderr = err.fileHandleForReading.readToEndRetryingInterrupts()
    process.waitUntilExit()
    return CLI.Result(
      status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
      stderr: String(decoding: stderr, as: UTF8.self))
  }

  static func lines(_ text: String) -> [Substring] { text.split(separator: "\n") }

  // MARK: - The output folder

  /// `--out /` from `/` wrote every output into `/`; from elsewhere it hard-linked the whole tree
  /// into a staging folder and then failed with exit 74. An output folder that holds the export
  /// (here `.` beside it) is refused the same way, before anything is created.
  @Test func theRootAndAFolderHoldingTheInputAreRefused() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    try FileManager.default.copyItem(atPath: Self.tiny, toPath: work.appendingPathComponent("export.xml").path)
    let root = try CLI.run(["run", "--quiet", "--out", "/", "export.xml"], in: work)
    #expect(root.status == 64)
    #expect(root.stderr.contains("--out /: is the root of the file system"), "\(root.stderr)")
    #expect(Self.lines(root.stderr).count == 1)
    for out in [".", work.path, work.deletingLastPathComponent().path] {
      let result = try CLI.run(["run", "--quiet", "--out", out, "export.xml"], in: work)
      #expect(result.status == 64, "\(out): \(result.stderr)")
      #expect(result.stderr.contains("holds the export export.xml"), "\(result.stderr)")
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: work.path) == ["export.xml"])
  }

  /// `--out ""` said "The file doesn't exist.." and a dangling link "A file with the same name
  /// already exists..": each now says what is wrong, and no exit-73 message ends in "..".
  @Test func anEmptyOrDanglingOutIsSaidPlainly() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let empty = try CLI.run(["run", "--quiet", "--out", "", Self.tiny])
    #expect(empty.status == 64)
    #expect(empty.stderr.contains(#"--out "": is empty"#), "\(empty.stderr)")
    let link = work.appendingPathComponent("out")
    try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "/nonexistent/healthetl-out")
    let dangling = try CLI.run(["run", "--quiet", "--out", link.path, Self.tiny])
    #expect(dangling.status == 73)
    #expect(
      dangling.stderr.contains("it is a symbolic link to /nonexistent/healthetl-out, which does not exist"),
      "\(dangling.stderr)")
    let file = try CLI.run(["run", "--quiet", "--out", Self.tiny, Self.tiny])
    #expect(file.status == 73)
    #expect(file.stderr.contains("it exists and is not a folder"))
    let proc = try CLI.run(["run", "--quiet", "--out", "/proc/healthetl-cannot-write", Self.tiny])
    #expect(proc.status == 73)
    for result in [dangling, file, proc] {
      #expect(!result.stderr.contains(".."), "\(result.stderr)")
      #expect(Self.lines(result.stderr).count == 1)
    }
  }

  /// `run --out y /nonexistent.zip` exited 66 and left `y/.healthetl.lock`; a run that failed on
  /// its input left the folders it had created. Now the input is checked first, and a failed run
  /// removes the folders it made.
  @Test func aFailedRunLeavesNoFolderItCreated() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let missing = try CLI.run(["run", "--quiet", "--out", "y", "/nonexistent/export.zip"], in: work)
    #expect(missing.status == 66)
    let broken = work.appendingPathComponent("broken.xml")
    try "<?xml version=\"1.0\"?>\n<HealthData locale=\"en\">\n<Record type=\"x\"".write(
      to: broken, atomically: true, encoding: .utf8)
    let failed = try CLI.run(["run", "--quiet", "--out", "a/b/c", "broken.xml"], in: work)
    #expect(failed.status == 65, "\(failed.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: work.path) == ["broken.xml"])
    // A folder that existed before stays, lock file and all.
    try FileManager.default.createDirectory(at: work.appendingPathComponent("kept"), withIntermediateDirectories: true)
    #expect(try CLI.run(["run", "--quiet", "--out", "kept", "broken.xml"], in: work).status == 65)
    #expect(FileManager.default.fileExists(atPath: work.appendingPathComponent("kept").path))
  }

  // MARK: - Standard output

  /// `inspect` and `pipelines explain` exited 0 with stdout on /dev/full or closed.
  @Test func aStandardOutputThatCannotBeWrittenIsExit74() throws {
    let explain = "\"$B\" pipelines explain \(CLI.pipeline("default"))"
    for (script, reason) in [
      ("\"$B\" inspect \(Self.tiny) > /dev/full", "No space left on device"),
      ("\(explain) > /dev/full", "No space left on device"),
      ("\"$B\" inspect \(Self.tiny) >&-", "Bad file descriptor"),
      ("\(explain) >&-", "Bad file descriptor"),
    ] {
      let result = try Self.shell(script)
      #expect(result.status == 74, "\(script)")
      #expect(
        result.stderr == "healthetl: error: cannot write to standard output: \(reason); what it shows is incomplete\n",
        "\(script): \(result.stderr)")
    }
    // `sample --out /dev/stdout` writes through its own descriptor: a full disk and a closed
    // stdout (which it used to reopen as /dev/null, then report "wrote") are both exit 74.
    let sample = "\"$B\" sample --days 2 --seed 1 --out /dev/stdout"
    for (script, message) in [
      ("\(sample) > /dev/full", "cannot write /dev/stdout: No space left on device"),
      ("\(sample) >&-", "cannot write /dev/stdout: standard output is closed or not writable"),
    ] {
      let result = try Self.shell(script)
      #expect(result.status == 74, "\(script)")
      #expect(result.stderr == "healthetl: error: \(message)\n", "\(script): \(result.stderr)")
    }
  }

  /// `sample --out /dev/stdout | head` was killed by SIGPIPE without a word. SIGPIPE is ignored,
  /// so the write fails with EPIPE: one line and exit 74.
  @Test func aReaderThatGoesAwayIsExit74() throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CLI.binary)
    process.arguments = ["sample", "--days", "10", "--seed", "1", "--out", "/dev/stdout"]
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let head = try out.fileHandleForReading.read(upToCount: 100)
    #expect(head?.count == 100)
    try out.fileHandleForReading.close()
    let stderr = String(decoding: err.fileHandleForReading.readToEndRetryingInterrupts(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationReason == .exit)
    #expect(process.terminationStatus == 74)
    #expect(stderr == "healthetl: error: cannot write /dev/stdout: Broken pipe\n", "\(stderr)")
  }

  // MARK: - Input problems

  /// `encoding="EBCDIC-US"` printed libxml2's own "encoding error : input conversion failed"
  /// line besides HealthETL's; a UTF-16 export was "not XML (Document is empty)".
  @Test func anotherEncodingIsOneCleanLine() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let ebcdic = work.appendingPathComponent("ebcdic.xml")
    try "<?xml version=\"1.0\" encoding=\"EBCDIC-US\"?>\n<HealthData locale=\"en_US\">\n</HealthData>\n".write(
      to: ebcdic, atomically: true, encoding: .utf8)
    let declared = try CLI.run(["inspect", ebcdic.path])
    #expect(declared.status == 65)
    #expect(
      declared.stderr.hasPrefix("healthetl: error: \(ebcdic.path) declares encoding=\"EBCDIC-US\""),
      "\(declared.stderr)")
    #expect(Self.lines(declared.stderr).count == 1, "\(declared.stderr)")
    let utf16 = work.appendingPathComponent("export.xml")
    let text = try String(contentsOfFile: Self.tiny, encoding: .utf8)
    try #require(text.data(using: .utf16)).write(to: utf16)
    let converted = try CLI.run(["run", "--quiet", "--out", work.appendingPathComponent("out").path, utf16.path])
    #expect(converted.status == 65)
    #expect(converted.stderr.contains("is UTF-16LE text, but the Health app writes exports in UTF-8"))
    #expect(Self.lines(converted.stderr).count == 1)
  }

  /// A multi-megabyte value in a rejected record was copied whole into the message of `--strict`
  /// and into `run.json`'s examples; quoted values are now at most 80 characters. (libxml2 itself
  /// refuses one value of 10,000,000 bytes or more as "Huge input lookup": 9 MB stays under it.)
  @Test func aHugeRejectedValueIsQuotedAsAnExcerpt() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let huge = String(repeating: "9x", count: 4_500_000)
    let export = work.appendingPathComponent("export.xml")
    try """
    <?xml version="1.0" encoding="UTF-8"?>
    <HealthData locale="en_US">
     <Record type="HKQuantityTypeIdentifierStepCount" sourceName="S" value="\(huge)" startDate="2024-01-01 10:00:00 +0100" endDate="2024-01-01 10:05:00 +0100"/>
     <Record type="HKQuantityTypeIdentifierStepCount" sourceName="S" value="5" startDate="\(huge)" endDate="2024-01-01 10:05:00 +0100"/>
     <Record type="HKQuantityTypeIdentifierStepCount" sourceName="S" value="7" startDate="2024-01-01 11:00:00 +0100" endDate="2024-01-01 11:05:00 +0100"/>
    </HealthData>

    """.write(to: export, atomically: true, encoding: .utf8)
    let out = work.appendingPathComponent("out")
    let run = try CLI.run(["run", "--quiet", "--pipeline", CLI.samplesPipeline, "--out", out.path, export.path])
    #expect(run.status == 0, "\(run.stderr)")
    let report = try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("run.json")))
    let examples = try #require((report as? [String: Any])?["rejectedExamples"] as? [String: [[String: Any]]])
    let excerpt = String(repeating: "9x", count: 39) + "9…"
    #expect(examples["non-numeric value"]?.first?["detail"] as? String == "StepCount value=\"\(excerpt)\"")
    #expect(examples["unparseable date"]?.first?["detail"] as? String == "startDate=\"\(excerpt)\"")
    let strict = try CLI.run(["run", "--quiet", "--strict", "--out", out.path, export.path])
    #expect(strict.status == 65)
    #expect(strict.stderr.count < 600, "\(strict.stderr.prefix(600))")
    #expect(strict.stderr.contains("StepCount value=\"\(excerpt)\""))
  }

  /// With `TZDIR` pointing nowhere every `HKTimeZone` was "unknown" and the run silently used a
  /// fixed offset, an hour off for half the year. Now it fails: exit 74, one line.
  @Test func aMissingTimeZoneDatabaseFailsTheRun() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let out = work.appendingPathComponent("out").path
    let environment = ProcessInfo.processInfo.environment.merging(["TZDIR": "/nonexistent/zoneinfo"]) { $1 }
    for arguments in [
      ["run", "--quiet", "--pipeline", CLI.samplesPipeline, "--out", out, Self.tiny],
      ["run", "--quiet", "--tz", "Europe/Berlin", "--out", out, Self.tiny],
      ["inspect", Self.tiny],
    ] {
      let result = try CLI.run(arguments, environment: environment)
      #expect(result.status == 74, "\(arguments): \(result.stderr)")
      #expect(
        result.stderr.hasPrefix(
          "healthetl: error: the time zone database /nonexistent/zoneinfo is missing or holds no zones"),
        "\(result.stderr)")
      #expect(Self.lines(result.stderr).count == 1)
    }
    #expect(!FileManager.default.fileExists(atPath: out))
    // A pipeline that names a zone is not to blame either: `pipelines check` and `run` say
    // what is missing, exit 74 (before, "timezone: the time zone database …", exit 64).
    let zoned = work.appendingPathComponent("zoned.json")
    try #"{"version": 1, "name": "zoned", "timezone": "Europe/Berlin", "jobs": [{"name": "s", "kind": "sleep"}]}"#
      .write(
        to: zoned, atomically: true, encoding: .utf8)
    for arguments in [
      ["pipelines", "check", zoned.path], ["run", "--quiet", "--pipeline", zoned.path, "--out", out, Self.tiny],
    ] {
      let result = try CLI.run(arguments, environment: environment)
      #expect(result.status == 74, "\(arguments): \(result.stderr)")
      #expect(
        result.stderr.hasPrefix("healthetl: error: the time zone database /nonexistent/zoneinfo is missing"),
        "\(result.stderr)")
    }
    let checked = try CLI.run(["pipelines", "check", zoned.path])
    #expect(checked.status == 0, "\(checked.stderr)")
    // An empty TZDIR folder is no database either; the real one still works.
    let empty = work.appendingPathComponent("zoneinfo")
    try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
    let emptyResult = try CLI.run(
      ["inspect", Self.tiny], environment: environment.merging(["TZDIR": empty.path]) { $1 })
    #expect(emptyResult.status == 74)
    let real = try CLI.run(
      ["inspect", Self.tiny], environment: environment.merging(["TZDIR": "/usr/share/zoneinfo"]) { $1 })
    #expect(real.status == 0, "\(real.stderr)")
    #expect(real.stdout.contains("America/Los_Angeles"))
  }

  /// A disk error in the middle of the export (strace makes every `read` of it from the third on
  /// fail with EIO) was "cannot be read", exit 66, as if the file were missing; it is an I/O
  /// error, exit 74, and the output folder is not created.
  @Test(.enabled(if: DeliveryContractTests.strace != nil, "strace is not installed (make deps installs it)"))
  func aDiskErrorWhileReadingIsAnIOError() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let export = work.appendingPathComponent("export.xml")
    let sample = try CLI.run(["sample", "--days", "10", "--out", export.path])
    try #require(sample.status == 0, "\(sample.stderr)")
    let out = work.appendingPathComponent("out").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: DeliveryContractTests.strace!)
    process.arguments =
      ["-f", "-qq", "-o", "/dev/null", "-P", export.path, "-e", "trace=read", "-e", "inject=read:error=EIO:when=3+"]
      + [CLI.binary, "run", "--quiet", "--out", out, export.path]
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    let stderr = String(decoding: errors.fileHandleForReading.readToEndRetryingInterrupts(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 74, "\(stderr)")
    #expect(
      stderr.hasPrefix("healthetl: error: \(export.path): reading failed part-way (Input/output error)"), "\(stderr)")
    #expect(Self.lines(stderr).count == 1)
    #expect(!FileManager.default.fileExists(atPath: out))
    // The same file without the fault is read whole.
    #expect(try CLI.run(["run", "--quiet", "--out", out, export.path]).status == 0)
  }

  /// A zip on standard input with two exports: the second is only seen after the first was read,
  /// and fails the run (exit 65) naming both.
  @Test func twoExportsOnStandardInputAreRefused() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let zip = work.appendingPathComponent("two.zip")
    let python = Process()
    python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    python.arguments = [
      "python3", "-c",
      """
      import sys, zipfile
      with zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED) as z:
          z.write(sys.argv[1], 'apple_health_export/export.xml')
          z.write(sys.argv[1], 'apple_health_export/Export.xml')
      """, Self.tiny, zip.path,
    ]
    try python.run()
    python.waitUntilExit()
    let out = work.appendingPathComponent("out").path
    let result = try CLI.run(["run", "--quiet", "--out", out, "-"], stdin: try Data(contentsOf: zip))
    #expect(result.status == 65)
    #expect(
      result.stderr
        == "healthetl: error: - holds more than one export (apple_health_export/export.xml and apple_health_export/Export.xml); HealthETL will not guess which one you mean. Pass the one you mean as EXPORT itself (unzip a zip first), or export again from the Health app.\n"
    )
    #expect(!FileManager.default.fileExists(atPath: out))
  }

  /// A 3 MB unknown `timezone` in a pipeline (and a 100 kB `--tz`) was echoed whole; the other
  /// values of a pipeline file already were excerpts.
  @Test func aHugeUnknownZoneIsQuotedAsAnExcerpt() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let zone = String(repeating: "Z", count: 3_000_000)
    let pipeline = work.appendingPathComponent("zone.json")
    try #"{"version":1,"name":"x","timezone":"\#(zone)","jobs":[{"name":"s","kind":"sleep"}]}"#.write(
      to: pipeline, atomically: true, encoding: .utf8)
    let excerpt = "'" + String(repeating: "Z", count: 77) + "…'"
    let check = try CLI.run(["pipelines", "check", pipeline.path])
    #expect(check.status == 64)
    #expect(
      check.stderr.count < 400 && check.stderr.contains("unknown time zone \(excerpt)"), "\(check.stderr.prefix(400))")
    // One command-line argument is at most 128 KiB (MAX_ARG_STRLEN).
    let argument = String(zone.prefix(100_000))
    let run = try CLI.run(
      ["run", "--quiet", "--tz", argument, "--out", work.appendingPathComponent("out").path, Self.tiny])
    #expect(run.status == 64)
    #expect(run.stderr.count < 400 && run.stderr.contains("unknown time zone \(excerpt)"), "\(run.stderr.prefix(400))")
  }

  // MARK: - What check refuses

  /// Each pipeline here passed `pipelines check` and then failed `run` (exit 73 or 74, "I/O
  /// error", "NSCocoaErrorDomain error 512"), or silently overwrote a file of HealthETL's own.
  /// Now `check` refuses each with exit 64 and the key path, and `run` refuses it the same way
  /// before it creates anything.
  @Test(arguments: [
    (#"[{"name":"s","kind":"sleep","outputs":[{"table":"daily","file":"x.csv/"}]}]"#, "jobs[0].outputs[0].file"),
    (#"[{"name":"s","kind":"sleep","outputs":[{"table":"daily","file":"."}]}]"#, "jobs[0].outputs[0].file"),
    (#"[{"name":"s","kind":"sleep","outputs":[{"table":"daily","file":"dir/"}]}]"#, "jobs[0].outputs[0].file"),
    (
      #"[{"name":"s","kind":"sleep","outputs":[{"table":"daily","file":"stats"}]},{"name":"st","kind":"statistics","type":"StepCount","interval":"1d","options":["sum"]}]"#,
      "jobs[1].outputs"
    ),
    (
      #"[{"name":"s","kind":"sleep","outputs":[{"table":"daily","file":".healthetl-state.json"}]}]"#,
      "jobs[0].outputs[0].file"
    ),
    (
      #"[{"name":"s","kind":"sleep","outputs":[{"table":"daily","file":"workout_records.new.json"}]}]"#,
      "jobs[0].outputs[0].file"
    ),
    (#"[{"name":"s","kind":"sleep","outputs":[{"table":"daily","file":"run.json"}]}]"#, "jobs[0].outputs[0].file"),
    (
      #"[{"name":"s","kind":"sleep","outputs":[{"table":"daily","file":".healthetl.lock"}]}]"#,
      "jobs[0].outputs[0].file"
    ),
    (
      #"[{"name":"s","kind":"sleep","outputs":[{"table":"daily","file":"d/x.csv"},{"table":"sessions","file":"d//x.csv"}]}]"#,
      "jobs[0].outputs"
    ),
  ])
  func checkRefusesWhatRunWouldRefuse(jobs: String, keyPath: String) throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let pipeline = work.appendingPathComponent("p.json")
    try #"{"version":1,"name":"p","jobs":\#(jobs)}"#.write(to: pipeline, atomically: true, encoding: .utf8)
    let check = try CLI.run(["pipelines", "check", pipeline.path])
    #expect(check.status == 64, "\(jobs): \(check.stdout)")
    #expect(check.stderr.contains(": \(keyPath): "), "\(check.stderr)")
    // The file is quoted once ("'run.json' 'run.json' is a file …" before).
    #expect(!check.stderr.contains("' '"), "\(check.stderr)")
    let out = work.appendingPathComponent("out")
    let run = try CLI.run(["run", "--quiet", "--pipeline", pipeline.path, "--out", out.path, Self.tiny])
    #expect(run.status == 64)
    #expect(run.stderr == check.stderr)
    #expect(!FileManager.default.fileExists(atPath: out.path))
  }

  /// A workouts table sent to `workout_records.json` (the server table's usual file) passed
  /// `check` and then failed `run` with exit 74, the delivery step reading it back as server
  /// records. Server records are now delivered from the run itself, so the name is free for any
  /// table: `check` and `run` both accept it, and the file holds the workouts table.
  @Test func aWorkoutsTableInWorkoutRecordsJSONIsAcceptedByCheckAndRun() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let pipeline = work.appendingPathComponent("p.json")
    try
      #"{"version":1,"name":"p","jobs":[{"name":"w","kind":"workouts","outputs":[{"table":"workouts","file":"workout_records.json"}]}]}"#
      .write(to: pipeline, atomically: true, encoding: .utf8)
    #expect(try CLI.run(["pipelines", "check", pipeline.path]).status == 0)
    let out = work.appendingPathComponent("out")
    let run = try CLI.run(["run", "--quiet", "--pipeline", pipeline.path, "--out", out.path, CLI.sampleExport])
    #expect(run.status == 0, "\(run.stderr)")
    let rows = try JSONSerialization.jsonObject(
      with: Data(contentsOf: out.appendingPathComponent("workout_records.json")))
    let first = try #require((rows as? [[String: Any]])?.first)
    // A workouts-table row (`activity_type`, `duration_s`), not a server record (`execRuntime`).
    #expect(first["activity_type"] as? String == "Running")
    #expect(first["execRuntime"] == nil)
  }

  // MARK: - Open files

  /// 200 statistics jobs under `ulimit -n 64`: the run ran out of descriptors and said "check that
  /// the folder is writable". With a hard limit of 64 it now says what happened; with only the
  /// soft limit at 64 it raises it to the hard one and succeeds.
  @Test func runningOutOfFileDescriptorsIsSaidAsSuch() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let jobs = (0..<200).map {
      #"{"name":"s\#($0)","kind":"statistics","type":"StepCount","interval":"1d","options":["sum"]}"#
    }
    let pipeline = work.appendingPathComponent("many.json")
    try (#"{"version":1,"name":"many","jobs":["# + jobs.joined(separator: ",") + "]}").write(
      to: pipeline, atomically: true, encoding: .utf8)
    let run = "\"$B\" run --quiet --pipeline \(pipeline.path) --out \(work.path)/out \(Self.tiny)"
    let hard = try Self.shell("ulimit -n 64 && exec \(run)")
    #expect(hard.status == 73, "\(hard.stderr)")
    #expect(hard.stderr.contains("too many open files (opening "), "\(hard.stderr)")
    #expect(hard.stderr.contains("this process may open 64. Raise the limit (ulimit -n) or run fewer jobs"))
    #expect(!hard.stderr.contains("writable"))
    #expect(!FileManager.default.fileExists(atPath: work.appendingPathComponent("out").path))
    let soft = try Self.shell("ulimit -S -n 64 && exec \(run)")
    #expect(soft.status == 0, "\(soft.stderr)")
    #expect(FileManager.default.fileExists(atPath: work.appendingPathComponent("out/stats/s199.csv").path))
  }

  @Test func pipelinesCheckRefusesAPlanPastTheLimit() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let jobs = (0..<10_001).map {
      #"{"name":"s\#($0)","kind":"statistics","type":"StepCount","interval":"1d","options":["sum"]}"#
    }
    let pipeline = work.appendingPathComponent("many.json")
    try (#"{"version":1,"name":"many","jobs":["# + jobs.joined(separator: ",") + "]}").write(
      to: pipeline, atomically: true, encoding: .utf8)
    let result = try CLI.run(["pipelines", "check", pipeline.path])
    #expect(result.status == 64)
    #expect(result.stderr.contains("jobs: lists 10001 jobs, more than the 10000 output files one run may write"))
  }
}
