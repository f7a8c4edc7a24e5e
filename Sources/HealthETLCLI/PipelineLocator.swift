import Foundation
import HealthETL

/// Finds and loads the pipelines a command names, or the default one.
enum PipelineLocator {
  /// `Pipelines/` in the current folder, else the one beside the package the binary was built in.
  static func pipelinesDirectory() -> String? {
    let fm = FileManager.default
    if fm.fileExists(atPath: "Pipelines/default.json") { return "Pipelines" }
    var folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    for _ in 0..<6 {
      let candidate = folder.appendingPathComponent("Pipelines")
      if fm.fileExists(atPath: candidate.appendingPathComponent("default.json").path) { return candidate.path }
      folder = folder.deletingLastPathComponent()
    }
    return nil
  }

  /// `argument` itself when it names a file; else, for a bare name such as `sleep` (what
  /// `pipelines list` shows), the shipped `Pipelines/sleep.json`. A name with no such pipeline stays
  /// as given, so the error names what the user typed.
  static func resolve(_ argument: String) -> String {
    let fm = FileManager.default
    guard !fm.fileExists(atPath: argument), !argument.contains("/"), !argument.hasSuffix(".json"),
      let directory = pipelinesDirectory()
    else { return argument }
    let shipped = directory + "/" + argument + ".json"
    return fm.fileExists(atPath: shipped) ? shipped : argument
  }

  /// Every shipped pipeline that plans, by the name `--pipeline` takes (its file name without
  /// `.json`): what a run names for the records its own pipelines did not show. A file that is not
  /// a pipeline (`workout-codes.json`) or does not plan on this machine is left out.
  static func shippedPlans() -> [(name: String, plan: RunPlan)] {
    guard let directory = pipelinesDirectory(),
      let names = try? FileManager.default.contentsOfDirectory(atPath: directory)
    else { return [] }
    return names.filter { $0.hasSuffix(".json") }.sorted().compactMap { name in
      guard let pipeline = try? PipelineDecoder.load(directory + "/" + name),
        let plan = try? RunPlanner.plan([pipeline])
      else { return nil }
      return (String(name.dropLast(5)), plan)
    }
  }

  /// The plan for `--pipeline` arguments (default: `Pipelines/default.json`).
  static func plan(_ paths: [String]) throws -> RunPlan {
    var files = paths
    if files.isEmpty {
      guard let directory = pipelinesDirectory() else {
        throw UsageError(
          message: "Pipelines/default.json not found here or beside the healthetl binary; pass --pipeline FILE",
          command: "run")
      }
      files = [directory + "/default.json"]
    }
    var pipelines: [PipelineDefinition] = []
    for file in files.map(resolve) {
      do { pipelines.append(try PipelineDecoder.load(file)) } catch { throw ETLError.pipeline(error) }
    }
    if let problem = RunPlanner.zoneDatabaseProblem(pipelines) { throw ETLError.zone(problem) }
    do { return try RunPlanner.plan(pipelines) } catch { throw ETLError.pipeline(error) }
  }
}
