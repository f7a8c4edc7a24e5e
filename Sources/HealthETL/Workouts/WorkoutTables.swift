import HealthModel

/// The tables of a workouts job, declared once: `Pipelines/README.md` says where every value comes
/// from ("Workouts, server records and swim laps").
public enum WorkoutTables {
  /// `workouts.csv`: one row per workout.
  public static let workouts = RowTable<WorkoutRow>(
    "workouts", rows: "one row per distinct workout, in start order (ties: by id)", defaultFile: "workouts.csv",
    columns: [
      .localTime("`start` on the local clock, `YYYY-MM-DD HH:MM:SS`") { $0.start },
      .text("id", "UUID v5 of source, activity type, start and end; upper-case, the same text as `recordUuid`") {
        $0.id
      },
      .text("activity_type", "the HKWorkoutActivityType name without its prefix (`Running`)") { $0.activityType },
      .integer("activity_type_raw", "its HKWorkoutActivityType number; empty for a type HealthKit does not define") {
        $0.activityTypeRaw.map(Int64.init)
      },
      .instant("start", "the workout's start") { $0.start },
      .instant("end", "the workout's end") { $0.end },
      .measure("duration_s", unit: "s", "moving time: the `duration` attribute, pauses excluded") {
        $0.durationSeconds
      },
      .integer("elapsed_s", unit: "s", "end − start") { $0.elapsedSeconds },
      .measure(
        "distance_m", unit: "m", sum: true, "the workout's `Distance*` statistics summed, else `totalDistance`"
      ) { $0.distanceMeters },
      .measure("energy_kcal", unit: "kcal", sum: true, "its ActiveEnergyBurned statistic, else `totalEnergyBurned`") {
        $0.energyKilocalories
      },
      .measure("hr_avg", unit: "count/min", "its HeartRate statistic, else the mean of the samples inside it") {
        $0.heartRateAverage
      },
      .measure("hr_min", unit: "count/min", "likewise, the minimum") { $0.heartRateMinimum },
      .measure("hr_max", unit: "count/min", "likewise, the maximum") { $0.heartRateMaximum },
      .text("source", "`sourceName`") { $0.source },
      .text("device_model", "the `model:` field of `device`") { $0.deviceModel },
      .boolean("indoor", "`HKIndoorWorkout`") { $0.indoor },
      .text("time_zone", "`HKTimeZone` as written") { $0.timeZone },
      .measure("elevation_ascended_m", unit: "m", "`HKElevationAscended`") { $0.elevationAscendedMeters },
      .measure("weather_temperature_c", unit: "degC", "`HKWeatherTemperature`") { $0.weatherTemperatureCelsius },
      .measure("weather_humidity", unit: "%", "`HKWeatherHumidity` as a fraction 0–1") { $0.weatherHumidity },
      .text("events", "`type=count` pairs in HKWorkoutEventType order (`pause=2;resume=2;lap=40`)") { $0.events },
      .integer("activities", "number of `WorkoutActivity` children") { Int64($0.activities) },
      .text("route", "the route files referenced, `;`-separated") { $0.route },
      .measure("pool_length_m", unit: "m", "`HKLapLength`") { $0.poolLengthMeters },
      .text("location", "`pool`, `open_water` or empty (`HKSwimmingLocationType`)") { $0.location },
    ]
      + SwimStrokeStyle.allCases.map { style in
        .measure(
          "strokes_" + style.name, unit: "count", sum: true,
          "strokes of the \(style.name) lengths' stroke samples; empty when no length has one"
        ) { $0.strokesByStyle?[style.rawValue] }
      } + WorkoutTables.lapAndRouteColumns,
    inWorkbook: true,
    keys: TableKeys(primary: ["id"], indexes: [["start_unix"], ["activity_type", "start_unix"]]))

  /// `workout_records.json`: the server records. Seven strings: the server contract has no numbers.
  public static let records = RowTable<WorkoutServerRecord>(
    "records", rows: "one record per distinct workout, in the order of the workouts table",
    defaultFile: "workout_records.json",
    columns: [
      .text("recordDate", "local date of the workout's end, `yyyyMMdd`") { $0.recordDate },
      .text("execTypeCode", "the activity type's server code (`workout-codes.json`)") { $0.execTypeCode },
      .text("execStartTime", "local start, `yyyyMMddHHmmss`") { $0.execStartTime },
      .text("execEndTime", "local end, `yyyyMMddHHmmss`") { $0.execEndTime },
      .text("execRuntime", "whole seconds of `duration` (end − start without one)") { $0.execRuntime },
      .text("deviceTypeCode", "`WATCH`, `PHONE` or `ETC`") { $0.deviceTypeCode },
      .text("recordUuid", "the workout's `id`") { $0.recordUuid },
    ],
    inWorkbook: true,
    keys: TableKeys(primary: ["recordUuid"], references: [.init("recordUuid", to: "workouts")]))

  /// `swim_laps.csv`: one row per pool length.
  public static let laps = RowTable<WorkoutPart<SwimLap>>(
    "laps", rows: "one row per length of a swimming workout, in start order", defaultFile: "swim_laps.csv",
    columns: [
      .localTime("`start` on the local clock, `YYYY-MM-DD HH:MM:SS`") { $0.part.start },
      .text("workout_id", "the workout's `id`") { $0.workoutID },
      .integer("lap", "1-based, in start order") { Int64($0.part.lap) },
      .instant("start", "the Lap event's date, else the stroke sample's start") { $0.part.start },
      .instant("end", "the Lap event's date + duration (to the second), else the stroke sample's end") {
        $0.part.end
      },
      .integer("duration_s", unit: "s", "end − start") { $0.part.end - $0.part.start },
      .measure("strokes", unit: "count", "the count of the stroke samples of the length; empty without one") {
        $0.part.strokes
      },
      .text(
        "style", "`HKSwimmingStrokeStyle`: unknown, mixed, freestyle, backstroke, breaststroke, butterfly, kickboard"
      ) { $0.part.style.name },
      .measure(
        "distance_m", unit: "m", sum: true,
        "the pool length; without one, the overlapping `DistanceSwimming` samples, pro rata by time"
      ) { $0.part.distanceMeters },
      .number(
        "swolf", precision: .decimals(2), display: .decimals(1),
        "`HKSWOLFScore` of the stroke sample, else of the Lap event"
      ) { $0.part.swolf },
    ] + WorkoutTables.lapOriginColumns,
    inWorkbook: true,
    keys: TableKeys(primary: ["workout_id", "lap"], references: [.init("workout_id", to: "workouts")]))

  /// `workout_activities.csv`: one row per `WorkoutActivity` (a discipline of a multi-sport
  /// workout, a step of an interval workout).
  public static let activities = RowTable<WorkoutPart<WorkoutActivityRow>>(
    "activities",
    rows:
      "one row per `WorkoutActivity` of a distinct workout, in the order of the workouts table, then document order",
    defaultFile: "workout_activities.csv",
    columns: [
      .localTime("`start` on the local clock, `YYYY-MM-DD HH:MM:SS`") { $0.part.start },
      .text("workout_id", "the workout's `id`") { $0.workoutID },
      .integer("activity", "1-based, in document order") { Int64($0.part.activity) },
      .text("uuid", "the activity's `uuid` as written") { $0.part.uuid },
      .text("activity_type", "its own `workoutActivityType` without the prefix (`Cycling`), else its workout's") {
        $0.part.activityType
      },
      .integer("activity_type_raw", "its HKWorkoutActivityType number; empty for a type HealthKit does not define") {
        $0.part.activityTypeRaw.map(Int64.init)
      },
      .text("activity_type_from", "`activity` (its own attribute) or `workout` (it has none: its workout's)") {
        $0.part.activityTypeFrom
      },
      .instant("start", "the activity's `startDate`") { $0.part.start },
      .instant("end", "the activity's `endDate`; empty without one") { $0.part.end },
      .measure("duration_s", unit: "s", "the activity's `duration`, pauses excluded") { $0.part.durationSeconds },
      .integer("elapsed_s", unit: "s", "end − start") { $0.part.elapsedSeconds },
      .measure("distance_m", unit: "m", sum: true, "the activity's own `Distance*` statistics summed") {
        $0.part.distanceMeters
      },
      .measure("energy_kcal", unit: "kcal", sum: true, "its own ActiveEnergyBurned statistic") {
        $0.part.energyKilocalories
      },
      .measure("hr_avg", unit: "count/min", "its own HeartRate statistic, else the mean of the samples inside it") {
        $0.part.heartRateAverage
      },
      .measure("hr_min", unit: "count/min", "likewise, the minimum") { $0.part.heartRateMinimum },
      .measure("hr_max", unit: "count/min", "likewise, the maximum") { $0.part.heartRateMaximum },
      .text("hr_from", "`statistics` or `samples`: where `hr_avg` came from; empty without it") {
        $0.part.heartRateFrom
      },
      .text("events", "its own `WorkoutEvent`s as `type=count` pairs, like the workout's `events`") {
        $0.part.events
      },
    ])

  public static let all = [
    workouts.schema, records.schema, laps.schema, routePoints.schema, splits.schema, activities.schema,
  ]

  /// A column of the workouts table by name (a programming error when there is none).
  static func column(_ name: String) -> Column { workouts.columns.first { $0.name == name }! }
}

/// A row of a table of a workout's parts (its laps, its splits): the part and its workout's `id`.
public struct WorkoutPart<Part: Sendable>: Sendable {
  public let workoutID: String
  public let part: Part
}
