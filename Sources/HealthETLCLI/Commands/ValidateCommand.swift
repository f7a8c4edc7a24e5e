import Foundation
import HealthETL
import HealthExtract
import RunExecution

enum ValidateCommand {
  static let options = [
    OptionSpec(name: "json", valueName: nil, help: "Print the findings as one JSON object.")
  ]

  /// Exit 0 when the export is clean, 65 when anything was rejected, replaced or cut short.
  static func main(_ arguments: [String]) throws -> ExitCode {
    guard
      let (parsed, export) = try HealthETLCommand.parseExportCommand(
        arguments, name: "validate", usage: "healthetl validate [--json] EXPORT",
        summary: "Check an export and report every problem found, without writing any output.", options: options)
    else { return ExitCode.success }
    let inventory = try ExportRun.inspect(
      .path(export), zone: .auto, allowTruncated: true, quiet: false, executor: RunExecutor.forThisMachine())
    var problems: [String] = []
    if inventory.read.truncated {
      problems.append(
        "input ends early at line \(inventory.read.truncatedAtLine ?? 0): \(inventory.read.truncationMessage ?? "")")
    }
    for (reason, count) in inventory.rejections.counts.sorted(by: { $0.key < $1.key }) {
      problems.append("\(count) rejected: \(reason)")
      for example in inventory.rejections.examples[reason] ?? [] {
        problems.append("  line \(example.line): \(example.element): \(example.detail)")
      }
    }
    if inventory.read.replacedControlCharacters > 0 {
      problems.append("\(inventory.read.replacedControlCharacters) characters XML 1.0 forbids were replaced by spaces")
    }
    if parsed.flag("json") {
      let object: [String: Any] = [
        "valid": problems.isEmpty, "problems": problems, "inventory": inventory.jsonObject(),
      ]
      let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
      print(String(decoding: data, as: UTF8.self))
    } else if problems.isEmpty {
      print("\(export): valid (\(inventory.types.values.reduce(0) { $0 + $1.distinct }) samples, no problems)")
    } else {
      print("\(export): \(problems.count) problem lines")
      for line in problems { print("  " + line) }
    }
    return problems.isEmpty ? ExitCode.success : ExitCode.dataError
  }
}
