import Foundation
import HealthModel

/// How fast a person moves in an activity, as the limits of what HealthETL believes
/// (Pipelines/docs/nightly.md, "Worth a look"; Pipelines/docs/workouts.md, "Splits"): on foot no kilometre under 2:00 (the
/// 1,000 m world record is 2:11.96), on a bike none under 0:36 (100 km/h, faster than a rider
/// holds for a whole kilometre even downhill), swimming nothing above 2.5 m/s (the 50 m record
/// averages 2.39 m/s).
enum ActivitySpeed {
  /// The fastest believable speed of `activityType` (`Running`), m/s; nil for activities without
  /// a limit (a ski run, a flight of a paraglider, a multi-sport workout as a whole).
  static func fastest(_ activityType: String) -> Double? {
    let prefix = "HKWorkoutActivityType"
    switch activityType.hasPrefix(prefix) ? String(activityType.dropFirst(prefix.count)) : activityType {
    case "Running", "Walking", "Hiking": return 1000 / 120
    case "Cycling": return 1000 / 36
    case "Swimming": return 2.5
    default: return nil
    }
  }

  /// Seconds a message can show: a workout's totals are the export's, so a duration of 1e300 s
  /// or a speed of 1e-300 m/s (which crashed the conversion to a whole number) reads as 10⁹ s,
  /// and a negative or undefined one as 0.
  static func bounded(_ seconds: Double) -> Double {
    seconds.isNaN ? 0 : min(max(seconds, 0), 1e9)
  }

  /// `2:00 /km`: the limit as a pace, for messages.
  static func pace(_ metersPerSecond: Double) -> String {
    let seconds = Int(bounded(1000 / metersPerSecond).rounded())
    return "\(seconds / 60):\(seconds % 60 < 10 ? "0" : "")\(seconds % 60) /km"
  }

  /// `5:41`, `1:02:15`.
  static func clock(_ seconds: Double) -> String {
    let whole = Int(bounded(seconds).rounded())
    let text =
      "\(whole / 60 % 60 < 10 && whole >= 3600 ? "0" : "")\(whole / 60 % 60):\(whole % 60 < 10 ? "0" : "")\(whole % 60)"
    return whole >= 3600 ? "\(whole / 3600):" + text : text
  }

  /// The first split of a unit (`km`, `mi`) that covers at least a quarter of its unit and is
  /// faster than `activityType` allows, in words (`km 3 in 0:20`); nil when none is. A short last
  /// split is not judged: a few metres in a fraction of a second say nothing of a pace.
  static func tooFast(_ splits: [WorkoutSplit], activityType: String) -> String? {
    guard let fastest = fastest(activityType) else { return nil }
    for split in splits {
      guard let unit = split.unit.flatMap(SplitUnit.init(rawValue:)), let meters = split.distanceMeters,
        meters >= unit.meters / 4
      else { continue }
      if split.movingSeconds <= 0 || meters / split.movingSeconds > fastest {
        return "\(unit.rawValue) \(split.split) in \(clock(split.movingSeconds))"
      }
    }
    return nil
  }
}

/// The workouts worth a look (Pipelines/docs/nightly.md, "Worth a look"): totals no person achieves in
/// their activity, one source's workouts that overlap each other, and splits a series would have
/// made faster than a person moves.
enum WorkoutOddities {
  static let impossibleTotals = Oddities.Rule(
    key: "impossibleWorkouts", title: "Workouts faster than their activity allows",
    why:
      "The workout's own distance and duration make an average speed no person reaches in that activity (on "
      + "foot a kilometre under 2:00, cycling under 0:36, swimming above 2.5 m/s): an app's error. Kept as "
      + "written in workouts.csv.")
  static let overlapping = Oddities.Rule(
    key: "overlappingWorkouts", title: "Workouts one source saved over each other",
    why:
      "One source wrote workouts that overlap by more than half the shorter one: usually one workout saved "
      + "twice. HealthKit keeps both, so their time, energy and distance count twice in totals. Kept as "
      + "written in workouts.csv.")
  static let fastSplits = Oddities.Rule(
    key: "fastSplits", title: "Workouts whose splits a series made too fast",
    why:
      "A workout's distance samples (or route) would have put a kilometre or mile faster than the activity "
      + "allows (a lumpy series scaled to the workout's distance): its splits come from the next source, "
      + "whose from column in workout_splits.csv says why, or its one row there says none and why.")

  /// Flags workouts one at a time, in output order (start, then id), holding per source only
  /// the workout reaching furthest so far.
  struct Finder {
    let rules: ZoneRules
    // One per rule, joined in this order at the end: the order `run.json` lists them in.
    private var impossible = Oddities()
    private var overlaps = Oddities()
    private var fast = Oddities()
    private var latest: [String: (start: Instant, end: Instant, activityType: String)] = [:]

    init(rules: ZoneRules) { self.rules = rules }

    /// What was flagged so far.
    var found: Oddities {
      var all = impossible
      all.add(overlaps)
      all.add(fast)
      return all
    }

    /// Flags `row` under each rule it breaks; `splitNote` is its splits problem, if any.
    mutating func see(_ row: WorkoutSummary, splitNote: String?) {
      let rules = rules
      func date() -> CivilDate { rules.localDate(at: row.start) }
      func label() -> String {
        "\(row.activityType) at \(SleepOddities.minute(row.start, rules).suffix(5)) from \(row.source)"
      }
      if let fastest = ActivitySpeed.fastest(row.activityType), let meters = row.distanceMeters, meters > 0,
        let seconds = row.durationSeconds, seconds <= 0 || meters / seconds > fastest
      {
        let pace = seconds > 0 ? " (\(ActivitySpeed.pace(meters / seconds)))" : ""
        impossible.flag(
          impossibleTotals,
          .init(
            date: date(), id: row.id,
            detail:
              "\(label()): \(String(format: "%.1f km", meters / 1000)) in \(ActivitySpeed.clock(seconds))\(pace), "
              + "faster than \(ActivitySpeed.pace(fastest))"))
      }
      // Per source, in start order: a workout overlapping the one reaching furthest so far.
      if let earlier = latest[row.source], row.start < earlier.end {
        let overlap = min(row.end, earlier.end) - row.start
        let shorter = min(row.end - row.start, earlier.end - earlier.start)
        if overlap * 2 > shorter {
          overlaps.flag(
            overlapping,
            .init(
              date: date(), id: row.id,
              detail:
                "\(label()) overlaps its \(earlier.activityType) at "
                + "\(SleepOddities.minute(earlier.start, rules).suffix(5)) by \(ActivitySpeed.clock(Double(overlap)))"))
        }
      }
      if row.end > latest[row.source]?.end ?? Instant(seconds: .min) {
        latest[row.source] = (row.start, row.end, row.activityType)
      }
      if let splitNote { fast.flag(fastSplits, .init(date: date(), id: row.id, detail: "\(label()): \(splitNote)")) }
    }
  }
}
