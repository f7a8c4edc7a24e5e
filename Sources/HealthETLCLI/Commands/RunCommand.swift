import Foundation
import HealthETL
import HealthExtract
import HealthModel
import RunExecution

enum RunCommand {
  static let options = [
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
      name: "no-workbook", valueName: nil, help: "Do not write health.xlsx (written when a pipeline has a daily job)."),
    OptionSpec(
      name: "no-database", valueName: nil, help: "Do not write health.sqlite and its metadata.json (Datasette)."),
    OptionSpec(name: "quiet", valueName: nil, help: "No progress on stderr."),
  ]

  static func main(_ arguments: [String]) throws -> ExitCode {
    guard
      let (parsed, export) = try HealthETLCommand.parseExportCommand(
        arguments, name: "run",
        usage:
          "healthetl run [--pipeline FILE]... [--out DIR] [--tz ZONE|auto] [--strict] [--allow-truncated] [--recover] [--csv-bom] [--no-workbook] [--no-database] [--quiet] EXPORT",
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
