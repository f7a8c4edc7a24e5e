/// `mindful`: mindful minutes per day (Pipelines/docs/daily.md, "Mindful minutes"), and the table of
/// days' `mindful_min`.
public struct MindfulJobKind: JobKind {
  public var name: String { "mindful" }
  public var tables: [TableSchema] { MindfulMart.Table.allCases.map(\.schema) }
  public var keys: [String] { [] }
  public var dayColumns: [any DayColumnsProduct.Type] { [MindfulMinutes.self] }

  public func resolve(_ job: inout PipelineDefinition.Job, in pipeline: PipelineDefinition) throws(ConfigFileError)
    -> any JobWork
  {
    Work(destinations: try job.resolveDestinations(MindfulMart.Table.self, file: pipeline.path))
  }

  public func makeProvider(of product: ProductKey, build: MartBuild) -> (any Mart)? {
    product == ProductKey(MindfulMinutes.self) ? MindfulMart(destinations: []) : nil
  }

  struct Work: JobWork {
    var destinations: [MindfulMart.Destination]

    func sheet(of table: TableSchema, job: String) -> WorkbookSheetChoice {
      .sheet(name: "Mindful minutes", columns: table.columns)
    }

    func mart(for job: PlannedJob, build: MartBuild) -> (any Mart)? { MindfulMart(destinations: destinations) }

    func shows(type shortName: String) -> Bool { shortName == MindfulDays.type }
  }
}
