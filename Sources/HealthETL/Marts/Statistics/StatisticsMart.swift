public import HealthModel

/// Interval statistics (Pipelines/README.md, "Interval statistics"): the offline
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
/// 10 MiB by default), one 160 KiB read chunk per sorted run, and the rows of buckets that samples
/// still reach — never O(samples). Disk: 40 bytes per relevant sample in the run's staging folder,
/// removed with it.
///
/// Groups: each record carries its sample's priority group (`SourceGroups`), ranked by the run's
/// source priority only in `finish`.
public final class StatisticsMart: OutputStage {
  /// Hands one option's values of one job to another stage (the report) as the sweep closes its
  /// buckets, in time order: `receive(bucket start, the zone's UTC offset there in seconds, value)`,
  /// only for buckets with a value.
  public struct Tap {
    public var job: Int
    public var option: StatisticsOption
    public var receive: (Instant, Int32, Double) -> Void

    public init(job: Int, option: StatisticsOption, receive: @escaping (Instant, Int32, Double) -> Void) {
      self.job = job
      self.option = option
      self.receive = receive
    }
  }

  /// Sees every spilled sample once more, in start order per type, as the merge hands it out.
  let streamObserver: (any StatisticsStreamObserver)?

  /// 256 Ki records (10 MiB) per sorted run.
  public static let defaultBufferCapacity = 262_144

  /// The jobs, in the order their files are reported.
  public let jobs: [StatisticsQuery]
  private let transaction: OutputTransaction
  private let taps: [Tap]
  private let spill: SampleSpill
  /// Distinct type short names the jobs ask for; the index is the record's `stream`.
  private let streamTypes: [String]
  /// Per catalog type id: its stream, -1 when no job wants it, -2 not yet looked at.
  private var typeStreams: [Int32] = []
  /// The spilled samples' priority groups.
  private var groups = SourceGroups()
  /// The one-day queries behind `daily.csv`'s columns, and where their values go.
  private let dailyQueries: [StatisticsQuery]
  private let daily: DailyCollector?

  /// - Parameters:
  ///   - jobs: validated queries; their files must differ (names may repeat across pipelines).
  ///   - bufferCapacity: records per sorted run (tests make it tiny to force many runs).
  ///   - taps: values handed on; a tapped job without files is computed all the same.
  public convenience init(
    jobs: [StatisticsQuery], transaction: OutputTransaction, bufferCapacity: Int = defaultBufferCapacity,
    taps: [Tap] = []
  ) throws(StatisticsQueryError) {
    try self.init(
      jobs: jobs, transaction: transaction, bufferCapacity: bufferCapacity, taps: taps, daily: nil, observer: nil)
  }

  /// - Parameters:
  ///   - daily: with a collector, also computes the one-day statistics `daily.csv` repeats
  ///     (`DailyMeasure.statistic`) and hands their values to it; they write no file.
  ///   - observer: sees every spilled sample once more as the merge hands it out (the report's
  ///     quality measures).
  init(
    jobs: [StatisticsQuery], transaction: OutputTransaction, bufferCapacity: Int = defaultBufferCapacity,
    taps: [Tap] = [], daily: DailyCollector?, observer: (any StatisticsStreamObserver)? = nil
  ) throws(StatisticsQueryError) {
    var files = Set<String>()
    for job in jobs {
      for destination in StatisticsTables.destinations(of: job) where !files.insert(destination.file).inserted {
        throw .duplicateName(job: job.name)
      }
    }
    self.jobs = jobs
    self.transaction = transaction
    self.taps = taps
    self.daily = daily
    streamObserver = observer
    dailyQueries = daily == nil ? [] : try Self.dailyQueries()
    streamTypes = Self.streamTypes(of: jobs + dailyQueries)
    spill = SampleSpill(
      capacity: Swift.max(1, bufferCapacity), transaction: transaction, scratchName: "interval-statistics.runs")
  }

  /// Spills a sample of a type some job asks for; allocation-free once the buffer exists.
  public func consume(_ sample: borrowing Sample, catalog: SampleCatalog) {
    guard sample.kind == .quantity, sample.value.isFinite else { return }
    let stream = streamIndex(sample.type, catalog: catalog)
    guard stream >= 0 else { return }
    let group = groups.group(of: sample, catalog: catalog)
    spill.append(
      SpillRecord(
        start: sample.start.seconds, end: sample.end.seconds, value: sample.value,
        created: sample.created?.seconds ?? SpillRecord.missingCreation, stream: stream, group: group))
  }

  /// Ranks the groups, merges the spilled runs and writes every job's files.
  public func finish(_ context: StageContext) throws(OutputError) -> [OutputSummary] {
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
    var streamSweeps = [[Int]](repeating: [], count: streamTypes.count)
    let rules = context.zone.rules
    // What `daily.csv` still needs after the jobs that compute the same one-day statistic.
    var dailyNeeds = Set(dailyQueries.flatMap { query in query.options.map { DailyTap.Key(query.type.shortName, $0) } })
    for (jobIndex, job) in jobs.enumerated() {
      let jobTaps = taps.filter { $0.job == jobIndex }.compactMap { tap in
        job.options.firstIndex(of: tap.option).map { (index: $0, receive: tap.receive) }
      }
      guard !StatisticsTables.destinations(of: job).isEmpty || !jobTaps.isEmpty else { continue }
      let output = try QueryOutput(job, context: context)
      outputs.append(output)
      var emit = output.write
      if let daily, Self.isDailyShape(job) {
        let tap = DailyTap(query: job, wanted: dailyNeeds, daily: daily, rules: rules)
        if tap.isUseful {
          dailyNeeds.subtract(tap.keys)
          emit = { (bucket: borrowing StatisticsBucket) throws(OutputError) in
            try output.write(bucket)
            tap.record(bucket)
          }
        }
      }
      if !jobTaps.isEmpty {
        let written = emit
        emit = { (bucket: borrowing StatisticsBucket) throws(OutputError) in
          try written(bucket)
          for tap in jobTaps {
            if case .number(let value?) = bucket.values[tap.index] {
              tap.receive(bucket.start, rules.offset(at: bucket.start), value)
            }
          }
        }
      }
      streamSweeps[streamTypes.firstIndex(of: job.type.shortName)!].append(sweeps.count)
      sweeps.append(
        StatisticsSweep(
          job: job, rules: rules, groupRanks: groupRanks, groupSources: groupSources, sourceNames: names, emit: emit))
    }
    for query in dailyQueries {
      guard let daily else { break }
      let tap = DailyTap(query: query, wanted: dailyNeeds, daily: daily, rules: rules)
      guard tap.isUseful else { continue }
      streamSweeps[streamTypes.firstIndex(of: query.type.shortName)!].append(sweeps.count)
      sweeps.append(
        StatisticsSweep(
          job: query, rules: rules, groupRanks: groupRanks, groupSources: groupSources, sourceNames: names,
          emit: tap.record))
    }
    let observer = streamObserver
    observer?.begin(types: streamTypes, groupSources: groupNames, groupRanks: groupRanks)
    let merge = try spill.merged()
    while let record = try merge.next() {
      for index in streamSweeps[Int(record.stream)] { try sweeps[index].add(record) }
      observer?.observe(
        stream: record.stream, start: record.start, end: record.end, value: record.value, group: record.group)
    }
    observer?.end()
    var written: [OutputSummary] = []
    for (sweep, output) in zip(sweeps, outputs) {
      try sweep.finish()
      written += try output.close()
    }
    for sweep in sweeps.dropFirst(outputs.count) { try sweep.finish() }
    return written
  }

  /// Whether a job's buckets are the one-day buckets of `daily.csv`: a day from local midnight,
  /// sources merged.
  private static func isDailyShape(_ job: StatisticsQuery) -> Bool {
    let day = BucketInterval("1d")!
    return job.interval == day && job.anchor == BucketAnchor.defaultAnchor(for: day) && !job.separateBySource
  }

  /// Hands the values of a one-day query's buckets that `daily.csv` wants to its collector, as
  /// the query's own file writes them. A job of the pipeline that computes a statistic feeds
  /// the table itself, so no statistic is computed twice.
  private final class DailyTap {
    struct Key: Hashable {
      let type: String
      let option: StatisticsOption
      init(_ type: String, _ option: StatisticsOption) {
        self.type = type
        self.option = option
      }
    }

    /// Per option of the query: the column it feeds, nil when none (or already fed).
    let measures: [DailyMeasure?]
    let precisions: [NumberPrecision]
    let keys: [Key]
    let daily: DailyCollector
    let rules: ZoneRules

    init(query: StatisticsQuery, wanted: Set<Key>, daily: DailyCollector, rules: ZoneRules) {
      let type = query.type.shortName
      measures = query.options.map { option in
        guard wanted.contains(Key(type, option)) else { return nil }
        return DailyMeasure.allCases.first { $0.statistic == .init(type: type, option: option) }
      }
      keys = query.options.filter { wanted.contains(Key(type, $0)) }.map { Key(type, $0) }
      precisions = query.options.map { StatisticsTables.column(for: $0, type: query.type).precision }
      self.daily = daily
      self.rules = rules
    }

    var isUseful: Bool { measures.contains { $0 != nil } }

    func record(_ bucket: borrowing StatisticsBucket) {
      let date = rules.localDate(at: bucket.start)
      for (index, value) in bucket.values.enumerated() {
        guard let measure = measures[index], case .number(let number) = value else { continue }
        daily.set(measure, on: date, written: number, precision: precisions[index])
      }
    }
  }

  /// The files of one query's `buckets` table.
  private final class QueryOutput {
    var writers: [RowWriter<StatisticsBucket>] = []

    init(_ query: StatisticsQuery, context: StageContext) throws(OutputError) {
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

  /// One query per type `daily.csv` takes statistics of, with the options it takes, in column
  /// order.
  static func dailyQueries() throws(StatisticsQueryError) -> [StatisticsQuery] {
    var types: [String] = []
    var options: [String: [StatisticsOption]] = [:]
    for statistic in DailyMeasure.allCases.compactMap(\.statistic) {
      if options[statistic.type] == nil { types.append(statistic.type) }
      options[statistic.type, default: []].append(statistic.option)
    }
    return try types.map { type throws(StatisticsQueryError) in
      try StatisticsQuery(name: "daily", type: type, interval: BucketInterval("1d")!, options: options[type]!)
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
    return typeStreams[index]
  }
}

/// Sees the statistics' samples in start order per type (stream), after the sources' ranks are
/// known: for measures over the merged stream, such as the report's overlap and priority shares.
public protocol StatisticsStreamObserver: AnyObject {
  /// Before the first sample: the stream types, and per group its source name and rank
  /// position (0 = highest priority; positions are unique).
  func begin(types: [String], groupSources: [String], groupRanks: [Int32])
  /// One sample; per stream, in start order.
  func observe(stream: Int32, start: Int64, end: Int64, value: Double, group: Int32)
  /// After the last sample.
  func end()
}
