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
      case .workouts: return WorkoutTables.workouts
      case .records: return WorkoutTables.records
      case .laps: return WorkoutTables.laps
      case .routePoints: return WorkoutTables.routePoints
      case .splits: return WorkoutTables.splits
      case .activities: return WorkoutTables.activities
      }
    }
  }

  /// One file the stage writes.
  public typealias Output = TableDestination<Table>

  /// Every table to its default file.
  public static let defaultOutputs = Table.allCases.map { table in
    Output(table: table, file: table.schema.defaultFile, format: TableSchema.format(ofFile: table.schema.defaultFile))
  }

  private let transaction: OutputTransaction
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
  var daily: DailyCollector?
  /// Whether each row gets the outline of its first route file (`WorkoutRow.routeShape`): set by
  /// the report before the parse. The route files are then read even when no output of this
  /// mart needs them.
  var keepsRouteShapes: Bool {
    get { routes.wantsShapes }
    set { routes.wantsShapes = newValue }
  }

  /// The server records of the last `finish`, in output order.
  public var serverRecords: [WorkoutServerRecord] { rows.map(\.serverRecord) }

  /// - Parameters:
  ///   - transaction: the run's outputs.
  ///   - codes: the server codes (`WorkoutCodeTable.load(path:)` of the job's `codes` file).
  ///   - outputs: the files to write.
  public init(transaction: OutputTransaction, codes: WorkoutCodeTable = .shipped, outputs: [Output] = defaultOutputs) {
    self.transaction = transaction
    self.codes = codes
    self.outputs = outputs
    samples = WorkoutSampleIndex(transaction: transaction)
    routes = WorkoutRoutesAndSplits(transaction: transaction, outputs: outputs)
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
      var writer = try TableWriter(
        transaction, path: output.file, columns: output.table.schema.columns, format: output.format,
        zone: context.zone.rules, byteOrderMark: context.settings.csvByteOrderMark)
      for row in rows {
        switch output.table {
        case .workouts: try writer.append(Self.fields(row))
        case .records: try writer.append(row.serverRecord.fieldValues.map(Field.text))
        case .laps: for lap in row.laps { try writer.append(Self.fields(lap, workoutID: row.id)) }
        case .splits: for split in row.splits { try writer.append(Self.fields(split, workoutID: row.id)) }
        case .activities:
          for activity in row.activityRows { try writer.append(Self.fields(activity, workoutID: row.id)) }
        case .routePoints: break
        }
      }
      written.append(try writer.close())
    }
    return written
  }

  /// The fields of a `workouts` row.
  static func fields(_ row: WorkoutRow) -> [Field] {
    var fields: [Field] = [
      .instant(row.start), .text(row.id), .text(row.activityType), .integer(row.activityTypeRaw), .instant(row.start),
      .instant(row.end),
      .number(row.durationSeconds), .integer(row.elapsedSeconds), .number(row.distanceMeters),
      .number(row.energyKilocalories), .number(row.heartRateAverage), .number(row.heartRateMinimum),
      .number(row.heartRateMaximum), .text(row.source), .text(row.deviceModel), .boolean(row.indoor),
      .text(row.timeZone), .number(row.elevationAscendedMeters), .number(row.weatherTemperatureCelsius),
      .number(row.weatherHumidity), .text(row.events), .integer(row.activities), .text(row.route),
      .number(row.poolLengthMeters), .text(row.location),
    ]
    for style in SwimStrokeStyle.allCases { fields.append(.number(row.strokesByStyle?[style.rawValue])) }
    return fields + routeFields(row)
  }

  /// The fields of an `activities` row.
  static func fields(_ activity: WorkoutActivityRow, workoutID: String) -> [Field] {
    [
      .instant(activity.start), .text(workoutID), .integer(activity.activity), .text(activity.uuid),
      .text(activity.activityType), .integer(activity.activityTypeRaw), .text(activity.activityTypeFrom),
      .instant(activity.start), .instant(activity.end), .number(activity.durationSeconds),
      .integer(activity.elapsedSeconds), .number(activity.distanceMeters), .number(activity.energyKilocalories),
      .number(activity.heartRateAverage), .number(activity.heartRateMinimum), .number(activity.heartRateMaximum),
      .text(activity.heartRateFrom), .text(activity.events),
    ]
  }

  /// The fields of a `laps` row.
  static func fields(_ lap: SwimLap, workoutID: String) -> [Field] {
    [
      .instant(lap.start), .text(workoutID), .integer(lap.lap), .instant(lap.start), .instant(lap.end),
      .integer(lap.end - lap.start),
      .number(lap.strokes), .text(lap.style.name), .number(lap.distanceMeters), .number(lap.swolf),
      .text(lap.origin.rawValue), .text(lap.distanceFrom),
    ]
  }
}
