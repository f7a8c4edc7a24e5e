import Foundation
import HealthETL
import HealthExtract
import HealthModel
import RunExecution

enum RunCommand {
  static let options =
    [
      OptionSpec(
        name: "pipeline", valueName: "FILE",
        help:
          "A pipeline file, or the name of one `pipelines list` shows (sleep); repeat for several (default Pipelines/default.json)."
      ),
      OptionSpec(name: "out", valueName: "DIR", help: "Output folder (default out)."),
      OptionSpec(name: "tz", valueName: "ZONE|auto", help: "Time zone for local dates (default auto)."),
      OptionSpec(name: "strict", valueName: nil, help: "Fail (exit 65) on the first rejected record."),
      OptionSpec(name: "allow-truncated", valueName: nil, help: "Process a cut-short export up to where it ends."),
      OptionSpec(
        name: "recover", valueName: nil,
        help: "Read past XML that is not well-formed; leave out what it damaged, listed in run.json (recovery)."),
      OptionSpec(name: "csv-bom", valueName: nil, help: "Start CSV files with a UTF-8 byte-order mark (for Excel)."),
      OptionSpec(
        name: "no-workbook", valueName: nil, help: "Do not write health.xlsx (written when a pipeline has a daily job)."
      ),
      OptionSpec(
        name: "no-database", valueName: nil, help: "Do not write health.sqlite and its metadata.json (Datasette)."),
      OptionSpec(name: "quiet", valueName: nil, help: "No progress on stderr."),
    ] + outputBudgetOptions

  static let outputBudgetOptions = [
    OptionSpec(
      name: "output-budget", valueName: "RATIO",
      help:
        "Output bytes allowed per byte of export, above the allowance (default 50; 0: no budget). Past it the run stops with exit 65."
    ),
    OptionSpec(
      name: "output-allowance", valueName: "MB",
      help: "Output megabytes allowed whatever the export's size (default 64)."),
  ]

  /// `--output-budget RATIO` and `--output-allowance MB` (Pipelines/docs/outputs.md, "Output budget");
  /// a ratio of 0 turns the budget off.
  static func outputBudget(_ parsed: ParsedArguments, command: String) throws(UsageError) -> OutputBudget {
    var budget = OutputBudget.standard
    if let text = parsed.value("output-budget") {
      guard let ratio = Double(text), ratio.isFinite, ratio >= 0, ratio <= 1_000_000 else {
        throw UsageError(
          message:
            "--output-budget '\(text)': not a number from 0 to 1000000 (output bytes per byte of export; 0: no budget)",
          command: command)
      }
      budget.ratio = ratio
    }
    if let text = parsed.value("output-allowance") {
      guard let megabytes = Int64(text), megabytes >= 0, megabytes <= 1 << 30 else {
        throw UsageError(message: "--output-allowance '\(text)': not a whole number of megabytes", command: command)
      }
      budget.allowance = megabytes << 20
    }
    return budget.ratio == 0 ? .unlimited : budget
  }

  static func main(_ arguments: [String]) throws -> ExitCode {
    guard
      let (parsed, export) = try HealthETLCommand.parseExportCommand(
        arguments, name: "run",
        usage:
          "healthetl run [--pipeline FILE]... [--out DIR] [--tz ZONE|auto] [--strict] [--allow-truncated] [--recover] [--csv-bom] [--no-workbook] [--no-database] [--quiet] [--output-budget RATIO] [--output-allowance MB] EXPORT",
        summary: "Parse the export once and write its outputs atomically into the output folder.", options: options)
    else { return ExitCode.success }
    let plan = try PipelineLocator.plan(parsed.values["pipeline"] ?? [])
    var options = ExportRun.RunOptions(input: .path(export), plan: plan, executor: RunExecutor.forThisMachine())
    options.outputDirectory = parsed.value("out") ?? "out"
    options.zone = RunZone.Request(parsed.value("tz") ?? plan.timezone ?? "auto")
    options.csvByteOrderMark = parsed.flag("csv-bom")
    options.workbook = !parsed.flag("no-workbook")
    options.database = !parsed.flag("no-database")
    options.strict = parsed.flag("strict")
    options.allowTruncated = parsed.flag("allow-truncated")
    options.recover = parsed.flag("recover")
    options.quiet = parsed.flag("quiet")
    options.outputBudget = try outputBudget(parsed, command: "run")
    options.otherPipelines = PipelineLocator.shippedPlans()
    let report = try ExportRun.run(options)
    if !options.quiet {
      let rows = report.outputs.reduce(0) { $0 + $1.rows }
      var message = String(
        format: "healthetl: wrote %d files (%d rows) to %@ in %.2f s (%.1f MB/s); time zone %@\n",
        report.outputs.count + 1, rows, options.outputDirectory, report.totalSeconds,
        report.inventory.megabytesPerSecond, report.inventory.zone.rules.identifier)
      if report.inventory.rejections.total > 0 {
        message += "healthetl: \(report.inventory.rejections.total) records rejected; see run.json\n"
      }
      for line in report.summaryLines { message += "healthetl: \(line)\n" }
      if let notRead = report.inventory.notRead.summary() {
        message += "healthetl: not read: \(notRead); see run.json (notRead)\n"
      }
      if let recovered = report.inventory.read.recovery?.summary() {
        message += "healthetl: recovered: \(recovered); see run.json (recovery)\n"
      }
      if report.inventory.read.truncated {
        message +=
          "healthetl: input was truncated at line \(report.inventory.read.truncatedAtLine ?? 0); run.json says so\n"
      }
      HealthETLCommand.standardError(message)
    }
    return ExitCode.success
  }
}
