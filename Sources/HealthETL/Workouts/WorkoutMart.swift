public import HealthModel

/// Writes the workout outputs (Pipelines/docs/workouts.md, "Workouts"): `workouts.csv` (+
/// `workouts.json`), `workout_records.json` (the server records) and `swim_laps.csv` — or
/// whichever files and formats a pipeline's `workouts` job lists.
///
/// Workouts arrive de-duplicated ("Workout identity"). The HeartRate, SwimmingStrokeCount and
/// DistanceSwimming samples are kept compactly while the export streams, since records come
/// before workouts and in no time order; everything is computed in `finish`, once the run's
/// zone is known.
public final class WorkoutMart: Mart {
  public var provides: [ProductKey] { [ProductKey(WorkoutResults.self), ProductKey(WorkoutServerRecords.self)] }

  /// The tables of a workouts job (the pipeline's `table` names).
  public enum Table: String, MartTable {
    case workouts, records, laps
    case routePoints = "route_points", splits, activities

    public var schema: TableSchema {
      switch self {
      case .workouts: return WorkoutTables.workouts.schema
      case .records: return WorkoutTables.records.schema
      case .laps: return WorkoutTables.laps.schema
      case .routePoints: return WorkoutTables.routePoints.schema
      case .splits: return WorkoutTables.splits.schema
      case .activities: return WorkoutTables.activities.schema
      }
    }
  }

  /// One file the stage writes.
  public typealias Output = TableDestination<Table>

  /// Every table to its default file.
  public static let defaultOutputs = Table.allCases.map { table in
    Output(table: table, file: table.schema.defaultFile, format: TableSchema.format(ofFile: table.schema.defaultFile))
  }

  private let codes: WorkoutCodeTable
  private let outputs: [Output]
  /// The parsed workouts, each in `scratch` from when it is read until its row is built; what
  /// stays in memory is a key per workout (Pipelines/docs/workouts.md, "Memory").
  private let scratch: WorkoutScratch
  private var workouts: [WorkoutKey] = []
  /// The heart-rate windows of the workouts' activities (those without a HeartRate statistic).
  private var activityWindows: [WorkoutSampleIndex.Window] = []
  private var names = SharedNames()
  private var samples: WorkoutSampleIndex
  private let routes: WorkoutRoutesAndSplits

  /// What reading the routes found, for `run.json`; nil when no output needed the routes.
  public var routeReport: RouteReport? { routes.report }
  /// Whether the mart is a job's, whose server records go into the delivery delta and whose
  /// route report into `run.json`; a mart that only provides rows to others is not.
  private let isJobMart: Bool

  /// Whether `rows` keeps every full row of `finish` (for tests); otherwise each row is written
  /// to every table as it is built and dropped (Pipelines/docs/workouts.md, "Memory").
  private let keepsRows: Bool

  /// The rows of the last `finish`, in output order (start, then id), when the mart was made
  /// with `keepsRows`; empty otherwise. Other marts read `WorkoutResults`' summaries.
  public private(set) var rows: [WorkoutRow] = []

  /// The server records of a job's mart, in output order, each in a scratch file from when its
  /// row is built (Pipelines/docs/workouts.md, "Memory"); published as `WorkoutServerRecords`.
  private let serverRecords: WorkoutServerRecordScratch?

  /// - Parameters:
  ///   - transaction: the run's outputs.
  ///   - codes: the server codes (`WorkoutCodeTable.load(path:)` of the job's `codes` file).
  ///   - outputs: the files to write.
  ///   - isJobMart: false for a mart that writes no file and only provides its rows to others.
  ///   - keepsRows: keep every full row in `rows` (tests); memory then grows with the workouts.
  public init(
    transaction: OutputTransaction, codes: WorkoutCodeTable = .shipped, outputs: [Output] = defaultOutputs,
    isJobMart: Bool = true, keepsRows: Bool = false
  ) {
    self.codes = codes
    self.outputs = outputs
    self.isJobMart = isJobMart
    self.keepsRows = keepsRows
    samples = WorkoutSampleIndex(transaction: transaction)
    scratch = WorkoutScratch(transaction: transaction)
    serverRecords = isJobMart ? WorkoutServerRecordScratch(transaction: transaction) : nil
    routes = WorkoutRoutesAndSplits(transaction: transaction, outputs: outputs, wantsShapes: false)
  }

  /// A reader that asks for route shapes (`WorkoutRow.routeShape`, the report's outlines) makes
  /// the mart read the route files even when none of its outputs needs them.
  public func prepare(requests: ProductRequests) {
    routes.wantsShapes = requests.of(WorkoutResults.self).contains(where: \.routeShapes)
  }

  /// The route files are read from now on, on a thread of their own (`RouteFileReadAhead`).
  public func exportOpened(_ export: OpenedExport) {
    routes.exportOpened(export)
  }

  /// Part of the heart rate, swimming and distance samples: those of a workout's (or a split's)
  /// time, which its averages, laps and splits are made of.
  public private(set) var sampleUse: SampleUse?
  /// The workouts worth a look, after `finish` (`WorkoutOddities`).
  public private(set) var oddities: Oddities?

  public var runReportSection: RunReportSection? {
    guard isJobMart, let report = routes.report else { return nil }
    return RunReportSection(key: Self.runReportKey, value: report.jsonObject())
  }

  /// `run.json`'s `routes`: what reading the routes found.
  public static let runReportKey = "routes"

  public func consume(_ sample: borrowing Sample, catalog: SampleCatalog) {
    samples.add(sample, catalog: catalog)
    routes.add(sample, catalog: catalog)
  }

  public func consume(routeLocation: RoutePoint, workout ordinal: Int) {
    routes.add(location: routeLocation, ordinal: ordinal)
  }

  public func consume(_ workout: WorkoutElement) {
    var slim = Self.slim(workout)
    // One copy of each name (an activity type is longer than a string holds inline).
    slim.activityType = names.shared(slim.activityType)
    slim.sourceName = names.shared(slim.sourceName)
    routes.note(slim)
    activityWindows += slim.activities.compactMap(WorkoutRowBuilder.heartRateWindow)
    workouts.append(
      WorkoutKey(
        start: slim.start, end: slim.end, activityType: slim.activityType, sourceName: slim.sourceName,
        ordinal: slim.ordinal, routeFiles: slim.routes.map(\.filePath), place: scratch.append(slim)))
  }

  /// Drops what no output reads, so a long export of interval workouts (hundreds of statistics
  /// per workout inside its activities) stays small: activities keep their times and the
  /// statistics their rows read, without metadata; only Lap events keep their metadata, routes
  /// keep their file.
  static func slim(_ workout: WorkoutElement) -> WorkoutElement {
    var slim = workout
    slim.activities = workout.activities.map { activity in
      var kept = activity
      kept.metadata = []
      kept.events = activity.events.map { event in
        var bare = event
        bare.metadata = []
        return bare
      }
      kept.statistics = activity.statistics.filter(WorkoutRowBuilder.isActivityStatistic)
      return kept
    }
    slim.events = workout.events.map { event in
      var kept = event
      if event.type != WorkoutRowBuilder.lapEventType { kept.metadata = [] }
      return kept
    }
    slim.routes = workout.routes.map { route in
      var kept = WorkoutElement.Route()
      kept.filePath = route.filePath
      return kept
    }
    return slim
  }

  private func usedSamples(_ windows: [WorkoutSampleIndex.Window]) -> SampleUse {
    var use = SampleUse()
    if samples.heartRateType >= 0 { use.use(samples.heartRateType, count: samples.heartRateUsed) }
    let swims = samples.swimSamplesUsed(in: windows)
    if samples.strokeType >= 0 { use.use(samples.strokeType, count: swims.strokes) }
    if samples.swimDistanceType >= 0 { use.use(samples.swimDistanceType, count: swims.distances) }
    for (type, count) in routes.distanceSamplesUsed { use.use(type, count: count) }
    return use
  }

  /// The workouts' indices in output order (start, then id; document order for equal ones), so
  /// that each row can be written as soon as it is built, to every table at once, and dropped.
  /// An id (a SHA-1) is worked out once, and only for workouts that start together.
  private func outputOrder() -> [Int] {
    var order = workouts.indices.sorted { a, b in
      workouts[a].start != workouts[b].start ? workouts[a].start < workouts[b].start : a < b
    }
    var first = 0
    while first < order.count {
      var end = first + 1
      while end < order.count, workouts[order[end]].start == workouts[order[first]].start { end += 1 }
      if end - first > 1 {
        let together = order[first..<end].map { (id: workouts[$0].id, index: $0) }
        let sorted = together.sorted { $0.id != $1.id ? $0.id < $1.id : $0.index < $1.index }
        order.replaceSubrange(first..<end, with: sorted.map(\.index))
      }
      first = end
    }
    return order
  }

  public func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary] {
    samples.sort()
    var written = try routes.prepare(workouts, context: context)
    let windows = workouts.map(\.window)
    try samples.summarizeHeartRate(for: windows + routes.heartRateWindows() + activityWindows)
    activityWindows = []
    sampleUse = usedSamples(windows)
    var builder = WorkoutRowBuilder(
      samples: samples, catalog: context.catalog, codes: codes, runZone: context.zone.rules)
    let order = outputOrder()
    var tables = try WorkoutTableWriters(outputs: outputs, context: context)
    let summaries = WorkoutSummaries(transaction: context.transaction)
    var finder = WorkoutOddities.Finder(rules: context.zone.rules)
    rows = []
    for index in order {
      let workout = try scratch.read(workouts[index].place)
      var row = builder.row(for: workout)
      routes.complete(&row, workout, index: index, heartRate: samples)
      try tables.append(row)
      let summary = WorkoutSummary(row)
      summaries.append(summary)
      finder.see(summary, splitNote: routes.splitNote(index))
      serverRecords?.append(row.serverRecord)
      if keepsRows { rows.append(row) }
    }
    written += try tables.close()
    oddities = finder.found
    workouts = []
    context.products.publish(WorkoutResults(rows: summaries, oddities: finder.found), by: self)
    if let serverRecords { context.products.publish(WorkoutServerRecords(serverRecords), by: self) }
    return written
  }
}

/// Every table of a workouts job open at once, so that each workout's row goes to all of them
/// as soon as it is built. Closing returns the summaries in the job's output order.
private struct WorkoutTableWriters {
  private var workouts: [(position: Int, writer: RowWriter<WorkoutRow>)] = []
  private var records: [(position: Int, writer: RowWriter<WorkoutServerRecord>)] = []
  private var laps: [(position: Int, writer: RowWriter<WorkoutPart<SwimLap>>)] = []
  private var splits: [(position: Int, writer: RowWriter<WorkoutPart<WorkoutSplit>>)] = []
  private var activities: [(position: Int, writer: RowWriter<WorkoutPart<WorkoutActivityRow>>)] = []

  init(outputs: [WorkoutMart.Output], context: MartContext) throws(OutputError) {
    for (position, output) in outputs.enumerated() {
      // Encoded on the pool: the finish builds a workout's laps and splits on the main thread,
      // which paces the time after the parse, and their text took a tenth of it.
      func writer<Row>(_ table: RowTable<Row>) throws(OutputError) -> RowWriter<Row> {
        try context.writer(table, file: output.file, format: output.format, encodeOnThread: true)
      }
      switch output.table {
      case .workouts: workouts.append((position, try writer(WorkoutTables.workouts)))
      case .records: records.append((position, try writer(WorkoutTables.records)))
      case .laps: laps.append((position, try writer(WorkoutTables.laps)))
      case .splits: splits.append((position, try writer(WorkoutTables.splits)))
      case .activities: activities.append((position, try writer(WorkoutTables.activities)))
      case .routePoints: break
      }
    }
  }

  mutating func append(_ row: WorkoutRow) throws(OutputError) {
    for table in workouts.indices { try workouts[table].writer.append(row) }
    for table in records.indices { try records[table].writer.append(row.serverRecord) }
    for table in laps.indices {
      for lap in row.laps { try laps[table].writer.append(WorkoutPart(workoutID: row.id, part: lap)) }
    }
    for table in splits.indices {
      for split in row.splits { try splits[table].writer.append(WorkoutPart(workoutID: row.id, part: split)) }
    }
    for table in activities.indices {
      for activity in row.activityRows {
        try activities[table].writer.append(WorkoutPart(workoutID: row.id, part: activity))
      }
    }
  }

  func close() throws(OutputError) -> [OutputSummary] {
    var closed: [(position: Int, summary: OutputSummary)] = []
    for table in workouts { closed.append((table.position, try table.writer.close())) }
    for table in records { closed.append((table.position, try table.writer.close())) }
    for table in laps { closed.append((table.position, try table.writer.close())) }
    for table in splits { closed.append((table.position, try table.writer.close())) }
    for table in activities { closed.append((table.position, try table.writer.close())) }
    return closed.sorted { $0.position < $1.position }.map(\.summary)
  }
}

/// One copy of each activity type and source name, shared by every workout that has it.
struct SharedNames {
  private var known: Set<String> = []

  mutating func shared(_ name: String) -> String {
    if let kept = known.firstIndex(of: name) { return known[kept] }
    known.insert(name)
    return name
  }
}

/// What a workouts mart computed of each workout, in output order (start, then id).
public struct WorkoutResults: MartProduct {
  public let rows: WorkoutSummaries
  /// The workouts worth a look (Pipelines/docs/nightly.md, "Worth a look").
  public let oddities: Oddities

  public init(rows: WorkoutSummaries = WorkoutSummaries(), oddities: Oddities = Oddities()) {
    self.rows = rows
    self.oddities = oddities
  }

  public struct Request: Sendable {
    /// Each row gets the outline of its first route file (`WorkoutRow.routeShape`).
    public var routeShapes: Bool

    public init(routeShapes: Bool) { self.routeShapes = routeShapes }
  }

  /// The local date of a row and its `duration_s` and `energy_kcal` as `workouts.csv` writes
  /// them, so that totals of them are sums of the file's cells.
  public func written(_ row: WorkoutSummary, zone: ZoneRules) -> (
    date: CivilDate, seconds: Double?, kilocalories: Double?
  ) {
    (
      zone.localDate(at: row.start), row.durationSeconds.map(Self.seconds.rounded),
      row.energyKilocalories.map(Self.energy.rounded)
    )
  }
  private static let seconds = WorkoutTables.column("duration_s").precision
  private static let energy = WorkoutTables.column("energy_kcal").precision
}
