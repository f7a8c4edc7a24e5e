/// `sleep`: nights and sessions (Pipelines/docs/sleep.md, "Sleep jobs").
public struct SleepJobKind: JobKind {
  public var name: String { "sleep" }
  public var tables: [TableSchema] { SleepMart.Table.allCases.map(\.schema) }
  public var keys: [String] { [] }

  public func makeProvider(of product: ProductKey, build: MartBuild) -> (any Mart)? {
    product == ProductKey(SleepNights.self) ? SleepMart(destinations: []) : nil
  }

  public func resolve(_ job: inout PipelineDefinition.Job, in pipeline: PipelineDefinition) throws(ConfigFileError)
    -> any JobWork
  {
    Work(destinations: try job.resolveDestinations(SleepMart.Table.self, file: pipeline.path))
  }

  struct Work: JobWork {
    var destinations: [SleepMart.Destination]

    func sheet(of table: TableSchema, job: String) -> WorkbookSheetChoice {
      .sheet(name: table == SleepTables.daily.schema ? "Sleep" : JobName.words(job), columns: table.columns)
    }

    func mart(for job: PlannedJob, build: MartBuild) -> (any Mart)? { SleepMart(destinations: destinations) }

    func shows(type shortName: String) -> Bool { shortName == SleepMart.sleepType }
  }
}
