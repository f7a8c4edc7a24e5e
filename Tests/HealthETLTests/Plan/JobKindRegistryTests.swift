import Foundation
import Testing

@testable import HealthETL

/// The job-kind registry (`JobKinds`): a kind answers for its tables and keys, and an output whose
/// table its mart does not write is refused with the output's key path, never dropped.
@Suite struct JobKindRegistryTests {
  static func pipeline(_ job: PipelineDefinition.Job) -> PipelineDefinition {
    PipelineDefinition(
      path: "p.json", version: 1, name: "p", description: nil, timezone: nil, sourcePriority: nil, sleep: nil,
      jobs: [job])
  }

  static func job(_ kind: String, tables: [String]) throws -> PipelineDefinition.Job {
    let kind = try #require(JobKinds.named(kind))
    var job = PipelineDefinition.Job(name: "j", kind: kind, outputs: [])
    job.keyPath = "jobs[0]"
    job.line = 3
    job.outputs = tables.enumerated().map { index, table in
      // Each table to its default file (in its format), else to a csv file.
      let file =
        kind.tables.first { $0.name == table }?.defaultFile.replacingOccurrences(of: "{job}", with: "j")
        ?? "\(table).csv"
      return PipelineDefinition.Output(
        keyPath: "jobs[0].outputs[\(index)]", line: 4 + index, table: table, file: file,
        format: TableSchema.format(ofFile: file))
    }
    return job
  }

  /// Built in code (past the decoder's name check), a sleep job asking for a table the sleep
  /// mart does not write: the planner names the output's `table` key; it used to be dropped
  /// silently and the run wrote one file fewer than the plan listed.
  @Test(arguments: ["sleep", "workouts", "daily"])
  func anOutputNamingATableTheMartLacksIsAnError(kind: String) throws {
    let job = try Self.job(kind, tables: [JobKinds.named(kind)!.tables[0].name, "naps"])
    #expect {
      _ = try RunPlanner.plan([Self.pipeline(job)])
    } throws: { error in
      guard let error = error as? ConfigFileError else { return false }
      return error.keyPath == "jobs[0].outputs[1].table" && error.line == 5
        && error.message.hasPrefix("unknown table 'naps' for a \(kind) job; known: ")
    }
  }

  /// Every table a kind lists is one its mart writes, so every declared table plans.
  @Test func everyDeclaredTablePlans() throws {
    for kind in JobKinds.all where !["statistics", "report"].contains(kind.name) {
      let job = try Self.job(kind.name, tables: kind.tables.map(\.name))
      let plan = try RunPlanner.plan([Self.pipeline(job)])
      #expect(plan.jobs[0].outputs.map(\.table) == kind.tables.map(\.name))
    }
  }

  /// The registry's order is the order of `pipelines tables` and of the decoder's message.
  @Test func kindsAreListedOnceInTheirOrder() {
    #expect(
      JobKinds.all.map(\.name) == [
        "samples", "sleep", "workouts", "statistics", "elements", "electrocardiograms", "clinical-records", "beats",
        "mindful", "daily", "report",
      ])
    #expect(Set(JobKinds.all.map(\.name)).count == JobKinds.all.count)
    #expect(TableDocumentation.all.map(\.id).first == "samples.samples")
  }

  /// The keys a kind takes decide what the decoder accepts.
  @Test func aKeyOfAnotherKindIsRefused() {
    let text = #"{"version": 1, "name": "x", "jobs": [{"name": "a", "kind": "sleep", "codes": "c.csv"}]}"#
    #expect {
      _ = try PipelineDecoder.decode(Data(text.utf8), path: "x.json")
    } throws: { error in
      (error as? ConfigFileError)?.keyPath == "jobs[0].codes"
    }
  }
}
