import Foundation
import HealthETL

/// The `healthetl` command line: dispatches to a subcommand and turns every failure into one
/// message on stderr and the documented exit code.
public enum HealthETLCommand {
  public static let version = "0.1.0"

  static let commands: [(name: String, summary: String, run: @Sendable ([String]) throws -> ExitCode)] = [
    ("run", "Parse an export once and write the outputs.", RunCommand.main),
    ("inspect", "Say what is in an export.", InspectCommand.main),
    ("validate", "Check an export and report every problem, writing nothing.", ValidateCommand.main),
    ("sample", "Write a realistic synthetic export.", SampleCommand.main),
    ("nightly", "Process new exports from an inbox; emit only new workouts.", NightlyCommand.main),
    (
      "deliver",
      "POST the workout records an output folder has not delivered yet to a server; write its line protocol to InfluxDB.",
      DeliverCommand.main
    ),
    ("pipelines", "List, explain or check pipeline files.", PipelinesCommand.main),
  ]

  static var usage: String {
    var lines = [
      "healthetl \(version) — Apple Health export ETL", "", "USAGE: healthetl <command> [options]", "", "COMMANDS:",
    ]
    for command in commands {
      lines.append("  " + command.name.padding(toLength: 10, withPad: " ", startingAt: 0) + command.summary)
    }
    lines.append("")
    lines.append("Run 'healthetl help <command>' for a command's options. Exit codes: 0 success, 64 usage,")
    lines.append("65 bad input data, 66 input not found, 73 cannot create output, 74 I/O error, 75 locked or")
    lines.append("try again later.")
    return lines.joined(separator: "\n") + "\n"
  }

  /// Runs the process's own command line (`ArgumentBytes`) and returns the exit status.
  public static func mainWithProcessArguments() -> Int32 {
    // Before any argument is opened: a closed standard stream's number is not to be taken by it.
    ProcessSetup.keepStandardStreamNumbersTaken()
    return main(ArgumentBytes.arguments())
  }

  /// Runs the command line `arguments` (without the program name) and returns the exit status.
  public static func main(_ arguments: [String]) -> Int32 {
    ProcessSetup.prepare()
    let signalSources = InterruptCleanup.install()
    defer { withExtendedLifetime(signalSources) {} }
    var status = run(arguments)
    // Output lost on the way (a full disk, a closed pipe, stdout closed) is an I/O error, not
    // success.
    if let code = StandardOutput.firstFailure {
      fail("cannot write to standard output: \(String(cString: strerror(code))); what it shows is incomplete")
      if status == .success { status = .ioError }
    }
    return status.rawValue
  }

  static func run(_ arguments: [String]) -> ExitCode {
    guard let first = arguments.first else {
      standardError(usage)
      return ExitCode.usage
    }
    if first == "--help" || first == "-h" || first == "help" {
      // `help run` means `run --help`, as with git and cargo.
      if first == "help", arguments.count > 1 {
        return run([arguments[1], "--help"])
      }
      print(usage, terminator: "")
      return ExitCode.success
    }
    if first == "--version" {
      print("healthetl \(version)")
      return ExitCode.success
    }
    guard let command = commands.first(where: { $0.name == first }) else {
      fail("unknown command '\(first)'")
      standardError("\n" + usage + "\n")
      return ExitCode.usage
    }
    do {
      return try command.run(Array(arguments.dropFirst()))
    } catch let error as UsageError {
      // The message may hold an argument as typed, so only it is made one line; the hint is ours.
      fail(error.description)
      standardError(error.hint + "\n")
      return ExitCode.usage
    } catch let error as ConfigFileError {
      fail(error.description)
      return ExitCode.usage
    } catch let error as ETLError {
      fail(error.description)
      return error.exitCode
    } catch {
      fail("\(error)")
      return ExitCode.ioError
    }
  }

  static func fail(_ message: String) {
    standardError("healthetl: error: " + oneLine(message) + "\n")
  }

  /// `text` with its control characters written as escapes (`\n`, `\u{1B}`): a message is one
  /// line, so a file name from an inbox or an export (`x\nhealthetl: nightly: processed…`) can
  /// neither forge another line of stderr nor send a terminal its escape sequences.
  static func oneLine(_ text: String) -> String {
    var escaped = ""
    escaped.reserveCapacity(text.utf8.count)
    for scalar in text.unicodeScalars {
      switch scalar.value {
      case 0x0A: escaped += "\\n"
      case 0x0D: escaped += "\\r"
      case 0x09: escaped += "\\t"
      case 0..<0x20, 0x7F..<0xA0, 0x2028, 0x2029:
        escaped += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
      default: escaped.unicodeScalars.append(scalar)
      }
    }
    return escaped
  }

  /// Writes to stderr; when stderr itself is gone there is no one left to tell.
  static func standardError(_ text: String) {
    try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
  }

  /// Handles `--help` for commands that take options only (no positional arguments).
  static func parseOptionsCommand(
    _ arguments: [String], name: String, usage: String, summary: String, options: [OptionSpec]
  ) throws(UsageError) -> ParsedArguments? {
    if arguments.contains("--help") {
      print(ArgumentParser.help(usage: usage, summary: summary, options: options), terminator: "")
      return nil
    }
    let parsed = try ArgumentParser.parse(arguments, options: options, command: name)
    guard parsed.positionals.isEmpty else {
      throw UsageError(message: "unexpected argument '\(parsed.positionals[0])'", command: name)
    }
    return parsed
  }

  /// Handles `--help` and exactly one EXPORT positional for the commands that read one.
  static func parseExportCommand(
    _ arguments: [String], name: String, usage: String, summary: String,
    options: [OptionSpec]
  ) throws(UsageError) -> (ParsedArguments, String)? {
    if arguments.contains("--help") {
      print(ArgumentParser.help(usage: usage, summary: summary, options: options), terminator: "")
      return nil
    }
    let parsed = try ArgumentParser.parse(arguments, options: options, command: name)
    guard parsed.positionals.count == 1 else {
      throw UsageError(
        message: parsed.positionals.isEmpty
          ? "missing EXPORT (export.zip, the apple_health_export folder, export.xml, or -)"
          : "expected one EXPORT, got \(parsed.positionals.count)", command: name)
    }
    return (parsed, parsed.positionals[0])
  }
}
