/// `daily`: one row per local date with the figures of the other marts side by side
/// (Pipelines/README.md, "Daily"); a run with one also writes `health.xlsx`.
public struct DailyJobKind: JobKind {
  public var name: String { "daily" }
  public var tables: [TableSchema] { DailyMart.Table.allCases.map(\.schema) }
  public var keys: [String] { [] }

  public func resolve(_ job: inout PipelineDefinition.Job, in pipeline: PipelineDefinition) throws(ConfigFileError)
    -> any JobWork
  {
    Work(destinations: try job.resolveDestinations(DailyMart.Table.self, file: pipeline.path))
  }

  struct Work: JobWork {
    var destinations: [DailyMart.Destination]

    func sheet(of table: TableSchema, job: String) -> WorkbookSheetChoice {
      .sheet(name: "Daily", columns: table.columns)
    }

    func addStages(for job: PlannedJob, to graph: inout MartGraph) {
      graph.addDaily(destinations)
    }
  }
}
