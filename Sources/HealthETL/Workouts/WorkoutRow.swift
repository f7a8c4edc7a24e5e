public import HealthModel

/// Everything derived from one workout (Pipelines/docs/workouts.md, "Workouts"): a row of `workouts.csv`,
/// its swim lengths and its server record. Nil is "no data" (an empty field, JSON null), never 0.
public struct WorkoutRow: Sendable {
  /// UUID v5 of `healthetl:workout:<source>|<type>|<start>|<end>`, upper-case.
  public var id: String
  /// `Running` (the export string without its prefix).
  public var activityType: String
  /// The HKWorkoutActivityType raw value, nil for a type HealthKit does not define.
  public var activityTypeRaw: Int?
  /// The `startDate` instant.
  public var start: Instant
  /// The `endDate` instant.
  public var end: Instant
  /// The `duration` attribute in seconds (moving time).
  public var durationSeconds: Double?
  /// end − start.
  public var elapsedSeconds: Int64
  /// The `Distance*` statistics summed, else `totalDistance`, in m.
  public var distanceMeters: Double?
  /// The ActiveEnergyBurned statistic, else `totalEnergyBurned`, in kcal.
  public var energyKilocalories: Double?
  /// count/min: the HeartRate statistic, else the mean of the samples inside the workout.
  public var heartRateAverage: Double?
  /// count/min, like `heartRateAverage`.
  public var heartRateMinimum: Double?
  /// count/min, like `heartRateAverage`.
  public var heartRateMaximum: Double?
  /// `sourceName`.
  public var source: String
  /// The `model:` field of `device`.
  public var deviceModel: String?
  /// `HKIndoorWorkout`.
  public var indoor: Bool?
  /// `HKTimeZone` as written.
  public var timeZone: String?
  /// `HKElevationAscended` in m.
  public var elevationAscendedMeters: Double?
  /// `HKWeatherTemperature` in degC.
  public var weatherTemperatureCelsius: Double?
  /// A fraction 0–1.
  public var weatherHumidity: Double?
  /// `pause=2;resume=2;lap=40`; empty when the workout has no events.
  public var events: String
  /// The number of `WorkoutActivity` children.
  public var activities: Int
  /// The route files as written, `;`-separated when there are several.
  public var route: String?
  /// `HKLapLength` in m.
  public var poolLengthMeters: Double?
  /// `pool`, `open_water`.
  public var location: String?
  /// Strokes per style in `SwimStrokeStyle.allCases` order; nil without stroke samples.
  public var strokesByStyle: [Double]?
  /// The lengths of a swimming workout (Pipelines/docs/workouts.md, "Swimming"), in order.
  public var laps: [SwimLap]
  /// The workout in the server's record format.
  public var serverRecord: WorkoutServerRecord
  // Strokes, provenance, route and splits (Pipelines/docs/workouts.md, "Swimming", "Routes", "Splits").
  /// All strokes: the lengths' stroke samples, else the `SwimmingStrokeCount` statistic.
  public var strokes: Double? = nil
  /// `samples` or `statistics`.
  public var strokesFrom: String? = nil
  /// `statistics` or `totalDistance`.
  public var distanceFrom: String? = nil
  /// `statistics` or `samples` (for `heartRateAverage`).
  public var heartRateFrom: String? = nil
  /// The route's totals; nil without route points.
  public var routeSummary: RouteSummary? = nil
  /// Route files the workout names that are missing or broken, `;`-separated.
  public var routeProblems: String? = nil
  /// The outline of the workout's first route file, for the report; nil unless the report asked
  /// for it (`WorkoutMart.keepsRouteShapes`) and the file has two points or more.
  var routeShape: [RouteShape.Point]? = nil
  /// Splits per km and per mile (`workout_splits.csv`).
  public var splits: [WorkoutSplit] = []
  /// One per `WorkoutActivity`, in document order (`workout_activities.csv`).
  public var activityRows: [WorkoutActivityRow] = []
}

/// One length of a swim: a `Lap` event, or a `SwimmingStrokeCount` sample without one.
public struct SwimLap: Sendable, Equatable {
  /// 1-based, in start order.
  public var lap: Int
  /// The Lap event's date, else the stroke sample's start.
  public var start: Instant
  /// The Lap event's date + duration (to the second), else the stroke sample's end.
  public var end: Instant
  /// The stroke samples' count; nil when the length has none (kickboard lengths never do).
  public var strokes: Double?
  /// From the stroke sample, else its Lap event, else `unknown`.
  public var style: SwimStrokeStyle
  /// The overlapping `DistanceSwimming` samples, pro rata by time, in m.
  public var distanceMeters: Double?
  /// `HKSWOLFScore` of the stroke sample, else of its Lap event.
  public var swolf: Double?
  /// What the length is: a Lap event, or a stroke sample no Lap event matches.
  public var origin: SwimLapOrigin = .strokeSample
  /// `samples` or `pool_length`: where `distanceMeters` came from.
  public var distanceFrom: String? = nil
}

/// Where a swim length comes from (Pipelines/docs/workouts.md, "Swimming").
public enum SwimLapOrigin: String, Sendable {
  /// A `Lap` event of the workout.
  case event
  /// A `SwimmingStrokeCount` sample no Lap event matches (exports without Lap events).
  case strokeSample = "stroke_sample"
}

/// `HKSwimmingStrokeStyle`, raw values as in HealthKit's `HKMetadata.h`.
public enum SwimStrokeStyle: Int, Sendable, CaseIterable {
  case unknown = 0, mixed, freestyle, backstroke, breaststroke, butterfly, kickboard

  /// The name written in `swim_laps.csv` and the `strokes_<style>` columns: the case's name,
  /// spelled out (`String(describing:)` reflects on the value, about 7,000 instructions a lap).
  public var name: String {
    switch self {
    case .unknown: "unknown"
    case .mixed: "mixed"
    case .freestyle: "freestyle"
    case .backstroke: "backstroke"
    case .breaststroke: "breaststroke"
    case .butterfly: "butterfly"
    case .kickboard: "kickboard"
    }
  }

  /// The style of a metadata value (`2` → freestyle); nil for anything else.
  public init?(metadataValue text: String) {
    guard let raw = Int(text), let style = SwimStrokeStyle(rawValue: raw) else { return nil }
    self = style
  }
}

/// Builds `WorkoutRow`s from staged workouts and the samples kept for them.
struct WorkoutRowBuilder {
  let samples: WorkoutSampleIndex
  let catalog: SampleCatalog
  let codes: WorkoutCodeTable
  let runZone: ZoneRules
  /// Zones of `HKTimeZone` values, loaded once each (nil: not in the tz database).
  private var zones: [String: ZoneRules?] = [:]

  init(samples: WorkoutSampleIndex, catalog: SampleCatalog, codes: WorkoutCodeTable, runZone: ZoneRules) {
    self.samples = samples
    self.catalog = catalog
    self.codes = codes
    self.runZone = runZone
  }

  static let typePrefix = "HKQuantityTypeIdentifier"
  static let eventPrefix = "HKWorkoutEventType"
  static let lapEventType = eventPrefix + "Lap"
  static let segmentEventType = eventPrefix + "Segment"
  /// HKWorkoutEventType raw-value order (HealthKit's `HKWorkout.h`: pause 1 …
  /// pauseOrResumeRequest 8), the order of the `events` pairs.
  static let eventOrder = [
    "pause", "resume", "lap", "marker", "motionPaused", "motionResumed", "segment", "pauseOrResumeRequest",
  ]

  /// The workout's id: UUID v5 (URL namespace) of the name in Pipelines/README.md,
  /// "Workout identity", attribute values as written.
  static func id(of workout: WorkoutElement) -> String {
    id(sourceName: workout.sourceName, activityType: workout.activityType, start: workout.start, end: workout.end)
  }

  /// `id(of:)` of a workout with these attributes.
  static func id(sourceName: String, activityType: String, start: Instant, end: Instant) -> String {
    UUIDv5.url("healthetl:workout:\(sourceName)|\(activityType)|\(start.seconds)|\(end.seconds)", uppercase: true)
  }

  mutating func row(for workout: WorkoutElement) -> WorkoutRow {
    let id = Self.id(of: workout)
    let name = WorkoutActivityTypeTable.name(fromExportString: workout.activityType)
    let statistics = Self.firstStatisticPerType(workout.statistics)
    let heartRateStatistic = statistics["HKQuantityTypeIdentifierHeartRate"]
    let fallback = samples.heartRate(from: workout.start.seconds, through: workout.end.seconds)
    let timeZone = workout.metadataValue("HKTimeZone")
    let ownZone = timeZone.flatMap { zone(named: $0) }
    let laps = swimLaps(workout, id: id)
    var strokesByStyle: [Double]?
    if laps.contains(where: { $0.strokes != nil }) {
      var totals = [Double](repeating: 0, count: SwimStrokeStyle.allCases.count)
      for lap in laps { totals[lap.style.rawValue] += lap.strokes ?? 0 }
      strokesByStyle = totals
    }
    var row = WorkoutRow(
      id: id, activityType: name, activityTypeRaw: WorkoutActivityTypeTable.rawValue(for: name),
      start: workout.start, end: workout.end,
      durationSeconds: workout.duration.flatMap { duration in
        ExactDecimal(duration.text).flatMap { WorkoutUnits.convert($0, unit: duration.unit, to: .time) }
      },
      elapsedSeconds: workout.end - workout.start,
      distanceMeters: Self.distanceMeters(statistics, workout),
      energyKilocalories: Self.energy(statistics) ?? Self.legacy(workout.totalEnergyBurned, .energy),
      heartRateAverage: Self.heartRate(heartRateStatistic, \.average) ?? fallback?.average,
      heartRateMinimum: Self.heartRate(heartRateStatistic, \.minimum) ?? fallback?.minimum,
      heartRateMaximum: Self.heartRate(heartRateStatistic, \.maximum) ?? fallback?.maximum,
      source: workout.sourceName, deviceModel: workout.device?.model,
      indoor: workout.metadataValue("HKIndoorWorkout").flatMap { $0 == "1" ? true : $0 == "0" ? false : nil },
      timeZone: timeZone,
      elevationAscendedMeters: Self.metadataQuantity(workout, "HKElevationAscended", .length),
      weatherTemperatureCelsius: Self.metadataQuantity(workout, "HKWeatherTemperature", .temperature),
      weatherHumidity: workout.metadataValue("HKWeatherHumidity").flatMap(Self.humidity),
      events: Self.eventCounts(workout.events), activities: workout.activities.count,
      route: Self.route(workout.routes),
      poolLengthMeters: Self.metadataQuantity(workout, "HKLapLength", .length)
        ?? Self.metadataQuantity(workout, "HKMetadataKeyLapLength", .length),
      location: workout.metadataValue("HKSwimmingLocationType").flatMap {
        $0 == "1" ? "pool" : $0 == "2" ? "open_water" : nil
      },
      strokesByStyle: strokesByStyle, laps: laps,
      serverRecord: WorkoutServerRecord(
        workout: workout, id: id, codes: codes, ownZone: ownZone, runZone: runZone))
    addProvenance(&row, workout, statistics: statistics, heartRateStatistic: heartRateStatistic)
    row.activityRows = Self.activityRows(workout, heartRate: samples)
    return row
  }

  private mutating func zone(named name: String) -> ZoneRules? {
    if let known = zones[name] { return known }
    let loaded = try? ZoneRules.load(name)
    zones[name] = loaded
    return loaded
  }

  // MARK: - Statistics and attributes

  /// The workout's own statistics (never its activities'), the first of each type: a type
  /// repeated at workout level is one statistic, not two to add up.
  static func firstStatisticPerType(_ statistics: [WorkoutElement.Statistics]) -> [String: WorkoutElement.Statistics] {
    var first: [String: WorkoutElement.Statistics] = [:]
    for statistic in statistics where first[statistic.type] == nil { first[statistic.type] = statistic }
    return first
  }

  /// The workout's `distance_m`: its `Distance*` statistics, else its `totalDistance`.
  static func distanceMeters(_ statistics: [String: WorkoutElement.Statistics], _ workout: WorkoutElement) -> Double? {
    distance(statistics) ?? legacy(workout.totalDistance, .length)
  }

  /// Sum of the `Distance*` statistics, in m; nil when none has a sum in a length unit.
  static func distance(_ statistics: [String: WorkoutElement.Statistics]) -> Double? {
    var total: ExactDecimal?
    for (type, statistic) in statistics.sorted(by: { $0.key < $1.key })
    where type.hasPrefix(typePrefix + "Distance") {
      guard let sum = statistic.sum.flatMap(ExactDecimal.init), let unit = statistic.unit,
        let meters = WorkoutUnits.exactlyConverted(sum, unit: unit, to: .length)
      else { continue }
      // Exact conversion and sum, then one rounding: several types add up without binary noise.
      total = (total ?? .zero) + meters
    }
    return total?.doubleValue
  }

  /// The ActiveEnergyBurned statistic's sum in kcal.
  static func energy(_ statistics: [String: WorkoutElement.Statistics]) -> Double? {
    guard let statistic = statistics[typePrefix + "ActiveEnergyBurned"] else { return nil }
    return WorkoutUnits.convert(statistic.sum, unit: statistic.unit, to: .energy)
  }

  static func heartRate(_ statistic: WorkoutElement.Statistics?, _ field: KeyPath<WorkoutElement.Statistics, Double?>)
    -> Double?
  {
    guard let statistic else { return nil }
    return WorkoutUnits.convert(statistic[keyPath: field], unit: statistic.unit, to: .heartRate)
  }

  /// `totalDistance` / `totalEnergyBurned` from their text, so `3.40897998046875 km` converts
  /// exactly.
  static func legacy(_ quantity: WorkoutElement.Quantity?, _ dimension: WorkoutUnits.Dimension) -> Double? {
    guard let quantity, let value = ExactDecimal(quantity.text) else { return nil }
    return WorkoutUnits.convert(value, unit: quantity.unit, to: dimension)
  }

  static func metadataQuantity(_ workout: WorkoutElement, _ key: String, _ dimension: WorkoutUnits.Dimension)
    -> Double?
  {
    guard let text = workout.metadataValue(key), let (value, unit) = WorkoutUnits.parseQuantity(text) else {
      return nil
    }
    return WorkoutUnits.convert(value, unit: unit, to: dimension)
  }

  /// `HKWeatherHumidity` as a fraction: `6900 %` → 0.69 (exports since about 2021 scale by 100),
  /// `56 %` → 0.56. Only `%` (or a bare number) is a humidity.
  static func humidity(_ text: String) -> Double? {
    guard let (value, unit) = WorkoutUnits.parseQuantity(text), unit == nil || unit == "%", !value.isNegative else {
      return nil
    }
    let hundredth = ExactDecimal("0.01")!
    let percent = value.doubleValue > 100 ? value * hundredth : value
    return (percent * hundredth).doubleValue
  }

  /// `type=count` pairs in HKWorkoutEventType order, counting the workout's own events only: a
  /// `WorkoutActivity` repeats the events of its stretch of the workout (a single-activity
  /// workout carries the same events twice), so adding them would double count. Types HealthKit
  /// does not define follow, by name.
  static func eventCounts(_ events: [WorkoutElement.Event]) -> String {
    // Counted by type as written first, and each distinct type named once: a swim's Lap events
    // are most of its events, and naming each one built three strings.
    var written: [String: Int] = [:]
    for event in events { written[event.type, default: 0] += 1 }
    var counts: [String: Int] = [:]
    for (type, count) in written {
      var name = type.hasPrefix(eventPrefix) ? String(type.dropFirst(eventPrefix.count)) : type
      if let first = name.first { name = first.lowercased() + name.dropFirst() }
      counts[name, default: 0] += count
    }
    let known = eventOrder.filter { counts[$0] != nil }
    let others = counts.keys.filter { !eventOrder.contains($0) }.sorted()
    return (known + others).map { "\($0)=\(counts[$0]!)" }.joined(separator: ";")
  }

  /// Each distinct `FileReference` path once, in document order. Routes written inline as
  /// `Location` elements (exports before iOS 13) have no file, so they give no path.
  static func route(_ routes: [WorkoutElement.Route]) -> String? {
    var paths: [String] = []
    for route in routes {
      if let path = route.filePath, !path.isEmpty, !paths.contains(path) { paths.append(path) }
    }
    return paths.isEmpty ? nil : paths.joined(separator: ";")
  }
}
