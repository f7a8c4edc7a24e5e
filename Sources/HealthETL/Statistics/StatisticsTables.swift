import Foundation
public import HealthModel

/// The table of a statistics job, declared once: `Pipelines/README.md` says how every option is
/// computed ("Interval statistics").
public enum StatisticsTables {
  /// The first column: the bucket's local date for intervals of a day or longer, its local start
  /// time for shorter ones, so a spreadsheet reads the rows as dates.
  static let date = Column.date("date", "local date of `bucket_start` (intervals of a day or longer)")
  static let localTime = Column.localTime(
    "`bucket_start` on the local clock, `YYYY-MM-DD HH:MM:SS` (intervals shorter than a day)")

  /// The columns every query writes after the first, before its options.
  static let leading: [Column] = [
    .text("type", "the quantity type, short name (`StepCount`)"),
    .instant("bucket_start", "the bucket's first instant"),
    .instant("bucket_end", "the next bucket's first instant (the bucket is half-open)"),
  ]

  static let source = Column.text("source", "the source name (only with `separateBySource`)")

  /// Whether a query's rows are days or longer (a `date` column) rather than parts of a day.
  public static func rowsAreDays(_ interval: BucketInterval) -> Bool { !interval.unit.isFixedLength }

  /// The column of each option, named as the option; values in the type's canonical `unit` (nil
  /// in the declaration, where the precision is `by unit`).
  static func column(for option: StatisticsOption, unit: String?, declared: Bool = false) -> Column {
    func value(_ name: String, sum: Bool = false, _ meaning: String) -> Column {
      declared
        ? .number(name, precision: .byUnit, meaning)
        : .measure(name, unit: unit, sum: sum, meaning)
    }
    switch option {
    case .sum: return value("sum", sum: true, "pro-rata sum, sources merged by priority unless by source")
    case .avg: return value("avg", "arithmetic mean of the samples starting in the bucket")
    case .twavg: return value("twavg", "time-weighted mean, each sample held ≤ 10 min")
    case .min: return value("min", "smallest value of the samples starting in the bucket")
    case .max: return value("max", "largest value of the samples starting in the bucket")
    case .count: return .integer("count", "samples starting in the bucket, all sources")
    case .mostRecent: return value("mostRecent", "value of the sample with the latest start in the bucket")
    case .mostRecentTime: return .instant("mostRecentTime", "start of that sample")
    case .duration: return .integer("duration", unit: "s", "seconds of the bucket covered by the samples' union")
    }
  }

  /// The column of `option` in the table of a query of `type`.
  public static func column(for option: StatisticsOption, type: SampleTypeInfo) -> Column {
    column(for: option, unit: SampleTypeInfo.canonicalUnit(ofShortName: type.shortName))
  }

  /// The `buckets` table as declared: every column a query can ask for.
  public static let buckets = TableSchema(
    "buckets", rows: "one row per bucket that has data (per source with `separateBySource`), in time order",
    defaultFile: "stats/{job}.csv",
    columns: [date, localTime] + leading + [source]
      + StatisticsOption.allCases.map { column(for: $0, unit: nil, declared: true) },
    variableColumns:
      "`date` for intervals of a day or longer, `local_time` for shorter ones, never both; `source` only with "
      + "`separateBySource`; then one column per option, in the order asked, its values in the canonical unit of the "
      + "job's type and rounded to that unit's precision (see \"Precision\")",
    inWorkbook: true)

  /// The columns one query writes: `date` or `local_time`, `type, bucket_start, bucket_end,
  /// [source], <options in order>`.
  public static func columns(of query: StatisticsQuery) -> [Column] { table(of: query).columns }

  /// The table one query writes, each column bound to its value in a bucket.
  static func table(of query: StatisticsQuery) -> RowTable<StatisticsBucket> {
    let typeName = query.type.shortName
    let first = rowsAreDays(query.interval) ? date : localTime
    var columns: [RowColumn<StatisticsBucket>] = [
      // `date` or `local_time`: the column's kind formats the bucket's start.
      RowColumn(first) { .instant($0.start) },
      RowColumn(leading[0]) { _ in .text(typeName) },
      RowColumn(leading[1]) { .instant($0.start) },
      RowColumn(leading[2]) { .instant($0.end) },
    ]
    if query.separateBySource { columns.append(RowColumn(source) { .text($0.source) }) }
    for (index, option) in query.options.enumerated() {
      columns.append(
        RowColumn(column(for: option, type: query.type)) { bucket in
          switch bucket.value(at: index) {
          case .number(let number): return .number(number)
          case .count(let count): return .integer(count)
          case .instant(let instant): return .instant(instant)
          }
        })
    }
    return RowTable(buckets, columns: columns)
  }

  /// A query's keys in `health.sqlite`: a bucket (per source with `separateBySource`) is one
  /// row; tables of days are also looked up by date.
  public static func keys(of query: StatisticsQuery) -> TableKeys {
    TableKeys(
      primary: ["bucket_start_unix"] + (query.separateBySource ? ["source"] : []),
      indexes: rowsAreDays(query.interval) ? [["date"]] : [])
  }

  /// Where a query's table goes: the files its job lists, else the table's default file.
  public static func destinations(of query: StatisticsQuery) -> [StatisticsQuery.Destination] {
    query.destinations ?? [
      StatisticsQuery.Destination(file: buckets.defaultFile.replacingOccurrences(of: "{job}", with: query.name))
    ]
  }

  public static let all = [buckets]
}
