import HealthModel

/// Sleep per night (SPEC §6): keeps the `SleepAnalysis` samples while the export streams by and,
/// once the run's zone is known, writes the `daily` table (`sleep_daily.csv`) and the `sessions`
/// table (`sleep_sessions.csv`), or whatever files and formats the pipeline's job lists.
///
/// Memory grows with the sleep samples only: one `SleepInterval` (32 bytes) per distinct sample,
/// plus one entry per distinct source, device and manual-entry flag. The work at the end is
/// O(n log n) in them (`SleepNightCalculator`).
public final class SleepMart: OutputStage {
  /// The `daily` table, in SPEC §6.6 order.
  public static let dailyColumns = [
    "date", "asleep_s", "core_s", "deep_s", "rem_s", "unspecified_s", "awake_s", "in_bed_s", "sleep_start",
    "sleep_end", "sessions", "sources",
  ]
  /// The `sessions` table: when the session was and its date, then the measures of the daily
  /// table (without `sessions`, always 1 here).
  public static let sessionColumns = [
    "session_start", "session_end", "date", "asleep_s", "core_s", "deep_s", "rem_s", "unspecified_s", "awake_s",
    "in_bed_s", "sleep_start", "sleep_end", "sources",
  ]

  /// The stage's tables (pipeline `outputs[].table`).
  public enum Table: String, Sendable, CaseIterable {
    case daily, sessions

    public var columns: [String] {
      switch self {
      case .daily: return SleepMart.dailyColumns
      case .sessions: return SleepMart.sessionColumns
      }
    }

    /// Seconds and counts are JSON numbers; dates, instants and sources are strings.
    var kinds: [ColumnKind] {
      columns.map { $0.hasSuffix("_s") || $0 == "sessions" ? .number : .text }
    }
  }

  /// One file a table is written to.
  public typealias Destination = TableDestination<Table>

  /// Who wrote a sample: what SPEC §5 ranks, before the run's settings are known.
  private struct GroupKey: Hashable {
    var source: Int32
    var device: Int32
    var userEntered: Bool
  }

  private let transaction: OutputTransaction
  private let destinations: [Destination]
  /// Kept samples; `group` indexes `groupKeys` until `finish` renumbers it by priority.
  private var intervals: [SleepInterval] = []
  private var groupKeys: [GroupKey] = []
  private var groupIDs: [GroupKey: Int32] = [:]
  // Per-id answers worked out once, so the per-record path is an array lookup.
  /// By type id: 1 = SleepAnalysis, 0 = another type.
  private var sleepTypes: [Int8] = []
  /// By category value id: the SleepStage raw value, -1 for a value that is not a stage, -2 not yet known.
  private var stagesByValue: [Int8] = []
  /// By metadata key id: 1 = `HKWasUserEntered`, 0 = another key.
  private var userEnteredKeys: [Int8] = []
  /// SleepAnalysis samples whose value is not a sleep stage (missing or unknown): not used.
  public private(set) var skippedSamples = 0

  /// Writes each table to the files `destinations` name (a table may go to several, or none).
  public init(transaction: OutputTransaction, destinations: [Destination]) {
    self.transaction = transaction
    self.destinations = destinations
  }

  /// Writes `sleep_daily.csv` and `sleep_sessions.csv`, with `writeJSON` also
  /// `sleep_daily.json` and `sleep_sessions.json`.
  public convenience init(transaction: OutputTransaction, writeJSON: Bool = false) {
    var destinations = [
      Destination(table: .daily, file: "sleep_daily.csv", format: .csv),
      Destination(table: .sessions, file: "sleep_sessions.csv", format: .csv),
    ]
    if writeJSON {
      destinations.append(Destination(table: .daily, file: "sleep_daily.json", format: .json))
      destinations.append(Destination(table: .sessions, file: "sleep_sessions.json", format: .json))
    }
    self.init(transaction: transaction, destinations: destinations)
  }

  public func consume(_ sample: borrowing Sample, catalog: SampleCatalog) {
    guard sample.kind == .category, isSleepType(sample.type, catalog: catalog) else { return }
    guard let stage = stage(sample.categoryValue, type: sample.type, catalog: catalog) else {
      skippedSamples += 1
      return
    }
    let key = GroupKey(
      source: sample.source, device: sample.device,
      userEntered: isUserEntered(sample.metadata, catalog: catalog))
    let group: Int32
    if let known = groupIDs[key] {
      group = known
    } else {
      group = Int32(groupKeys.count)
      groupKeys.append(key)
      groupIDs[key] = group
    }
    intervals.append(
      SleepInterval(start: sample.start, end: sample.end, created: sample.created, stage: stage, group: group))
  }

  /// Ranks the groups, computes sessions and nights, and writes the tables.
  public func finish(_ context: StageContext) throws(OutputError) -> [OutputSummary] {
    let sourceNames = rankGroups(context)
    let result = SleepNightCalculator.compute(
      &intervals, rules: context.zone.rules, gapMinutes: context.settings.sessionGapMinutes,
      dayBoundaryMinutes: context.settings.dayBoundaryMinutes)
    intervals = []
    let format = RowFormat(rules: context.zone.rules, sourceNames: sourceNames)
    var rows: [Table: [[String?]]] = [:]
    if destinations.contains(where: { $0.table == .daily }) {
      rows[.daily] = result.nights.map { night in
        [night.date.description] + format.measures(night.tally) + [String(night.tally.sessions)]
          + [format.sources(night.tally)]
      }
    }
    if destinations.contains(where: { $0.table == .sessions }) {
      rows[.sessions] = result.sessions.map { session in
        [format.instant(session.start), format.instant(session.end), session.date.description]
          + format.measures(session.tally) + [format.sources(session.tally)]
      }
    }
    var written: [OutputSummary] = []
    for destination in destinations {
      var writer = try TableWriter(
        transaction, path: destination.file, columns: destination.table.columns, kinds: destination.table.kinds,
        format: destination.format, byteOrderMark: context.settings.csvByteOrderMark)
      for row in rows[destination.table] ?? [] { try writer.append(row) }
      written.append(try writer.close())
    }
    return written
  }

  // MARK: - Per record

  private func isSleepType(_ type: Int32, catalog: SampleCatalog) -> Bool {
    while sleepTypes.count <= Int(type) {
      sleepTypes.append(catalog.typeInfo(Int32(sleepTypes.count)).shortName == "SleepAnalysis" ? 1 : 0)
    }
    return sleepTypes[Int(type)] == 1
  }

  /// The stage of a SleepAnalysis value id; both `…Asleep` and `…AsleepUnspecified` are 1.
  private func stage(_ value: Int32, type: Int32, catalog: SampleCatalog) -> SleepStage? {
    guard value >= 0 else { return nil }
    while stagesByValue.count <= Int(value) { stagesByValue.append(-2) }
    if stagesByValue[Int(value)] == -2 {
      let name = catalog.categoryShortName(value: value, type: type)
      stagesByValue[Int(value)] = Int8(SleepStage(shortName: name)?.rawValue ?? -1)
    }
    return SleepStage(rawValue: Int(stagesByValue[Int(value)]))
  }

  /// Whether the metadata holds `HKWasUserEntered` = 1 (SPEC §5).
  private func isUserEntered(_ metadata: MetadataList, catalog: SampleCatalog) -> Bool {
    for index in 0..<metadata.count {
      let key = Int(metadata.key(at: index))
      guard key >= 0 else { continue }
      while userEnteredKeys.count <= key {
        userEnteredKeys.append(catalog.metadataKey(Int32(userEnteredKeys.count)) == "HKWasUserEntered" ? 1 : 0)
      }
      guard userEnteredKeys[key] == 1 else { continue }
      let value = metadata.value(at: index)
      return value.count == 1 && value[0] == UInt8(ascii: "1")
    }
    return false
  }

  // MARK: - At the end

  /// Renumbers every kept sample's group by SPEC §5 priority (0 = highest) under the run's
  /// settings, and returns the source name of each numbered group.
  ///
  /// Samples whose (source, device, manual) keys rank equal — the same source on several
  /// software versions of one device class — become one group.
  private func rankGroups(_ context: StageContext) -> [String] {
    let catalog = context.catalog
    let ranks = groupKeys.map { key in
      context.settings.sourcePriority.rank(
        sourceName: catalog.sourceName(key.source), deviceModel: catalog.device(key.device)?.model,
        userEntered: key.userEntered)
    }
    let ordered = Array(Set(ranks)).sorted()
    var position: [SourcePriority.Rank: Int32] = [:]
    for (index, rank) in ordered.enumerated() { position[rank] = Int32(index) }
    let renumbered = ranks.map { position[$0]! }
    var names = [String](repeating: "", count: ordered.count)
    for (key, group) in zip(groupKeys, renumbered) { names[Int(group)] = catalog.sourceName(key.source) }
    for index in intervals.indices { intervals[index].group = renumbered[Int(intervals[index].group)] }
    return names
  }

  /// Field text shared by both files.
  private struct RowFormat {
    let rules: ZoneRules
    let sourceNames: [String]

    func instant(_ instant: Instant) -> String {
      LocalTimeFormatter.iso8601(instant, offsetSeconds: rules.offset(at: instant))
    }

    /// `asleep_s … sleep_end`, the columns both files share.
    func measures(_ tally: SleepTally) -> [String?] {
      [
        String(tally.asleep), String(tally.core), String(tally.deep), String(tally.rem), String(tally.unspecified),
        String(tally.awake), FieldFormat.seconds(tally.inBed), tally.sleepStart.map(instant),
        tally.sleepEnd.map(instant),
      ]
    }

    /// Names of the winning groups by priority, each name once (a source can be two groups:
    /// its own samples and those entered by hand). Nil when nothing won a piece.
    func sources(_ tally: SleepTally) -> String? {
      var seen = Set<String>()
      var names: [String] = []
      for group in tally.winningGroups where seen.insert(sourceNames[Int(group)]).inserted {
        names.append(sourceNames[Int(group)])
      }
      return names.isEmpty ? nil : names.joined(separator: ";")
    }
  }
}
