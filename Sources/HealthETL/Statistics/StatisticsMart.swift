public import HealthModel

/// Interval statistics (Pipelines/docs/statistics.md, "Interval statistics"): the offline
/// HKStatisticsCollectionQuery, one table per job (`stats/<job name>.csv` by default; csv, json or
/// ndjson files as the pipeline lists), all jobs served by one parse.
///
/// While the export streams, every sample of a type some job asks for is reduced to a 40-byte
/// record (start, end, value, creation, type stream, priority group) and handed to a `SampleSpill`:
/// a bounded buffer written to a scratch file as sorted runs. Nothing is aggregated yet, because
/// the run's zone (`--tz auto`) is decided only at the end of the file and merging sources by
/// priority needs all sources' samples of a stretch of time, which real exports list far apart
/// (all iPhone steps, then all Watch steps; some apps in reverse time order). `finish` k-way merges
/// the runs into one time-ordered stream per type and sweeps it once through every job of that
/// type (`StatisticsSweep`), writing rows as their buckets close.
///
/// Memory: O(buffer + runs + open buckets) — the spill buffer (`bufferCapacity` × 40 bytes,
/// 10 MiB by default), per sorted run a 64 KiB read chunk and 160 KiB of decoded records, and
/// the rows of buckets that samples still reach — never O(samples). Disk: mostly 5–9 bytes per
/// relevant sample (`SpillRunCodec`) in the run's staging folder, removed with it.
///
/// Groups: each record carries its sample's priority group (`SourceGroups`), ranked by the run's
/// source priority only in `finish`.
public final class StatisticsMart: Mart {
  public var provides: [ProductKey] {
    [
      ProductKey(DayStatistics.self), ProductKey(RecentDays.self), ProductKey(MergedStreams.self),
      ProductKey(ClosedBuckets.self),
    ]
  }

  /// 256 Ki records (10 MiB) per sorted run.
  public static let defaultBufferCapacity = 262_144

  /// The jobs, in the order their files are reported; then the queries added for readers
  /// (`prepare`), which write no file.
  public private(set) var jobs: [StatisticsQuery]
  private let transaction: OutputTransaction
  private let spill: SampleSpill
  /// Distinct type short names the queries ask for; the index is the record's `stream`. Final
  /// once `prepare` has run, before the parse.
  private var streamTypes: [String]
  /// Per catalog type id: its stream, -1 when no job wants it, -2 not yet looked at.
  private var typeStreams: [Int32] = []
  /// The spilled samples' priority groups.
  private var groups = SourceGroups()
  /// What readers asked for: one-day values, the last days of a statistic, the merged streams.
  private var dayKeys: [DayStatistics.Key] = []
  private var dayQueries: [StatisticsQuery] = []
  private var tails: [(request: RecentDays.Request, job: Int, option: Int)] = []
  private var readers: [(request: ClosedBuckets.Request, job: Int)] = []
  private var observers: [any StatisticsStreamObserver] = []
  /// Every sample of a streamed type goes into a job's file or a reader's product.
  public var sampleUse: SampleUse? { use }
  private var use = SampleUse()

  /// - Parameters:
  ///   - jobs: validated queries; their files must differ (names may repeat across pipelines).
  ///   - bufferCapacity: records per sorted run (tests make it tiny to force many runs).
  public init(
    jobs: [StatisticsQuery], transaction: OutputTransaction, bufferCapacity: Int = defaultBufferCapacity
  ) throws(StatisticsQueryError) {
    var files = Set<String>()
    for job in jobs {
      for destination in StatisticsTables.destinations(of: job) where !files.insert(destination.file).inserted {
        throw .duplicateName(job: job.name)
      }
    }
    self.jobs = jobs
    self.transaction = transaction
    streamTypes = Self.streamTypes(of: jobs)
    spill = SampleSpill(
      capacity: Swift.max(1, bufferCapacity), transaction: transaction, scratchName: "interval-statistics.runs")
  }

  /// Takes what readers ask for: the one-day values of some statistics (`DayStatistics`), the
  /// last days of a statistic (`RecentDays`) and every closed bucket of one (`ClosedBuckets`),
  /// each computed by a job of the run when one does, else by a query added without files, and
  /// observers of the merged streams.
  public func prepare(requests: ProductRequests) {
    for request in requests.of(DayStatistics.self) {
      for key in request.keys where !dayKeys.contains(key) { dayKeys.append(key) }
    }
    // Built from the readers' constants, so this cannot fail.
    dayQueries = try! Self.dayQueries(dayKeys)
    for request in requests.of(RecentDays.self) {
      let interval = BucketInterval(request.interval)!
      let job =
        jobs.firstIndex {
          $0.type.shortName == request.type && $0.interval == interval && !$0.separateBySource
            && $0.anchor == BucketAnchor.defaultAnchor(for: $0.interval) && $0.options.contains(request.option)
        }
        ?? {
          jobs.append(
            try! StatisticsQuery(
              name: "recent-\(request.type)-\(request.interval)-\(request.option.rawValue)", type: request.type,
              interval: request.interval, options: [request.option.rawValue], destinations: []))
          return jobs.count - 1
        }()
      tails.append((request, job, jobs[job].options.firstIndex(of: request.option)!))
    }
    for request in requests.of(ClosedBuckets.self) {
      readers.append((request, job(for: request)))
    }
    observers = requests.of(MergedStreams.self).map(\.observer)
    streamTypes = Self.streamTypes(of: jobs + dayQueries)
    for observer in observers { observer.willObserve(types: streamTypes) }
  }

  /// The job whose buckets `request` reads: one of the run's with its type, interval and options,
  /// sources merged and the default anchor, else a query added without files. Built from the
  /// reader's constants, so this cannot fail.
  private func job(for request: ClosedBuckets.Request) -> Int {
    let interval = BucketInterval(request.interval)!
    if let existing = jobs.firstIndex(where: {
      $0.type.shortName == request.type && $0.interval == interval && !$0.separateBySource
        && $0.anchor == BucketAnchor.defaultAnchor(for: $0.interval) && request.options.allSatisfy($0.options.contains)
    }) {
      return existing
    }
    jobs.append(
      try! StatisticsQuery(
        name: "closed-\(request.type)-\(request.interval)", type: request.type, interval: interval,
        options: request.options, destinations: []))
    return jobs.count - 1
  }

  /// Spills a sample of a type some job asks for; allocation-free once the buffer exists.
  public func consume(_ sample: borrowing Sample, catalog: SampleCatalog) {
    guard sample.kind == .quantity else { return }
    let stream = streamIndex(sample.type, catalog: catalog)
    guard stream >= 0 else { return }
    guard sample.value.isFinite else { return use.setAside(sample.type, reason: "value is not a number") }
    use.use(sample.type)
    let group = groups.group(of: sample, catalog: catalog)
    spill.append(
      SpillRecord(
        start: sample.start.seconds, end: sample.end.seconds, value: sample.value,
        created: sample.created?.seconds ?? SpillRecord.missingCreation, stream: stream, group: group))
  }

  /// Ranks the groups, merges the spilled runs and writes every job's files.
  public func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary] {
    let catalog = context.catalog
    let groupRanks = groups.rankPositions(context.settings.sourcePriority, catalog: catalog)
    let groupNames = groups.sourceNames(catalog)
    // `separateBySource` rows are per source name, in UTF-8 byte order (sorted only when a job
    // asks for them: with a new source in every record, it is most of the finish).
    var names: [String] = []
    var groupSources = [Int32](repeating: 0, count: groups.count)
    if jobs.contains(where: \.separateBySource) {
      names = Array(Set(groupNames)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
      let namePositions = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, Int32($0)) })
      groupSources = groupNames.map { namePositions[$0]! }
    }

    var sweeps: [StatisticsSweep] = []
    var outputs: [QueryOutput] = []
    /// Per stream, the sweeps its samples go through.
    var streamSweeps = [[StatisticsSweep]](repeating: [], count: streamTypes.count)
    let rules = context.zone.rules
    let days = DayStatistics.Collector(rules: rules)
    let recent = tails.map { RecentDays.Collector(limit: $0.request.days, rules: rules) }
    // The one-day values readers asked for that no job computes.
    var dayNeeds = Set(dayKeys)
    for (jobIndex, job) in jobs.enumerated() {
      let jobTails = tails.indices.filter { tails[$0].job == jobIndex }
      let jobReaders = readers.filter { $0.job == jobIndex }.map { ClosedBuckets.Tap($0.request, query: job) }
      var dayTap: DayStatistics.Tap?
      if Self.isDayShape(job) {
        let tap = DayStatistics.Tap(query: job, wanted: dayNeeds, into: days)
        if tap.isUseful {
          dayNeeds.subtract(tap.keys)
          dayTap = tap
        }
      }
      guard !StatisticsTables.destinations(of: job).isEmpty || !jobTails.isEmpty || dayTap != nil || !jobReaders.isEmpty
      else { continue }
      let output = try QueryOutput(job, context: context)
      outputs.append(output)
      var emit = output.write
      if let dayTap {
        emit = { (bucket: borrowing StatisticsBucket) throws(OutputError) in
          try output.write(bucket)
          dayTap.record(bucket)
        }
      }
      if !jobTails.isEmpty {
        let written = emit
        let taps = jobTails.map { (option: tails[$0].option, into: recent[$0]) }
        emit = { (bucket: borrowing StatisticsBucket) throws(OutputError) in
          try written(bucket)
          for tap in taps {
            if case .number(let value?) = bucket.value(at: tap.option) {
              tap.into.add(start: bucket.start.seconds, value: value)
            }
          }
        }
      }
      if !jobReaders.isEmpty {
        let written = emit
        emit = { (bucket: borrowing StatisticsBucket) throws(OutputError) in
          try written(bucket)
          for reader in jobReaders { try reader.record(bucket) }
        }
      }
      let sweep = StatisticsSweep(
        job: job, rules: rules, groupRanks: groupRanks, groupSources: groupSources, sourceNames: names, emit: emit)
      streamSweeps[streamTypes.firstIndex(of: job.type.shortName)!].append(sweep)
      sweeps.append(sweep)
    }
    for query in dayQueries {
      let tap = DayStatistics.Tap(query: query, wanted: dayNeeds, into: days)
      guard tap.isUseful else { continue }
      let sweep = StatisticsSweep(
        job: query, rules: rules, groupRanks: groupRanks, groupSources: groupSources, sourceNames: names,
        emit: tap.record)
      streamSweeps[streamTypes.firstIndex(of: query.type.shortName)!].append(sweep)
      sweeps.append(sweep)
    }
    for observer in observers {
      observer.willBegin(zone: rules)
      observer.begin(types: streamTypes, groupSources: groupNames, groupRanks: groupRanks)
    }
    // The merge hands out one stream after another, so a stream's sweeps are looked up when the
    // stream changes: looked up per record, with their reference counting, they cost about as
    // much as the sweeps' own work.
    let observers = self.observers
    var stream: Int32 = -1
    var current: [StatisticsSweep] = []
    let merge = try spill.merged()
    while let record = try merge.next() {
      if record.stream != stream {
        stream = record.stream
        current = streamSweeps[Int(stream)]
      }
      for sweep in current { try sweep.add(record) }
      for observer in observers {
        observer.observe(
          stream: record.stream, start: record.start, end: record.end, value: record.value, group: record.group)
      }
    }
    for observer in observers { observer.end() }
    var written: [OutputSummary] = []
    for (sweep, output) in zip(sweeps, outputs) {
      try sweep.finish()
      written += try output.close()
    }
    for sweep in sweeps.dropFirst(outputs.count) { try sweep.finish() }
    context.products.publish(days.product, by: self)
    context.products.publish(
      RecentDays(series: zip(tails, recent).map { (request: $0.request, days: $1.days) }), by: self)
    context.products.publish(MergedStreams(), by: self)
    context.products.publish(ClosedBuckets(), by: self)
    return written
  }

  /// Whether a job's buckets are days from local midnight, sources merged: the buckets of a
  /// `DayStatistics` value.
  private static func isDayShape(_ job: StatisticsQuery) -> Bool {
    let day = BucketInterval("1d")!
    return job.interval == day && job.anchor == BucketAnchor.defaultAnchor(for: day) && !job.separateBySource
  }

  /// The files of one query's `buckets` table.
  private final class QueryOutput {
    var writers: [RowWriter<StatisticsBucket>] = []

    init(_ query: StatisticsQuery, context: MartContext) throws(OutputError) {
      let table = StatisticsTables.table(of: query)
      for destination in StatisticsTables.destinations(of: query) {
        writers.append(
          try context.writer(table, file: destination.file, format: destination.format, encodeOnThread: true))
      }
    }

    func write(_ bucket: borrowing StatisticsBucket) throws(OutputError) {
      for index in writers.indices { try writers[index].append(bucket) }
    }

    func close() throws(OutputError) -> [OutputSummary] {
      var written: [OutputSummary] = []
      for writer in writers { written.append(try writer.close()) }
      return written
    }
  }

  /// One query per type of `keys`, with the options asked of it, in the order asked.
  static func dayQueries(_ keys: [DayStatistics.Key]) throws(StatisticsQueryError) -> [StatisticsQuery] {
    var types: [String] = []
    var options: [String: [StatisticsOption]] = [:]
    for key in keys {
      if options[key.type] == nil { types.append(key.type) }
      if !options[key.type, default: []].contains(key.option) { options[key.type, default: []].append(key.option) }
    }
    return try types.map { type throws(StatisticsQueryError) in
      try StatisticsQuery(name: "day", type: type, interval: BucketInterval("1d")!, options: options[type]!)
    }
  }

  /// The distinct type short names `queries` ask for, in order: the mart's streams.
  static func streamTypes(of queries: [StatisticsQuery]) -> [String] {
    var types: [String] = []
    for query in queries where !types.contains(query.type.shortName) { types.append(query.type.shortName) }
    return types
  }

  /// How many samples went to the spill (for tests and reports).
  public var spilledSamples: Int { spill.count }
  /// How many sorted runs went to the scratch file; the last buffer never does.
  public var spilledRuns: Int { spill.runs.count }

  /// The type names of the spilled streams, in stream order.
  public var streamTypeNames: [String] { streamTypes }

  @inline(__always) private func streamIndex(_ type: Int32, catalog: SampleCatalog) -> Int32 {
    let index = Int(type)
    if index < typeStreams.count, typeStreams[index] != -2 { return typeStreams[index] }
    while typeStreams.count <= index { typeStreams.append(-2) }
    let shortName = catalog.typeInfo(type).shortName
    typeStreams[index] = streamTypes.firstIndex(of: shortName).map { Int32($0) } ?? -1
    if typeStreams[index] >= 0 { use.showsWhole(type) }
    return typeStreams[index]
  }
}

/// Sees the statistics' samples in start order per type (stream), after the sources' ranks are
/// known: for measures over the merged stream, such as the report's overlap and priority shares.
public protocol StatisticsStreamObserver: AnyObject {
  /// Before the parse: the types whose samples it will see.
  func willObserve(types: [String])
  /// Before the first sample: the stream types, and per group its source name and rank
  /// position (0 = highest priority; positions are unique).
  func begin(types: [String], groupSources: [String], groupRanks: [Int32])
  /// One sample; per stream, in start order.
  func observe(stream: Int32, start: Int64, end: Int64, value: Double, group: Int32)
  /// After the last sample.
  func end()
  /// Before `begin`: the run's zone, for an observer that tells local dates.
  func willBegin(zone: ZoneRules)
}

extension StatisticsStreamObserver {
  public func willBegin(zone: ZoneRules) {}
}
