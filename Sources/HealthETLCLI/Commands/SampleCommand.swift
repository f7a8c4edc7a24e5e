import Foundation
import HealthETL
import HealthModel
import SyntheticExport

enum SampleCommand {
  static let options = [
    OptionSpec(name: "days", valueName: "N", help: "Number of days (default 28)."),
    OptionSpec(name: "start", valueName: "YYYY-MM-DD", help: "First day (default 2024-03-18)."),
    OptionSpec(name: "seed", valueName: "N", help: "Random seed; the same seed gives the same bytes (default 1)."),
    OptionSpec(name: "target-mb", valueName: "M", help: "Choose the number of days to make about M MB of XML."),
    OptionSpec(
      name: "routes", valueName: "N",
      help: "Choose the number of days to hold exactly N workout routes, each a point a second (routes load test)."),
    OptionSpec(
      name: "profile", valueName: "NAME",
      help:
        "Whose export: watch (default; Apple Watch user), iphone-sleep-apps (iPhone only, sleep apps), sleep-apps-oddities (the same with a flat 12 h asleep week and a 25 h night typed in), garmin (Garmin Connect), ios10 (iOS 10, manual entries, Runtastic), ios8 (the iOS 8–9 format of 2015), multisport (the Watch user, Saturday rides saved as triathlons), third-party-workouts (a running app's overlapping, lumpy and impossible distances; AirPods), food-glucose-bp (meals, glucose, blood pressure, body composition, walking, audio, cycling from 21 sources)."
    ),
    OptionSpec(
      name: "ecgs", valueName: "N", help: "Also write N ECG recordings (30 s at 512 Hz each) beside the export."),
    OptionSpec(
      name: "ecg-locale", valueName: "en|pt",
      help: "Language of the ECG files: en (default) or pt (decimal commas, a localised folder name)."),
    OptionSpec(name: "zip", valueName: nil, help: "Write export.zip as the iPhone does instead of bare XML."),
    OptionSpec(name: "out", valueName: "PATH", help: "The file to write (required)."),
  ]

  static let usage =
    "healthetl sample [--days N] [--start YYYY-MM-DD] [--seed N] [--target-mb M] [--routes N] [--profile NAME] [--ecgs N] [--ecg-locale en|pt] [--zip] --out PATH"

  static func main(_ arguments: [String]) throws -> ExitCode {
    guard
      let parsed = try HealthETLCommand.parseOptionsCommand(
        arguments, name: "sample", usage: usage,
        summary:
          "Write a realistic synthetic export (by default iPhone + Watch, sleep, workouts, swims; --profile for other shapes), deterministic by seed.",
        options: options)
    else { return ExitCode.success }
    guard let out = parsed.value("out") else { throw UsageError(message: "missing --out PATH", command: "sample") }
    var sampleOptions = SyntheticExportOptions()
    if let name = parsed.value("profile") {
      guard let profile = SampleProfile(rawValue: name) else {
        let names = SampleProfile.allCases.map(\.rawValue).joined(separator: ", ")
        throw UsageError(message: "unknown --profile '\(name)'; the profiles are \(names)", command: "sample")
      }
      sampleOptions.profile = profile
      sampleOptions.start = profile.defaultStart
    }
    if let days = parsed.value("days") {
      guard let value = Int(days), value > 0, value <= 36_500 else {
        throw UsageError(message: "--days must be a whole number from 1 to 36500", command: "sample")
      }
      sampleOptions.days = value
    }
    if let start = parsed.value("start") {
      guard let date = CivilDate(start) else {
        throw UsageError(message: "--start must be a date like 2024-03-18", command: "sample")
      }
      sampleOptions.start = date
    }
    if let ecgs = parsed.value("ecgs") {
      guard let value = Int(ecgs), value >= 0, value <= 10_000 else {
        throw UsageError(message: "--ecgs must be a whole number from 0 to 10000", command: "sample")
      }
      sampleOptions.ecgs = value
    }
    if let name = parsed.value("ecg-locale") {
      guard let locale = ECGLocale(rawValue: name) else {
        throw UsageError(message: "unknown --ecg-locale '\(name)'; use en or pt", command: "sample")
      }
      sampleOptions.ecgLocale = locale
    }
    if let seed = parsed.value("seed") {
      guard let value = UInt64(seed) else {
        throw UsageError(message: "--seed must be a whole number", command: "sample")
      }
      sampleOptions.seed = value
    }
    if let target = parsed.value("target-mb") {
      guard let value = Int(target), value > 0 else {
        throw UsageError(message: "--target-mb must be a positive whole number", command: "sample")
      }
      sampleOptions.targetMegabytes = value
    }
    if let routes = parsed.value("routes") {
      guard let value = Int(routes), value > 0 else {
        throw UsageError(message: "--routes must be a positive whole number", command: "sample")
      }
      guard parsed.value("days") == nil, parsed.value("target-mb") == nil else {
        throw UsageError(message: "--routes chooses the number of days; drop --days and --target-mb", command: "sample")
      }
      sampleOptions.routes = value
    }
    sampleOptions.zip = parsed.flag("zip")
    // A closed stdout holds a read-only placeholder (`ProcessSetup`), which `/dev/stdout` would
    // reopen as a writable /dev/null: the sample would vanish while the run reported success.
    if ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"].contains(out) {
      let flags = fcntl(STDOUT_FILENO, F_GETFL)
      if flags < 0 || flags & O_ACCMODE == O_RDONLY {
        HealthETLCommand.fail("cannot write \(out): standard output is closed or not writable")
        return ExitCode.ioError
      }
    }
    do {
      let stats = try SyntheticExportGenerator.write(sampleOptions, to: out)
      let records = stats.elements["Record"] ?? 0
      HealthETLCommand.standardError(
        "healthetl: wrote \(out): \(stats.days) days, \(records) records, \(stats.xmlBytes) bytes of XML"
          + (stats.routeFiles > 0 ? ", \(stats.routeFiles) route files" : "")
          + (stats.ecgFiles > 0 ? ", \(stats.ecgFiles) ECG files\n" : "\n"))
      return ExitCode.success
    } catch {
      HealthETLCommand.fail("\(error)")
      // A write that fails part-way (a full disk, a reader that went away) is an I/O error;
      // options that make no export are the command line's mistake.
      if case SampleExportError.writeFailed = error { return ExitCode.ioError }
      if case SampleExportError.invalidOptions = error { return ExitCode.usage }
      return ExitCode.cannotCreate
    }
  }
}
