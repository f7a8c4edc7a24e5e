public import HealthModel

/// What other marts read of one workout (daily totals, the report, Influx points, the oddities):
/// a few columns of its row, kept in scratch (`WorkoutSummaries`) after the full row has been
/// written and dropped.
public struct WorkoutSummary: Sendable, Equatable {
  /// `WorkoutRow.id`.
  public var id: String
  /// `WorkoutRow.activityType`.
  public var activityType: String
  /// `WorkoutRow.source`.
  public var source: String
  /// `WorkoutRow.start`.
  public var start: Instant
  /// `WorkoutRow.end`.
  public var end: Instant
  /// `WorkoutRow.durationSeconds`.
  public var durationSeconds: Double?
  /// `WorkoutRow.distanceMeters`.
  public var distanceMeters: Double?
  /// `WorkoutRow.energyKilocalories`.
  public var energyKilocalories: Double?
  /// `WorkoutRow.heartRateAverage`.
  public var heartRateAverage: Double?
  /// `WorkoutRow.heartRateMinimum`.
  public var heartRateMinimum: Double?
  /// `WorkoutRow.heartRateMaximum`.
  public var heartRateMaximum: Double?
  /// `WorkoutRow.laps`: the lengths of a swim, empty for any other workout.
  public var laps: [SwimLap]
  /// `WorkoutRow.routeShape`.
  var routeShape: [RouteShape.Point]?

  /// `WorkoutRow.elapsedSeconds`: end − start.
  public var elapsedSeconds: Int64 { end - start }

  init(_ row: WorkoutRow) {
    id = row.id
    activityType = row.activityType
    source = row.source
    start = row.start
    end = row.end
    durationSeconds = row.durationSeconds
    distanceMeters = row.distanceMeters
    energyKilocalories = row.energyKilocalories
    heartRateAverage = row.heartRateAverage
    heartRateMinimum = row.heartRateMinimum
    heartRateMaximum = row.heartRateMaximum
    laps = row.laps
    routeShape = row.routeShape
  }

  /// The summary as one row of fields: each optional number as `.missing` when nil, each array
  /// as its count (`.integer`) followed by its elements; `init(fields:)` reads it back.
  func encode(into fields: inout [Field]) {
    fields += [.text(id), .text(activityType), .text(source), .instant(start), .instant(end)]
    for value in [
      durationSeconds, distanceMeters, energyKilocalories, heartRateAverage, heartRateMinimum, heartRateMaximum,
    ] {
      fields.append(value.map(Field.number) ?? .missing)
    }
    fields.append(.integer(Int64(laps.count)))
    for lap in laps {
      fields += [.integer(Int64(lap.lap)), .instant(lap.start), .instant(lap.end)]
      fields.append(lap.strokes.map(Field.number) ?? .missing)
      fields.append(.integer(Int64(lap.style.rawValue)))
      fields.append(lap.distanceMeters.map(Field.number) ?? .missing)
      fields.append(lap.swolf.map(Field.number) ?? .missing)
      fields.append(.text(lap.origin.rawValue))
      fields.append(.text(lap.distanceFrom))
    }
    guard let routeShape else { return fields.append(.missing) }
    fields.append(.integer(Int64(routeShape.count)))
    for point in routeShape { fields += [.number(point.latitude), .number(point.longitude)] }
  }

  init(fields: [Field]) {
    var at = 0
    func next() -> Field {
      defer { at += 1 }
      return at < fields.count ? fields[at] : .missing
    }
    func text() -> String? { if case .text(let text) = next() { text } else { nil } }
    func number() -> Double? { if case .number(let value) = next() { value } else { nil } }
    func instant() -> Instant { if case .instant(let value) = next() { value } else { Instant(seconds: 0) } }
    func integer() -> Int? { if case .integer(let value) = next() { Int(value) } else { nil } }
    id = text() ?? ""
    activityType = text() ?? ""
    source = text() ?? ""
    start = instant()
    end = instant()
    durationSeconds = number()
    distanceMeters = number()
    energyKilocalories = number()
    heartRateAverage = number()
    heartRateMinimum = number()
    heartRateMaximum = number()
    laps = (0..<max(0, integer() ?? 0)).map { _ in
      SwimLap(
        lap: integer() ?? 0, start: instant(), end: instant(), strokes: number(),
        style: SwimStrokeStyle(rawValue: integer() ?? 0) ?? .unknown, distanceMeters: number(), swolf: number(),
        origin: SwimLapOrigin(rawValue: text() ?? "") ?? .strokeSample, distanceFrom: text())
    }
    routeShape = integer().map { count in
      (0..<max(0, count)).map { _ in RouteShape.Point(latitude: number() ?? 0, longitude: number() ?? 0) }
    }
  }
}

/// The summaries of a workouts job's workouts in output order (start, then id), in a scratch
/// file (Pipelines/docs/workouts.md, "Memory"): what memory holds is a piece of the file while
/// a reader goes through them, whatever the number of workouts.
public final class WorkoutSummaries {
  private let rows: RowScratch?
  private var fields: [Field] = []

  /// None.
  public init() { rows = nil }

  init(transaction: OutputTransaction) {
    rows = RowScratch(transaction: transaction, prefix: "workout-summaries")
  }

  /// How many there are.
  public var count: Int { rows?.count ?? 0 }

  func append(_ summary: WorkoutSummary) {
    fields.removeAll(keepingCapacity: true)
    summary.encode(into: &fields)
    rows?.append(fields)
  }

  /// Calls `body` with each summary, in output order.
  public func forEach(_ body: (WorkoutSummary) throws(OutputError) -> Void) throws(OutputError) {
    try rows?.forEach { (fields) throws(OutputError) in try body(WorkoutSummary(fields: fields)) }
  }
}
