import Foundation
import HealthETL
import HealthExtract
import RunExecution

enum ValidateCommand {
  static let options = [
    OptionSpec(name: "json", valueName: nil, help: "Print the findings as one JSON object."),
    OptionSpec(
      name: "recover", valueName: nil,
      help: "Read past XML that is not well-formed and list every damaged part, not only the first."),
  ]

  /// Exit 0 when the export is clean, 65 when anything was rejected, replaced, cut short or (with
  /// `--recover`) read past.
  static func main(_ arguments: [String]) throws -> ExitCode {
    guard
      let (parsed, export) = try HealthETLCommand.parseExportCommand(
        arguments, name: "validate", usage: "healthetl validate [--json] [--recover] EXPORT",
        summary: "Check an export and report every problem found, without writing any output.", options: options)
    else { return ExitCode.success }
    let inventory = try ExportRun.inspect(
      .path(export), zone: .auto, allowTruncated: true, recover: parsed.flag("recover"), quiet: false,
      executor: RunExecutor.forThisMachine())
    var problems: [String] = []
    if let recovery = inventory.read.recovery, recovery.recovered {
      for problem in recovery.problems {
        problems.append("line \(problem.line), column \(problem.column): \(problem.words)")
      }
      if recovery.errors > recovery.problems.count {
        problems.append("… and \(recovery.errors - recovery.problems.count) more XML errors")
      }
      for skip in recovery.skipped {
        switch skip.action {
        case .notRead:
          problems.append("  lines \(skip.firstLine)–\(skip.lastLine) not read (\(skip.bytes) bytes): \(skip.reason)")
        case .dropped:
          problems.append(
            "  lines \(skip.firstLine)–\(skip.lastLine): <\(skip.element)> left out with \(skip.elements - 1) element(s) in it: \(skip.reason)"
          )
        case .keptUnclosed:
          problems.append("  lines \(skip.firstLine)–\(skip.lastLine): <\(skip.element)> kept: \(skip.reason)")
        }
      }
      if recovery.skippedOmitted > 0 { problems.append("  … and \(recovery.skippedOmitted) more parts left out") }
    }
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
