public import HealthModel

/// The tables of a sleep job, declared once: `Pipelines/README.md` explains how every number is
/// made ("Sleep per night").
public enum SleepTables {
  /// `asleep_s` … `sleep_end`: the measures the daily and session tables share.
  static func measures<Period: SleepPeriod>() -> [RowColumn<SleepRow<Period>>] {
    [
      .integer(
        "asleep_s", unit: "s", display: .hoursMinutes,
        "core + deep + REM + unspecified; empty when only in-bed samples were recorded, 0 when awake throughout"
      ) { $0.period.tally.recorded(.asleep) },
      .integer("core_s", unit: "s", display: .hoursMinutes, "asleep, core stage; empty on a night without stages") {
        $0.period.tally.recorded(.core)
      },
      .integer("deep_s", unit: "s", display: .hoursMinutes, "asleep, deep stage; empty on a night without stages") {
        $0.period.tally.recorded(.deep)
      },
      .integer("rem_s", unit: "s", display: .hoursMinutes, "asleep, REM stage; empty on a night without stages") {
        $0.period.tally.recorded(.rem)
      },
      .integer(
        "unspecified_s", unit: "s", display: .hoursMinutes,
        "asleep, no stage given (older watches and apps); empty when `asleep_s` is"
      ) { $0.period.tally.recorded(.unspecified) },
      .integer(
        "awake_s", unit: "s", display: .hoursMinutes,
        "awake within the session; empty on a night with neither stages nor an awake stretch"
      ) { $0.period.tally.recorded(.awake) },
      .integer(
        "in_bed_s", unit: "s", display: .hoursMinutes,
        "length of the union of all in-bed samples; empty when there are none"
      ) { $0.period.tally.inBed },
      .instant("sleep_start", "start of the first asleep stretch") { $0.period.tally.sleepStart },
      .instant("sleep_end", "end of the last asleep stretch") { $0.period.tally.sleepEnd },
    ]
  }

  static func sources<Period: SleepPeriod>() -> RowColumn<SleepRow<Period>> {
    .text("sources", "names of the sources that won at least one stretch, by priority, `;`-separated") { $0.sources }
  }

  /// `sleep_daily.csv`: one row per night.
  public static let daily = RowTable<SleepRow<SleepNightSummary>>(
    "daily", rows: "one row per date that has a sleep session, in date order", defaultFile: "sleep_daily.csv",
    columns: [
      .date(
        "date", "the night's date: the local date of the session's end, or the next date after the day boundary"
      ) { $0.period.date }
    ]
      + measures() + [.integer("sessions", "sessions that belong to the date") { Int64($0.period.tally.sessions) }]
      + [sources()],
    inWorkbook: true, keys: TableKeys(primary: ["date"]))

  /// `sleep_sessions.csv`: one row per session.
  public static let sessions = RowTable<SleepRow<SleepSessionSummary>>(
    "sessions", rows: "one row per sleep session, in start order", defaultFile: "sleep_sessions.csv",
    columns: [
      .localTime("`session_start` on the local clock, `YYYY-MM-DD HH:MM:SS`") { $0.period.start },
      .instant("session_start", "earliest start of the session's samples, in-bed ones included") { $0.period.start },
      .instant("session_end", "latest end of the session's samples") { $0.period.end },
      .date("date", "the night the session belongs to") { $0.period.date },
    ] + measures() + [sources()],
    keys: TableKeys(indexes: [["date"], ["session_start_unix"]]))

  /// In the order a pipeline names them; the first is a job's default table.
  public static let all = [daily.schema, sessions.schema]
}

/// A night or a session: what a row of a sleep table measures.
public protocol SleepPeriod: Sendable {
  var date: CivilDate { get }
  var tally: SleepTally { get }
}

extension SleepNightSummary: SleepPeriod {}
extension SleepSessionSummary: SleepPeriod {}

/// A row of a sleep table: the night or session and the names of the sources that won in it.
public struct SleepRow<Period: SleepPeriod>: Sendable {
  public let period: Period
  /// `;`-separated by priority; nil when nothing won a piece.
  public let sources: String?
}
