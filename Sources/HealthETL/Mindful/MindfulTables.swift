public import HealthModel

/// `mindful_daily.csv`: one row per local date with a mindful session, and the column the table
/// of days takes from it (`mindful_min`).
public enum MindfulTables {
  /// `mindful_min`, in `daily.csv` and here: whole minutes, as the Health app shows them.
  static let minutes = Column.number(
    "mindful_min", unit: "min", precision: .decimals(0), display: .decimals(0),
    "seconds of the date covered by `MindfulSession` samples (any source; overlaps once), in minutes")

  public static let days = RowTable<MindfulDay>(
    "days",
    rows: "one row per local date of the run's zone with a mindful session, in date order",
    defaultFile: "mindful_daily.csv",
    columns: [
      .date("date", "the local date") { $0.date },
      RowColumn(minutes) { .number($0.minutes) },
      .integer("sessions", unit: "count", "`MindfulSession` samples that start on the date (any source)") {
        Int64($0.sessions)
      },
    ],
    inWorkbook: true, keys: TableKeys(primary: ["date"]))

  public static let all = [days.schema]
}

/// One date of mindful time.
public struct MindfulDay: Sendable {
  public let date: CivilDate
  /// Covered seconds in minutes, rounded as `mindful_min` shows them.
  public let minutes: Double
  public let sessions: Int
}
