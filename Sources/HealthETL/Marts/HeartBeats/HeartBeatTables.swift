/// The tables of a `beats` job, declared once: `Pipelines/README.md` says where every value comes
/// from ("Beat-to-beat heart rate").
public enum HeartBeatTables {
  /// `heart_beats.csv`: one row per listed beat, a long table.
  public static let beats = TableSchema(
    "beats", rows: "one row per `InstantaneousBeatsPerMinute` of a distinct record, in document order",
    defaultFile: "heart_beats.csv",
    columns: [
      .localTime("`time` on the local clock, to the second, `YYYY-MM-DD HH:MM:SS`; empty when `time` is"),
      .text("record_id", "the HRV record's sample `id` (the same text as in `samples/`)"),
      .integer("beat", "1-based, in document order"),
      .text(
        "time",
        "the beat as an instant to the millisecond (`2021-01-01T00:20:37.800+01:00`); empty when its `time` could not be read"
      ),
      .measure("bpm", unit: "count/min", "`bpm` as written; empty when it is not a number above 0 and at most 400"),
      .measure("rr_ms", unit: "ms", "the RR interval that ends at this beat; empty without one"),
      .text("rr_from", "`times` (the gap to the previous beat) or `bpm` (60 000 / bpm); empty without an interval"),
    ])

  /// `hrv_readings.csv`: one row per record with a beat list.
  public static let readings = TableSchema(
    "readings", rows: "one row per distinct record that lists beats, in document order",
    defaultFile: "hrv_readings.csv",
    columns: [
      .localTime("`start` on the local clock, `YYYY-MM-DD HH:MM:SS`"),
      .text("record_id", "the record's sample `id`"),
      .instant("start", "the record's start"),
      .instant("end", "the record's end"),
      .text("source", "`sourceName`"),
      .measure("apple_sdnn_ms", unit: "ms", "the record's own value: Apple's SDNN (HeartRateVariabilitySDNN records)"),
      .measure("sdnn_ms", unit: "ms", "standard deviation (n − 1) of the RR intervals; empty below two"),
      .measure("rmssd_ms", unit: "ms", "root mean square of the differences of back-to-back RR intervals"),
      .integer("beats", "`InstantaneousBeatsPerMinute` entries listed"),
      .integer("beats_unread", "entries whose `time` or `bpm` could not be read"),
      .integer("beats_repeated", "entries with the same time and bpm as the entry before them: left out"),
      .integer(
        "beats_outside",
        "entries whose time lies more than a minute before the record's start or after its end: a sign that the clock times were written in another zone than the one they were read in"
      ),
      .integer("intervals", "RR intervals behind `sdnn_ms`"),
      .integer("intervals_from_times", "of those, measured between two listed times"),
      .integer("successive_pairs", "back-to-back interval pairs behind `rmssd_ms`"),
      .text("zone", "the zone the clock times were read in: the record's `HKTimeZone`, else the run's zone"),
    ])

  public static let all = [beats, readings]
}
