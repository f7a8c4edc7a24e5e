import HealthModel

/// Writes the workout outputs of SPEC §7 and §9: `workouts.csv` (+ `workouts.json`),
/// `workout_records.json` (the server records) and `swim_laps.csv` — or whichever files and
/// formats a pipeline's `workouts` job lists.
///
/// Workouts arrive de-duplicated (SPEC §7 key). The HeartRate, SwimmingStrokeCount and
/// DistanceSwimming samples are kept compactly while the export streams, since records come
/// before workouts and in no time order; everything is computed in `finish`, once the run's
/// zone is known.
public final class WorkoutMart: OutputStage {
  /// The tables of a workouts job (the pipeline's `table` names).
  public enum Table: String, Sendable, CaseIterable {
    /// One row per workout (SPEC §7).
    case workouts
    /// The server records (SPEC §7).
    case records
    /// One row per swim length (SPEC §9).
    case laps
  }

  /// One file the stage writes.
  public typealias Output = TableDestination<Table>

  /// `workouts.csv`, `workouts.json`, `workout_records.json`, `swim_laps.csv`.
  public static let defaultOutputs = [
    Output(table: .workouts, file: "workouts.csv", format: .csv),
    Output(table: .workouts, file: "workouts.json", format: .json),
    Output(table: .records, file: "workout_records.json", format: .json),
    Output(table: .laps, file: "swim_laps.csv", format: .csv),
  ]

  /// `workouts` columns, in order.
  public static let workoutColumns =
    [
      "id", "activity_type", "activity_type_raw", "start", "end", "duration_s", "elapsed_s", "distance_m",
      "energy_kcal", "hr_avg", "hr_min", "hr_max", "source", "device_model", "indoor", "time_zone",
      "elevation_ascended_m", "weather_temperature_c", "weather_humidity", "events", "activities", "route",
      "pool_length_m", "location",
    ] + SwimStrokeStyle.allCases.map { "strokes_" + $0.name }

  static let workoutKinds: [ColumnKind] =
    [
      .text, .text, .number, .text, .text, .number, .number, .number, .number, .number, .number, .number, .text,
      .text, .boolean, .text, .number, .number, .number, .text, .number, .text, .number, .text,
    ] + SwimStrokeStyle.allCases.map { _ in .number }

  /// `laps` columns, in order.
  public static let swimLapColumns = [
    "workout_id", "lap", "start", "end", "duration_s", "strokes", "style", "distance_m", "swolf",
  ]

  /// Seven strings: the server contract has no numbers.
  static let recordKinds = [ColumnKind](repeating: .text, count: WorkoutServerRecord.fieldNames.count)

  static let swimLapKinds: [ColumnKind] = [.text, .number, .text, .text, .number, .number, .text, .number, .number]

  private let transaction: OutputTransaction
  private let codes: WorkoutCodeTable
  private let outputs: [Output]
  private var workouts: [WorkoutElement] = []
  private var samples: WorkoutSampleIndex

  /// The rows of the last `finish`, in output order (start, then id): for stages that build on
  /// them, such as the nightly batch's `workout_records.new.json`.
  public private(set) var rows: [WorkoutRow] = []

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
  }

  /// The default files, without `workouts.json` unless `writeJSON`.
  public convenience init(transaction: OutputTransaction, codes: WorkoutCodeTable, writeJSON: Bool) {
    self.init(
      transaction: transaction, codes: codes,
      outputs: Self.defaultOutputs.filter { writeJSON || !($0.table == .workouts && $0.format == .json) })
  }

  public func consume(_ sample: borrowing Sample, catalog: SampleCatalog) {
    samples.add(sample, catalog: catalog)
  }

  public func consume(_ workout: WorkoutElement) {
    workouts.append(Self.slim(workout))
  }

  /// Drops what no output reads, so a long export of interval workouts (hundreds of statistics
  /// per workout inside its activities) stays small: activities are only counted, only Lap events
  /// keep their metadata, routes keep their file.
  static func slim(_ workout: WorkoutElement) -> WorkoutElement {
    var slim = workout
    slim.activities = workout.activities.map { _ in WorkoutElement.Activity() }
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
    try samples.summarizeHeartRate(
      for: workouts.map { WorkoutSampleIndex.Window(start: $0.start.seconds, end: $0.end.seconds) })
    var builder = WorkoutRowBuilder(
      samples: samples, catalog: context.catalog, codes: codes, runZone: context.zone.rules)
    rows = workouts.map { builder.row(for: $0) }.sorted { $0.start != $1.start ? $0.start < $1.start : $0.id < $1.id }
    let zone = context.zone.rules
    var written: [OutputSummary] = []
    for output in outputs {
      let columns: [String]
      let kinds: [ColumnKind]
      switch output.table {
      case .workouts: (columns, kinds) = (Self.workoutColumns, Self.workoutKinds)
      case .records: (columns, kinds) = (WorkoutServerRecord.fieldNames, Self.recordKinds)
      case .laps: (columns, kinds) = (Self.swimLapColumns, Self.swimLapKinds)
      }
      var writer = try TableWriter(
        transaction, path: output.file, columns: columns, kinds: kinds, format: output.format,
        byteOrderMark: context.settings.csvByteOrderMark)
      for row in rows {
        switch output.table {
        case .workouts: try writer.append(Self.fields(row, zone: zone))
        case .records: try writer.append(row.serverRecord.fieldValues)
        case .laps:
          for lap in row.laps { try writer.append(Self.fields(lap, workoutID: row.id, zone: zone)) }
        }
      }
      written.append(try writer.close())
    }
    return written
  }

  static func instant(_ instant: Instant, _ zone: ZoneRules) -> String {
    LocalTimeFormatter.iso8601(instant, offsetSeconds: zone.offset(at: instant))
  }

  /// The fields of a `workouts` row (numbers formatted by `FieldFormat.number`).
  static func fields(_ row: WorkoutRow, zone: ZoneRules) -> [String?] {
    var fields: [String?] = [
      row.id, row.activityType, row.activityTypeRaw.map { String($0) }, instant(row.start, zone),
      instant(row.end, zone), FieldFormat.number(row.durationSeconds), String(row.elapsedSeconds),
      FieldFormat.number(row.distanceMeters), FieldFormat.number(row.energyKilocalories),
      FieldFormat.number(row.heartRateAverage), FieldFormat.number(row.heartRateMinimum),
      FieldFormat.number(row.heartRateMaximum), row.source, row.deviceModel,
      row.indoor.map { $0 ? "true" : "false" }, row.timeZone, FieldFormat.number(row.elevationAscendedMeters),
      FieldFormat.number(row.weatherTemperatureCelsius), FieldFormat.number(row.weatherHumidity), row.events,
      String(row.activities), row.route, FieldFormat.number(row.poolLengthMeters), row.location,
    ]
    for style in SwimStrokeStyle.allCases { fields.append(FieldFormat.number(row.strokesByStyle?[style.rawValue])) }
    return fields
  }

  /// The fields of a `laps` row.
  static func fields(_ lap: SwimLap, workoutID: String, zone: ZoneRules) -> [String?] {
    [
      workoutID, String(lap.lap), instant(lap.start, zone), instant(lap.end, zone), String(lap.end - lap.start),
      FieldFormat.number(lap.strokes), lap.style.name, FieldFormat.number(lap.distanceMeters),
      FieldFormat.number(lap.swolf),
    ]
  }
}
