import Foundation
public import HealthModel

/// Writes `influx.lp` (Pipelines/influx/README.md): InfluxDB line protocol, second precision,
/// one point a line, each time an instant in UTC seconds.
///
/// - The samples, written as the export streams and never held, in the layout Grafana dashboards
///   of Apple Health data already query: the measurement is the type's short name, tags `unit`
///   (as written) and `device` (the source's name), field `value` as written (a category's short
///   name as a string; text that is no number as the string field `text`), time its start.
/// - Heart rate per minute, as the statistics sweep closes each minute (`ClosedBuckets`).
/// - The daily table, sleep per night and the workouts, from their marts' products once those
///   have finished; and per source the `data-sources` point dashboards list sources from.
///
/// Point identity: InfluxDB keeps one point per measurement, tag set and time, and a point
/// written again replaces it, so a rerun changes nothing. Two distinct samples of one type,
/// source and unit that start in the same second would be one point; the second and later of
/// them get a tag `n` (2, 3, …) so that none is lost. Which samples share a start is remembered
/// for the last `collisionWindow` series-and-second pairs: memory stays bounded, and exports list
/// such samples close together.
public final class InfluxMart: Mart, StatisticsBucketReader {
  public static let points = TableSchema(
    "points",
    rows: "one InfluxDB line-protocol point a line (Pipelines/influx/README.md): the samples, then heart rate per "
      + "minute, the daily table, sleep per night, the workouts and the sources",
    defaultFile: "influx.lp", columns: [],
    variableColumns: "none; each line is `measurement,tags fields seconds`, described in Pipelines/influx/README.md")

  /// The `run.json` key of what the mart wrote.
  public static let reportKey = "influx"

  /// The measurements of the computed series: names no Apple Health type has.
  public enum Measurement {
    public static let daily = "healthetl_daily"
    public static let sleep = "healthetl_sleep_nights"
    public static let workouts = "healthetl_workouts"
    public static let heartRate = "healthetl_heart_rate"
    /// One point per source, as k0rventen/apple-health-grafana's dashboards list sources.
    public static let sources = "data-sources"
  }

  /// Heart rate per minute: these options of `HeartRate` over `1m` buckets, as fields.
  static let heartRateOptions: [StatisticsOption] = [.min, .avg, .max, .count]
  /// Series-and-second pairs remembered for `n` (8 bytes each, the set at most twice that).
  static let collisionWindow = 1 << 20

  private let transaction: OutputTransaction
  private let file: String
  private var output: OutputFile?
  private var failure: OutputError?
  private var line: [UInt8] = []
  private var value: [UInt8] = []

  /// A sample's series: its type, unit and source ids.
  private struct Series: Hashable {
    var type: Int32
    var unit: Int32
    var source: Int32
  }
  private var seriesIndex: [Series: Int] = [:]
  /// Per series: `measurement,device=…` and `,unit=…` as written (an `n` tag goes between), the
  /// first empty when the type's name leaves no measurement.
  private var seriesPrefixes: [(head: [UInt8], unit: [UInt8])] = []
  /// Category values as `"shortName"`, by value and type.
  private var categoryTexts: [Int64: [UInt8]] = [:]
  private var seen = FingerprintSet()
  /// Samples seen so far per series-and-second pair that was seen twice or more.
  private var repeats: [UInt64: Int] = [:]
  /// Per source id: the latest start of its samples.
  private var latestStart: [Int64?] = []

  /// Points written per measurement, samples by type id until the end.
  private var typePoints: [Int] = []
  private var measurementPoints: [String: Int] = [:]
  private var pointCount = 0
  private var repeated = 0
  private var outOfRange = 0
  private var withoutValue = 0
  private var bytes: Int64 = 0

  public init(transaction: OutputTransaction, file: String) {
    self.transaction = transaction
    self.file = file
  }

  public var writesTables: Bool { false }

  public var needs: [ProductNeed] {
    [
      ProductNeed(DailyDays.self), ProductNeed(SleepNights.self),
      ProductNeed(WorkoutResults.self, request: .init(routeShapes: false)),
      ProductNeed(
        ClosedBuckets.self,
        request: .init(type: "HeartRate", interval: "1m", options: Self.heartRateOptions, reader: self)),
    ]
  }

  // MARK: - Samples

  public func consume(_ sample: borrowing Sample, catalog: SampleCatalog) {
    guard failure == nil, sample.type >= 0 else { return }
    let start = sample.start.seconds
    guard LineProtocol.timeRange.contains(start) else {
      outOfRange += 1
      return
    }
    let key = Series(type: sample.type, unit: sample.rawUnit, source: sample.source)
    let series: Int
    if let known = seriesIndex[key] {
      series = known
    } else {
      series = seriesPrefixes.count
      seriesIndex[key] = series
      seriesPrefixes.append(prefix(key, catalog: catalog))
    }
    let prefix = seriesPrefixes[series]
    guard !prefix.head.isEmpty else {
      withoutValue += 1
      return
    }
    value.removeAll(keepingCapacity: true)
    // The value before the `n` tag: a sample without a value is no point and takes no `n`.
    guard appendValue(sample, catalog: catalog, to: &value) else {
      withoutValue += 1
      return
    }
    line.removeAll(keepingCapacity: true)
    line.append(contentsOf: prefix.head)
    // Tags sorted as InfluxDB sorts them: `device`, `n`, `unit`.
    if let ordinal = ordinal(series: series, start: start) {
      line.append(contentsOf: Array(",n=".utf8))
      CSVField.appendInteger(Int64(ordinal), to: &line)
      repeated += 1
    }
    line.append(contentsOf: prefix.unit)
    line.append(contentsOf: value)
    LineProtocol.appendTime(start, to: &line)
    let source = Int(sample.source)
    if source >= 0 {
      if source >= latestStart.count {
        latestStart.append(contentsOf: repeatElement(nil, count: source + 1 - latestStart.count))
      }
      latestStart[source] = max(latestStart[source] ?? .min, start)
    }
    let type = Int(sample.type)
    if type >= typePoints.count { typePoints.append(contentsOf: repeatElement(0, count: type + 1 - typePoints.count)) }
    typePoints[type] += 1
    write(line)
  }

  /// `measurement,device=…` and `,unit=…` of a series; both empty when its type's name leaves
  /// no measurement.
  private func prefix(_ series: Series, catalog: SampleCatalog) -> (head: [UInt8], unit: [UInt8]) {
    var head: [UInt8] = []
    var unit: [UInt8] = []
    guard LineProtocol.appendName(catalog.typeInfo(series.type).shortName, as: .measurement, to: &head) else {
      return ([], [])
    }
    if series.source >= 0 { appendTag("device", catalog.sourceName(series.source), to: &head) }
    if let name = catalog.unit(series.unit) { appendTag("unit", name, to: &unit) }
    return (head, unit)
  }

  private func appendTag(_ key: String, _ value: String, to bytes: inout [UInt8]) {
    var text: [UInt8] = []
    guard LineProtocol.appendName(value, as: .key, to: &text) else { return }
    bytes.append(LineProtocol.comma)
    bytes.append(contentsOf: Array(key.utf8))
    bytes.append(LineProtocol.equals)
    bytes.append(contentsOf: text)
  }

  /// ` value=…` (or ` text="…"`); false when the sample has no value to write.
  private func appendValue(_ sample: borrowing Sample, catalog: SampleCatalog, to out: inout [UInt8]) -> Bool {
    if sample.kind == .category {
      let key = Int64(sample.categoryValue) << 32 | Int64(UInt32(bitPattern: sample.type))
      if categoryTexts[key] == nil {
        var text: [UInt8] = []
        LineProtocol.appendString(catalog.categoryShortName(value: sample.categoryValue, type: sample.type), to: &text)
        categoryTexts[key] = text
      }
      out.append(contentsOf: Array(" value=".utf8))
      out.append(contentsOf: categoryTexts[key]!)
      return true
    }
    guard sample.hasRawValue else { return false }
    if LineProtocol.isPlainFloat(sample.rawValue) {
      out.append(contentsOf: Array(" value=".utf8))
      out.append(contentsOf: sample.rawValue)
      return true
    }
    let text = String(decoding: sample.rawValue, as: UTF8.self)
    if let number = Double(text.trimmingCharacters(in: .whitespaces)), number.isFinite {
      out.append(contentsOf: Array(" value=".utf8))
      return LineProtocol.appendFloat(number, to: &out)
    }
    out.append(contentsOf: Array(" text=".utf8))
    LineProtocol.appendString(text, to: &out)
    return true
  }

  /// The `n` of a sample whose series already had one starting in its second; nil for the first.
  private func ordinal(series: Int, start: Int64) -> Int? {
    let key = FastHash.combine(FastHash.combine(FastHash.k0, UInt64(series)), UInt64(bitPattern: start))
    if seen.count >= Self.collisionWindow {
      seen = FingerprintSet()
      repeats = [:]
    }
    guard !seen.insert(key) else { return nil }
    let ordinal = (repeats[key] ?? 1) + 1
    repeats[key] = ordinal
    return ordinal
  }

  // MARK: - Heart rate per minute

  public func read(start: Instant, end: Instant, values: [Double?]) throws(OutputError) {
    var fields: [LineProtocol.Point.Field] = []
    for (option, value) in zip(Self.heartRateOptions, values) {
      fields.append(
        .init(option.rawValue, option == .count ? value.map { .integer(Int64($0)) } : value.map { .float($0) }))
    }
    try write(LineProtocol.Point(measurement: Measurement.heartRate, fields: fields, time: start.seconds))
  }

  // MARK: - Finish

  public func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary] {
    if let failure { throw failure }
    let rules = context.zone.rules
    for day in context.products.read(DailyDays.self)?.days ?? [] {
      try write(Self.dailyPoint(day, rules: rules))
    }
    for night in context.products.read(SleepNights.self)?.nights ?? [] {
      try write(Self.sleepPoint(night, rules: rules))
    }
    try context.products.read(WorkoutResults.self)?.rows.forEach { (row) throws(OutputError) in
      try write(Self.workoutPoint(row))
    }
    let catalog = context.catalog
    for (source, start) in latestStart.enumerated() {
      guard let start else { continue }
      try write(
        LineProtocol.Point(
          measurement: Measurement.sources, tags: [.init("device", catalog.sourceName(Int32(source)))],
          fields: [.init("value", .integer(1))], time: start))
    }
    let output = try opened()
    try output.close()
    bytes = output.bytesWritten
    for (type, count) in typePoints.enumerated() where count > 0 {
      measurementPoints[catalog.typeInfo(Int32(type)).shortName, default: 0] += count
    }
    return [OutputSummary(path: file, rows: pointCount)]
  }

  public var runReportSection: RunReportSection? {
    RunReportSection(
      key: Self.reportKey,
      value: [
        "file": file, "points": pointCount, "bytes": bytes,
        "measurements": measurementPoints, "repeatedStarts": repeated,
        "skipped": ["timeOutOfRange": outOfRange, "noValue": withoutValue],
      ] as [String: Any])
  }

  /// A date of `daily.csv`: stamped at the instant the date begins in the run's zone, one field
  /// per column with a value (as the file's cell: its unit, its decimals); `bedtime` and
  /// `wake_up` as Unix seconds.
  static func dailyPoint(_ day: DailyValues, rules: ZoneRules) -> LineProtocol.Point {
    var fields: [LineProtocol.Point.Field] = []
    for (measure, name) in zip(DailyMeasure.allCases, dailyFields) {
      switch measure {
      case .bedtime: fields.append(.init(name, day.bedtime.map { .integer($0.seconds) }))
      case .wakeUp: fields.append(.init(name, day.wakeUp.map { .integer($0.seconds) }))
      case .workouts: fields.append(.init(name, day[measure].map { .integer(Int64($0)) }))
      default: fields.append(.init(name, day[measure].map { .float($0) }))
      }
    }
    return LineProtocol.Point(measurement: Measurement.daily, fields: fields, time: startOfDay(day.date, rules))
  }

  /// The daily table's column names, as field keys.
  private static let dailyFields = DailyMeasure.allCases.map { $0.column.column.name }

  /// A night of `sleep_daily.csv`, stamped like a date of the daily table: seconds per stage as
  /// the file writes them (only the stages the night measured), sessions, and the first and last
  /// asleep instants as Unix seconds.
  static func sleepPoint(_ night: SleepNightSummary, rules: ZoneRules) -> LineProtocol.Point {
    let tally = night.tally
    var fields: [LineProtocol.Point.Field] = [
      ("asleep_s", SleepTally.Measure.asleep), ("core_s", .core), ("deep_s", .deep), ("rem_s", .rem),
      ("unspecified_s", .unspecified), ("awake_s", .awake),
    ].map { .init($0.0, tally.recorded($0.1).map { .integer($0) }) }
    fields.append(.init("in_bed_s", tally.inBed.map { .integer($0) }))
    fields.append(.init("sessions", .integer(Int64(tally.sessions))))
    fields.append(.init("sleep_start", tally.sleepStart.map { .integer($0.seconds) }))
    fields.append(.init("sleep_end", tally.sleepEnd.map { .integer($0.seconds) }))
    return LineProtocol.Point(measurement: Measurement.sleep, fields: fields, time: startOfDay(night.date, rules))
  }

  /// A row of `workouts.csv` at its start, tagged by activity type and source, its values as
  /// the file writes them.
  static func workoutPoint(_ row: WorkoutSummary) -> LineProtocol.Point {
    func written(_ column: String, _ value: Double?) -> LineProtocol.Point.Field {
      .init(column, value.map { .float(WorkoutTables.column(column).precision.rounded($0)) })
    }
    return LineProtocol.Point(
      measurement: Measurement.workouts, tags: [.init("activity_type", row.activityType), .init("device", row.source)],
      fields: [
        written("duration_s", row.durationSeconds), .init("elapsed_s", .integer(row.elapsedSeconds)),
        written("distance_m", row.distanceMeters), written("energy_kcal", row.energyKilocalories),
        written("hr_avg", row.heartRateAverage), written("hr_min", row.heartRateMinimum),
        written("hr_max", row.heartRateMaximum), .init("workout_id", .string(row.id)),
      ], time: row.start.seconds)
  }

  /// The instant `date` begins in the zone of `rules`.
  static func startOfDay(_ date: CivilDate, _ rules: ZoneRules) -> Int64 {
    rules.firstInstant(atOrAfterLocal: date.daysSinceEpoch * 86_400).seconds
  }

  // MARK: - Writing

  private func opened() throws(OutputError) -> OutputFile {
    if let output { return output }
    let created = try transaction.create(file)
    output = created
    return created
  }

  /// One sample's line; a failure is kept for `finish` (a sample cannot throw).
  private func write(_ line: [UInt8]) {
    do throws(OutputError) {
      try opened().write(line)
      pointCount += 1
    } catch {
      failure = error
    }
  }

  private func write(_ point: LineProtocol.Point) throws(OutputError) {
    line.removeAll(keepingCapacity: true)
    guard point.append(to: &line) else {
      if LineProtocol.timeRange.contains(point.time) { withoutValue += 1 } else { outOfRange += 1 }
      return
    }
    try opened().write(line)
    pointCount += 1
    measurementPoints[point.measurement, default: 0] += 1
  }
}
