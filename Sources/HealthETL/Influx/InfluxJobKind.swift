/// `influx`: the run as InfluxDB line protocol (Pipelines/influx/README.md): the samples in the
/// layout existing Grafana dashboards query, and the daily table, sleep nights, workouts and
/// heart rate per minute as measurements of their own, in one file.
public struct InfluxJobKind: JobKind {
  public var name: String { "influx" }
  public var tables: [TableSchema] { [InfluxMart.points] }
  public var keys: [String] { [] }
  /// None: opt-in, so `run.json` gains `influx` only in runs with an influx job.
  public var runReportSections: [String] { [] }

  public func resolve(_ job: inout PipelineDefinition.Job, in pipeline: PipelineDefinition) throws(ConfigFileError)
    -> any JobWork
  {
    Work(file: job.outputs.first?.file ?? InfluxMart.points.defaultFile)
  }

  /// One file per run, the last influx job's: the points are the same whichever job asks.
  public func marts(for jobs: [PlannedJob], build: MartBuild) throws(ConfigFileError) -> [any Mart] {
    guard let last = jobs.last, let mart = try last.work.mart(for: last, build: build) else { return [] }
    return [mart]
  }

  struct Work: JobWork {
    var file: String

    /// A file of points, not a table.
    func databaseKeys(of table: TableSchema) -> TableKeys? { nil }

    func mart(for job: PlannedJob, build: MartBuild) -> (any Mart)? {
      InfluxMart(transaction: build.transaction, file: file)
    }
  }
}
