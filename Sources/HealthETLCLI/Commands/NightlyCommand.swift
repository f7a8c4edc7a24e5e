import Foundation
import HealthETL
import RunExecution

enum NightlyCommand {
  static let options =
    [
      OptionSpec(name: "inbox", valueName: "DIR", help: "Folder the exports arrive in (required)."),
      OptionSpec(name: "out", valueName: "DIR", help: "Output folder, which also keeps the batch's state (required)."),
      OptionSpec(
        name: "pipeline", valueName: "FILE",
        help:
          "A pipeline file, or the name of one `pipelines list` shows (sleep); repeat for several (default Pipelines/default.json)."
      ),
      OptionSpec(name: "tz", valueName: "ZONE|auto", help: "Time zone for local dates (default auto)."),
      OptionSpec(
        name: "deliver", valueName: "URL",
        help: "At the end of the night, deliver the workout records to URL (see deliver)."),
      OptionSpec(
        name: "influx", valueName: "URL",
        help:
          "At the end of the night, write the points of influx.lp newer than what InfluxDB acknowledged (see deliver)."
      ),
    ] + RunCommand.outputBudgetOptions + DeliverCommand.deliveryOptions
  static let usage =
    "healthetl nightly --inbox DIR --out DIR [--pipeline FILE]... [--tz ZONE|auto] [--output-budget RATIO] [--output-allowance MB] [--deliver URL] [--influx URL] [delivery options of deliver]"

  static func main(_ arguments: [String]) throws -> ExitCode {
    guard
      let parsed = try HealthETLCommand.parseOptionsCommand(
        arguments, name: "nightly", usage: usage,
        summary:
          "Process every export in the inbox not processed yet (by content hash), oldest first, and write workout_records.new.json with the workouts no earlier run emitted. Exit 75 if another run holds the folder.",
        options: options)
    else { return ExitCode.success }
    guard let inbox = parsed.value("inbox"), let out = parsed.value("out") else {
      throw UsageError(message: "--inbox DIR and --out DIR are required", command: "nightly")
    }
    let plan = try PipelineLocator.plan(parsed.values["pipeline"] ?? [])
    var options = NightlyBatch.Options(
      inbox: inbox, outputDirectory: out, plan: plan, executor: RunExecutor.forThisMachine())
    options.zone = RunZone.Request(parsed.value("tz") ?? plan.timezone ?? "auto")
    options.outputBudget = try RunCommand.outputBudget(parsed, command: "nightly")
    if parsed.value("deliver") != nil || parsed.value("influx") != nil || parsed.value("delivery-config") != nil {
      (options.delivery, options.influx) = try DeliverCommand.settings(
        url: parsed.value("deliver"), influx: parsed.value("influx"), parsed, command: "nightly")
      if options.influx != nil, !plan.jobs.contains(where: { $0.kind.name == "influx" }) {
        throw UsageError(
          message:
            "--influx pushes influx.lp, which no pipeline of the night writes: add --pipeline influx (Pipelines/influx.json)",
          command: "nightly")
      }
    } else if let stray = DeliverCommand.deliveryOptions.first(where: {
      parsed.values[$0.name] != nil || parsed.flag($0.name)
    }) {
      throw UsageError(
        message: "--\(stray.name) is a delivery option: it needs --deliver URL, --influx URL or --delivery-config FILE",
        command: "nightly")
    }
    let result = try NightlyBatch.run(options)
    var lines = [
      "healthetl: nightly: processed \(result.processed.count) export(s)"
        + (result.processed.isEmpty ? "" : " (\(result.processed.joined(separator: ", ")))")
        + ", skipped \(result.alreadyProcessed) already processed; delta \(result.sequence) holds "
        + "\(result.newWorkoutRecords) new workout record(s) in \(out)/workout_records.new.json"
    ]
    for entry in result.quarantined {
      lines.append(
        "healthetl: nightly: quarantined \(entry.export.name) (exit \(entry.exitCode)): \(entry.reason); "
          + "it is skipped until its content changes")
    }
    for entry in result.stillQuarantined {
      lines.append("healthetl: nightly: still quarantined, unchanged: \(entry.export.name): \(entry.reason)")
    }
    HealthETLCommand.standardError(lines.map(HealthETLCommand.oneLine).joined(separator: "\n") + "\n")
    if let delivery = result.delivery { DeliverCommand.printDryRun(delivery) }
    if let influx = result.influxDelivery, let settings = options.influx {
      DeliverCommand.printDryRun(influx, dryRun: settings.http.dryRun)
    }
    // Something new was set aside: the operator has to look; the rest of the inbox was processed.
    return result.exitCode
  }
}
