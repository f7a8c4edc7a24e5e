/// The tables of a sleep job, declared once: `Pipelines/README.md` explains how every number is
/// made ("Sleep per night").
public enum SleepTables {
  /// `asleep_s` … `sleep_end`: the measures the daily and session tables share.
  static let measures: [Column] = [
    .integer(
      "asleep_s", unit: "s", display: .hoursMinutes,
      "core + deep + REM + unspecified; empty when only in-bed samples were recorded, 0 when awake throughout"),
    .integer("core_s", unit: "s", display: .hoursMinutes, "asleep, core stage; empty on a night without stages"),
    .integer("deep_s", unit: "s", display: .hoursMinutes, "asleep, deep stage; empty on a night without stages"),
    .integer("rem_s", unit: "s", display: .hoursMinutes, "asleep, REM stage; empty on a night without stages"),
    .integer(
      "unspecified_s", unit: "s", display: .hoursMinutes,
      "asleep, no stage given (older watches and apps); empty when `asleep_s` is"),
    .integer(
      "awake_s", unit: "s", display: .hoursMinutes,
      "awake within the session; empty on a night with neither stages nor an awake stretch"),
    .integer(
      "in_bed_s", unit: "s", display: .hoursMinutes,
      "length of the union of all in-bed samples; empty when there are none"),
    .instant("sleep_start", "start of the first asleep stretch"),
    .instant("sleep_end", "end of the last asleep stretch"),
  ]

  static let sources = Column.text(
    "sources", "names of the sources that won at least one stretch, by priority, `;`-separated")

  /// `sleep_daily.csv`: one row per night.
  public static let daily = TableSchema(
    "daily", rows: "one row per date that has a sleep session, in date order", defaultFile: "sleep_daily.csv",
    columns: [
      .date("date", "the night's date: the local date of the session's end, or the next date after the day boundary")
    ]
      + measures + [.integer("sessions", "sessions that belong to the date"), sources],
    inWorkbook: true, keys: TableKeys(primary: ["date"]))

  /// `sleep_sessions.csv`: one row per session.
  public static let sessions = TableSchema(
    "sessions", rows: "one row per sleep session, in start order", defaultFile: "sleep_sessions.csv",
    columns: [
      .localTime("`session_start` on the local clock, `YYYY-MM-DD HH:MM:SS`"),
      .instant("session_start", "earliest start of the session's samples, in-bed ones included"),
      .instant("session_end", "latest end of the session's samples"),
      .date("date", "the night the session belongs to"),
    ] + measures + [sources],
    keys: TableKeys(indexes: [["date"], ["session_start_unix"]]))

  /// In the order a pipeline names them; the first is a job's default table.
  public static let all = [daily, sessions]
}
