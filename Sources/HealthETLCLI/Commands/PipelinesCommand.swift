import Foundation
import HealthETL

/// `healthetl pipelines list | explain FILE | check FILE... | tables`
enum PipelinesCommand {
  static let usage = "healthetl pipelines list | explain FILE... | check FILE... | tables"

  static func main(_ arguments: [String]) throws -> ExitCode {
    guard let sub = arguments.first, sub != "--help" else {
      let help =
        "USAGE: \(usage)\n\n  list     the pipelines in Pipelines/ with their descriptions\n"
        + "  explain  the resolved plan: settings, jobs and the files they write\n"
        + "  check    decode strictly and validate; exit 0 when valid, 64 with the key path otherwise\n"
        + "  tables   every output table's columns (kind, unit, precision, meaning) as Markdown\n"
      if arguments.isEmpty {
        HealthETLCommand.standardError(help)
        return ExitCode.usage
      }
      print(help, terminator: "")
      return ExitCode.success
    }
    let files = Array(arguments.dropFirst())
    switch sub {
    case "list":
      guard let directory = PipelineLocator.pipelinesDirectory() else {
        throw UsageError(message: "no Pipelines/ folder here or beside the binary", command: "pipelines")
      }
      let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }
      for name in names.sorted() {
        let path = directory + "/" + name
        guard let pipeline = try? PipelineDecoder.load(path) else { continue }  // e.g. workout-codes.json
        print("\(path)  \(pipeline.name): \(pipeline.description ?? "")")
      }
      return ExitCode.success
    case "explain":
      let plan = try PipelineLocator.plan(files)
      print(RunPlanner.explain(plan), terminator: "")
      return ExitCode.success
    case "check":
      guard !files.isEmpty else { throw UsageError(message: "check needs at least one FILE", command: "pipelines") }
      var status = ExitCode.success
      func note(_ error: any Error) {
        HealthETLCommand.fail("\(error)")
        // A machine problem (no tz database) outranks a file's mistake.
        if let error = error as? ETLError {
          status = error.exitCode
        } else if status == .success {
          status = .usage
        }
      }
      for file in files {
        do {
          let pipeline = try PipelineDecoder.load(PipelineLocator.resolve(file))
          if let problem = RunPlanner.zoneDatabaseProblem([pipeline]) { throw ETLError.zone(problem) }
          _ = try RunPlanner.plan([pipeline])
          print("\(file): ok (\(pipeline.jobs.count) jobs)")
        } catch {
          note(error)
        }
      }
      // Files that are each valid can still clash (two writing one output), which `run` refuses:
      // they are checked together as `run --pipeline … --pipeline …` would plan them.
      if files.count > 1, status == .success {
        do {
          let plan = try PipelineLocator.plan(files)
          print("together: ok (\(plan.jobs.count) jobs)")
        } catch {
          note(error)
        }
      }
      return status
    case "tables":
      print(TableDocumentation.allMarkdown, terminator: "")
      return ExitCode.success
    default:
      throw UsageError(message: "unknown pipelines subcommand '\(sub)'", command: "pipelines")
    }
  }
}
