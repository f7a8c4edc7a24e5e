public import HealthExtract

/// A consumer of the staging layer's output. Every method has a default that ignores its input,
/// so a stage implements only what it uses.
public protocol SampleStage: AnyObject {
  /// A distinct, valid record (duplicates and rejected records never arrive here).
  func consume(_ sample: borrowing Sample, catalog: SampleCatalog)
  /// A distinct, valid workout.
  func consume(_ workout: WorkoutElement)
  /// Any other top-level element.
  func consume(_ element: GenericElement)
  /// An inline `Location` of a workout's route, as it streams (older exports write routes this
  /// way); `workout` is the `ordinal` of the `WorkoutElement` it belongs to, which arrives
  /// afterwards — or never, when that workout is a copy of an earlier one.
  func consume(routeLocation: RoutePoint, workout ordinal: Int)
}

extension SampleStage {
  public func consume(_ sample: borrowing Sample, catalog: SampleCatalog) {}
  public func consume(_ workout: WorkoutElement) {}
  public func consume(_ element: GenericElement) {}
  public func consume(routeLocation: RoutePoint, workout ordinal: Int) {}
}

/// A stage that writes outputs once the whole export has been read and the run's zone is known.
public protocol OutputStage: SampleStage {
  /// The marts whose finish this one needs done before its own: it reads their results, or
  /// what they hand over while they finish. The run derives the order of the finishes from
  /// these (`MartSchedule`); none by default.
  var reads: [any OutputStage] { get }
  /// Writes the stage's files through `context.transaction`; returns what it wrote.
  func finish(_ context: StageContext) throws(OutputError) -> [OutputSummary]
}

extension OutputStage {
  public var reads: [any OutputStage] { [] }
}

/// What every stage needs at the end of a run.
public struct StageContext {
  /// The run's zone for local dates and buckets (Pipelines/README.md, "Time zone").
  public let zone: RunZone
  public let catalog: SampleCatalog
  public let transaction: OutputTransaction
  public let settings: RunSettings
  /// What was read, so a stage can read the export's other files (GPX routes) after the parse;
  /// nil when the caller has no export to point to.
  public let input: InputInfo?

  public init(
    zone: RunZone, catalog: SampleCatalog, transaction: OutputTransaction, settings: RunSettings,
    input: InputInfo? = nil
  ) {
    self.zone = zone
    self.catalog = catalog
    self.transaction = transaction
    self.settings = settings
    self.input = input
  }
}

extension StageContext {
  /// A writer of `table` to `file` among the run's outputs, with the run's zone for its instants
  /// and the run's CSV settings: how every mart opens a table.
  /// - Parameter encodeOnThread: encode on a lane of the run's pool (long tables).
  public func writer<Row>(
    _ table: RowTable<Row>, file: String, format: TableFormat, encodeOnThread: Bool = false
  ) throws(OutputError) -> RowWriter<Row> {
    try RowWriter(
      transaction, path: file, table: table, format: format, zone: zone.rules,
      byteOrderMark: settings.csvByteOrderMark, encodeOnThread: encodeOnThread)
  }
}
