public import HealthModel

/// The columns and tables of laps from events, routes and splits (Pipelines/docs/workouts.md, "Swimming",
/// "Routes", "Splits"), declared with the other workout tables.
extension WorkoutTables {
  /// Appended to `workouts`: laps and strokes with where they came from, and the route's totals.
  static let lapAndRouteColumns: [RowColumn<WorkoutRow>] = [
    .integer("laps", "lengths of a swimming workout (rows of `laps`); empty for other workouts") {
      $0.activityType == "Swimming" ? Int64($0.laps.count) : nil
    },
    .measure(
      "strokes", unit: "count", sum: true,
      "all strokes: the lengths' stroke samples, else the `SwimmingStrokeCount` statistic"
    ) { $0.strokes },
    .text("strokes_from", "`samples` or `statistics`: where `strokes` came from; empty without strokes") {
      $0.strokesFrom
    },
    .text("distance_from", "`statistics` or `totalDistance`: where `distance_m` came from; empty without it") {
      $0.distanceFrom
    },
    .text("hr_from", "`statistics` or `samples`: where `hr_avg` came from; empty without it") { $0.heartRateFrom },
    .integer(
      "route_points", "points kept of the workout's route (GPX files and inline `Location`s); empty without a route"
    ) { $0.routeSummary.map { Int64($0.points) } },
    .measure(
      "route_distance_m", unit: "m", sum: true,
      "GPS distance: great-circle steps between consecutive route points"
    ) { $0.routeSummary?.distanceMeters },
    .measure(
      "route_elevation_gain_m", unit: "m", sum: true,
      "rises between consecutive route elevations, summed"
    ) { $0.routeSummary?.elevationGainMeters },
    .measure(
      "route_elevation_loss_m", unit: "m", sum: true,
      "falls between consecutive route elevations, summed"
    ) { $0.routeSummary?.elevationLossMeters },
    .number("route_min_latitude", precision: .asRecorded, "bounding box of the route: southernmost latitude") {
      $0.routeSummary?.minimumLatitude
    },
    .number("route_min_longitude", precision: .asRecorded, "westernmost longitude") {
      $0.routeSummary?.minimumLongitude
    },
    .number("route_max_latitude", precision: .asRecorded, "northernmost latitude") {
      $0.routeSummary?.maximumLatitude
    },
    .number("route_max_longitude", precision: .asRecorded, "easternmost longitude") {
      $0.routeSummary?.maximumLongitude
    },
    .text(
      "route_problems",
      "what went wrong with the route, `;`-separated: files missing or broken, points dropped and why, splits stopped"
    ) { $0.routeProblems },
  ]

  /// Appended to `laps`.
  static let lapOriginColumns: [RowColumn<WorkoutPart<SwimLap>>] = [
    .text("from", "`event` (a Lap event) or `stroke_sample` (a stroke sample no Lap event matches)") {
      $0.part.origin.rawValue
    },
    .text(
      "distance_from",
      "`pool_length` (a length of a pool) or `samples` (distance samples, without a pool length); empty without either"
    ) { $0.part.distanceFrom },
  ]

  /// `route_points.csv`: every point of every route, as read.
  public static let routePoints = RowTable<RoutePointRow>(
    "route_points",
    rows:
      "one row per route point kept: inline `Location`s in document order, then the GPX files in archive (or name) order, each in time order",
    defaultFile: "route_points.csv",
    columns: [
      .localTime("`time` on the local clock, `YYYY-MM-DD HH:MM:SS`") { $0.time },
      .text("workout_id", "the workout's `id`; empty for a route file no workout names") { $0.workoutID },
      .text("file", "the route file (`workout-routes/route_….gpx`); empty for an inline `Location`") { $0.file },
      .instant("time", "the point's time (whole seconds)") { $0.time },
      .number("latitude", precision: .asRecorded, "degrees") { $0.point.latitude },
      .number("longitude", precision: .asRecorded, "degrees") { $0.point.longitude },
      .number("elevation_m", unit: "m", precision: .asRecorded, "`ele` (GPX), `altitude` (`Location`)") {
        $0.point.elevation
      },
      .number("speed_m_s", unit: "m/s", precision: .asRecorded, "`speed`; −1 is HealthKit's \"unknown\", kept") {
        $0.point.speed
      },
      .number("course", precision: .asRecorded, "`course`, degrees from north; −1 is \"unknown\", kept") {
        $0.point.course
      },
      .number(
        "horizontal_accuracy_m", unit: "m", precision: .asRecorded, "`hAcc` (GPX), `horizontalAccuracy` (`Location`)"
      ) { $0.point.horizontalAccuracy },
      .number("vertical_accuracy_m", unit: "m", precision: .asRecorded, "`vAcc`, `verticalAccuracy`") {
        $0.point.verticalAccuracy
      },
    ],
    keys: TableKeys(indexes: [["workout_id", "time_unix"]], references: [.init("workout_id", to: "workouts")]))

  /// `workout_splits.csv`: splits per kilometre and per mile.
  public static let splits = RowTable<WorkoutPart<WorkoutSplit>>(
    "splits",
    rows:
      "one row per split of a run, walk, hike or ride, in workout order, then `from`, `unit` and `split`; one"
      + " `none` row for a workout whose every series was too fast for its activity",
    defaultFile: "workout_splits.csv",
    columns: [
      .localTime("`start` on the local clock, `YYYY-MM-DD HH:MM:SS`") { $0.part.startInstant },
      .text("workout_id", "the workout's `id`") { $0.workoutID },
      .text(
        "from",
        "`distance` (the workout's distance samples), `route` (GPS, when it has none), `distance_scaled` or"
          + " `route_scaled` (scaled to the workout's distance), or `watch` (the Watch's Segment events);"
          + " `none (why)` on the one row of a workout whose every series was too fast for its activity"
      ) { $0.part.from },
      .text("unit", "`km` or `mi`; empty for a Segment chain of neither length and on a `none` row") {
        $0.part.unit
      },
      .integer("split", "1-based, in time order; empty on a `none` row") {
        $0.part.standsForNone ? nil : Int64($0.part.split)
      },
      .instant("start", "where the split starts (to the second); the workout's start on a `none` row") {
        $0.part.startInstant
      },
      .instant("end", "where it ends (to the second); the workout's end on a `none` row") { $0.part.endInstant },
      .measure("distance_m", unit: "m", "1000 or 1609.344, less for the last") { $0.part.distanceMeters },
      .measure(
        "duration_s", unit: "s", "moving time: end − start without the pauses"
      ) { $0.part.standsForNone ? nil : $0.part.movingSeconds },
      .measure("elapsed_s", unit: "s", "end − start") { $0.part.standsForNone ? nil : $0.part.elapsedSeconds },
      .measure(
        "pace_s", unit: "s", "moving seconds per `unit` (per km or per mile)"
      ) { $0.part.paceSeconds },
      .measure("speed_m_s", unit: "m/s", "distance ÷ moving time") { $0.part.speed },
      .measure(
        "hr_avg", unit: "count/min",
        "mean of the HeartRate samples starting in the split"
      ) { $0.part.heartRateAverage },
      .measure("hr_max", unit: "count/min", "the highest of them") { $0.part.heartRateMaximum },
      .measure(
        "elevation_change_m", unit: "m",
        "route elevation at the end − at the start; empty without route elevations"
      ) { $0.part.elevationChangeMeters },
      .measure(
        "elevation_gain_m", unit: "m", sum: true,
        "rises of the route elevation inside the split"
      ) { $0.part.elevationGainMeters },
      .measure(
        "elevation_loss_m", unit: "m", sum: true,
        "falls of the route elevation inside the split"
      ) { $0.part.elevationLossMeters },
    ],
    // No primary key: a workout with several chains of Segment events numbers each chain's splits
    // from 1.
    keys: TableKeys(indexes: [["workout_id", "start_unix"]], references: [.init("workout_id", to: "workouts")]))
}

/// A row of `route_points`: a kept point, its time to the second, and where it came from.
public struct RoutePointRow: Sendable {
  public let time: Instant
  /// The `id` of the workout that names the route; nil for a route file no workout names.
  public let workoutID: String?
  /// The route file; nil for an inline `Location`.
  public let file: String?
  public let point: RoutePoint
}

extension WorkoutSplit {
  /// `start` and `end` to the second, as the splits table writes them.
  var startInstant: Instant { Instant(seconds: Int64(start.rounded())) }
  var endInstant: Instant { Instant(seconds: Int64(end.rounded())) }
}
