import Foundation

/// One option of a command: the table that drives both parsing and `--help`.
struct OptionSpec {
  let name: String
  let valueName: String?
  let help: String
  var takesValue: Bool { valueName != nil }
}

/// A command's parsed arguments.
struct ParsedArguments {
  var values: [String: [String]] = [:]
  var flags: Set<String> = []
  var positionals: [String] = []

  func value(_ name: String) -> String? { values[name]?.last }
  func flag(_ name: String) -> Bool { flags.contains(name) }
}

/// A usage error: exit 64, its one-line message, then a line that says where the usage is.
struct UsageError: Error, CustomStringConvertible {
  let message: String
  let command: String
  var description: String { message }
  var hint: String { "Run 'healthetl \(command) --help' for usage." }
}

enum ArgumentParser {
  /// Parses `--name value`, `--name=value`, flags, `--` and positionals against `options`.
  static func parse(_ arguments: [String], options: [OptionSpec], command: String) throws(UsageError)
    -> ParsedArguments
  {
    var parsed = ParsedArguments()
    var index = 0
    var onlyPositionals = false
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if onlyPositionals || !argument.hasPrefix("--") || argument == "-" {
        if argument.hasPrefix("-") && argument != "-" && !onlyPositionals {
          throw UsageError(message: "unknown option '\(argument)'", command: command)
        }
        parsed.positionals.append(argument)
        continue
      }
      if argument == "--" {
        onlyPositionals = true
        continue
      }
      var name = String(argument.dropFirst(2))
      var inlineValue: String?
      if let equals = name.firstIndex(of: "=") {
        inlineValue = String(name[name.index(after: equals)...])
        name = String(name[..<equals])
      }
      guard let spec = options.first(where: { $0.name == name }) else {
        throw UsageError(message: "unknown option '--\(name)'", command: command)
      }
      if spec.takesValue {
        let value: String
        if let inlineValue {
          value = inlineValue
        } else {
          guard index < arguments.count else {
            throw UsageError(message: "option '--\(name)' needs a value (\(spec.valueName!))", command: command)
          }
          value = arguments[index]
          index += 1
        }
        parsed.values[name, default: []].append(value)
      } else {
        guard inlineValue == nil else {
          throw UsageError(message: "option '--\(name)' takes no value", command: command)
        }
        parsed.flags.insert(name)
      }
    }
    return parsed
  }

  static func help(usage: String, summary: String, options: [OptionSpec]) -> String {
    var lines = ["USAGE: \(usage)", "", summary, "", "OPTIONS:"]
    for option in options + [OptionSpec(name: "help", valueName: nil, help: "Show this help.")] {
      let left = "  --\(option.name)" + (option.valueName.map { " \($0)" } ?? "")
      lines.append(left.padding(toLength: max(left.count + 2, 28), withPad: " ", startingAt: 0) + option.help)
    }
    return lines.joined(separator: "\n") + "\n"
  }
}
