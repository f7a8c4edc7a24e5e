import Foundation

/// The job-kind registry: what a pipeline's `kind` means, one file per kind.
///
/// A job kind is one value conforming to `JobKind`, in its subject's folder (`Sleep/SleepJobKind.
/// swift` …), and listed once in the registry (`Plan/JobKinds.swift`). Everything the rest of
/// HealthETL asks about a kind goes through it, never through a `switch` on kinds or an `is`
/// check:
///
/// - `name`: the `kind` value of a pipeline job;
/// - `tables`: the tables a job of the kind can write (the first is what an output naming no
///   table writes); `pipelines tables`, the decoder and the planner read them from here;
/// - `keys`, `requiredKeys`: the job keys it takes besides `name`, `kind` and `outputs`;
/// - `check(_:)`: what one of its outputs may not be (a format a table cannot take);
/// - `filesRead`: the files beside the main XML its marts read (every other file of an export is
///   counted as not read, whatever the run's pipelines);
/// - `resolve(_:in:)`: checks a job and turns it into its `JobWork`, which is Sendable and
///   whatever the kind needs (a statistics query, a loaded code table, the outputs as the mart's
///   own tables). An output naming a table the mart does not write is an error here, with its
///   key path (`resolveDestinations`), never a silent drop;
/// - `marts(for:build:)`: the marts of the plan's jobs of the kind (one per job by default);
/// - `makeProvider(of:build:)`: a mart that writes no file and computes a product of the kind's
///   subject, for a run that reads the product without having a job of the kind (daily without a
///   sleep job);
/// - `runReportSections`: the keys of `run.json` its marts fill (null when the run has none).
///
/// A `JobWork` then answers for its job: the words `pipelines explain` prints, the columns of
/// each table, whether and how a table becomes a sheet of `health.xlsx`, and its mart.
///
/// A new table of an existing kind touches its declaration (`…Tables.swift`), its mart (a case
/// of the mart's `Table` and the rows), and the generated tables of Pipelines/README.md. A new
/// kind is a folder of its own and a line in the registry.
public protocol JobKind: Sendable {
  /// The `kind` value of a pipeline job.
  var name: String { get }
  /// The tables a job of this kind can write, as the mart declares them; the first is the table
  /// of an output that names none.
  var tables: [TableSchema] { get }
  /// The job keys this kind takes besides `name`, `kind` and `outputs`.
  var keys: [String] { get }
  /// Those of `keys` a job must have.
  var requiredKeys: [String] { get }
  /// Why `output` cannot be written as asked: the key under the output and the message; nil when
  /// it can. Its file name is already normalized.
  func check(_ output: PipelineDefinition.Output) -> (key: String, message: String)?
  /// The files beside an export's main XML that its marts read (Pipelines/README.md, "What was not
  /// read").
  var filesRead: [ExportFileClaim] { get }
  /// Checks what the job asks for and works out what its marts need. May rewrite the job's
  /// relative paths (a code table, a template) to paths from the pipeline file's folder.
  func resolve(_ job: inout PipelineDefinition.Job, in pipeline: PipelineDefinition) throws(ConfigFileError)
    -> any JobWork
  /// The marts of the plan's jobs of this kind, all of them, in plan order. By default one per
  /// job (`JobWork.mart`); a kind whose jobs share one mart, or of which only one counts, says so
  /// here. Building a mart fails only for a file read now (a report's page).
  func marts(for jobs: [PlannedJob], build: MartBuild) throws(ConfigFileError) -> [any Mart]
  /// A mart that writes no file and provides `product`, for a run whose marts read it while no
  /// job of this kind provides it; nil when the kind's marts do not provide it.
  func makeProvider(of product: ProductKey, build: MartBuild) -> (any Mart)?
  /// The keys of `run.json` this kind's marts contribute (`Mart.runReportSection`); a run
  /// without such a mart writes them as null.
  var runReportSections: [String] { get }
  /// The charts of the workbook's Charts sheet, drawn from the table of a job's first output;
  /// the run writes `health.xlsx` when it has a job of a kind with charts (daily). Each entry a
  /// chart and what to draw instead when it has nothing to show.
  var workbookCharts: [[WorkbookChart]] { get }
  /// The per-day figures the kind's marts add to the table of days (`DayColumnsProduct`).
  var dayColumns: [any DayColumnsProduct.Type] { get }
}

extension JobKind {
  public var requiredKeys: [String] { [] }
  public var filesRead: [ExportFileClaim] { [] }
  public func check(_ output: PipelineDefinition.Output) -> (key: String, message: String)? { nil }
  public func marts(for jobs: [PlannedJob], build: MartBuild) throws(ConfigFileError) -> [any Mart] {
    var marts: [any Mart] = []
    for job in jobs { if let mart = try job.work.mart(for: job, build: build) { marts.append(mart) } }
    return marts
  }
  public func makeProvider(of product: ProductKey, build: MartBuild) -> (any Mart)? { nil }
  public var runReportSections: [String] { [] }
  public var workbookCharts: [[WorkbookChart]] { [] }
  public var dayColumns: [any DayColumnsProduct.Type] { [] }
}

/// A job worked out by its kind: everything its marts are given. Building them cannot fail
/// except for a file read then (a report's page).
public protocol JobWork: Sendable {
  /// What `pipelines explain` prints after the kind (`" of HeartRate per 1d: avg"`), or "".
  var explanation: String { get }
  /// The columns `table` gets for this job (a statistics job's depend on its options).
  func columns(of table: TableSchema) -> [Column]
  /// The column names `pipelines explain` lists.
  func columnNames(of table: TableSchema) -> [String]
  /// How `table` shows in `health.xlsx` when it can be a sheet (`TableSchema.inWorkbook`).
  func sheet(of table: TableSchema, job: String) -> WorkbookSheetChoice
  /// The keys and indexes `table` gets in `health.sqlite`; nil keeps the table out of it.
  func databaseKeys(of table: TableSchema) -> TableKeys?
  /// The job's mart, which `JobKind.marts` asks each job for; nil for a job whose kind makes one
  /// mart for all its jobs.
  func mart(for job: PlannedJob, build: MartBuild) throws(ConfigFileError) -> (any Mart)?
}

extension JobWork {
  public var explanation: String { "" }
  public func columns(of table: TableSchema) -> [Column] { table.columns }
  public func columnNames(of table: TableSchema) -> [String] { columns(of: table).map(\.name) }
  public func sheet(of table: TableSchema, job: String) -> WorkbookSheetChoice {
    .sheet(name: job, columns: columns(of: table))
  }
  public func databaseKeys(of table: TableSchema) -> TableKeys? { table.keys }
}

/// Whether a table becomes a sheet of `health.xlsx`.
public enum WorkbookSheetChoice: Sendable {
  case sheet(name: String, columns: [Column])
  /// Left to its files, for the reason given (in run.json).
  case leftToFile(reason: String)
}

extension PipelineDefinition.Job {
  /// The job's outputs as the mart's own tables. An output whose table the mart does not write
  /// is an error at `outputs[i].table` (the decoder checks names against the kind's tables, so
  /// this catches a kind whose `tables` and mart disagree, and jobs built in code).
  func resolveDestinations<Table: MartTable>(_: Table.Type, file: String) throws(ConfigFileError)
    -> [TableDestination<Table>]
  {
    var destinations: [TableDestination<Table>] = []
    for output in outputs {
      guard let table = Table.allCases.first(where: { $0.schema.name == output.table }) else {
        let known = Table.allCases.map(\.schema.name).joined(separator: ", ")
        throw ConfigFileError(
          file: file, line: output.line ?? line,
          keyPath: (output.keyPath.isEmpty ? keyPath + ".outputs" : output.keyPath) + ".table",
          message: "unknown table '\(ConfigNode.excerpt(output.table))' for a \(kind.name) job; known: \(known)")
      }
      destinations.append(TableDestination(table: table, file: output.file, format: output.format))
    }
    return destinations
  }

  /// A path the job names, from the pipeline file's folder when relative.
  static func path(_ path: String, besides pipeline: PipelineDefinition) -> String {
    guard !path.hasPrefix("/") else { return path }
    return (URL(fileURLWithPath: pipeline.path).deletingLastPathComponent().path as NSString)
      .appendingPathComponent(path)
  }
}
