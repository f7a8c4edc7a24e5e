import Foundation
import Testing

@Suite struct ExitCodeTests {
  @Test func versionAndHelp() throws {
    #expect(try CLI.run(["--version"]).stdout.hasPrefix("healthetl "))
    for command in [
      ["--help"], ["run", "--help"], ["inspect", "--help"], ["validate", "--help"], ["sample", "--help"],
    ] {
      let result = try CLI.run(command)
      #expect(result.status == 0, "\(command)")
      #expect(result.stdout.contains("USAGE"), "\(command)")
    }
  }

  /// `help COMMAND` is that command's help, not the general one.
  @Test func helpForOneCommand() throws {
    for command in ["run", "sample", "pipelines", "nightly"] {
      let help = try CLI.run(["help", command])
      let dashHelp = try CLI.run([command, "--help"])
      #expect(help.status == 0, "\(command)")
      #expect(help.stdout == dashHelp.stdout, "\(command)")
      #expect(help.stdout != (try CLI.run(["help"])).stdout, "\(command)")
    }
    #expect(try CLI.run(["help", "run"]).stdout.contains("--pipeline"))
    let unknown = try CLI.run(["help", "frobnicate"])
    #expect(unknown.status == 64)
    #expect(unknown.stderr.contains("unknown command 'frobnicate'"))
  }

  @Test(arguments: [
    (["frobnicate"], Int32(64), "unknown command"),
    (["run", "--frob", "x"], 64, "unknown option '--frob'"),
    (["run"], 64, "missing EXPORT"),
    (["run", "--tz", "Mars/Olympus", "x.zip"], 64, "unknown time zone 'Mars/Olympus'"),
    (["inspect", "/nonexistent/export.zip"], 66, "no such file"),
    (["sample", "--days", "zero", "--out", "/tmp/x.xml"], 64, "--days"),
    (
      ["sample", "--profile", "fitbit", "--out", "/tmp/x.xml"], 64,
      "unknown --profile 'fitbit'; the profiles are watch, iphone-sleep-apps, sleep-apps-oddities, garmin, ios10, ios8, multisport, third-party-workouts, food-glucose-bp"
    ),
    (
      ["sample", "--profile", "garmin", "--routes", "3", "--out", "/tmp/x.xml"], 64,
      "only the watch profile has workout routes"
    ),
  ])
  func usageAndMissingInput(arguments: [String], status: Int32, message: String) throws {
    let result = try CLI.run(arguments)
    #expect(result.status == status)
    #expect(result.stderr.contains(message), "\(result.stderr)")
    // Our own line breaks are real ones: a usage hint is never shown as a literal `\n`.
    #expect(!result.stderr.contains("\\n"), "\(result.stderr)")
  }

  @Test func aUsageErrorIsOneLineThenTheHint() throws {
    let result = try CLI.run(["run", "--frob", "x"])
    #expect(
      result.stderr
        == "healthetl: error: unknown option '--frob'\nRun 'healthetl run --help' for usage.\n")
  }

  @Test func notAnExportIsOneSentenceAndExit65() throws {
    let directory = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("steps.csv")
    try "date,steps\n2024-01-01,100\n".write(to: file, atomically: true, encoding: .utf8)
    let result = try CLI.run(["inspect", file.path])
    #expect(result.status == 65)
    #expect(result.stderr.contains("is not an Apple Health export"))
    #expect(result.stderr.split(separator: "\n").count == 1)
  }

  @Test func anUnwritableOutputIsExit73() throws {
    let result = try CLI.run([
      "run", "--pipeline", CLI.samplesPipeline, "--quiet", "--out", "/proc/healthetl-cannot-write",
      RunCommandTests.tiny,
    ])
    #expect(result.status == 73, "\(result.stderr)")
    #expect(result.stderr.contains("cannot create output"))
  }

  @Test func validateListsProblems() throws {
    let result = try CLI.run(["validate", RunCommandTests.tiny])
    #expect(result.status == 65)
    #expect(result.stdout.contains("1 rejected: non-numeric value"))
    #expect(result.stdout.contains("line 18"))
    let clean = try CLI.run(["validate", CLI.sampleExport])
    #expect(clean.status == 0, "\(clean.stdout)")
  }
}
