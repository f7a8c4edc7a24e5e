public import HealthModel

/// Mindful minutes per day (Pipelines/docs/daily.md, "Mindful minutes"): keeps each `MindfulSession`
/// sample's start and end while the export streams, and once the run's zone is known writes one
/// row per date and publishes the minutes for the table of days (`MindfulMinutes`).
public final class MindfulMart: Mart {
  public typealias Destination = TableDestination<Table>

  public enum Table: String, MartTable {
    case days
    public var schema: TableSchema { MindfulTables.days.schema }
  }

  private let destinations: [Destination]
  private var sessions = MindfulDays()

  public init(destinations: [Destination]) { self.destinations = destinations }

  public var provides: [ProductKey] { [ProductKey(MindfulMinutes.self)] }

  /// Every session is used or set aside: its file or the table of days' `mindful_min` shows it.
  public var sampleUse: SampleUse? { sessions.use }

  public func consume(_ sample: borrowing Sample, catalog: SampleCatalog) { sessions.add(sample, catalog: catalog) }

  public func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary] {
    let rules = context.zone.rules
    let seconds = sessions.secondsPerDate(rules)
    let counts = sessions.sessionsPerDate(rules)
    let days = Set(seconds.keys).union(counts.keys).sorted().map { date in
      MindfulDay(
        date: date, minutes: MindfulMinutes.shown(seconds: seconds[date] ?? 0), sessions: counts[date] ?? 0)
    }
    context.products.publish(
      MindfulMinutes(
        minutes: Dictionary(uniqueKeysWithValues: seconds.map { ($0, MindfulMinutes.shown(seconds: $1)) })),
      by: self)
    var written: [OutputSummary] = []
    for destination in destinations {
      var writer = try context.writer(MindfulTables.days, file: destination.file, format: destination.format)
      for day in days { try writer.append(day) }
      written.append(try writer.close())
    }
    return written
  }
}

/// The minutes of mindful time per local date: the table of days' `mindful_min`.
public struct MindfulMinutes: DayColumnsProduct {
  let minutes: [CivilDate: Double]

  public static var columns: [Column] { [MindfulTables.minutes] }

  public static var sampleTypes: [String] { [MindfulDays.type] }

  public func value(_ index: Int, on date: CivilDate) -> Double? { minutes[date] }

  public var dates: [CivilDate] { Array(minutes.keys) }

  /// Whole minutes of `seconds`, halves away from zero (89 s is 1.48 min: 1).
  static func shown(seconds: Int64) -> Double {
    let minutes = Double(seconds) / 60
    return (ExactDecimal(minutes)?.rounded(places: 0).doubleValue) ?? minutes.rounded()
  }
}
