import Foundation
public import HealthModel

/// Sleep per night (Pipelines/docs/sleep.md, "Sleep jobs"): keeps the `SleepAnalysis` samples while
/// the export streams by and, once the run's zone is known, writes the `daily` table
/// (`sleep_daily.csv`) and the `sessions` table (`sleep_sessions.csv`), or whatever files and
/// formats the pipeline's job lists.
///
/// Memory grows with the sleep samples only: one `SleepInterval` (32 bytes) per distinct sample,
/// plus one entry per distinct source, device and manual-entry flag. The work at the end is
/// O(n log n) in them (`SleepNightCalculator`).
public final class SleepMart: Mart {
  public var provides: [ProductKey] { [ProductKey(SleepNights.self)] }

  /// The stage's tables (pipeline `outputs[].table`).
  public enum Table: String, MartTable {
    case daily, sessions

    public var schema: TableSchema {
      switch self {
      case .daily: return SleepTables.daily.schema
      case .sessions: return SleepTables.sessions.schema
      }
    }
  }

  /// One file a table is written to.
  public typealias Destination = TableDestination<Table>

  /// Who wrote a sample: what source priority ranks, before the run's settings are known.
  private struct GroupKey: Hashable {
    var source: Int32
    var device: Int32
    var userEntered: Bool
  }

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
  /// The nights and sessions of the last `finish`, in output order.
  public private(set) var nights: [SleepNightSummary] = []
  public private(set) var sessions: [SleepSessionSummary] = []
  /// SleepAnalysis samples whose value is not a sleep stage (missing or unknown): not used.
  public private(set) var skippedSamples = 0
  /// The type it shows (`SleepAnalysis`).
  public static let sleepType = "SleepAnalysis"
  /// Why a sample of it is not used.
  static let notAStage = "value is not a sleep stage"
  public var sampleUse: SampleUse? { use }
  private var use = SampleUse()
  /// The nights worth a look, after `finish` (`SleepOddities`).
  public private(set) var oddities: Oddities?
  /// Writes each table to the files `destinations` name (a table may go to several, or none).
  public init(destinations: [Destination]) {
    self.destinations = destinations
  }

  /// Writes every table to its default file, with `writeJSON` also to a `.json` beside it.
  public convenience init(writeJSON: Bool = false) {
    var destinations = Table.allCases.map { Destination(table: $0, file: $0.schema.defaultFile, format: .csv) }
    if writeJSON {
      destinations += Table.allCases.map {
        Destination(
          table: $0, file: $0.schema.defaultFile.replacingOccurrences(of: ".csv", with: ".json"), format: .json)
      }
    }
    self.init(destinations: destinations)
  }

  public func consume(_ sample: borrowing Sample, catalog: SampleCatalog) {
    guard sample.kind == .category, isSleepType(sample.type, catalog: catalog) else { return }
    guard let stage = stage(sample.categoryValue, type: sample.type, catalog: catalog) else {
      skippedSamples += 1
      use.setAside(sample.type, reason: Self.notAStage)
      return
    }
    use.use(sample.type)
    let key = GroupKey(
      source: sample.source, device: sample.device,
      userEntered: sample.userEntered)
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
  public func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary] {
    let sourceNames = rankGroups(context)
    let blocks = SleepOddities.blocks(of: intervals)
    let result = SleepNightCalculator.compute(
      &intervals, rules: context.zone.rules, gapMinutes: context.settings.sessionGapMinutes,
      dayBoundaryMinutes: context.settings.dayBoundaryMinutes)
    intervals = []
    nights = result.nights
    sessions = result.sessions
    var found = Oddities()
    let flagged = SleepOddities.flag(
      result, blocks: blocks, sourceNames: sourceNames, rules: context.zone.rules, into: &found)
    oddities = found
    context.products.publish(
      SleepNights(nights: nights, sessions: sessions, flagged: flagged, oddities: found), by: self)
    let sources = WinningSources(sourceNames: sourceNames)
    var written: [OutputSummary] = []
    for destination in destinations {
      func writer<Row>(_ table: RowTable<Row>) throws(OutputError) -> RowWriter<Row> {
        try context.writer(table, file: destination.file, format: destination.format)
      }
      switch destination.table {
      case .daily:
        var daily = try writer(SleepTables.daily)
        for night in result.nights { try daily.append(SleepRow(period: night, sources: sources.names(night.tally))) }
        written.append(try daily.close())
      case .sessions:
        var sessions = try writer(SleepTables.sessions)
        for session in result.sessions {
          try sessions.append(SleepRow(period: session, sources: sources.names(session.tally)))
        }
        written.append(try sessions.close())
      }
    }
    return written
  }

  // MARK: - Per record

  private func isSleepType(_ type: Int32, catalog: SampleCatalog) -> Bool {
    while sleepTypes.count <= Int(type) {
      let isSleep = catalog.typeInfo(Int32(sleepTypes.count)).shortName == Self.sleepType
      if isSleep { use.showsWhole(Int32(sleepTypes.count)) }
      sleepTypes.append(isSleep ? 1 : 0)
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

  // MARK: - At the end

  /// Renumbers every kept sample's group by priority (Pipelines/docs/samples.md, "Source priority";
  /// 0 = highest) under the run's settings, and returns the source name of each numbered group.
  ///
  /// Samples whose (source, device, manual) keys rank equal — the same source on several
  /// software versions of one device class — become one group.
  private func rankGroups(_ context: MartContext) -> [String] {
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

  /// The `sources` column: names of the winning groups by priority, each name once (a source can
  /// be two groups: its own samples and those entered by hand). Nil when nothing won a piece.
  private struct WinningSources {
    let sourceNames: [String]

    func names(_ tally: SleepTally) -> String? {
      var seen = Set<String>()
      var names: [String] = []
      for group in tally.winningGroups where seen.insert(sourceNames[Int(group)]).inserted {
        names.append(sourceNames[Int(group)])
      }
      return names.isEmpty ? nil : names.joined(separator: ";")
    }
  }
}

/// The nights and sessions a sleep mart computed, in output order (date, then start): what marts
/// that show sleep beside other figures read.
public struct SleepNights: MartProduct {
  public let nights: [SleepNightSummary]
  public let sessions: [SleepSessionSummary]
  /// The nights worth a look (Pipelines/docs/nightly.md, "Worth a look"), by date: why, in words.
  /// Their values stay as written; averages leave them out.
  public let flagged: [CivilDate: String]
  /// What the sleep mart flagged, as `run.json` lists it.
  public let oddities: Oddities

  public init(
    nights: [SleepNightSummary], sessions: [SleepSessionSummary], flagged: [CivilDate: String] = [:],
    oddities: Oddities = Oddities()
  ) {
    self.nights = nights
    self.sessions = sessions
    self.flagged = flagged
    self.oddities = oddities
  }
}
