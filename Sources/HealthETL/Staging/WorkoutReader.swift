import HealthExtract
import HealthModel

/// The `Workout` family: a workout with its activities, events, statistics, routes and metadata,
/// collected as written, de-duplicated by its identity (Pipelines/docs/workouts.md, "Workout identity") and
/// handed to the stages. Workouts are few, so this is ordinary values and strings.
final class WorkoutReader {
  private(set) var copies = 0
  /// Distinct workouts handed to the stages.
  var distinct: Int { seen.count }
  private let ledger: StagingLedger
  private let stages: [any SampleStage]
  /// The identities seen: `<sourceName>|<workoutActivityType>` as a number, start and end (24
  /// bytes a workout, rather than the text of its name).
  private var seen = Set<Identity>()
  private var names: [String: Int64] = [:]

  private struct Identity: Hashable {
    var names: Int64
    var start: Int64
    var end: Int64
  }

  private var workout: WorkoutElement?
  private var rejected = false
  private var activity: WorkoutElement.Activity?
  private var event: WorkoutElement.Event?
  private var eventInActivity = false
  private var route: WorkoutElement.Route?
  /// `Workout` elements started so far.
  private var ordinals = 0

  init(ledger: StagingLedger, stages: [any SampleStage]) {
    self.ledger = ledger
    self.stages = stages
  }

  /// Whether a workout, or a part of one, is being read (its metadata comes here).
  var isOpen: Bool { workout != nil || activity != nil || event != nil || route != nil }

  /// The attributes this family takes in, per element.
  static let attributesRead: [ExportElement: [ExportAttribute]] = [
    .workout: [
      .workoutActivityType, .sourceName, .source, .sourceVersion, .device, .creationDate, .startDate, .endDate,
      .duration, .durationUnit, .totalDistance, .totalDistanceUnit, .totalEnergyBurned, .totalEnergyBurnedUnit,
    ],
    .workoutActivity: [.uuid, .workoutActivityType, .startDate, .endDate, .duration, .durationUnit],
    .workoutEvent: [.type, .date, .duration, .durationUnit],
    .workoutStatistics: [.type, .startDate, .endDate, .average, .minimum, .maximum, .sum, .unit],
    .workoutRoute: [.sourceName, .startDate, .endDate],
    .fileReference: [.path],
    .location: RoutePoint.attributesRead,
  ]

  func start(_ attributes: ElementAttributes, line: Int) {
    var element = WorkoutElement()
    element.line = line
    element.ordinal = ordinals
    ordinals += 1
    rejected = false
    defer { workout = element }
    guard let activityType = attributes.string(.workoutActivityType),
      let source = attributes.string(.sourceName) ?? attributes.string(.source),
      let startBytes = attributes.value(.startDate), let endBytes = attributes.value(.endDate)
    else {
      rejected = true
      ledger.rejections.reject(
        reason: "missing attribute", line: line, element: "Workout",
        detail: "needs workoutActivityType, sourceName, startDate and endDate")
      return
    }
    guard let start = HealthDateParser.parse(startBytes), let end = HealthDateParser.parse(endBytes) else {
      rejected = true
      ledger.rejections.reject(
        reason: "unparseable date", line: line, element: "Workout",
        detail:
          "startDate=\"\(ElementAttributes.excerpt(startBytes))\" endDate=\"\(ElementAttributes.excerpt(endBytes))\"")
      return
    }
    if let problem = ledger.implausibleStart(start.instant) {
      rejected = true
      ledger.rejections.reject(
        reason: "implausible date", line: line, element: "Workout",
        detail: "startDate=\"\(ElementAttributes.excerpt(startBytes))\" \(problem)")
      return
    }
    ledger.facts.writtenOffsets.note(start.instant, offsetSeconds: start.offsetSeconds)
    ledger.facts.writtenOffsets.note(end.instant, offsetSeconds: end.offsetSeconds)
    guard end.instant.seconds - start.instant.seconds <= RecordReader.longestSpanSeconds else {
      rejected = true
      ledger.rejections.reject(
        reason: "implausible span", line: line, element: "Workout",
        detail: "\(activityType) lasts \(end.instant.seconds - start.instant.seconds) s, more than 366 days")
      return
    }
    element.activityType = activityType
    element.sourceName = source
    element.start = start.instant
    element.end = end.instant
    element.sourceVersion = attributes.string(.sourceVersion)
    element.device = attributes.string(.device).map(DeviceDescription.init(parsing:))
    element.created = attributes.date(.creationDate)
    element.duration = attributes.quantity(.duration, unit: .durationUnit)
    element.totalDistance = attributes.quantity(.totalDistance, unit: .totalDistanceUnit)
    element.totalEnergyBurned = attributes.quantity(.totalEnergyBurned, unit: .totalEnergyBurnedUnit)
  }

  /// A child element of the open workout (at any depth).
  func startChild(_ element: ExportElement, _ attributes: ElementAttributes) {
    switch element {
    case .workoutActivity:
      activity = WorkoutElement.Activity(
        uuid: attributes.string(.uuid), activityType: attributes.string(.workoutActivityType),
        start: attributes.date(.startDate), end: attributes.date(.endDate),
        duration: attributes.quantity(.duration, unit: .durationUnit))
    case .workoutEvent:
      eventInActivity = activity != nil
      event = WorkoutElement.Event(
        type: attributes.string(.type) ?? "", date: attributes.date(.date),
        duration: attributes.quantity(.duration, unit: .durationUnit), metadata: [])
    case .workoutStatistics:
      let statistics = WorkoutElement.Statistics(
        type: attributes.string(.type) ?? "", start: attributes.date(.startDate), end: attributes.date(.endDate),
        average: attributes.number(.average), minimum: attributes.number(.minimum),
        maximum: attributes.number(.maximum), sum: attributes.number(.sum), unit: attributes.string(.unit))
      if activity != nil { activity!.statistics.append(statistics) } else { workout?.statistics.append(statistics) }
    case .workoutRoute:
      route = WorkoutElement.Route(
        sourceName: attributes.string(.sourceName), start: attributes.date(.startDate),
        end: attributes.date(.endDate))
    case .fileReference:
      if route != nil { route!.filePath = attributes.string(.path) }
    case .location:
      guard route != nil else { break }
      route!.locationCount += 1
      if !rejected, let ordinal = workout?.ordinal {
        let point = RoutePoint(location: attributes)
        for stage in stages { stage.consume(routeLocation: point, workout: ordinal) }
      }
    default:
      break
    }
  }

  /// A `MetadataEntry` of the innermost open part: event, route, activity, else the workout.
  func addMetadata(key: String, value: String) {
    if event != nil {
      event!.metadata.append((key, value))
    } else if route != nil {
      route!.metadata.append((key, value))
    } else if activity != nil {
      activity!.metadata.append((key, value))
    } else {
      workout?.metadata.append((key, value))
    }
  }

  func endChild(_ element: ExportElement) {
    switch element {
    case .workoutActivity:
      if let finished = activity { workout?.activities.append(finished) }
      activity = nil
    case .workoutEvent:
      if let finished = event {
        if eventInActivity, activity != nil {
          activity!.events.append(finished)
        } else {
          workout?.events.append(finished)
        }
      }
      event = nil
    case .workoutRoute:
      if let finished = route { workout?.routes.append(finished) }
      route = nil
    default:
      break
    }
  }

  func end() {
    defer {
      workout = nil
      activity = nil
      event = nil
      route = nil
    }
    guard !rejected, let finished = workout else { return }
    let key = Identity(
      names: number("\(finished.sourceName)|\(finished.activityType)"),
      start: finished.start.seconds, end: finished.end.seconds)
    guard seen.insert(key).inserted else {
      copies += 1
      return
    }
    ledger.facts.include(start: finished.start, end: finished.end)
    if let zone = finished.metadataValue("HKTimeZone") { ledger.vote(forZone: zone) }
    for stage in stages { stage.consume(finished) }
  }

  /// A number per distinct `<sourceName>|<workoutActivityType>`, from 0 on.
  private func number(_ name: String) -> Int64 {
    if let known = names[name] { return known }
    let next = Int64(names.count)
    names[name] = next
    return next
  }
}
