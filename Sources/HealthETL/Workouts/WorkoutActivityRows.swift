public import HealthModel

/// One `WorkoutActivity` of a workout (Pipelines/docs/workouts.md, "Multi-sport workouts"): a
/// discipline of a triathlon, or a step of an interval workout, with its own type, times, events
/// and statistics. Nil is "no data", never 0.
public struct WorkoutActivityRow: Sendable, Equatable {
  /// 1-based, in document order.
  public var activity: Int
  /// The `uuid` attribute as written.
  public var uuid: String?
  /// `Cycling` (the export string without its prefix).
  public var activityType: String
  /// The HKWorkoutActivityType raw value, nil for a type HealthKit does not define.
  public var activityTypeRaw: Int?
  /// `activity` when the `WorkoutActivity` names its own type, `workout` when it has its workout's.
  public var activityTypeFrom: String
  public var start: Instant?
  public var end: Instant?
  /// The activity's `duration` in seconds.
  public var durationSeconds: Double?
  /// end − start; nil without both, or when the end is before the start.
  public var elapsedSeconds: Int64?
  /// The activity's own `Distance*` statistics summed, in m.
  public var distanceMeters: Double?
  /// Its ActiveEnergyBurned statistic, in kcal.
  public var energyKilocalories: Double?
  /// count/min: its HeartRate statistic, else the HeartRate samples starting inside it.
  public var heartRateAverage: Double?
  public var heartRateMinimum: Double?
  public var heartRateMaximum: Double?
  /// `statistics` or `samples` (for `heartRateAverage`).
  public var heartRateFrom: String?
  /// `type=count` pairs of the activity's own events.
  public var events: String
}

extension WorkoutRowBuilder {
  /// Whether an activity's row reads a statistic of this type (the rest are dropped early).
  static func isActivityStatistic(_ statistic: WorkoutElement.Statistics) -> Bool {
    statistic.type.hasPrefix(typePrefix + "Distance") || statistic.type == typePrefix + "ActiveEnergyBurned"
      || statistic.type == typePrefix + "HeartRate"
  }

  /// The `[start, end]` whose heart-rate samples stand in for an activity without a HeartRate
  /// statistic; nil without both times.
  static func heartRateWindow(_ activity: WorkoutElement.Activity) -> WorkoutSampleIndex.Window? {
    guard let start = activity.start, let end = activity.end, end.seconds >= start.seconds else { return nil }
    return WorkoutSampleIndex.Window(start: start.seconds, end: end.seconds)
  }

  /// One row per `WorkoutActivity`, from the activity's own children only: its statistics are
  /// its stretch's, never added to the workout's (which holds the totals).
  static func activityRows(_ workout: WorkoutElement, heartRate samples: WorkoutSampleIndex) -> [WorkoutActivityRow] {
    workout.activities.enumerated().map { index, activity in
      let ownType = activity.activityType.flatMap { $0.isEmpty ? nil : $0 }
      let name = WorkoutActivityTypeTable.name(fromExportString: ownType ?? workout.activityType)
      let statistics = firstStatisticPerType(activity.statistics)
      let heartRateStatistic = statistics[typePrefix + "HeartRate"]
      let fallback = heartRateWindow(activity).flatMap { samples.heartRate(from: $0.start, through: $0.end) }
      var elapsed: Int64?
      if let start = activity.start, let end = activity.end, end.seconds >= start.seconds { elapsed = end - start }
      let average = heartRate(heartRateStatistic, \.average)
      return WorkoutActivityRow(
        activity: index + 1, uuid: activity.uuid, activityType: name,
        activityTypeRaw: WorkoutActivityTypeTable.rawValue(for: name),
        activityTypeFrom: ownType == nil ? "workout" : "activity", start: activity.start, end: activity.end,
        durationSeconds: activity.duration.flatMap { duration in
          ExactDecimal(duration.text).flatMap { WorkoutUnits.convert($0, unit: duration.unit, to: .time) }
        },
        elapsedSeconds: elapsed, distanceMeters: distance(statistics), energyKilocalories: energy(statistics),
        heartRateAverage: average ?? fallback?.average,
        heartRateMinimum: heartRate(heartRateStatistic, \.minimum) ?? fallback?.minimum,
        heartRateMaximum: heartRate(heartRateStatistic, \.maximum) ?? fallback?.maximum,
        heartRateFrom: average != nil ? "statistics" : fallback != nil ? "samples" : nil,
        events: eventCounts(activity.events))
    }
  }
}
