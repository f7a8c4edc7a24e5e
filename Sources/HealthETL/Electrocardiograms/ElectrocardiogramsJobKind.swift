/// `electrocardiograms`: the Watch's ECG recordings and their samples, read from the CSV files
/// beside the export (Pipelines/docs/electrocardiograms.md, "Electrocardiograms").
public struct ElectrocardiogramsJobKind: JobKind {
  public var name: String { "electrocardiograms" }
  public var tables: [TableSchema] { ElectrocardiogramMart.Table.allCases.map(\.schema) }
  public var filesRead: [ExportFileClaim] { [ElectrocardiogramMart.filesRead] }
  public var keys: [String] { [] }
  public var runReportSections: [String] { [ElectrocardiogramMart.runReportKey] }

  public func resolve(_ job: inout PipelineDefinition.Job, in pipeline: PipelineDefinition) throws(ConfigFileError)
    -> any JobWork
  {
    Work(destinations: try job.resolveDestinations(ElectrocardiogramMart.Table.self, file: pipeline.path))
  }

  struct Work: JobWork {
    var destinations: [ElectrocardiogramMart.Destination]

    func mart(for job: PlannedJob, build: MartBuild) -> (any Mart)? {
      ElectrocardiogramMart(destinations: destinations)
    }
  }
}
