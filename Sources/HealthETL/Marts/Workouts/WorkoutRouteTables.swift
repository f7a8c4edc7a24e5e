/// The columns and tables of laps from events, routes and splits (Pipelines/README.md, "Swimming",
/// "Routes", "Splits"), declared with the other workout tables.
extension WorkoutTables {
  /// Appended to `workouts`: laps and strokes with where they came from, and the route's totals.
  static let lapAndRouteColumns: [Column] = [
    .integer("laps", "lengths of a swimming workout (rows of `laps`); empty for other workouts"),
    .measure(
      "strokes", unit: "count", sum: true,
      "all strokes: the lengths' stroke samples, else the `SwimmingStrokeCount` statistic"),
    .text("strokes_from", "`samples` or `statistics`: where `strokes` came from; empty without strokes"),
    .text("distance_from", "`statistics` or `totalDistance`: where `distance_m` came from; empty without it"),
    .text("hr_from", "`statistics` or `samples`: where `hr_avg` came from; empty without it"),
    .integer(
      "route_points", "points kept of the workout's route (GPX files and inline `Location`s); empty without a route"),
    .measure(
      "route_distance_m", unit: "m", sum: true,
      "GPS distance: great-circle steps between consecutive route points"),
    .measure(
      "route_elevation_gain_m", unit: "m", sum: true,
      "rises between consecutive route elevations, summed"),
    .measure(
      "route_elevation_loss_m", unit: "m", sum: true,
      "falls between consecutive route elevations, summed"),
    .number("route_min_latitude", precision: .asRecorded, "bounding box of the route: southernmost latitude"),
    .number("route_min_longitude", precision: .asRecorded, "westernmost longitude"),
    .number("route_max_latitude", precision: .asRecorded, "northernmost latitude"),
    .number("route_max_longitude", precision: .asRecorded, "easternmost longitude"),
    .text(
      "route_problems",
      "what went wrong with the route, `;`-separated: files missing or broken, points dropped and why, splits stopped"),
  ]

  /// Appended to `laps`.
  static let lapOriginColumns: [Column] = [
    .text("from", "`event` (a Lap event) or `stroke_sample` (a stroke sample no Lap event matches)"),
    .text(
      "distance_from",
      "`pool_length` (a length of a pool) or `samples` (distance samples, without a pool length); empty without either"),
  ]

  /// `route_points.csv`: every point of every route, as read.
  public static let routePoints = TableSchema(
    "route_points",
    rows:
      "one row per route point kept: inline `Location`s in document order, then the GPX files in archive (or name) order, each in time order",
    defaultFile: "route_points.csv",
    columns: [
      .localTime("`time` on the local clock, `YYYY-MM-DD HH:MM:SS`"),
      .text("workout_id", "the workout's `id`; empty for a route file no workout names"),
      .text("file", "the route file (`workout-routes/route_….gpx`); empty for an inline `Location`"),
      .instant("time", "the point's time (whole seconds)"),
      .number("latitude", precision: .asRecorded, "degrees"),
      .number("longitude", precision: .asRecorded, "degrees"),
      .number("elevation_m", unit: "m", precision: .asRecorded, "`ele` (GPX), `altitude` (`Location`)"),
      .number("speed_m_s", unit: "m/s", precision: .asRecorded, "`speed`; −1 is HealthKit's \"unknown\", kept"),
      .number("course", precision: .asRecorded, "`course`, degrees from north; −1 is \"unknown\", kept"),
      .number(
        "horizontal_accuracy_m", unit: "m", precision: .asRecorded, "`hAcc` (GPX), `horizontalAccuracy` (`Location`)"),
      .number("vertical_accuracy_m", unit: "m", precision: .asRecorded, "`vAcc`, `verticalAccuracy`"),
    ],
    keys: TableKeys(indexes: [["workout_id", "time_unix"]], references: [.init("workout_id", to: "workouts")]))

  /// `workout_splits.csv`: splits per kilometre and per mile.
  public static let splits = TableSchema(
    "splits",
    rows:
      "one row per split of a run, walk, hike or ride, in workout order, then `from`, `unit` and `split`",
    defaultFile: "workout_splits.csv",
    columns: [
      .localTime("`start` on the local clock, `YYYY-MM-DD HH:MM:SS`"),
      .text("workout_id", "the workout's `id`"),
      .text(
        "from",
        "`distance` (the workout's distance samples), `route` (GPS, when it has none), `distance_scaled` or"
          + " `route_scaled` (scaled to the workout's distance), or `watch` (the Watch's Segment events)"),
      .text("unit", "`km` or `mi`; empty for a Segment chain of neither length"),
      .integer("split", "1-based, in time order"),
      .instant("start", "where the split starts (to the second)"),
      .instant("end", "where it ends (to the second)"),
      .measure("distance_m", unit: "m", "1000 or 1609.344, less for the last"),
      .measure(
        "duration_s", unit: "s", "moving time: end − start without the pauses"),
      .measure("elapsed_s", unit: "s", "end − start"),
      .measure(
        "pace_s", unit: "s", "moving seconds per `unit` (per km or per mile)"),
      .measure("speed_m_s", unit: "m/s", "distance ÷ moving time"),
      .measure(
        "hr_avg", unit: "count/min",
        "mean of the HeartRate samples starting in the split"),
      .measure("hr_max", unit: "count/min", "the highest of them"),
      .measure(
        "elevation_change_m", unit: "m",
        "route elevation at the end − at the start; empty without route elevations"),
      .measure(
        "elevation_gain_m", unit: "m", sum: true,
        "rises of the route elevation inside the split"),
      .measure(
        "elevation_loss_m", unit: "m", sum: true,
        "falls of the route elevation inside the split"),
    ],
    // No primary key: a workout with several chains of Segment events numbers each chain's splits
    // from 1.
    keys: TableKeys(indexes: [["workout_id", "start_unix"]], references: [.init("workout_id", to: "workouts")]))
}
