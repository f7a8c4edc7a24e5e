/// `sleep`: nights and sessions (Pipelines/README.md, "Sleep").
public struct SleepJobKind: JobKind {
  public var name: String { "sleep" }
  public var tables: [TableSchema] { SleepMart.Table.allCases.map(\.schema) }
  public var keys: [String] { [] }

  public func resolve(_ job: inout PipelineDefinition.Job, in pipeline: PipelineDefinition) throws(ConfigFileError)
    -> any JobWork
  {
    Work(destinations: try job.resolveDestinations(SleepMart.Table.self, file: pipeline.path))
  }

  struct Work: JobWork {
    var destinations: [SleepMart.Destination]

    func sheet(of table: TableSchema, job: String) -> WorkbookSheetChoice {
      .sheet(name: table == SleepTables.daily.schema ? "Sleep" : job, columns: table.columns)
    }

    func addStages(for job: PlannedJob, to graph: inout MartGraph) {
      graph.addSleep { SleepMart(destinations: destinations, daily: $0.daily) }
    }
  }
}
