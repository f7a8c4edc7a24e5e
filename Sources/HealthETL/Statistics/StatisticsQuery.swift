public import HealthModel

/// What a statistics job computes per bucket (Pipelines/docs/statistics.md, "Interval statistics"): each
/// becomes one CSV column of that name.
public enum StatisticsOption: String, Sendable, Hashable, CaseIterable {
  /// Cumulative types: the sum, sources merged by priority unless `separateBySource`
  /// (Pipelines/docs/samples.md, "Source priority").
  case sum
  /// Discrete types: the arithmetic mean of the samples starting in the bucket.
  case avg
  /// Discrete types: the time-weighted mean, each sample holding until the next one (≤ 10 min).
  case twavg
  /// Discrete types: the smallest / largest value of the samples starting in the bucket.
  case min, max
  /// Any type: how many samples start in the bucket (all sources, never merged).
  case count
  /// Any type: the value and start of the sample with the latest start in the bucket.
  case mostRecent, mostRecentTime
  /// Any type: seconds of the bucket covered by at least one sample.
  case duration

  /// Whether the option is defined for a type of `style`: `sum` needs a cumulative type; `avg`,
  /// `twavg`, `min` and `max` a discrete one; `count`, `mostRecent`, `mostRecentTime` and
  /// `duration` apply to both (HealthKit allows mostRecent and duration for both; counting samples
  /// is meaningful for both).
  public func applies(to style: AggregationStyle) -> Bool {
    switch self {
    case .sum: return style.isCumulative
    case .avg, .twavg, .min, .max: return !style.isCumulative
    case .count, .mostRecent, .mostRecentTime, .duration: return true
    }
  }

  /// Options whose value depends only on the samples that start in the bucket.
  var dependsOnStartsOnly: Bool {
    switch self {
    case .avg, .min, .max, .count, .mostRecent, .mostRecentTime: return true
    case .sum, .twavg, .duration: return false
    }
  }
}

/// A statistics job definition that cannot run, found before any input is read. Every case
/// names the job; `description` is the sentence for the user.
public enum StatisticsQueryError: Error, Sendable, Equatable, CustomStringConvertible {
  case invalidName(job: String)
  case duplicateName(job: String)
  case invalidOutput(job: String, path: String)
  case unknownType(job: String, type: String)
  case notAQuantityType(job: String, type: String)
  case invalidInterval(job: String, interval: String)
  case invalidAnchor(job: String, anchor: String)
  case noOptions(job: String)
  case unknownOption(job: String, option: String)
  case duplicateOption(job: String, option: String)
  case optionNotApplicable(job: String, type: String, option: String, style: AggregationStyle)

  public var description: String {
    switch self {
    case .invalidName(let job):
      return "statistics job name \(Self.quoted(job)) is not \(JobName.rule)"
    case .duplicateName(let job):
      return "statistics job \(Self.quoted(job)) is defined twice, or shares its output file with another job"
    case .invalidOutput(let job, let path):
      return "statistics job \(Self.quoted(job)): output file \(Self.quoted(path)) must be a relative path inside "
        + "the output folder (no leading '/', no '..')"
    case .unknownType(let job, let type):
      return "statistics job \(Self.quoted(job)): unknown quantity type \(Self.quoted(type)); name a HealthKit "
        + "quantity type such as StepCount or HeartRate (with or without the HKQuantityTypeIdentifier prefix)"
    case .notAQuantityType(let job, let type):
      return "statistics job \(Self.quoted(job)): \(Self.quoted(type)) is not a quantity type; interval "
        + "statistics need numbers (StepCount, HeartRate, …)"
    case .invalidInterval(let job, let interval):
      return "statistics job \(Self.quoted(job)): interval \(Self.quoted(interval)) is not <n><unit> with n from 1 "
        + "to 1000000 and unit s, m (or min), h, d, w, mo or y — e.g. 1m, 15m, 1h, 1d, 1w, 1mo"
    case .invalidAnchor(let job, let anchor):
      return "statistics job \(Self.quoted(job)): anchor \(Self.quoted(anchor)) is not a local date YYYY-MM-DD "
        + "or date and time YYYY-MM-DDTHH:MM"
    case .noOptions(let job):
      return "statistics job \(Self.quoted(job)) asks for no options; name at least one of "
        + StatisticsOption.allCases.map(\.rawValue).joined(separator: ", ")
    case .unknownOption(let job, let option):
      return "statistics job \(Self.quoted(job)): unknown option \(Self.quoted(option)); the options are "
        + StatisticsOption.allCases.map(\.rawValue).joined(separator: ", ")
    case .duplicateOption(let job, let option):
      return "statistics job \(Self.quoted(job)) asks for option \(Self.quoted(option)) twice"
    case .optionNotApplicable(let job, let type, let option, let style):
      let legal = StatisticsOption.allCases.filter { $0.applies(to: style) }.map(\.rawValue).joined(separator: ", ")
      let kind =
        style.isCumulative
        ? "a cumulative type (its samples add up, so only a sum makes sense)"
        : "a discrete type (its samples are levels, never added up)"
      return "statistics job \(Self.quoted(job)): option \(Self.quoted(option)) does not apply to \(type), \(kind); "
        + "use \(legal)"
    }
  }

  private static func quoted(_ text: String) -> String { "\"" + text + "\"" }
}

/// One interval-statistics job of a pipeline: the offline HKStatisticsCollectionQuery of one
/// quantity type (Pipelines/docs/statistics.md, "Interval statistics").
///
/// The initializers validate everything that can be known without the export — name, type,
/// interval, anchor, options and whether each option applies to the type's aggregation style — so
/// that a bad pipeline fails before any input is read.
public struct StatisticsQuery: Sendable, Hashable {
  /// Names the job in messages and its default file.
  public let name: String
  /// The quantity type (its `shortName`, `StepCount`, is the CSV's `type` column).
  public let type: SampleTypeInfo
  /// The bucket size.
  public let interval: BucketInterval
  /// Where buckets are aligned: the job's own, or `BucketAnchor.defaultAnchor(for:)`.
  public let anchor: BucketAnchor
  /// In the order asked: the order of the CSV columns.
  public let options: [StatisticsOption]
  /// Compute every source (by source name) on its own, without merging; adds a `source` column.
  public let separateBySource: Bool
  /// Where the `buckets` table goes; nil for the table's default file (`StatisticsTables`).
  public let destinations: [Destination]?

  /// One file the job's table is written to (pipeline `outputs[]` with table `buckets`).
  public struct Destination: Sendable, Hashable {
    /// Relative to the output folder.
    public var file: String
    /// csv, json or ndjson.
    public var format: TableFormat

    public init(file: String, format: TableFormat = .csv) {
      self.file = file
      self.format = format
    }
  }

  /// - Parameters:
  ///   - type: `StepCount` or `HKQuantityTypeIdentifierStepCount`.
  ///   - anchor: nil for the default (local midnight; Monday for weeks; the 1st for months).
  ///   - destinations: nil for the table's default file; an empty list computes nothing.
  public init(
    name: String, type: String, interval: BucketInterval, anchor: BucketAnchor? = nil,
    options: [StatisticsOption], separateBySource: Bool = false, destinations: [Destination]? = nil
  ) throws(StatisticsQueryError) {
    guard JobName.isValid(name) else { throw .invalidName(job: name) }
    for destination in destinations ?? [] {
      let parts = destination.file.split(separator: "/", omittingEmptySubsequences: false)
      guard !destination.file.isEmpty, !destination.file.hasPrefix("/"), !parts.contains("..") else {
        throw .invalidOutput(job: name, path: destination.file)
      }
    }
    let identifier = type.hasPrefix("HK") ? type : "HKQuantityTypeIdentifier" + type
    let info = SampleTypeInfo(identifier: identifier)
    guard info.kind == .quantity else {
      if info.kind == .category || info.isKnown { throw .notAQuantityType(job: name, type: type) }
      throw .unknownType(job: name, type: type)
    }
    guard info.isKnown, let style = info.aggregation else {
      // `SleepAnalysis` without its prefix reads as an unknown quantity: say what it really is.
      if SampleTypeInfo(identifier: "HKCategoryTypeIdentifier" + type).isKnown {
        throw .notAQuantityType(job: name, type: type)
      }
      throw .unknownType(job: name, type: type)
    }
    guard !options.isEmpty else { throw .noOptions(job: name) }
    var seen = Set<StatisticsOption>()
    for option in options {
      guard seen.insert(option).inserted else { throw .duplicateOption(job: name, option: option.rawValue) }
      guard option.applies(to: style) else {
        throw .optionNotApplicable(job: name, type: info.shortName, option: option.rawValue, style: style)
      }
    }
    self.name = name
    self.type = info
    self.interval = interval
    self.anchor = anchor ?? BucketAnchor.defaultAnchor(for: interval)
    self.options = options
    self.separateBySource = separateBySource
    self.destinations = destinations
  }

  /// The same from text, as a pipeline file spells it: `interval: "1d"`, `anchor: "2024-01-01T03:00"`,
  /// `options: ["sum"]`.
  public init(
    name: String, type: String, interval: String, anchor: String? = nil, options: [String],
    separateBySource: Bool = false, destinations: [Destination]? = nil
  ) throws(StatisticsQueryError) {
    guard JobName.isValid(name) else { throw .invalidName(job: name) }
    guard let parsedInterval = BucketInterval(interval) else {
      throw .invalidInterval(job: name, interval: interval)
    }
    var parsedAnchor: BucketAnchor?
    if let anchor {
      guard let value = BucketAnchor(anchor) else { throw .invalidAnchor(job: name, anchor: anchor) }
      parsedAnchor = value
    }
    var parsedOptions: [StatisticsOption] = []
    for option in options {
      guard let value = StatisticsOption(rawValue: option) else { throw .unknownOption(job: name, option: option) }
      parsedOptions.append(value)
    }
    try self.init(
      name: name, type: type, interval: parsedInterval, anchor: parsedAnchor, options: parsedOptions,
      separateBySource: separateBySource, destinations: destinations)
  }

}
