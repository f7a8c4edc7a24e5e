import HealthModel

/// The tables of a `beats` job, declared once: `Pipelines/README.md` says where every value comes
/// from ("Beat-to-beat heart rate").
public enum HeartBeatTables {
  /// `heart_beats.csv`: one row per listed beat, a long table.
  static let beats = RowTable<HeartBeatRow>(
    "beats", rows: "one row per `InstantaneousBeatsPerMinute` of a distinct record, in document order",
    defaultFile: "heart_beats.csv",
    columns: [
      .localTime("`time` on the local clock, to the second, `YYYY-MM-DD HH:MM:SS`; empty when `time` is") {
        $0.time.map { Instant(seconds: floorDiv($0, 1000)) }
      },
      .text("record_id", "the HRV record's sample `id` (the same text as in `samples/`)") { $0.recordID },
      .integer("beat", "1-based, in document order") { Int64($0.beat) },
      .text(
        "time",
        "the beat as an instant to the millisecond (`2021-01-01T00:20:37.800+01:00`); empty when its `time` could not be read"
      ) { row in row.time.map { HeartBeatMart.format($0, zone: row.runZone) } },
      .measure("bpm", unit: "count/min", "`bpm` as written; empty when it is not a number from 20 to 400") {
        $0.bpm
      },
      .measure("rr_ms", unit: "ms", "the RR interval that ends at this beat; empty without one") {
        $0.interval?.milliseconds
      },
      .text("rr_from", "`times` (the gap to the previous beat) or `bpm` (60 000 / bpm); empty without an interval") {
        $0.interval?.from.rawValue
      },
    ])

  /// `hrv_readings.csv`: one row per record with a beat list.
  static let readings = RowTable<HRVReadingRow>(
    "readings", rows: "one row per distinct record that lists beats, in document order",
    defaultFile: "hrv_readings.csv",
    columns: [
      .localTime("`start` on the local clock, `YYYY-MM-DD HH:MM:SS`") { $0.reading.start },
      .text("record_id", "the record's sample `id`") { $0.reading.id },
      .instant("start", "the record's start") { $0.reading.start },
      .instant("end", "the record's end") { $0.reading.end },
      .text("source", "`sourceName`") { $0.source },
      .measure("apple_sdnn_ms", unit: "ms", "the record's own value: Apple's SDNN (HeartRateVariabilitySDNN records)") {
        $0.reading.appleSDNN
      },
      .measure("sdnn_ms", unit: "ms", "standard deviation (n − 1) of the RR intervals; empty below two") {
        $0.intervals.sdnn
      },
      .measure("rmssd_ms", unit: "ms", "root mean square of the differences of back-to-back RR intervals") {
        $0.intervals.rmssd
      },
      .integer("beats", "`InstantaneousBeatsPerMinute` entries listed") { Int64($0.reading.beats) },
      .integer("beats_unread", "entries whose `time` or `bpm` could not be read") { Int64($0.reading.unread) },
      .integer("beats_repeated", "entries with the same time and bpm as the entry before them: left out") {
        Int64($0.intervals.repeated)
      },
      .integer(
        "beats_outside",
        "entries whose time lies more than a minute before the record's start or after its end: a sign that the clock times were written in another zone than the one they were read in"
      ) { Int64($0.outside) },
      .integer("intervals", "RR intervals behind `sdnn_ms`") { Int64($0.intervals.count) },
      .integer("intervals_from_times", "of those, measured between two listed times") {
        Int64($0.intervals.fromTimes)
      },
      .integer("successive_pairs", "back-to-back interval pairs behind `rmssd_ms`") {
        Int64($0.intervals.successivePairs)
      },
      .text("zone", "the zone the clock times were read in: the record's `HKTimeZone`, else the run's zone") {
        $0.zone.identifier
      },
    ])

  public static let all = [beats.schema, readings.schema]
}

/// A row of `beats`: one listed beat of a reading.
struct HeartBeatRow {
  let recordID: String
  /// 1-based, in document order.
  let beat: Int
  /// Epoch milliseconds; nil when its time could not be read.
  let time: Int64?
  let bpm: Double?
  /// The RR interval that ends at this beat.
  let interval: BeatIntervals.Interval?
  /// The run's zone: `time` is written with its offset.
  let runZone: ZoneRules
}

/// A row of `readings`: a record with a beat list and what its beats gave.
struct HRVReadingRow {
  let reading: HeartBeatMart.Reading
  let source: String
  let intervals: BeatIntervals
  /// Beats more than a minute outside the record.
  let outside: Int
  /// The zone the clock times were read in.
  let zone: ZoneRules
}
