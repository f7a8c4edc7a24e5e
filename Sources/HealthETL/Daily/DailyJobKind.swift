/// `daily`: one row per local date with the figures of the other marts side by side
/// (Pipelines/docs/daily.md, "Daily"); a run with one also writes `health.xlsx`.
public struct DailyJobKind: JobKind {
  /// The products of other subjects whose columns the table adds after daily's own (the
  /// registry gathers them from every kind's `dayColumns`).
  public let contributions: [any DayColumnsProduct.Type]

  public init(contributions: [any DayColumnsProduct.Type] = []) { self.contributions = contributions }

  public var name: String { "daily" }
  public var tables: [TableSchema] { [DailyTables.daily(adding: contributions).schema] }
  public var keys: [String] { [] }
  public var workbookCharts: [[WorkbookChart]] { DailyTables.charts }

  /// One mart writes every daily job's files: the days are computed once.
  public func marts(for jobs: [PlannedJob], build: MartBuild) -> [any Mart] {
    guard !jobs.isEmpty else { return [] }
    return [
      DailyMart(destinations: jobs.flatMap { ($0.work as? Work)?.destinations ?? [] }, contributions: contributions)
    ]
  }

  public func makeProvider(of product: ProductKey, build: MartBuild) -> (any Mart)? {
    product == ProductKey(DailyDays.self) ? DailyMart(destinations: [], contributions: contributions) : nil
  }

  public func resolve(_ job: inout PipelineDefinition.Job, in pipeline: PipelineDefinition) throws(ConfigFileError)
    -> any JobWork
  {
    Work(
      destinations: try job.resolveDestinations(DailyMart.Table.self, file: pipeline.path),
      typesShown: DailyMart.typesShown(adding: contributions))
  }

  struct Work: JobWork {
    var destinations: [DailyMart.Destination]
    var typesShown: Set<String>

    func sheet(of table: TableSchema, job: String) -> WorkbookSheetChoice {
      .sheet(name: "Daily", columns: table.columns)
    }

    /// The kind makes one mart for all the run's daily jobs.
    func mart(for job: PlannedJob, build: MartBuild) -> (any Mart)? { nil }

    func shows(type shortName: String) -> Bool { typesShown.contains(shortName) }
  }
}
