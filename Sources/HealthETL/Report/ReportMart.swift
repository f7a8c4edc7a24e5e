import Foundation
import HealthModel

/// `report.html` (Pipelines/report/): one page with charts of what the export holds and what the
/// run made of it, from the same parse as every other output. Its data (Pipelines/report/DATA.md)
/// is taken from the other marts in memory, never from their files: the daily mart's days, the
/// sleep nights and sessions, the workout rows and swim laps, the heart rate per minute (handed
/// over by a tap as the statistics sweep closes its buckets), the statistics' merged sample
/// streams for overlap and priority shares, and the inventory; it counts samples per type and
/// source itself.
///
/// It reads the products of those marts (`needs`), so the run finishes it after them; when the
/// run has no job that computes one, the run adds a mart that writes no file (no workout delta is
/// committed for it).
public final class ReportMart: Mart {
  /// The `days` columns (DATA.md, "days"): each the value of one `daily.csv` column, to the
  /// report's own decimals. `exercise_ring_min` is the Exercise ring; `daily.csv`'s
  /// `exercise_min` (the AppleExerciseTime samples summed) is a different number.
  public static let dayColumns: [(name: String, measure: DailyMeasure, places: Int)] = [
    ("steps", .steps, 0), ("active_kcal", .activeEnergyKcal, 1),
    ("move_kcal", .moveKcal, 1), ("move_goal_kcal", .moveGoalKcal, 1),
    ("exercise_ring_min", .exerciseRingMin, 0), ("exercise_goal_min", .exerciseGoalMin, 0),
    ("stand_h", .standHours, 0), ("stand_goal_h", .standGoalHours, 0),
    ("resting_hr", .restingHeartRate, 1), ("hrv_sdnn_ms", .hrvSDNN, 1), ("walking_hr", .walkingHeartRate, 1),
    ("hr_min", .heartRateMin, 1), ("hr_avg", .heartRateAvg, 1), ("hr_max", .heartRateMax, 1),
    ("body_mass_kg", .bodyMass, 2), ("vo2max", .vo2Max, 1),
  ]
  /// More `days` columns (DATA.md, "days"), each exactly the `daily.csv` cell of its column (in
  /// that column's unit and places): the families beyond activity, sleep and heart, and the
  /// activity columns the page charts besides.
  public static let cellColumns: [(name: String, measure: DailyMeasure)] = [
    ("distance_km", .distanceKm), ("cycling_km", .cyclingDistanceKm), ("flights", .flights),
    ("exercise_min", .exerciseMin),
    ("bp_systolic", .systolic), ("bp_diastolic", .diastolic), ("bp_readings", .bloodPressureReadings),
    ("glucose_mg_dl", .bloodGlucose), ("dietary_kcal", .dietaryEnergy), ("carbs_g", .carbohydrates),
    ("protein_g", .protein), ("fat_g", .fat), ("body_fat", .bodyFat), ("bmi", .bodyMassIndex),
    ("lean_mass_kg", .leanBodyMass), ("walking_speed_kmh", .walkingSpeed), ("step_length_cm", .stepLength),
    ("walking_asymmetry", .walkingAsymmetry), ("double_support", .doubleSupport),
    ("headphone_db", .headphoneAudio), ("environmental_db", .environmentalAudio),
  ]
  /// The sample types some chart of the page draws (through `days`, `nights` or the heart rate per
  /// minute); every other type with samples is listed in `also_in_export`.
  public static let chartedTypes: Set<String> = [
    "StepCount", "ActiveEnergyBurned", "DistanceWalkingRunning", "DistanceCycling", "FlightsClimbed",
    "AppleExerciseTime", "MindfulSession", "SleepAnalysis", "HeartRate", "RestingHeartRate",
    "HeartRateVariabilitySDNN", "WalkingHeartRateAverage", "BodyMass", "VO2Max", "BloodPressureSystolic",
    "BloodPressureDiastolic", "BloodGlucose", "DietaryEnergyConsumed", "DietaryCarbohydrates", "DietaryProtein",
    "DietaryFatTotal", "BodyFatPercentage", "BodyMassIndex", "LeanBodyMass", "WalkingSpeed", "WalkingStepLength",
    "WalkingAsymmetryPercentage", "WalkingDoubleSupportPercentage", "HeadphoneAudioExposure",
    "EnvironmentalAudioExposure",
  ]
  /// Heart rate per minute: its `max`.
  public static let heartRateStatistic = (type: "HeartRate", option: StatisticsOption.max)
  public static let heartRateDays = 14
  /// Rows per type in the quality section's `sources`: the rest are summed into one row, so an
  /// export naming a new source in every record still gives a page of readable size.
  public static let sourcesPerType = 20

  private let transaction: OutputTransaction
  private let page: ReportPage
  private let file: String
  /// What the parse found; the run's (`MartContext.export`) unless set.
  public var header: ExportOverview?
  /// What the marts it reads computed, taken at the start of `finish`.
  private var inputs = Inputs()

  private struct Inputs {
    var sleep = SleepNights(nights: [], sessions: [])
    var workouts = WorkoutResults()
    var days: [DailyValues] = []
    /// The `daily.csv` columns other subjects add (`DailyDays.added`).
    var addedDayColumns: [Column] = []
    /// What the daily mart flagged, and the dates whose steps one source's overlaps made.
    var dayOddities = Oddities()
    var overlappingSteps: Set<CivilDate> = []
    /// The last `heartRateDays` local dates with a heart-rate minute.
    var heartRate: [RecentDays.Day] = []
    /// The latest ECG recordings' first seconds (none: the page has no ECG section).
    var previews: [ElectrocardiogramPreview] = []
  }

  /// The statistics mart's merged streams, observed as it finishes.
  private let quality = ReportQuality()
  /// Every other type's samples, spilled to the run's scratch space for the same measures: one
  /// record each (40 bytes in memory, mostly 5–9 on disk), sorted runs merged at the end, never
  /// all in memory.
  private let spill: SampleSpill
  private let otherQuality = ReportQuality()
  /// Per type id: its stream among `otherTypes`, -1 for a streamed type, -2 not yet looked at.
  private var otherStreams: [Int32] = []
  private var otherTypes: [String] = []
  /// The priority groups of the samples in `spill`.
  private var groups = SourceGroups()
  /// Distinct samples per (type id, source id) pair, numbered by `samplePairs`.
  private var samplePairs = PairIndex()
  private var sampleCounts: [Int] = []

  public init(transaction: OutputTransaction, page: ReportPage, file: String = ReportTables.page.defaultFile) {
    self.transaction = transaction
    self.page = page
    self.file = file
    spill = SampleSpill(capacity: 65_536, transaction: transaction, scratchName: "report-quality.runs")
  }

  public var needs: [ProductNeed] {
    [
      ProductNeed(SleepNights.self), ProductNeed(WorkoutResults.self, request: .init(routeShapes: true)),
      ProductNeed(DailyDays.self),
      ProductNeed(
        RecentDays.self,
        request: .init(
          type: Self.heartRateStatistic.type, interval: "1m", option: Self.heartRateStatistic.option,
          days: Self.heartRateDays)),
      ProductNeed(MergedStreams.self, request: .init(observer: quality)),
      ProductNeed(ElectrocardiogramPreviews.self, optional: true),
    ]
  }

  /// A page, not tables: the workbook and the database close while it is written.
  public var writesTables: Bool { false }

  /// The types the statistics mart streams: their quality measures come from its streams.
  private var streamedTypes: Set<String> { quality.observedTypes }

  public func consume(_ sample: borrowing Sample, catalog: SampleCatalog) {
    let (pair, isNew) = samplePairs.number(sample.type, sample.source)
    if isNew { sampleCounts.append(0) }
    sampleCounts[pair] += 1
    spillForQuality(sample, catalog: catalog)
  }

  private func spillForQuality(_ sample: borrowing Sample, catalog: SampleCatalog) {
    let type = Int(sample.type)
    while otherStreams.count <= type { otherStreams.append(-2) }
    if otherStreams[type] == -2 {
      let name = catalog.typeInfo(sample.type).shortName
      if streamedTypes.contains(name) {
        otherStreams[type] = -1
      } else {
        otherStreams[type] = Int32(otherTypes.count)
        otherTypes.append(name)
      }
    }
    let stream = otherStreams[type]
    guard stream >= 0 else { return }
    let group = groups.group(of: sample, catalog: catalog)
    var value = 0.0
    if sample.kind == .quantity, sample.value.isFinite { value = sample.value }
    var created = SpillRecord.missingCreation
    if let instant = sample.created { created = instant.seconds }
    spill.append(
      SpillRecord(
        start: sample.start.seconds, end: sample.end.seconds, value: value, created: created, stream: stream,
        group: group))
  }

  /// The quality measures of the types the statistics stage does not spill, ranked like its groups.
  private func measureOtherTypes(_ context: MartContext) throws(OutputError) {
    let catalog = context.catalog
    otherQuality.begin(
      types: otherTypes, groupSources: groups.sourceNames(catalog),
      groupRanks: groups.rankPositions(context.settings.sourcePriority, catalog: catalog))
    let merge = try spill.merged()
    while let record = try merge.next() {
      otherQuality.observe(
        stream: record.stream, start: record.start, end: record.end, value: record.value, group: record.group)
    }
    otherQuality.end()
  }

  public func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary] {
    let products = context.products
    let daily = products.read(DailyDays.self)
    inputs = Inputs(
      sleep: products.read(SleepNights.self) ?? inputs.sleep,
      workouts: products.read(WorkoutResults.self) ?? inputs.workouts,
      days: daily?.days ?? [], addedDayColumns: daily?.added ?? [],
      dayOddities: daily?.oddities ?? Oddities(), overlappingSteps: daily?.overlappingSteps ?? [],
      heartRate: products.read(RecentDays.self)?.days(
        Self.heartRateStatistic.type, "1m", Self.heartRateStatistic.option) ?? [],
      previews: products.read(ElectrocardiogramPreviews.self)?.recordings ?? [])
    try measureOtherTypes(context)
    let output = try transaction.create(file)
    try page.write(json: data(context), to: output)
    try output.close()
    return [OutputSummary(path: file, rows: 1)]
  }

  // MARK: - The data

  /// The report data of DATA.md.
  public func data(_ context: MartContext) -> ReportJSON {
    if header == nil { header = context.export }
    let rules = context.zone.rules
    var sections: [(String, ReportJSON)] = [
      ("report_version", .integer(1)),
      ("export", exportSection(rules)),
      ("days", daysSection()),
      ("nights", nightsSection(rules)),
      ("heart_rate", heartRateSection(rules)),
      ("workouts", workoutsSection(rules)),
      ("quality", qualitySection(context.catalog)),
      ("also_in_export", alsoInExportSection(context.catalog)),
      ("worth_a_look", worthALookSection()),
    ]
    // Only with recordings: a page of an export without ECGs stays as it was.
    if !inputs.previews.isEmpty {
      let previews = inputs.previews
      sections.append(("electrocardiograms", electrocardiogramSection(previews, rules)))
    }
    return .object(sections)
  }

  /// DATA.md, `electrocardiograms`: the first seconds of the latest recordings, latest first,
  /// whole µV (the chart cannot show less).
  private func electrocardiogramSection(_ previews: [ElectrocardiogramPreview], _ rules: ZoneRules) -> ReportJSON {
    .object([
      ("seconds", ReportJSON.rounded(ElectrocardiogramMart.previewSeconds, csv: .asRecorded, places: 3)),
      (
        "recordings",
        .array(
          previews.map { preview in
            .object([
              ("recorded", Self.minuteText(preview.recorded, rules)),
              ("classification", .string(preview.classification)),
              ("sample_rate_hz", ReportJSON.rounded(preview.sampleRate, csv: .asRecorded, places: 3)),
              ("microvolts", .array(preview.microvolts.map { ReportJSON.rounded($0, csv: .asRecorded, places: 0) })),
            ])
          })
      ),
    ])
  }

  /// DATA.md, `worth_a_look`: what the marts flagged (nights, days, workouts), by rule key, and
  /// the dates each headline average leaves out for it.
  private func worthALookSection() -> ReportJSON {
    var all = Oddities()
    for found in [inputs.sleep.oddities, inputs.dayOddities, inputs.workouts.oddities] { all.add(found) }
    let sorted = all.found.sorted { $0.rule.key.utf8.lexicographicallyPrecedes($1.rule.key.utf8) }
    let rules: [ReportJSON] = sorted.map { found in
      .object([
        ("key", .string(found.rule.key)), ("title", .string(found.rule.title)), ("why", .string(found.rule.why)),
        ("count", .integer(Int64(found.count))),
        (
          "items",
          .array(
            found.items.map { item in
              .object([
                ("date", .string(item.date?.description)), ("id", .string(item.id)), ("detail", .string(item.detail)),
              ])
            })
        ),
      ])
    }
    func dates(_ set: some Sequence<CivilDate>) -> ReportJSON {
      .array(set.sorted().map { .string($0.description) })
    }
    return .object([
      ("rules", .array(rules)),
      (
        "left_out",
        .object([("asleep_h", dates(inputs.sleep.flagged.keys)), ("steps", dates(inputs.overlappingSteps))])
      ),
    ])
  }

  static func minuteText(_ instant: Instant?, _ rules: ZoneRules) -> ReportJSON {
    guard let instant else { return .null }
    let iso = LocalTimeFormatter.iso8601(instant, offsetSeconds: rules.offset(at: instant))
    return .string(String(iso.prefix(16)).replacingOccurrences(of: "T", with: " "))
  }

  static func dateText(_ instant: Instant?, _ rules: ZoneRules) -> ReportJSON {
    guard let instant else { return .null }
    return .string(rules.localDate(at: instant).description)
  }

  private func exportSection(_ rules: ZoneRules) -> ReportJSON {
    let header = header ?? ExportOverview()
    let types = header.types.values
    var fields: [(String, ReportJSON)] = [
      (
        "export_date",
        header.exportDate.map { .string(LocalTimeFormatter.iso8601($0, offsetSeconds: rules.offset(at: $0))) }
          ?? .null
      ),
      ("export_version", .string(header.exportVersion.map { String($0) })),
      ("locale", .string(header.locale)),
      ("first_date", Self.dateText(header.first, rules)),
      ("last_date", Self.dateText(header.last, rules)),
      ("time_zone", .string(rules.identifier)),
      ("time_zone_reason", .string(header.timeZoneReason)),
      ("sources", .array(header.sources.map(ReportJSON.string))),
      ("devices", .array(header.devices.map { ReportJSON.string(DeviceModelName.shown($0)) })),
      ("records", .integer(Int64(types.reduce(0) { $0 + $1.distinct }))),
      ("records_read", .integer(Int64(types.reduce(0) { $0 + $1.read }))),
      ("duplicates", .integer(Int64(types.reduce(0) { $0 + $1.duplicates }))),
      ("workouts", .integer(Int64(inputs.workouts.rows.count))),
      ("workout_copies", .integer(Int64(header.workoutCopies))),
      ("rejected", .integer(Int64(header.rejectedCounts.values.reduce(0, +)))),
    ]
    // Only when a list was cut, so that the page of an ordinary export stays as it was.
    if header.sourcesOmitted > 0 { fields.append(("sources_omitted", .integer(Int64(header.sourcesOmitted)))) }
    if header.devicesOmitted > 0 { fields.append(("devices_omitted", .integer(Int64(header.devicesOmitted)))) }
    // Only for a recovered read, so that the page of an ordinary export stays as it was.
    if let recovered = header.recovered { fields.append(("recovered", .string(recovered))) }
    return .object(fields)
  }

  /// The dates with a value in any of `dayColumns`, each column rounded from the value its source
  /// output writes (Pipelines/docs/outputs.md, "Precision"), so the page never differs from that file by a
  /// double rounding.
  private func daysSection() -> ReportJSON {
    let days = inputs.days.filter { day in
      Self.dayColumns.contains { day.written($0.measure) != nil }
        || Self.cellColumns.contains { day[$0.measure] != nil }
        || inputs.addedDayColumns.indices.contains { day.contributed($0) != nil }
    }
    var columns: [(String, ReportJSON)] = [("date", .array(days.map { .string($0.date.description) }))]
    for column in Self.dayColumns {
      // A ring is read from the export's decimal text, converted from kJ when written so:
      // 12 significant digits drop a conversion's binary noise and keep every written digit.
      let precision =
        column.measure.statistic.map { Self.csvPrecision($0.type, $0.option) } ?? .significantDigits(12)
      columns.append(
        (
          column.name,
          .array(days.map { .rounded($0.written(column.measure), csv: precision, places: column.places) })
        ))
    }
    for column in Self.cellColumns {
      let places = column.measure.places
      columns.append(
        (column.name, .array(days.map { .rounded($0[column.measure], csv: .significantDigits(12), places: places) })))
    }
    // Each column another subject adds, under its `daily.csv` name and to its decimals.
    for (index, column) in inputs.addedDayColumns.enumerated() {
      let places = if case .decimals(let places) = column.precision { places } else { 2 }
      columns.append(
        (column.name, .array(days.map { .rounded($0.contributed(index), csv: .significantDigits(12), places: places) }))
      )
    }
    return .object(columns)
  }

  /// Whole seconds to hours with two decimals in integers: hundredths = (s + 18) / 36, exact and
  /// free of ties (DATA.md, "nights").
  public static func hours(_ seconds: Int64?) -> ReportJSON {
    guard let seconds, seconds >= 0 else { return .null }
    let hundredths = (seconds + 18) / 36
    let fraction = hundredths % 100
    if fraction == 0 { return .number(String(hundredths / 100)) }
    var text = String(hundredths / 100) + "." + (fraction < 10 ? "0" : "") + String(fraction)
    if text.hasSuffix("0") { text.removeLast() }
    return .number(text)
  }

  private func nightsSection(_ rules: ZoneRules) -> ReportJSON {
    var main: [CivilDate: SleepSessionSummary] = [:]
    for session in inputs.sleep.sessions {
      if let best = main[session.date], best.tally.asleep >= session.tally.asleep { continue }
      main[session.date] = session
    }
    let nights = inputs.sleep.nights
    func column(_ value: (SleepTally) -> Int64?) -> ReportJSON { .array(nights.map { Self.hours(value($0.tally)) }) }
    return .object([
      ("date", .array(nights.map { .string($0.date.description) })),
      // Empty where `sleep_daily.csv` is: a night without stages has no 0 h of deep sleep.
      ("core_h", column { $0.recorded(.core) }),
      ("deep_h", column { $0.recorded(.deep) }),
      ("rem_h", column { $0.recorded(.rem) }),
      ("awake_h", column { $0.recorded(.awake) }),
      ("unspecified_h", column { $0.recorded(.unspecified) }),
      ("asleep_h", column { $0.recorded(.asleep) }),
      ("in_bed_h", column(\.inBed)),
      ("bedtime", .array(nights.map { Self.minuteText(main[$0.date]?.tally.sleepStart, rules) })),
      ("wake", .array(nights.map { Self.minuteText(main[$0.date]?.tally.sleepEnd, rules) })),
    ])
  }

  private func heartRateSection(_ rules: ZoneRules) -> ReportJSON {
    // As `stats/heart-rate-per-minute.csv` writes `max`.
    let precision = Self.csvPrecision(Self.heartRateStatistic.type, Self.heartRateStatistic.option)
    let days: [ReportJSON] = inputs.heartRate.map { day in
      let midnight = rules.firstInstant(atOrAfterLocal: day.day * 86_400)
      var offsets: [[Int64]] = [[0, Int64(rules.offset(at: midnight)) / 60]]
      var minutes: [ReportJSON] = []
      for start in day.starts {
        let minute = floorDiv(start - midnight.seconds, 60)
        let offset = Int64(rules.offset(at: Instant(seconds: start))) / 60
        if offset != offsets[offsets.count - 1][1] { offsets.append([minute, offset]) }
        minutes.append(.integer(minute))
      }
      return .object([
        ("date", .string(CivilDate(daysSinceEpoch: day.day).description)),
        ("minute", .array(minutes)),
        ("bpm_max", .array(day.values.map { ReportJSON.rounded($0, csv: precision, places: 1) })),
        ("utc_offsets", .array(offsets.map { .array($0.map { ReportJSON.integer($0) }) })),
      ])
    }
    return .object([("days_limit", .integer(Int64(Self.heartRateDays))), ("days", .array(days))])
  }

  /// One pass over the summaries in scratch (DATA.md, "workouts"): each column goes to a scratch
  /// file of its own as the summaries are read, then into the page, so that the report holds no
  /// workout in memory.
  private func workoutsSection(_ rules: ZoneRules) -> ReportJSON {
    let rows = inputs.workouts.rows
    func precision(_ table: TableSchema, _ name: String) -> NumberPrecision {
      table.columns.first { $0.name == name }?.precision ?? .asRecorded
    }
    let table = WorkoutTables.workouts.schema
    let laps = WorkoutTables.laps.schema
    func number(_ value: @escaping (WorkoutSummary) -> Double?, _ name: String, places: Int) -> (WorkoutSummary) ->
      ReportJSON
    {
      let written = precision(table, name)
      return { ReportJSON.rounded(value($0), csv: written, places: places) }
    }
    let lapDistance = precision(laps, "distance_m")
    let lapStrokes = precision(laps, "strokes")
    let lapSwolf = precision(laps, "swolf")
    let columns: [(key: String, value: (WorkoutSummary) -> ReportJSON)] = [
      ("id", { .string($0.id) }),
      ("type", { .string($0.activityType) }),
      ("start", { Self.minuteText($0.start, rules) }),
      ("duration_s", number(\.durationSeconds, "duration_s", places: 0)),
      ("distance_m", number(\.distanceMeters, "distance_m", places: 1)),
      ("energy_kcal", number(\.energyKilocalories, "energy_kcal", places: 1)),
      ("hr_avg", number(\.heartRateAverage, "hr_avg", places: 1)),
      ("hr_max", number(\.heartRateMaximum, "hr_max", places: 1)),
      (
        "laps",
        { row in
          guard !row.laps.isEmpty else { return .null }
          return .object([
            ("duration_s", .array(row.laps.map { .integer($0.end - $0.start) })),
            ("distance_m", .array(row.laps.map { .rounded($0.distanceMeters, csv: lapDistance, places: 1) })),
            ("strokes", .array(row.laps.map { .rounded($0.strokes, csv: lapStrokes, places: 0) })),
            ("style", .array(row.laps.map { .string($0.style.name) })),
            ("swolf", .array(row.laps.map { .rounded($0.swolf, csv: lapSwolf, places: 1) })),
          ])
        }
      ),
      ("route", Self.route),
    ]
    let transaction = transaction
    return .streamed(
      .init { (writer) throws(OutputError) in
        let name = "report-workouts-" + UUID().uuidString + "-"
        let files = columns.indices.map { RecordScratch<UInt8>(transaction: transaction, name: name + String($0)) }
        var cell = ReportJSON.Writer()
        try rows.forEach { (row) throws(OutputError) in
          for (index, column) in columns.enumerated() {
            cell.clear()
            if files[index].count > 0 { cell.append(UInt8(ascii: ",")) }
            try column.value(row).write(to: &cell)
            files[index].append(contentsOf: cell.bytes)
          }
        }
        writer.append(UInt8(ascii: "{"))
        var piece: [UInt8] = []
        for (index, column) in columns.enumerated() {
          if index > 0 { writer.append(UInt8(ascii: ",")) }
          writer.appendString(column.key)
          writer.append(Array(":[".utf8))
          var offset = 0
          while offset < files[index].count {
            let length = min(ReportJSON.Writer.pieceBytes, files[index].count - offset)
            try files[index].read(first: offset, count: length, into: &piece)
            writer.append(piece)
            try writer.flushIfFull()
            offset += length
          }
          writer.append(UInt8(ascii: "]"))
        }
        writer.append(UInt8(ascii: "}"))
      })
  }

  /// How a statistics file writes `option` of `type`.
  static func csvPrecision(_ type: String, _ option: StatisticsOption) -> NumberPrecision {
    StatisticsTables.column(for: option, unit: SampleTypeInfo.canonicalUnit(ofShortName: type)).precision
  }

  /// The route's outline (DATA.md, "workouts"): `[[lat, lon], …]`, 5 decimals; null without one.
  static func route(_ row: WorkoutSummary) -> ReportJSON {
    guard let shape = row.routeShape else { return .null }
    return .array(
      shape.map {
        .array([
          .rounded($0.latitude, csv: .asRecorded, places: 5), .rounded($0.longitude, csv: .asRecorded, places: 5),
        ])
      })
  }

  private func qualitySection(_ catalog: SampleCatalog) -> ReportJSON {
    // Per type id: its sources' distinct samples.
    var perTypeID: [Int: [(source: Int32, samples: Int)]] = [:]
    for pair in 0..<samplePairs.count {
      let (type, source) = samplePairs.pair(pair)
      perTypeID[Int(type), default: []].append((source, sampleCounts[pair]))
    }
    var typeIDs: [String: Int] = [:]
    for id in 0..<catalog.typeCount { typeIDs[catalog.typeInfo(Int32(id)).shortName] = id }
    let typeCounts: [String: (distinct: Int, duplicates: Int)] =
      header.map { $0.types.mapValues { ($0.distinct, $0.duplicates) } }
      ?? typeIDs.mapValues { id in ((perTypeID[id] ?? []).reduce(0) { $0 + $1.samples }, 0) }
    let byteOrder: (String, String) -> Bool = { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    let names = typeCounts.keys.sorted {
      typeCounts[$0]!.distinct != typeCounts[$1]!.distinct
        ? typeCounts[$0]!.distinct > typeCounts[$1]!.distinct : byteOrder($0, $1)
    }
    let types: [ReportJSON] = names.map { name in
      let merged = typeIDs[name].flatMap { catalog.typeInfo(Int32($0)).aggregation?.isCumulative } ?? false
      let sources = typeIDs[name].flatMap { perTypeID[$0] } ?? []
      return .object([
        ("type", .string(name)),
        ("samples", .integer(Int64(typeCounts[name]!.distinct))),
        ("duplicates", .integer(Int64(typeCounts[name]!.duplicates))),
        ("overlapping", .integer(quality.overlapping[name] ?? otherQuality.overlapping[name])),
        ("merged", .bool(merged)),
        (
          "sources",
          sourceRows(
            sources.map { (name: catalog.sourceName($0.source), samples: $0.samples) },
            shares: merged ? quality.shares[name] ?? otherQuality.shares[name] ?? [] : nil)
        ),
      ])
    }
    let header = header ?? ExportOverview()
    let reasons = header.rejectedCounts.keys.sorted {
      header.rejectedCounts[$0]! != header.rejectedCounts[$1]!
        ? header.rejectedCounts[$0]! > header.rejectedCounts[$1]! : byteOrder($0, $1)
    }
    let rejected: [ReportJSON] = reasons.map { reason in
      .object([
        ("reason", .string(reason)),
        ("count", .integer(Int64(header.rejectedCounts[reason]!))),
        (
          "examples",
          .array(
            (header.rejectedExamples[reason] ?? []).prefix(5).map { example in
              .object([
                ("line", .integer(Int64(example.line))), ("element", .string(example.element)),
                ("detail", .string(example.detail)),
              ])
            })
        ),
      ])
    }
    return .object([("types", .array(types)), ("rejected", .array(rejected))])
  }

  /// DATA.md, `also_in_export`: every type with samples that no chart draws, most samples first
  /// (then by name), with the `daily.csv` column that holds it, if any, and the file of the
  /// `samples` pipeline that has every one of its samples.
  private func alsoInExportSection(_ catalog: SampleCatalog) -> ReportJSON {
    var counts: [String: Int] = [:]
    if let header {
      for (name, type) in header.types where type.distinct > 0 { counts[name] = type.distinct }
    } else {
      for pair in 0..<samplePairs.count {
        counts[catalog.typeInfo(samplePairs.pair(pair).0).shortName, default: 0] += sampleCounts[pair]
      }
    }
    var dailyColumns: [String: String] = [:]
    for measure in DailyMeasure.allCases {
      guard let key = measure.statistic, dailyColumns[key.type] == nil else { continue }
      dailyColumns[key.type] = DailyTables.daily().schema.columns[measure.rawValue + 1].name
    }
    // The samples pipeline names its files from the set of all the run's type names.
    let files = ContentFileNames.paths(
      for: counts.keys, in: SampleMart.Destination.perTypeCSV.file, placeholder: "{type}")
    let names = counts.keys.filter { !Self.chartedTypes.contains($0) }.sorted {
      counts[$0]! != counts[$1]! ? counts[$0]! > counts[$1]! : $0.utf8.lexicographicallyPrecedes($1.utf8)
    }
    return .array(
      names.map { name in
        .object([
          ("type", .string(name)), ("samples", .integer(Int64(counts[name]!))),
          ("daily_column", .string(dailyColumns[name])), ("pipeline", .string("samples")),
          ("file", .string(files[name])),
        ])
      })
  }

  /// One type's `sources` (DATA.md, "quality"): the `sourcesPerType` with the most samples (then
  /// by name), and when there are more, one row for all the others, so the rows still add up to
  /// the type's samples and merged sum. `shares` is nil for a type that is not merged.
  private func sourceRows(_ sources: [(name: String, samples: Int)], shares: [ReportQuality.Share]?) -> ReportJSON {
    let listed = sources.sortedPrefix(Self.sourcesPerType) {
      $0.samples != $1.samples ? $0.samples > $1.samples : $0.name.utf8.lexicographicallyPrecedes($1.name.utf8)
    }
    var listedShares: [String: ReportQuality.Share] = [:]
    var others = ReportQuality.Share(source: "", total: 0, counted: 0)
    if let shares {
      let listedNames = Set(listed.map(\.name))
      for share in shares {
        if listedNames.contains(share.source) {
          listedShares[share.source] = share
        } else {
          others.total += share.total
          others.counted += share.counted
        }
      }
    }
    func countedShare(_ sums: ReportQuality.Share?) -> ReportJSON {
      guard shares != nil, let sums, sums.total != 0 else { return .null }
      return .rounded(sums.counted / sums.total, csv: .significantDigits(12), places: 3)
    }
    var rows: [ReportJSON] = listed.map { source in
      .object([
        ("name", .string(source.name)), ("samples", .integer(Int64(source.samples))),
        ("counted_share", countedShare(listedShares[source.name])),
      ])
    }
    let folded = sources.count - listed.count
    if folded > 0 {
      let samples = sources.reduce(0) { $0 + $1.samples } - listed.reduce(0) { $0 + $1.samples }
      rows.append(
        .object([
          ("name", .string("\(folded) other sources")), ("samples", .integer(Int64(samples))),
          ("counted_share", countedShare(others)), ("others", .integer(Int64(folded))),
        ]))
    }
    return .array(rows)
  }
}
