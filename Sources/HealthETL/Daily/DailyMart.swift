public import HealthModel

/// One date of `daily.csv`: every column's value, nil where the file's cell is empty. What other
/// outputs (the report, a chart) read instead of parsing the CSV: `self[measure]` as the cell
/// shows it, `written(measure)` as the output it repeats writes it, for an output that shows the
/// same number to other places.
public struct DailyValues: Sendable, Equatable {
  public let date: CivilDate
  /// By `DailyMeasure.rawValue`, as the source output writes them (in its unit, at its
  /// precision); `bedtime` and `wakeUp` are in `bedtime` / `wakeUp` instead.
  private var numbers: [Double?]
  /// `sleep_start` / `sleep_end` of the night (`bedtime`, `wake_up`).
  public var bedtime: Instant?
  public var wakeUp: Instant?
  /// The columns other subjects add (`DayColumnsProduct`), in table order, as their cells show
  /// them; empty when none has a value on the date.
  private var added: [Double?] = []

  public init(date: CivilDate) {
    self.date = date
    numbers = [Double?](repeating: nil, count: DailyMeasure.allCases.count)
  }

  /// The cell of the `index`th column another subject adds.
  public func contributed(_ index: Int) -> Double? { index < added.count ? added[index] : nil }

  mutating func setContributed(_ index: Int, _ value: Double) {
    if added.count <= index { added += [Double?](repeating: nil, count: index + 1 - added.count) }
    added[index] = value
  }

  /// The cell of a number (or `workouts` count) column: in the column's unit, rounded to its
  /// places; nil for `bedtime` and `wakeUp`.
  public subscript(_ measure: DailyMeasure) -> Double? { numbers[measure.rawValue].map(measure.shown) }

  /// The value behind the cell as the output it repeats writes it (`m`, not `km`; unrounded by
  /// the column). ActivitySummary rings: the attribute's value, in kcal.
  public func written(_ measure: DailyMeasure) -> Double? { numbers[measure.rawValue] }

  mutating func set(_ measure: DailyMeasure, written value: Double) { numbers[measure.rawValue] = value }

  /// Whether any column has a value.
  public var isEmpty: Bool {
    bedtime == nil && wakeUp == nil && numbers.allSatisfy { $0 == nil } && added.allSatisfy { $0 == nil }
  }
}

/// Gathers what the other marts computed, per local date; `DailyMart` writes it.
final class DailyCollector {
  private(set) var days: [CivilDate: DailyValues] = [:]
  /// Unrounded workout totals per date, rounded once when the table is written.
  private var workoutTotals: [CivilDate: (count: Int, seconds: Double?, kilocalories: Double?)] = [:]

  /// The `index`th added column's cell on `date`.
  func setContributed(_ index: Int, on date: CivilDate, _ value: Double) {
    guard value.isFinite else { return }
    days[date, default: DailyValues(date: date)].setContributed(index, value)
  }

  /// `value` as its own output wrote it (in the source unit, rounded to `precision`).
  func set(_ measure: DailyMeasure, on date: CivilDate, written value: Double?, precision: NumberPrecision) {
    guard let value, value.isFinite else { return }
    days[date, default: DailyValues(date: date)].set(measure, written: precision.rounded(value))
  }

  func sleep(_ night: SleepNightSummary) {
    let tally = night.tally
    let seconds: [(DailyMeasure, Int64?)] = [
      (.asleepHours, tally.recorded(.asleep)), (.inBedHours, tally.inBed), (.coreHours, tally.recorded(.core)),
      (.deepHours, tally.recorded(.deep)), (.remHours, tally.recorded(.rem)), (.awakeHours, tally.recorded(.awake)),
    ]
    for (measure, value) in seconds {
      set(measure, on: night.date, written: value.map(Double.init), precision: .asRecorded)
    }
    days[night.date, default: DailyValues(date: night.date)].bedtime = tally.sleepStart
    days[night.date, default: DailyValues(date: night.date)].wakeUp = tally.sleepEnd
  }

  /// A row of `workouts.csv`, with its `duration_s` and `energy_kcal` as that file writes them.
  func workout(on date: CivilDate, seconds: Double?, kilocalories: Double?) {
    var total = workoutTotals[date] ?? (0, nil, nil)
    total.count += 1
    if let seconds, seconds.isFinite { total.seconds = (total.seconds ?? 0) + seconds }
    if let kilocalories, kilocalories.isFinite { total.kilocalories = (total.kilocalories ?? 0) + kilocalories }
    workoutTotals[date] = total
  }

  private static let kilojoules = UnitConversion.forUnit("kJ")

  /// An `ActivitySummary` element: the rings of its `dateComponents` date.
  func activitySummary(_ element: GenericElement) {
    var attributes: [String: String] = [:]
    for (name, value) in element.attributes { attributes[name] = value }
    guard let dateText = attributes["dateComponents"], let date = CivilDate(dateText) else { return }
    // Exports write the Move ring in `Cal` (kilocalories) or, set to kilojoules, `kJ`.
    let energy = attributes["activeEnergyBurnedUnit"] == "kJ" ? Self.kilojoules : nil
    let rings: [(DailyMeasure, String, UnitConversion?)] = [
      (.moveKcal, "activeEnergyBurned", energy), (.moveGoalKcal, "activeEnergyBurnedGoal", energy),
      (.exerciseRingMin, "appleExerciseTime", nil), (.exerciseGoalMin, "appleExerciseTimeGoal", nil),
      (.standHours, "appleStandHours", nil), (.standGoalHours, "appleStandHoursGoal", nil),
    ]
    for (measure, attribute, conversion) in rings {
      guard let text = attributes[attribute], let value = Double(text) else { continue }
      set(measure, on: date, written: conversion?.apply(value) ?? value, precision: .asRecorded)
    }
  }

  /// Every date from the first to the last with a value, in order; dates between without one
  /// are empty rows.
  func table() -> [DailyValues] {
    for (date, total) in workoutTotals {
      set(.workouts, on: date, written: Double(total.count), precision: .asRecorded)
      set(.workoutMinutes, on: date, written: total.seconds, precision: .asRecorded)
      set(.workoutKilocalories, on: date, written: total.kilocalories, precision: .asRecorded)
    }
    workoutTotals = [:]
    let dates = days.values.filter { !$0.isEmpty }.map(\.date)
    guard let first = dates.min(), let last = dates.max() else { return [] }
    return (first.daysSinceEpoch...last.daysSinceEpoch).map { day in
      let date = CivilDate(daysSinceEpoch: day)
      return days[date] ?? DailyValues(date: date)
    }
  }
}

/// Writes `daily.csv` (Pipelines/docs/daily.md, "Daily"): the figures of the sleep, workout and
/// one-day statistics outputs side by side, one row per local date. It reads the nights
/// (`SleepNights`), the workout rows (`WorkoutResults`) and the one-day statistics its columns
/// repeat (`DayStatistics`) and the columns other subjects add (`DayColumnsProduct`), so it
/// finishes after the marts that compute them; when the run has no job that does, the run adds
/// marts that write no file, so the values are the same as with one.
public final class DailyMart: Mart {
  public typealias Destination = TableDestination<Table>

  public enum Table: String, MartTable {
    case daily
    public var schema: TableSchema { DailyTables.daily().schema }
  }

  private let destinations: [Destination]
  /// The products whose columns the table adds after daily's own, and the table with them.
  private let contributions: [any DayColumnsProduct.Type]
  private let table: RowTable<DailyValues>
  /// The blood-pressure samples, for `bp_readings`.
  private var bloodPressure = BloodPressureReadings()
  /// The sound-exposure samples, for the two audio columns.
  private var headphone = SoundLevelDays(typeName: "HeadphoneAudioExposure")
  private var environmental = SoundLevelDays(typeName: "EnvironmentalAudioExposure")
  /// The sound samples the audio columns took in: no other mart computes them (the other columns'
  /// samples are counted by the statistics that compute them), so without this the run would call
  /// them not shown (Pipelines/docs/nightly.md, "Every record accounted for").
  private var use = SampleUse()
  private let collector = DailyCollector()
  /// One source's overlapping samples, seen as the statistics merge their streams.
  private let overlaps = OverlapWatch()
  /// The days worth a look, after `finish` (`DailyOddities`).
  public private(set) var oddities: Oddities?

  /// The rows of the last `finish`, in date order: for outputs built on the daily figures.
  public private(set) var days: [DailyValues] = []

  /// - Parameter contributions: the products of other subjects whose columns the table adds.
  public init(destinations: [Destination], contributions: [any DayColumnsProduct.Type] = []) {
    self.destinations = destinations
    self.contributions = contributions
    table = DailyTables.daily(adding: contributions)
  }

  public var provides: [ProductKey] { [ProductKey(DailyDays.self)] }
  public var sampleUse: SampleUse? { use }

  /// The types whose every sample a daily table shows: those of its one-day statistics (counted
  /// by the statistics mart that computes them) and its contributions' (counted by their marts).
  public static func typesShown(adding contributions: [any DayColumnsProduct.Type]) -> Set<String> {
    Set(DailyMeasure.allCases.compactMap(\.statistic?.type) + contributions.flatMap { $0.sampleTypes })
  }

  public var needs: [ProductNeed] {
    [
      ProductNeed(SleepNights.self), ProductNeed(WorkoutResults.self, request: .init(routeShapes: false)),
      ProductNeed(DayStatistics.self, request: .init(keys: DailyMeasure.allCases.compactMap(\.statistic))),
      ProductNeed(MergedStreams.self, request: .init(observer: overlaps)),
    ] + contributions.map { ProductNeed($0) }
  }

  public func consume(_ sample: borrowing Sample, catalog: SampleCatalog) {
    bloodPressure.add(sample, catalog: catalog)
    let heard = headphone.add(sample, catalog: catalog)
    let around = environmental.add(sample, catalog: catalog)
    if heard || around { use.use(sample.type) }
  }

  public func consume(_ element: GenericElement) {
    if element.name == "ActivitySummary" { collector.activitySummary(element) }
  }

  public func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary] {
    let rules = context.zone.rules
    for night in context.products.read(SleepNights.self)?.nights ?? [] { collector.sleep(night) }
    if let workouts = context.products.read(WorkoutResults.self) {
      try workouts.rows.forEach { row in
        let written = workouts.written(row, zone: rules)
        collector.workout(on: written.date, seconds: written.seconds, kilocalories: written.kilocalories)
      }
    }
    if let statistics = context.products.read(DayStatistics.self) {
      for measure in DailyMeasure.allCases {
        guard let key = measure.statistic, let values = statistics.all[key] else { continue }
        for (date, value) in values { collector.set(measure, on: date, written: value, precision: .asRecorded) }
      }
    }
    var column = 0
    for contribution in contributions {
      let product = context.products.dayColumns(contribution)
      for index in contribution.columns.indices {
        for date in product?.dates ?? [] {
          if let value = product?.value(index, on: date) { collector.setContributed(column, on: date, value) }
        }
        column += 1
      }
    }
    for (date, readings) in bloodPressure.perDate(rules) {
      collector.set(.bloodPressureReadings, on: date, written: Double(readings), precision: .asRecorded)
    }
    // As a statistics file would write a dBASPL value (Pipelines/docs/outputs.md, "Precision").
    let decibels = UnitPrecision.precision(unit: "dBASPL")
    for (date, level) in headphone.levels(rules) {
      collector.set(.headphoneAudio, on: date, written: level, precision: decibels)
    }
    for (date, level) in environmental.levels(rules) {
      collector.set(.environmentalAudio, on: date, written: level, precision: decibels)
    }
    days = collector.table()
    var added: [Column] = []
    for contribution in contributions { added += contribution.columns }
    var found = Oddities()
    let stepDays = DailyOddities.flag(
      statistics: context.products.read(DayStatistics.self), overlaps: overlaps, rules: rules, into: &found)
    oddities = found
    context.products.publish(
      DailyDays(days: days, added: added, oddities: found, overlappingSteps: stepDays), by: self)
    var written: [OutputSummary] = []
    for destination in destinations {
      var writer = try context.writer(table, file: destination.file, format: destination.format)
      for day in days { try writer.append(day) }
      written.append(try writer.close())
    }
    return written
  }
}

/// The rows of `daily.csv`, every date from the first to the last with data, in date order.
public struct DailyDays: MartProduct {
  public let days: [DailyValues]
  /// The columns other subjects add, in order: `added[i]` is `DailyValues.contributed(i)`.
  public let added: [Column]
  /// The days worth a look (Pipelines/docs/nightly.md, "Worth a look").
  public let oddities: Oddities
  /// The dates whose steps one source's overlapping samples made: left out of step averages.
  public let overlappingSteps: Set<CivilDate>

  public init(
    days: [DailyValues], added: [Column] = [], oddities: Oddities = Oddities(),
    overlappingSteps: Set<CivilDate> = []
  ) {
    self.days = days
    self.added = added
    self.oddities = oddities
    self.overlappingSteps = overlappingSteps
  }
}
