import Foundation

/// The table of a statistics job, declared once: `Pipelines/README.md` says how every option is
/// computed ("Interval statistics").
public enum StatisticsTables {
  /// The columns every query writes before its options.
  static let leading: [Column] = [
    .text("type", "the quantity type, short name (`StepCount`)"),
    .instant("bucket_start", "the bucket's first instant"),
    .instant("bucket_end", "the next bucket's first instant (the bucket is half-open)"),
  ]

  static let source = Column.text("source", "the source name (only with `separateBySource`)")

  /// The column of each option, named as the option; values in the type's canonical unit.
  static func column(for option: StatisticsOption) -> Column {
    let computed = NumberPrecision.significantDigits(12)
    switch option {
    case .sum:
      return .number("sum", precision: computed, "pro-rata sum, sources merged by priority unless by source")
    case .avg: return .number("avg", precision: computed, "arithmetic mean of the samples starting in the bucket")
    case .twavg: return .number("twavg", precision: computed, "time-weighted mean, each sample held ≤ 10 min")
    case .min: return .number("min", "smallest value of the samples starting in the bucket")
    case .max: return .number("max", "largest value of the samples starting in the bucket")
    case .count: return .integer("count", "samples starting in the bucket, all sources")
    case .mostRecent: return .number("mostRecent", "value of the sample with the latest start in the bucket")
    case .mostRecentTime: return .instant("mostRecentTime", "start of that sample")
    case .duration: return .integer("duration", unit: "s", "seconds of the bucket covered by the samples' union")
    }
  }

  /// The `buckets` table as declared: every column a query can ask for.
  public static let buckets = TableSchema(
    "buckets", rows: "one row per bucket that has data (per source with `separateBySource`), in time order",
    defaultFile: "stats/{job}.csv",
    columns: leading + [source] + StatisticsOption.allCases.map(column(for:)),
    variableColumns: "`source` only with `separateBySource`; then one column per option, in the order asked")

  /// The columns one query writes: `type, bucket_start, bucket_end, [source], <options in order>`.
  public static func columns(of query: StatisticsQuery) -> [Column] {
    leading + (query.separateBySource ? [source] : []) + query.options.map(column(for:))
  }

  /// Where a query's table goes: the files its job lists, else the table's default file.
  public static func destinations(of query: StatisticsQuery) -> [StatisticsQuery.Destination] {
    query.destinations ?? [
      StatisticsQuery.Destination(file: buckets.defaultFile.replacingOccurrences(of: "{job}", with: query.name))
    ]
  }

  public static let all = [buckets]
}
