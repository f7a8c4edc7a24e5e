/// The files beside an export's main XML that some reader of HealthETL takes in, as each reader
/// declares them. Every other file of the export is counted as not read (Pipelines/README.md,
/// "What was not read"): a reader of a new kind of file adds its claim here.
enum ExportFileReaders {
  static let claims: [ExportFileClaim] = [WorkoutRouteReader.filesRead]
}
