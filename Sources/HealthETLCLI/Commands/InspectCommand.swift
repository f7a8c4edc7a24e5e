import Foundation
import HealthETL
import HealthExtract
import RunExecution

enum InspectCommand {
  static let options = [
    OptionSpec(name: "json", valueName: nil, help: "Print one JSON object instead of text."),
    OptionSpec(name: "tz", valueName: "ZONE|auto", help: "Time zone for the dates shown (default auto)."),
    OptionSpec(name: "strict", valueName: nil, help: "Exit 65 if the export ends early."),
    OptionSpec(
      name: "recover", valueName: nil, help: "Read past XML that is not well-formed, and say what was left out."),
  ]

  static func main(_ arguments: [String]) throws -> ExitCode {
    guard
      let (parsed, export) = try HealthETLCommand.parseExportCommand(
        arguments, name: "inspect", usage: "healthetl inspect [--json] [--tz ZONE|auto] [--strict | --recover] EXPORT",
        summary: "Count what an export holds: elements, types, rejected records, sources, devices, dates.",
        options: options)
    else { return ExitCode.success }
    if parsed.flag("strict"), parsed.flag("recover") {
      throw UsageError(
        message: "--strict (fail on an export that ends early) and --recover (read past damage) contradict each other",
        command: "inspect")
    }
    let inventory = try ExportRun.inspect(
      .path(export), zone: RunZone.Request(parsed.value("tz") ?? "auto"), allowTruncated: !parsed.flag("strict"),
      recover: parsed.flag("recover"), quiet: false, executor: RunExecutor.forThisMachine())
    if parsed.flag("json") {
      let data = try JSONSerialization.data(
        withJSONObject: inventory.jsonObject(), options: [.prettyPrinted, .sortedKeys])
      print(String(decoding: data, as: UTF8.self))
    } else {
      print(inventory.text(), terminator: "")
    }
    return ExitCode.success
  }
}
