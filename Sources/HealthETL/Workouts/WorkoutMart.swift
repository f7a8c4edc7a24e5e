public import HealthModel

/// Writes the workout outputs (Pipelines/docs/workouts.md, "Workouts"): `workouts.csv` (+
/// `workouts.json`), `workout_records.json` (the server records) and `swim_laps.csv` — or
/// whichever files and formats a pipeline's `workouts` job lists.
///
/// Workouts arrive de-duplicated ("Workout identity"). The HeartRate, SwimmingStrokeCount and
/// DistanceSwimming samples are kept compactly while the export streams, since records come
/// before workouts and in no time order; everything is computed in `finish`, once the run's
/// zone is known.
public final class WorkoutMart: Mart {
  public var provides: [ProductKey] { [ProductKey(WorkoutResults.self), ProductKey(WorkoutServerRecords.self)] }

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
  /// Whether the mart is a job's, whose server records go into the delivery delta and whose
  /// route report into `run.json`; a mart that only provides rows to others is not.
  private let isJobMart: Bool

  /// The rows of the last `finish`, in output order (start, then id): for stages that build on
  /// them, such as the nightly batch's `workout_records.new.json`.
  public private(set) var rows: [WorkoutRow] = []

  /// The server records of the last `finish`, in output order.
  public var serverRecords: [WorkoutServerRecord] { rows.map(\.serverRecord) }

  /// - Parameters:
  ///   - transaction: the run's outputs.
  ///   - codes: the server codes (`WorkoutCodeTable.load(path:)` of the job's `codes` file).
  ///   - outputs: the files to write.
  ///   - isJobMart: false for a mart that writes no file and only provides its rows to others.
  public init(
    transaction: OutputTransaction, codes: WorkoutCodeTable = .shipped, outputs: [Output] = defaultOutputs,
    isJobMart: Bool = true
  ) {
    self.codes = codes
    self.outputs = outputs
    self.isJobMart = isJobMart
    samples = WorkoutSampleIndex(transaction: transaction)
    routes = WorkoutRoutesAndSplits(transaction: transaction, outputs: outputs, wantsShapes: false)
  }

  /// A reader that asks for route shapes (`WorkoutRow.routeShape`, the report's outlines) makes
  /// the mart read the route files even when none of its outputs needs them.
  public func prepare(requests: ProductRequests) {
    routes.wantsShapes = requests.of(WorkoutResults.self).contains(where: \.routeShapes)
  }

  /// Part of the heart rate, swimming and distance samples: those of a workout's (or a split's)
  /// time, which its averages, laps and splits are made of.
  public private(set) var sampleUse: SampleUse?
  /// The workouts worth a look, after `finish` (`WorkoutOddities`).
  public private(set) var oddities: Oddities?

  public var runReportSection: RunReportSection? {
    guard isJobMart, let report = routes.report else { return nil }
    return RunReportSection(key: Self.runReportKey, value: report.jsonObject())
  }

  /// `run.json`'s `routes`: what reading the routes found.
  public static let runReportKey = "routes"

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

  private func usedSamples() -> SampleUse {
    var use = SampleUse()
    if samples.heartRateType >= 0 { use.use(samples.heartRateType, count: samples.heartRateUsed) }
    let swims = samples.swimSamplesUsed(
      in: workouts.map { WorkoutSampleIndex.Window(start: $0.start.seconds, end: $0.end.seconds) })
    if samples.strokeType >= 0 { use.use(samples.strokeType, count: swims.strokes) }
    if samples.swimDistanceType >= 0 { use.use(samples.swimDistanceType, count: swims.distances) }
    for (type, count) in routes.distanceSamplesUsed { use.use(type, count: count) }
    return use
  }

  public func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary] {
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
    sampleUse = usedSamples()
    var found = Oddities()
    var notes: [String: String] = [:]
    for (index, note) in routes.splitNotes { notes[WorkoutRowBuilder.id(of: workouts[index])] = note }
    WorkoutOddities.flag(rows, splitNotes: notes, rules: context.zone.rules, into: &found)
    oddities = found
    context.products.publish(WorkoutResults(rows: rows, oddities: found), by: self)
    if isJobMart { context.products.publish(WorkoutServerRecords(records: serverRecords), by: self) }
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

/// The workout rows a workouts mart computed, in output order (start, then id).
public struct WorkoutResults: MartProduct {
  public let rows: [WorkoutRow]
  /// The workouts worth a look (Pipelines/docs/nightly.md, "Worth a look").
  public let oddities: Oddities

  public init(rows: [WorkoutRow], oddities: Oddities = Oddities()) {
    self.rows = rows
    self.oddities = oddities
  }

  public struct Request: Sendable {
    /// Each row gets the outline of its first route file (`WorkoutRow.routeShape`).
    public var routeShapes: Bool

    public init(routeShapes: Bool) { self.routeShapes = routeShapes }
  }

  /// The local date of a row and its `duration_s` and `energy_kcal` as `workouts.csv` writes
  /// them, so that totals of them are sums of the file's cells.
  public func written(_ row: WorkoutRow, zone: ZoneRules) -> (date: CivilDate, seconds: Double?, kilocalories: Double?)
  {
    (
      zone.localDate(at: row.start), row.durationSeconds.map(Self.seconds.rounded),
      row.energyKilocalories.map(Self.energy.rounded)
    )
  }
  private static let seconds = WorkoutTables.column("duration_s").precision
  private static let energy = WorkoutTables.column("energy_kcal").precision
}

/// The server records of a workouts job's mart: what the run's delivery delta takes.
public struct WorkoutServerRecords: MartProduct {
  public let records: [WorkoutServerRecord]
}
