import HealthModel

/// Writes the workout outputs (Pipelines/README.md, "Workouts"): `workouts.csv` (+
/// `workouts.json`), `workout_records.json` (the server records) and `swim_laps.csv` — or
/// whichever files and formats a pipeline's `workouts` job lists.
///
/// Workouts arrive de-duplicated ("Workout identity"). The HeartRate, SwimmingStrokeCount and
/// DistanceSwimming samples are kept compactly while the export streams, since records come
/// before workouts and in no time order; everything is computed in `finish`, once the run's
/// zone is known.
public final class WorkoutMart: OutputStage {
  /// The tables of a workouts job (the pipeline's `table` names).
  public enum Table: String, MartTable {
    case workouts, records, laps
    case routePoints = "route_points", splits, activities

    public var schema: TableSchema {
      switch self {
      case .workouts: return WorkoutTables.workouts.schema
      case .records: return WorkoutTables.records.schema
      case .laps: return WorkoutTables.laps.schema
      case .routePoints: return WorkoutTables.routePoints.schema
      case .splits: return WorkoutTables.splits.schema
      case .activities: return WorkoutTables.activities.schema
      }
    }
  }

  /// One file the stage writes.
  public typealias Output = TableDestination<Table>

  /// Every table to its default file.
  public static let defaultOutputs = Table.allCases.map { table in
    Output(table: table, file: table.schema.defaultFile, format: TableSchema.format(ofFile: table.schema.defaultFile))
  }

  private let codes: WorkoutCodeTable
  private let outputs: [Output]
  private var workouts: [WorkoutElement] = []
  private var samples: WorkoutSampleIndex
  private let routes: WorkoutRoutesAndSplits

  /// What reading the routes found, for `run.json`; nil when no output needed the routes.
  public var routeReport: RouteReport? { routes.report }

  /// The rows of the last `finish`, in output order (start, then id): for stages that build on
  /// them, such as the nightly batch's `workout_records.new.json`.
  public private(set) var rows: [WorkoutRow] = []
  /// Receives each workout's local date, moving time and energy for `daily.csv`.
  let daily: DailyCollector?

  /// The server records of the last `finish`, in output order.
  public var serverRecords: [WorkoutServerRecord] { rows.map(\.serverRecord) }

  /// - Parameters:
  ///   - transaction: the run's outputs.
  ///   - codes: the server codes (`WorkoutCodeTable.load(path:)` of the job's `codes` file).
  ///   - outputs: the files to write.
  public convenience init(
    transaction: OutputTransaction, codes: WorkoutCodeTable = .shipped, outputs: [Output] = defaultOutputs
  ) {
    self.init(transaction: transaction, codes: codes, outputs: outputs, daily: nil, keepsRouteShapes: false)
  }

  /// - Parameters:
  ///   - daily: receives each workout as it is written, for `daily.csv`.
  ///   - keepsRouteShapes: whether each row gets the outline of its first route file
  ///     (`WorkoutRow.routeShape`), for the report; the route files are then read even when no
  ///     output of this mart needs them.
  init(
    transaction: OutputTransaction, codes: WorkoutCodeTable = .shipped, outputs: [Output] = defaultOutputs,
    daily: DailyCollector?, keepsRouteShapes: Bool
  ) {
    self.codes = codes
    self.outputs = outputs
    self.daily = daily
    samples = WorkoutSampleIndex(transaction: transaction)
    routes = WorkoutRoutesAndSplits(transaction: transaction, outputs: outputs, wantsShapes: keepsRouteShapes)
  }

  public func consume(_ sample: borrowing Sample, catalog: SampleCatalog) {
    samples.add(sample, catalog: catalog)
    routes.add(sample, catalog: catalog)
  }

  public func consume(routeLocation: RoutePoint, workout ordinal: Int) {
    routes.add(location: routeLocation, ordinal: ordinal)
  }

  public func consume(_ workout: WorkoutElement) {
    workouts.append(Self.slim(workout))
  }

  /// Drops what no output reads, so a long export of interval workouts (hundreds of statistics
  /// per workout inside its activities) stays small: activities keep their times and the
  /// statistics their rows read, without metadata; only Lap events keep their metadata, routes
  /// keep their file.
  static func slim(_ workout: WorkoutElement) -> WorkoutElement {
    var slim = workout
    slim.activities = workout.activities.map { activity in
      var kept = activity
      kept.metadata = []
      kept.events = activity.events.map { event in
        var bare = event
        bare.metadata = []
        return bare
      }
      kept.statistics = activity.statistics.filter(WorkoutRowBuilder.isActivityStatistic)
      return kept
    }
    slim.events = workout.events.map { event in
      var kept = event
      if event.type != WorkoutRowBuilder.eventPrefix + "Lap" { kept.metadata = [] }
      return kept
    }
    slim.routes = workout.routes.map { route in
      var kept = WorkoutElement.Route()
      kept.filePath = route.filePath
      return kept
    }
    return slim
  }

  public func finish(_ context: StageContext) throws(OutputError) -> [OutputSummary] {
    samples.sort()
    var written = try routes.prepare(workouts, context: context)
    try samples.summarizeHeartRate(
      for: workouts.map { WorkoutSampleIndex.Window(start: $0.start.seconds, end: $0.end.seconds) }
        + routes.heartRateWindows(workouts)
        + workouts.flatMap { $0.activities.compactMap(WorkoutRowBuilder.heartRateWindow) })
    var builder = WorkoutRowBuilder(
      samples: samples, catalog: context.catalog, codes: codes, runZone: context.zone.rules)
    rows = workouts.indices.map { index in
      var row = builder.row(for: workouts[index])
      routes.complete(&row, workouts[index], index: index, heartRate: samples)
      return row
    }.sorted { $0.start != $1.start ? $0.start < $1.start : $0.id < $1.id }
    if let daily {
      // As `workouts.csv` writes them, so the daily totals are sums of its cells.
      let seconds = WorkoutTables.column("duration_s").precision
      let energy = WorkoutTables.column("energy_kcal").precision
      for row in rows {
        daily.workout(
          on: context.zone.rules.localDate(at: row.start), seconds: row.durationSeconds.map(seconds.rounded),
          kilocalories: row.energyKilocalories.map(energy.rounded))
      }
    }
    for output in outputs where output.table != .routePoints {
      func writer<Row>(_ table: RowTable<Row>) throws(OutputError) -> RowWriter<Row> {
        try context.writer(table, file: output.file, format: output.format)
      }
      switch output.table {
      case .workouts:
        var workouts = try writer(WorkoutTables.workouts)
        for row in rows { try workouts.append(row) }
        written.append(try workouts.close())
      case .records:
        var records = try writer(WorkoutTables.records)
        for row in rows { try records.append(row.serverRecord) }
        written.append(try records.close())
      case .laps:
        var laps = try writer(WorkoutTables.laps)
        for row in rows { for lap in row.laps { try laps.append(WorkoutPart(workoutID: row.id, part: lap)) } }
        written.append(try laps.close())
      case .splits:
        var splits = try writer(WorkoutTables.splits)
        for row in rows { for split in row.splits { try splits.append(WorkoutPart(workoutID: row.id, part: split)) } }
        written.append(try splits.close())
      case .activities:
        var activities = try writer(WorkoutTables.activities)
        for row in rows {
          for activity in row.activityRows { try activities.append(WorkoutPart(workoutID: row.id, part: activity)) }
        }
        written.append(try activities.close())
      case .routePoints: break
      }
    }
    return written
  }
}
