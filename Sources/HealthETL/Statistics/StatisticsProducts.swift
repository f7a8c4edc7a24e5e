public import HealthModel

/// One-day values of some statistics, per local date of the run's zone, as a statistics job of
/// the same query writes them (its column's precision): what a table of days that repeats
/// statistics beside other figures reads. A job of the run that computes a value feeds it, so no
/// statistic is computed twice; the others are computed by queries of their own that write no
/// file.
public struct DayStatistics: MartProduct {
  /// A statistic: a type's short name and an option (`StepCount`, `sum`).
  public struct Key: Sendable, Hashable {
    public let type: String
    public let option: StatisticsOption

    public init(_ type: String, _ option: StatisticsOption) {
      self.type = type
      self.option = option
    }
  }

  public struct Request: Sendable {
    public var keys: [Key]

    public init(keys: [Key]) { self.keys = keys }
  }

  private let values: [Key: [CivilDate: Double]]

  /// The value of `key` on `date`, rounded as its statistics file writes it; nil where no bucket
  /// had one.
  public func value(_ key: Key, on date: CivilDate) -> Double? { values[key]?[date] }

  /// Every date with a value of `key`.
  public func dates(of key: Key) -> Dictionary<CivilDate, Double>.Keys? { values[key]?.keys }

  /// Every value, by key and date.
  public var all: [Key: [CivilDate: Double]] { values }

  /// Gathers the values as the sweeps close their buckets.
  final class Collector {
    let rules: ZoneRules
    private var values: [Key: [CivilDate: Double]] = [:]

    init(rules: ZoneRules) { self.rules = rules }

    func set(_ key: Key, on date: CivilDate, _ value: Double) { values[key, default: [:]][date] = value }

    var product: DayStatistics { DayStatistics(values: values) }
  }

  /// Hands the values of a one-day query's buckets that readers want to the collector, rounded as
  /// the query's own file writes them.
  final class Tap {
    /// Per option of the query: the key it feeds, nil when none (or fed already).
    private let wanted: [Key?]
    private let precisions: [NumberPrecision]
    let keys: [Key]
    private let collector: Collector

    init(query: StatisticsQuery, wanted: Set<Key>, into collector: Collector) {
      let type = query.type.shortName
      self.wanted = query.options.map { wanted.contains(Key(type, $0)) ? Key(type, $0) : nil }
      keys = self.wanted.compactMap { $0 }
      precisions = query.options.map { StatisticsTables.column(for: $0, type: query.type).precision }
      self.collector = collector
    }

    var isUseful: Bool { !keys.isEmpty }

    func record(_ bucket: borrowing StatisticsBucket) {
      let date = collector.rules.localDate(at: bucket.start)
      for index in wanted.indices {
        guard let key = wanted[index], case .number(let number?) = bucket.value(at: index), number.isFinite else {
          continue
        }
        collector.set(key, on: date, precisions[index].rounded(number))
      }
    }
  }
}

/// The buckets of a statistic over the last few local dates that have one, in time order (the
/// report draws the heart rate per minute of the last 14 days).
public struct RecentDays: MartProduct {
  public struct Request: Sendable {
    /// A type's short name, an interval (`1m`) and an option of it.
    public var type: String
    public var interval: String
    public var option: StatisticsOption
    /// How many local dates, the latest that have a value.
    public var days: Int

    public init(type: String, interval: String, option: StatisticsOption, days: Int) {
      self.type = type
      self.interval = interval
      self.option = option
      self.days = days
    }
  }

  public struct Day: Sendable {
    /// Days since 1970-01-01 of the local date.
    public var day: Int64
    /// Each bucket's first instant (Unix seconds) and its value, in time order.
    public var starts: [Int64] = []
    public var values: [Double] = []
  }

  /// Per request, as asked, its days (ascending).
  public let series: [(request: Request, days: [Day])]

  /// The days of the first series asked for as `request` asks.
  public func days(_ type: String, _ interval: String, _ option: StatisticsOption) -> [Day] {
    series.first { $0.request.type == type && $0.request.interval == interval && $0.request.option == option }?.days
      ?? []
  }

  /// Keeps the last `limit` dates as buckets arrive in time order.
  final class Collector {
    private(set) var days: [Day] = []
    let limit: Int
    /// The zone's offsets, with the interval of the last bucket's kept: buckets arrive in time
    /// order, so nearly every one is in the same interval as the one before.
    private var zone: LocalTimeText

    init(limit: Int, rules: ZoneRules) {
      self.limit = limit
      zone = LocalTimeText(rules)
    }

    /// One bucket's value, `start` its first instant (Unix seconds), on the local date of the
    /// collector's zone. A new date drops the oldest once `limit` are kept.
    func add(start: Int64, value: Double) {
      let day = floorDiv(start + Int64(zone.offset(at: Instant(seconds: start))), 86_400)
      if days.last?.day != day {
        days.append(Day(day: day))
        if days.count > limit { days.removeFirst() }
      }
      days[days.count - 1].starts.append(start)
      days[days.count - 1].values.append(value)
    }
  }
}

/// The statistics' samples, merged into one start-ordered stream per type once the sources' ranks
/// are known, shown to observers as the mart finishes (the report's overlap and priority shares).
/// Reading it means: the observer has seen every stream.
public struct MergedStreams: MartProduct {
  public struct Request {
    public let observer: any StatisticsStreamObserver

    public init(observer: any StatisticsStreamObserver) { self.observer = observer }
  }
}

/// A statistic's buckets handed to a reader as the sweep closes them, in time order, each once
/// and none kept: for a reader that streams them on (the line protocol's heart rate per minute).
/// Computed by a job of the run when one has the statistic (same type, interval and options,
/// sources merged, default anchor), else by a query added without files. Reading the product
/// means: the reader has been given every bucket.
public struct ClosedBuckets: MartProduct {
  public struct Request {
    /// A type's short name, an interval (`1m`) and the options whose values the reader gets, in
    /// this order.
    public var type: String
    public var interval: String
    public var options: [StatisticsOption]
    public let reader: any StatisticsBucketReader

    public init(type: String, interval: String, options: [StatisticsOption], reader: any StatisticsBucketReader) {
      self.type = type
      self.interval = interval
      self.options = options
      self.reader = reader
    }
  }

  /// Hands one query's buckets to a reader: the options it asked for, rounded as the query's own
  /// file writes them.
  final class Tap {
    private let reader: any StatisticsBucketReader
    /// Per option asked for: its index among the query's options.
    private let positions: [Int]
    private let precisions: [NumberPrecision?]
    private var values: [Double?]

    init(_ request: Request, query: StatisticsQuery) {
      reader = request.reader
      positions = request.options.map { query.options.firstIndex(of: $0)! }
      precisions = request.options.map {
        let column = StatisticsTables.column(for: $0, type: query.type)
        return column.kind == .number ? column.precision : nil
      }
      values = [Double?](repeating: nil, count: request.options.count)
    }

    func record(_ bucket: borrowing StatisticsBucket) throws(OutputError) {
      var any = false
      for index in positions.indices {
        let value: Double?
        switch bucket.value(at: positions[index]) {
        case .number(let number): value = number.flatMap { $0.isFinite ? precisions[index]?.rounded($0) ?? $0 : nil }
        case .count(let count): value = Double(count)
        case .instant(let instant): value = instant.map { Double($0.seconds) }
        }
        values[index] = value
        any = any || value != nil
      }
      guard any else { return }
      try reader.read(start: bucket.start, end: bucket.end, values: values)
    }
  }
}

/// Reads closed buckets of a statistic (`ClosedBuckets`).
public protocol StatisticsBucketReader: AnyObject {
  /// One bucket `[start, end)` with a value for at least one option: per option of the request,
  /// in its order, the value as the statistic's file writes it (`count` and `duration` as
  /// numbers, `mostRecentTime` as Unix seconds), nil where the bucket has none.
  func read(start: Instant, end: Instant, values: [Double?]) throws(OutputError)
}
