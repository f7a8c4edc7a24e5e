/// The tables of a workouts job, declared once: `Pipelines/README.md` says where every value comes
/// from ("Workouts, server records and swim laps").
public enum WorkoutTables {
  /// `workouts.csv`: one row per workout.
  public static let workouts = TableSchema(
    "workouts", rows: "one row per distinct workout, in start order (ties: by id)", defaultFile: "workouts.csv",
    columns: [
      .localTime("`start` on the local clock, `YYYY-MM-DD HH:MM:SS`"),
      .text("id", "UUID v5 of source, activity type, start and end; upper-case, the same text as `recordUuid`"),
      .text("activity_type", "the HKWorkoutActivityType name without its prefix (`Running`)"),
      .integer("activity_type_raw", "its HKWorkoutActivityType number; empty for a type HealthKit does not define"),
      .instant("start", "the workout's start"),
      .instant("end", "the workout's end"),
      .measure("duration_s", unit: "s", "moving time: the `duration` attribute, pauses excluded"),
      .integer("elapsed_s", unit: "s", "end − start"),
      .measure("distance_m", unit: "m", sum: true, "the workout's `Distance*` statistics summed, else `totalDistance`"),
      .measure("energy_kcal", unit: "kcal", sum: true, "its ActiveEnergyBurned statistic, else `totalEnergyBurned`"),
      .measure("hr_avg", unit: "count/min", "its HeartRate statistic, else the mean of the samples inside it"),
      .measure("hr_min", unit: "count/min", "likewise, the minimum"),
      .measure("hr_max", unit: "count/min", "likewise, the maximum"),
      .text("source", "`sourceName`"),
      .text("device_model", "the `model:` field of `device`"),
      .boolean("indoor", "`HKIndoorWorkout`"),
      .text("time_zone", "`HKTimeZone` as written"),
      .measure("elevation_ascended_m", unit: "m", "`HKElevationAscended`"),
      .measure("weather_temperature_c", unit: "degC", "`HKWeatherTemperature`"),
      .measure("weather_humidity", unit: "%", "`HKWeatherHumidity` as a fraction 0–1"),
      .text("events", "`type=count` pairs in HKWorkoutEventType order (`pause=2;resume=2;lap=40`)"),
      .integer("activities", "number of `WorkoutActivity` children"),
      .text("route", "the route files referenced, `;`-separated"),
      .measure("pool_length_m", unit: "m", "`HKLapLength`"),
      .text("location", "`pool`, `open_water` or empty (`HKSwimmingLocationType`)"),
    ]
      + SwimStrokeStyle.allCases.map { style in
        .measure(
          "strokes_" + style.name, unit: "count", sum: true,
          "strokes of the \(style.name) lengths' stroke samples; empty when no length has one")
      } + WorkoutTables.lapAndRouteColumns,
    inWorkbook: true,
    keys: TableKeys(primary: ["id"], indexes: [["start_unix"], ["activity_type", "start_unix"]]))

  /// `workout_records.json`: the server records. Seven strings: the server contract has no numbers.
  public static let records = TableSchema(
    "records", rows: "one record per distinct workout, in the order of the workouts table",
    defaultFile: "workout_records.json",
    columns: [
      .text("recordDate", "local date of the workout's end, `yyyyMMdd`"),
      .text("execTypeCode", "the activity type's server code (`workout-codes.json`)"),
      .text("execStartTime", "local start, `yyyyMMddHHmmss`"),
      .text("execEndTime", "local end, `yyyyMMddHHmmss`"),
      .text("execRuntime", "whole seconds of `duration` (end − start without one)"),
      .text("deviceTypeCode", "`WATCH`, `PHONE` or `ETC`"),
      .text("recordUuid", "the workout's `id`"),
    ],
    inWorkbook: true,
    keys: TableKeys(primary: ["recordUuid"], references: [.init("recordUuid", to: "workouts")]))

  /// `swim_laps.csv`: one row per pool length.
  public static let laps = TableSchema(
    "laps", rows: "one row per length of a swimming workout, in start order", defaultFile: "swim_laps.csv",
    columns: [
      .localTime("`start` on the local clock, `YYYY-MM-DD HH:MM:SS`"),
      .text("workout_id", "the workout's `id`"),
      .integer("lap", "1-based, in start order"),
      .instant("start", "the Lap event's date, else the stroke sample's start"),
      .instant("end", "the Lap event's date + duration (to the second), else the stroke sample's end"),
      .integer("duration_s", unit: "s", "end − start"),
      .measure("strokes", unit: "count", "the count of the stroke samples of the length; empty without one"),
      .text(
        "style", "`HKSwimmingStrokeStyle`: unknown, mixed, freestyle, backstroke, breaststroke, butterfly, kickboard"),
      .measure(
        "distance_m", unit: "m", sum: true,
        "the pool length; without one, the overlapping `DistanceSwimming` samples, pro rata by time"),
      .number(
        "swolf", precision: .decimals(2), display: .decimals(1),
        "`HKSWOLFScore` of the stroke sample, else of the Lap event"),
    ] + WorkoutTables.lapOriginColumns,
    inWorkbook: true,
    keys: TableKeys(primary: ["workout_id", "lap"], references: [.init("workout_id", to: "workouts")]))

  public static let all = [workouts, records, laps, routePoints, splits]

  /// A column of the workouts table by name (a programming error when there is none).
  static func column(_ name: String) -> Column { workouts.columns.first { $0.name == name }! }
}
