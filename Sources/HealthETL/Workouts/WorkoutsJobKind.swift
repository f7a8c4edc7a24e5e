/// `workouts`: workouts, their server records, swim laps, routes and splits (Pipelines/README.md,
/// "Workouts").
public struct WorkoutsJobKind: JobKind {
  public var name: String { "workouts" }
  public var tables: [TableSchema] { WorkoutMart.Table.allCases.map(\.schema) }
  public var keys: [String] { ["codes"] }
  public var filesRead: [ExportFileClaim] { [WorkoutRouteReader.filesRead] }
  public var runReportSections: [String] { [WorkoutMart.runReportKey] }

  public func makeProvider(of product: ProductKey, build: MartBuild) -> (any Mart)? {
    guard product == ProductKey(WorkoutResults.self) else { return nil }
    return WorkoutMart(transaction: build.transaction, outputs: [], isJobMart: false)
  }

  public func check(_ output: PipelineDefinition.Output) -> (key: String, message: String)? {
    guard output.table == WorkoutTables.records.name, output.format != .json else { return nil }
    return ("format", "workout server records are a JSON array; use json")
  }

  public func resolve(_ job: inout PipelineDefinition.Job, in pipeline: PipelineDefinition) throws(ConfigFileError)
    -> any JobWork
  {
    let outputs = try job.resolveDestinations(WorkoutMart.Table.self, file: pipeline.path)
    // A job without `codes` gets the built-in copy of the shipped table.
    guard let codes = job.codes else { return Work(codes: .shipped, codesFile: nil, outputs: outputs) }
    let path = PipelineDefinition.Job.path(codes, besides: pipeline)
    job.codes = path
    return Work(codes: try WorkoutCodeTable.load(path: path), codesFile: path, outputs: outputs)
  }

  struct Work: JobWork {
    var codes: WorkoutCodeTable
    var codesFile: String?
    var outputs: [WorkoutMart.Output]

    var explanation: String { codesFile.map { ", server codes from \($0)" } ?? "" }

    /// Named for what they hold, whatever the job's name.
    static let sheetNames = [
      WorkoutTables.workouts.name: "Workouts", WorkoutTables.records.name: "Workout records",
      WorkoutTables.laps.name: "Swim laps",
    ]

    func sheet(of table: TableSchema, job: String) -> WorkbookSheetChoice {
      .sheet(name: Self.sheetNames[table.name] ?? JobName.words(job), columns: table.columns)
    }

    func mart(for job: PlannedJob, build: MartBuild) -> (any Mart)? {
      WorkoutMart(transaction: build.transaction, codes: codes, outputs: outputs)
    }
  }
}
