import Foundation
public import HealthExtract
import HealthModel
public import RunExecution

/// The jobs of the command line, over one streaming parse each.
public enum ExportRun {
  public struct RunOptions: Sendable {
    public var input: InputSource
    /// `--out`, resolved once (`OutputFolder`) and handed to the check, the lock and the
    /// transaction.
    public var output = OutputFolder("out")
    public var outputDirectory: String {
      get { output.given }
      set { output = OutputFolder(newValue) }
    }
    public var zone: RunZone.Request = .auto
    public var strict = false
    public var allowTruncated = false
    /// `--recover`: read past XML that is not well-formed (Pipelines/docs/input.md, "Bad input").
    public var recover = false
    public var quiet = false
    /// What to compute and write; its settings apply unless overridden (`--tz` via `zone`).
    public var plan: RunPlan
    public var csvByteOrderMark = false
    /// Write `health.xlsx` when the plan has a `daily` job (`--no-workbook` turns it off).
    public var workbook = true
    /// Write `health.sqlite` with the plan's tables (`--no-database` turns it off).
    public var database = true
    /// Set by the nightly batch, which holds the folder's lock itself: the export being processed,
    /// whose records join the night's pending delta.
    public var nightlyEntry: DeliveryState.Export?
    /// The run's threads: the command's executor, handed to every part of the run that starts one.
    public var executor: RunExecutor
    /// How many bytes the outputs may take for the export's size (`--output-budget`).
    public var outputBudget = OutputBudget.standard
    /// The pipelines a user could run besides `plan`'s (the shipped ones, by the name
    /// `--pipeline` takes): the accounting names those that show what this run did not
    /// (Pipelines/docs/nightly.md, "Every record accounted for").
    public var otherPipelines: [(name: String, plan: RunPlan)] = []

    public init(input: InputSource, plan: RunPlan, executor: RunExecutor) {
      self.input = input
      self.plan = plan
      self.executor = executor
    }
  }

  /// Reads the export and counts what it holds (`inspect`, `validate`).
  public static func inspect(
    _ source: InputSource, zone request: RunZone.Request, allowTruncated: Bool = true, recover: Bool = false,
    quiet: Bool = true, executor: RunExecutor
  ) throws(ETLError) -> ExportInventory {
    do { try RunZone.validate(request) } catch { throw .zone(error) }
    let normalizer = RecordNormalizer(stages: [])
    let parse = try parse(
      source, into: normalizer, allowTruncated: allowTruncated, recover: recover, quiet: quiet, executor: executor)
    let zone: RunZone
    do { zone = try RunZone.resolve(request, facts: normalizer.facts) } catch { throw .zone(error) }
    return ExportInventory(
      input: parse.info, normalizer: normalizer, read: parse.summary, zone: zone, seconds: parse.seconds)
  }

  /// Runs the jobs and writes the outputs atomically, with `run.json`.
  public static func run(_ options: RunOptions) throws(ETLError) -> RunReport {
    let started = ContinuousClock.now
    do { try RunZone.validate(options.zone) } catch { throw .zone(error) }
    try checkBeforeWriting(options)
    var lock: OutputLock?
    if options.nightlyEntry == nil {
      do { lock = try OutputLock(options.output) } catch { throw .output(error) }
    }
    defer { lock?.release() }
    // A state that cannot be read stops the run before the export is read.
    var delivery: DeliveryState
    do { delivery = try DeliveryState.load(from: options.outputDirectory) } catch { throw .state(error) }
    let transaction: OutputTransaction
    do { transaction = try OutputTransaction(options.output) } catch { throw .output(error) }
    var committed = false
    defer { if !committed { transaction.abandon() } }

    // Before the marts: a mart that keeps rows until the zone is known keeps them for it too.
    let executor = options.executor
    let tableSinks = TableSinks()
    var database: RunDatabase?
    let databaseTables = Self.databaseEntries(options.plan)
    if options.database, !databaseTables.isEmpty {
      do {
        database = try RunDatabase.start(on: executor, transaction: transaction, entries: databaseTables)
      } catch {
        throw .output(error)
      }
      tableSinks.add(database!)
    }
    // Who runs what. Main thread: the marts (`MartGraph`) take the samples as they stream, then
    // finish in the graph's order. Dedicated threads of the run's executor (`RunExecutor`):
    // the libxml2 parse and the read-ahead (inside `parse`; the read-ahead also hashes an export
    // XML as it reads it), the SHA-256 of a zip (`InputDigest`), health.xlsx (`RunWorkbook`) and
    // health.sqlite (`RunDatabase`). Its pool: the long tables' rows (`RowEncodingLane`).
    let marts: RunMarts
    do {
      marts = try MartGraph.marts(
        for: options.plan,
        build: MartBuild(
          transaction: transaction, tableSinks: tableSinks, pipelines: options.plan.pipelines.map(\.path)))
    } catch {
      throw .pipeline(error)
    }
    let normalizer = RecordNormalizer(stages: marts.marts)
    var digest: InputDigest?
    // On every way out (a bad export, a full disk) the hashing thread is stopped before returning.
    defer { digest?.cancel() }
    // The file as given (the zip itself; for a folder, its export XML); stdin is not hashed. An
    // export XML on disk is hashed by the parse's reader as it reads it; a zip on a thread here.
    // The nightly batch has hashed the export already (its key in the state): not again.
    let knownSHA256 = options.nightlyEntry?.sha256
    let hasher: (@Sendable () -> any InputHasher)?
    if knownSHA256 == nil { hasher = { @Sendable () -> any InputHasher in InputSHA256() } } else { hasher = nil }
    // The budget is the export's size: the file's, or its XML's when larger (a zip's XML as
    // declared while it is read, as read once it has been). Standard input's is known at the end.
    let meter = transaction.meter
    let parse = try parse(
      options.input, into: normalizer, allowTruncated: options.allowTruncated, recover: options.recover,
      quiet: options.quiet, hashingInput: hasher, executor: executor, outputFolder: transaction.outputDirectory
    ) { info in
      if knownSHA256 == nil, info.form == .zip { digest = InputDigest.start(path: info.path, on: executor) }
      let opened = OpenedExport(
        companions: ExportInput.companions(of: info, outputFolder: transaction.outputDirectory), executor: executor,
        transaction: transaction)
      for mart in marts.marts { mart.exportOpened(opened) }
      if info.inputBytes != nil || info.xmlBytesExpected != nil {
        meter.apply(options.outputBudget, inputBytes: max(info.inputBytes ?? 0, info.xmlBytesExpected ?? 0))
      }
    }
    meter.apply(options.outputBudget, inputBytes: max(parse.info.inputBytes ?? 0, parse.summary.xmlBytes))
    if knownSHA256 == nil, parse.summary.inputSHA256 == nil, digest == nil {
      // Not hashed as read (the parse stopped early, or the folder's export is a zip in
      // disguise): read again.
      switch parse.info.form {
      case .xml: digest = InputDigest.start(path: parse.info.path, on: executor)
      case .directory: digest = InputDigest.start(path: parse.info.memberName, on: executor)
      case .zip, .standardInput, .memory: break
      }
    }
    if options.strict { try refuseRejections(normalizer.rejections) }
    try refuseNothingUsable(normalizer)
    let zone: RunZone
    do { zone = try RunZone.resolve(options.zone, facts: normalizer.facts) } catch { throw .zone(error) }
    let inventory = ExportInventory(
      input: parse.info, normalizer: normalizer, read: parse.summary, zone: zone, seconds: parse.seconds)
    var report = RunReport(inventory: inventory)
    report.pipelines = options.plan.pipelines.map { ["name": $0.name, "path": $0.path] }
    report.jobs = options.plan.jobs.count
    var settings = options.plan.settings
    settings.csvByteOrderMark = options.csvByteOrderMark
    do {
      var workbook: RunWorkbook?
      if options.workbook, let chartJob = Self.workbookChartJob(options.plan) {
        let sheets = Self.workbookSheets(options.plan)
        workbook = try RunWorkbook.start(
          on: executor, transaction: transaction, plan: sheets.sheets, leftToCSV: sheets.leftToCSV, zone: zone.rules,
          created: normalizer.facts.exportDate, charts: chartJob.charts, chartsFrom: chartJob.file)
        tableSinks.add(workbook!)
      }
      let context = MartContext(
        zone: zone, catalog: normalizer.catalog, transaction: transaction, settings: settings, input: parse.info,
        export: Self.exportOverview(inventory), tableSinks: tableSinks, executor: executor, products: marts.products)
      try load(
        marts, context: context, parseSeconds: parse.seconds, delivery: &delivery, nightlyEntry: options.nightlyEntry,
        sections: JobKinds.all.flatMap(\.runReportSections), into: &report
      ) {
        workbook?.startClosing()
        database?.startClosing()
      }
      account(for: normalizer, marts: marts.marts, options: options, zone: zone, into: &report)
      if let workbook {
        // Only the wait: the file was written on the workbook's thread while the report was.
        let closeStarted = ContinuousClock.now
        let summary = try workbook.closed()
        report.outputs.append(
          .init(
            path: RunWorkbook.file, rows: summary.sheets.reduce(0) { $0 + $1.dataRows },
            bytes: fileSize(transaction.stagedPath(RunWorkbook.file))))
        report.workbook = RunReport.Workbook(summary: summary, leftToCSV: workbook.leftToCSV)
        report.stageSeconds["workbook"] = ProgressReporter.seconds(ContinuousClock.now - closeStarted)
      }
      if let database {
        let closeStarted = ContinuousClock.now
        let summary = try database.closed(transaction)
        report.outputs.append(
          .init(
            path: RunDatabase.file, rows: summary.tables.reduce(0) { $0 + $1.rows },
            bytes: fileSize(transaction.stagedPath(RunDatabase.file))))
        report.outputs.append(
          .init(
            path: RunDatabase.metadataFile, rows: 0, bytes: fileSize(transaction.stagedPath(RunDatabase.metadataFile))))
        report.stageSeconds["database"] = ProgressReporter.seconds(ContinuousClock.now - closeStarted)
      }
      // Waited for only now: the marts' finish runs on one core, the hash on the other.
      report.inputSHA256 = knownSHA256 ?? parse.summary.inputSHA256 ?? digest?.wait()
      report.totalSeconds = ProgressReporter.seconds(ContinuousClock.now - started)
      report.peakMemoryMB = peakMemoryMB()
      let reportFile = try transaction.create(ToolFiles.runReport)
      try reportFile.write(report.json())
      try reportFile.close()
      try transaction.commit()
      committed = true
    } catch {
      throw .output(error)
    }
    return report
  }

  /// `run.json`'s `accounting` (every record accounted for) and `worthALook` (what the marts
  /// flagged), with their lines for the end of the run.
  static func account(
    for normalizer: RecordNormalizer, marts: [any Mart], options: RunOptions, zone: RunZone,
    into report: inout RunReport
  ) {
    let ran = Set(options.plan.pipelines.map { URL(fileURLWithPath: $0.path).standardizedFileURL.path })
    let others = options.otherPipelines.filter {
      !$0.plan.pipelines.contains { ran.contains(URL(fileURLWithPath: $0.path).standardizedFileURL.path) }
    }
    .sorted { ($0.name == "samples" ? 1 : 0, $0.name) < ($1.name == "samples" ? 1 : 0, $1.name) }
    .map { other in
      RecordAccounting.Pipeline(name: other.name) { type in other.plan.jobs.contains { $0.work.shows(type: type) } }
    }
    let accounting = RecordAccounting(normalizer: normalizer, uses: marts.compactMap(\.sampleUse), others: others)
    report.sections["accounting"] = accounting.jsonObject()
    report.summaryLines += accounting.summaryLines
    var oddities = Oddities()
    for mart in marts { if let found = mart.oddities { oddities.add(found) } }
    report.sections["worthALook"] = WorthALook.jsonObject(oddities)
    if let line = WorthALook.summaryLine(oddities) { report.summaryLines.append(line) }
  }

  /// What marts see of the inventory (the report: Pipelines/report/DATA.md, "export" and
  /// "quality").
  static func exportOverview(_ inventory: ExportInventory) -> ExportOverview {
    var header = ExportOverview()
    header.exportDate = inventory.facts.exportDate
    header.exportVersion = inventory.facts.exportVersion
    header.locale = inventory.facts.locale
    header.timeZoneReason = inventory.zone.reason
    header.recovered = inventory.read.recovery.flatMap { $0.summary() }
    header.first = inventory.facts.first
    header.last = inventory.facts.last
    header.sources = inventory.sources
    header.sourcesOmitted = inventory.sourcesOmitted
    header.devices = inventory.deviceModels
    header.devicesOmitted = inventory.deviceModelsOmitted
    header.types = inventory.types
    header.workoutCopies = inventory.workoutCopies
    header.rejectedCounts = inventory.rejections.counts
    header.rejectedExamples = inventory.rejections.examples.mapValues { examples in
      examples.map { ($0.line, $0.element, $0.detail) }
    }
    return header
  }

  /// The sheets of `health.xlsx`, in the plan's order: each table that can be a sheet, fed by
  /// its first output; tables whose rows are parts of a day are left to their files.
  static func workbookSheets(_ plan: RunPlan) -> (
    sheets: [RunWorkbook.SheetPlan], leftToCSV: [(file: String, reason: String)]
  ) {
    var sheets: [RunWorkbook.SheetPlan] = []
    var left: [(file: String, reason: String)] = []
    var seen = Set<String>()
    for job in plan.jobs {
      for output in job.outputs {
        guard let schema = job.kind.tables.first(where: { $0.name == output.table }), schema.inWorkbook,
          seen.insert(job.name + "." + output.table).inserted
        else { continue }
        switch job.work.sheet(of: schema, job: job.name) {
        case .sheet(let name, let columns): sheets.append(.init(file: output.file, name: name, columns: columns))
        case .leftToFile(let reason): left.append((output.file, reason))
        }
      }
    }
    return (sheets, left)
  }

  /// The tables of `health.sqlite`, in the plan's order: each table of each job, fed by its
  /// first output (a samples job's by each of its files). Tables whose job keeps them out
  /// (`JobWork.databaseKeys`: elements, whose columns depend on the data, and the report) are not.
  static func databaseEntries(_ plan: RunPlan) -> [RunDatabase.Entry] {
    var entries: [RunDatabase.Entry] = []
    var seen = Set<String>()
    for job in plan.jobs {
      for output in job.outputs {
        guard let schema = job.kind.tables.first(where: { $0.name == output.table }),
          let keys = job.work.databaseKeys(of: schema), seen.insert(job.name + "." + output.table).inserted
        else { continue }
        entries.append(
          .init(file: output.file, job: job.name, table: output.table, rows: schema.rows, keys: keys))
      }
    }
    return entries
  }

  /// The job whose kind charts its first table on the workbook's Charts sheet (`JobKind.
  /// workbookCharts`): the workbook is written when the plan has one (a daily job), and charts
  /// the table of its first output.
  static func workbookChartJob(_ plan: RunPlan) -> (file: String, charts: [[WorkbookChart]])? {
    guard let job = plan.jobs.first(where: { !$0.kind.workbookCharts.isEmpty }) else { return nil }
    return (job.outputs.first?.file ?? "", job.kind.workbookCharts)
  }

  /// `--strict`: the first rejected record in document order fails the run.
  static func refuseRejections(_ rejections: RejectionLog) throws(ETLError) {
    guard rejections.total > 0,
      let (reason, examples) = rejections.examples.min(by: { $0.value[0].line < $1.value[0].line })
    else { return }
    throw .strictRejection(count: rejections.total, first: examples[0], reason: reason)
  }

  /// A run that would write only empty tables fails instead of passing for a success: a file of
  /// another format, or of an export format HealthETL cannot read, shows up here.
  static func refuseNothingUsable(_ normalizer: RecordNormalizer) throws(ETLError) {
    guard normalizer.usableElements == 0 else { return }
    let rejections = normalizer.rejections
    let first = rejections.examples.min { $0.value[0].line < $1.value[0].line }
    throw .nothingUsable(rejected: rejections.total, first: first.map { ($0.key, $0.value[0]) })
  }

  /// The load: every mart computes and writes its tables in the graph's order, then the delivery
  /// state takes this run's workout records into the next delta. `tablesWritten` is called once
  /// every mart that writes tables has finished: before those that write a page from their
  /// results (the report). `sections` are the `run.json` keys the registered kinds' marts may
  /// contribute; each is null unless a mart of the run fills it (the first that does). A key no
  /// kind lists (an opt-in kind's) is there only when a mart fills it.
  static func load(
    _ marts: RunMarts, context: MartContext, parseSeconds: Double, delivery: inout DeliveryState,
    nightlyEntry: DeliveryState.Export?, sections: [String] = [], into report: inout RunReport,
    tablesWritten: () -> Void = {}
  ) throws(OutputError) {
    let started = ContinuousClock.now
    var finishSeconds: [String: Double] = [:]
    let lastTableMart = marts.marts.lastIndex { $0.writesTables }
    var tablesDone = lastTableMart == nil
    if tablesDone { tablesWritten() }
    for (index, mart) in marts.marts.enumerated() {
      let martStarted = ContinuousClock.now
      for output in try mart.finish(context) {
        report.outputs.append(
          .init(
            path: output.path, rows: output.rows, bytes: fileSize(context.transaction.stagedPath(output.path)),
            name: output.name))
      }
      finishSeconds["finish " + String(describing: type(of: mart)), default: 0] +=
        ProgressReporter.seconds(ContinuousClock.now - martStarted)
      if !tablesDone, index == lastTableMart {
        tablesDone = true
        tablesWritten()
      }
    }
    for key in sections where report.sections[key] == nil { report.sections[key] = NSNull() }
    for mart in marts.marts {
      guard let section = mart.runReportSection,
        report.sections[section.key] == nil || report.sections[section.key] is NSNull
      else { continue }
      report.sections[section.key] = section.value
      if let line = section.summaryLine { report.summaryLines.append(line) }
    }
    // Every workouts job's records, in the order of the jobs; none when the run has no workouts
    // job. They wait in scratch files and are read from there (Pipelines/docs/workouts.md, "Memory").
    let records = marts.products.all(WorkoutServerRecords.self)
    if let entry = nightlyEntry {
      // One export of a night: its records join the night's delta, which is final at the end.
      delivery.processed.append(entry)
      delivery.failing.removeAll { $0.export.sha256 == entry.sha256 }
      delivery.attempt = nil
      let delta = try delivery.commitDelta(adding: records, final: false, to: context.transaction)
      report.delta = .init(
        sequence: delta.sequence, final: false, records: delivery.pending.count, fresh: delta.fresh)
    } else if !records.isEmpty {
      let pending = delivery.pending.count
      // Nothing reads the state after this: the fresh records go to its file, not into memory.
      let delta = try delivery.commitFinalDelta(adding: records, to: context.transaction)
      report.delta = .init(sequence: delta.sequence, final: true, records: pending + delta.fresh, fresh: delta.fresh)
    }
    // Marts consume samples while the export streams (inside "extract+transform"), then
    // compute and write in their own finish; "load" is all of the latter plus the commit.
    report.stageSeconds = finishSeconds.merging([
      "extract+transform": parseSeconds, "load": ProgressReporter.seconds(ContinuousClock.now - started),
    ]) { $1 }
  }

  struct Parse {
    var info: InputInfo
    var summary: ReadSummary
    var seconds: Double
  }

  /// One streaming parse of `source` into `normalizer`, libxml2 on a reader thread; `outputFolder`,
  /// the run's, is no file of the export.
  static func parse(
    _ source: InputSource, into normalizer: RecordNormalizer, allowTruncated: Bool, recover: Bool = false,
    quiet: Bool, hashingInput hasher: (@Sendable () -> any InputHasher)? = nil, executor: RunExecutor,
    outputFolder: String? = nil, opened: (InputInfo) -> Void = { _ in }
  ) throws(ETLError) -> Parse {
    let progress = ProgressReporter(quiet: quiet)
    let started = ContinuousClock.now
    var info: InputInfo?
    let summary: ReadSummary
    do {
      // The only read of the export in a run: every job of every pipeline is fed from it.
      summary = try ExportStream(
        source: source, allowTruncated: allowTruncated, recover: recover, hashingInput: hasher, executor: executor
      ).read(
        into: normalizer,
        opened: {
          opened($0); info = $0
        },
        progress: { progress.update($0) })
    } catch {
      progress.done()
      throw .extract(error)
    }
    // Whatever the run's pipelines: what no kind of job could read (Pipelines/README.md, "What was
    // not read").
    if let info {
      normalizer.countNotReadFiles(
        of: info, claims: JobKinds.all.flatMap(\.filesRead), outputFolder: outputFolder)
    }
    progress.done()
    if let failure = normalizer.deduplicationFailure {
      throw .output(.writing(NSTemporaryDirectory(), reason: failure.reason, code: failure.code))
    }
    normalizer.noteExportVersion(summary.exportVersion)
    return Parse(info: info!, summary: summary, seconds: ProgressReporter.seconds(ContinuousClock.now - started))
  }

  static func fileSize(_ path: String) -> Int64 {
    var info = stat()
    return stat(path, &info) == 0 ? Int64(info.st_size) : 0
  }

  /// Peak resident set size of this process so far, in MB.
  public static func peakMemoryMB() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
  }
}
