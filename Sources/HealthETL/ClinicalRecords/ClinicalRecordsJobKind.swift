/// `clinical-records`: one row per `ClinicalRecord` with a summary of its FHIR resource, the
/// resources copied only with `copyResources` (Pipelines/docs/clinical-records.md, "Clinical records").
public struct ClinicalRecordsJobKind: JobKind {
  public var name: String { "clinical-records" }
  public var tables: [TableSchema] { ClinicalRecordMart.Table.allCases.map(\.schema) }
  public var filesRead: [ExportFileClaim] { [ClinicalRecordMart.filesRead] }
  public var keys: [String] { ["copyResources"] }
  public var runReportSections: [String] { [ClinicalRecordMart.runReportKey] }

  public func resolve(_ job: inout PipelineDefinition.Job, in pipeline: PipelineDefinition) throws(ConfigFileError)
    -> any JobWork
  {
    Work(
      copyResources: job.copyResources ?? false,
      destinations: try job.resolveDestinations(ClinicalRecordMart.Table.self, file: pipeline.path))
  }

  struct Work: JobWork {
    /// Medical records: copied into the output folder only when the pipeline asks.
    var copyResources: Bool
    var destinations: [ClinicalRecordMart.Destination]

    var explanation: String { copyResources ? ", resource files copied to clinical-records/" : "" }

    func mart(for job: PlannedJob, build: MartBuild) -> (any Mart)? {
      ClinicalRecordMart(transaction: build.transaction, destinations: destinations, copyResources: copyResources)
    }
  }
}
