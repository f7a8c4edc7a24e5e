import HealthModel

/// The parsed workouts of a job, in a scratch file from the moment each is read until its row is
/// built (Pipelines/docs/workouts.md, "Memory"): each workout is one `ScratchRows` row of fields,
/// read back by its byte range, so that what memory holds per workout is its `WorkoutKey`.
final class WorkoutScratch {
  typealias Place = RowScratch.Place

  private let rows: RowScratch
  private var fields: [Field] = []

  init(transaction: OutputTransaction) {
    rows = RowScratch(transaction: transaction, prefix: "workouts")
  }

  /// Appends `workout`; where it went.
  func append(_ workout: WorkoutElement) -> Place {
    fields.removeAll(keepingCapacity: true)
    WorkoutFields.encode(workout, into: &fields)
    return rows.append(fields)
  }

  /// The workout appended at `place`.
  func read(_ place: Place) throws(OutputError) -> WorkoutElement {
    WorkoutFields.decode(try rows.read(place))
  }
}

/// What a workouts mart keeps in memory of a parsed workout until `finish`: what orders the rows
/// (start, then id), the time window its heart rate and route points are read in, the route files
/// it names, and where the rest waits (`WorkoutScratch`).
struct WorkoutKey {
  var start: Instant
  var end: Instant
  /// One copy per distinct name (`SharedNames`).
  var activityType: String
  var sourceName: String
  /// `WorkoutElement.ordinal`: what inline route `Location`s name their workout by.
  var ordinal: Int
  /// `WorkoutElement.Route.filePath` of each of its routes (usually none).
  var routeFiles: [String?]
  var place: WorkoutScratch.Place

  /// `WorkoutRow.id`.
  var id: String {
    WorkoutRowBuilder.id(sourceName: sourceName, activityType: activityType, start: start, end: end)
  }

  var window: WorkoutSampleIndex.Window { WorkoutSampleIndex.Window(start: start.seconds, end: end.seconds) }
}

/// A `WorkoutElement` as one row of fields and back: every stored value, optionals as
/// `.missing`, each array as its count (`.integer`) followed by its elements.
enum WorkoutFields {
  static func encode(_ workout: WorkoutElement, into fields: inout [Field]) {
    fields.append(.text(workout.activityType))
    quantity(workout.duration, into: &fields)
    quantity(workout.totalDistance, into: &fields)
    quantity(workout.totalEnergyBurned, into: &fields)
    fields.append(.text(workout.sourceName))
    fields.append(.text(workout.sourceVersion))
    if let device = workout.device {
      fields.append(.boolean(true))
      for part in [device.name, device.manufacturer, device.model, device.hardware, device.software] {
        fields.append(.text(part))
      }
    } else {
      fields.append(.missing)
    }
    fields.append(.instant(workout.created))
    fields.append(.instant(workout.start))
    fields.append(.instant(workout.end))
    metadata(workout.metadata, into: &fields)
    events(workout.events, into: &fields)
    statistics(workout.statistics, into: &fields)
    fields.append(.integer(workout.activities.count))
    for activity in workout.activities {
      fields.append(.text(activity.uuid))
      fields.append(.text(activity.activityType))
      fields.append(.instant(activity.start))
      fields.append(.instant(activity.end))
      quantity(activity.duration, into: &fields)
      metadata(activity.metadata, into: &fields)
      events(activity.events, into: &fields)
      statistics(activity.statistics, into: &fields)
    }
    fields.append(.integer(workout.routes.count))
    for route in workout.routes {
      fields.append(.text(route.sourceName))
      fields.append(.instant(route.start))
      fields.append(.instant(route.end))
      fields.append(.text(route.filePath))
      fields.append(.integer(route.locationCount))
      metadata(route.metadata, into: &fields)
    }
    fields.append(.integer(workout.line))
    fields.append(.integer(workout.ordinal))
  }

  private static func quantity(_ quantity: WorkoutElement.Quantity?, into fields: inout [Field]) {
    guard let quantity else { return fields.append(.missing) }
    fields.append(.text(quantity.text))
    fields.append(.number(quantity.value))
    fields.append(.text(quantity.unit))
  }

  private static func metadata(_ pairs: [(key: String, value: String)], into fields: inout [Field]) {
    fields.append(.integer(pairs.count))
    for pair in pairs {
      fields.append(.text(pair.key))
      fields.append(.text(pair.value))
    }
  }

  private static func events(_ events: [WorkoutElement.Event], into fields: inout [Field]) {
    fields.append(.integer(events.count))
    for event in events {
      fields.append(.text(event.type))
      fields.append(.instant(event.date))
      quantity(event.duration, into: &fields)
      metadata(event.metadata, into: &fields)
    }
  }

  private static func statistics(_ statistics: [WorkoutElement.Statistics], into fields: inout [Field]) {
    fields.append(.integer(statistics.count))
    for statistic in statistics {
      fields.append(.text(statistic.type))
      fields.append(.instant(statistic.start))
      fields.append(.instant(statistic.end))
      fields.append(.number(statistic.average))
      fields.append(.number(statistic.minimum))
      fields.append(.number(statistic.maximum))
      fields.append(.number(statistic.sum))
      fields.append(.text(statistic.unit))
    }
  }

  static func decode(_ fields: [Field]) -> WorkoutElement {
    var cursor = Cursor(fields: fields)
    var workout = WorkoutElement()
    workout.activityType = cursor.text() ?? ""
    workout.duration = cursor.quantity()
    workout.totalDistance = cursor.quantity()
    workout.totalEnergyBurned = cursor.quantity()
    workout.sourceName = cursor.text() ?? ""
    workout.sourceVersion = cursor.text()
    if cursor.next() != .missing {
      workout.device = DeviceDescription(
        name: cursor.text(), manufacturer: cursor.text(), model: cursor.text(), hardware: cursor.text(),
        software: cursor.text())
    }
    workout.created = cursor.instant()
    workout.start = cursor.instant() ?? workout.start
    workout.end = cursor.instant() ?? workout.end
    workout.metadata = cursor.metadata()
    workout.events = cursor.events()
    workout.statistics = cursor.statistics()
    workout.activities = (0..<cursor.integer()).map { _ in
      WorkoutElement.Activity(
        uuid: cursor.text(), activityType: cursor.text(), start: cursor.instant(), end: cursor.instant(),
        duration: cursor.quantity(), metadata: cursor.metadata(), events: cursor.events(),
        statistics: cursor.statistics())
    }
    workout.routes = (0..<cursor.integer()).map { _ in
      WorkoutElement.Route(
        sourceName: cursor.text(), start: cursor.instant(), end: cursor.instant(), filePath: cursor.text(),
        locationCount: cursor.integer(), metadata: cursor.metadata())
    }
    workout.line = cursor.integer()
    workout.ordinal = cursor.integer()
    return workout
  }

  /// Reads the fields in the order `encode` wrote them.
  private struct Cursor {
    let fields: [Field]
    var at = 0

    mutating func next() -> Field {
      defer { at += 1 }
      return fields[at]
    }

    mutating func text() -> String? {
      if case .text(let text) = next() { return text }
      return nil
    }

    mutating func number() -> Double? {
      if case .number(let value) = next() { return value }
      return nil
    }

    mutating func instant() -> Instant? {
      if case .instant(let value) = next() { return value }
      return nil
    }

    mutating func integer() -> Int {
      if case .integer(let value) = next() { return Int(value) }
      return 0
    }

    mutating func quantity() -> WorkoutElement.Quantity? {
      guard let text = text() else { return nil }
      return WorkoutElement.Quantity(text: text, value: number(), unit: self.text())
    }

    mutating func metadata() -> [(key: String, value: String)] {
      (0..<integer()).map { _ in (key: text() ?? "", value: text() ?? "") }
    }

    mutating func events() -> [WorkoutElement.Event] {
      (0..<integer()).map { _ in
        WorkoutElement.Event(type: text() ?? "", date: instant(), duration: quantity(), metadata: metadata())
      }
    }

    mutating func statistics() -> [WorkoutElement.Statistics] {
      (0..<integer()).map { _ in
        WorkoutElement.Statistics(
          type: text() ?? "", start: instant(), end: instant(), average: number(), minimum: number(),
          maximum: number(), sum: number(), unit: text())
      }
    }
  }
}
