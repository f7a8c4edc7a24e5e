/// `report`: one self-contained HTML page (Pipelines/docs/report.md, "The report").
public struct ReportJobKind: JobKind {
  public var name: String { "report" }
  public var tables: [TableSchema] { ReportTables.all }
  public var keys: [String] { ["template", "chartLibrary"] }

  public func resolve(_ job: inout PipelineDefinition.Job, in pipeline: PipelineDefinition) throws(ConfigFileError)
    -> any JobWork
  {
    // Beside the pipeline file like a code table, so a changed page ships with its pipelines.
    let template = PipelineDefinition.Job.path(job.template ?? ReportTables.defaultTemplate, besides: pipeline)
    job.template = template
    return Work(
      file: job.outputs.first?.file ?? ReportTables.page.defaultFile, template: template,
      chartLibrary: job.chartLibrary ?? ReportTables.debianChartLibrary)
  }

  /// One page per run: the last report job's.
  public func marts(for jobs: [PlannedJob], build: MartBuild) throws(ConfigFileError) -> [any Mart] {
    guard let last = jobs.last, let mart = try last.work.mart(for: last, build: build) else { return [] }
    return [mart]
  }

  struct Work: JobWork {
    var file: String
    /// Both read when the run's marts are built, before the export is read.
    var template: String
    var chartLibrary: String

    var explanation: String { " from \(template), chart library \(chartLibrary)" }

    /// A page, not a table.
    func databaseKeys(of table: TableSchema) -> TableKeys? { nil }

    func mart(for job: PlannedJob, build: MartBuild) throws(ConfigFileError) -> (any Mart)? {
      let page: ReportPage
      do { page = try ReportPage(templatePath: template, libraryPath: chartLibrary) } catch {
        throw ConfigFileError(file: template, message: error.description, systemCode: error.systemCode)
      }
      return ReportMart(transaction: build.transaction, page: page, file: file)
    }
  }
}
