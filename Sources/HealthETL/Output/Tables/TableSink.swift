public import HealthModel

/// A place besides its own file that takes the rows of some of the run's tables: a sheet of
/// `health.xlsx`, a table of `health.sqlite`. Every table writer is given the run's sinks
/// (`TableSinks`) and hands its rows to those that claim its file; a sink knows the tables it was
/// planned with, never the marts that write them.
public protocol TableSink: AnyObject {
  /// Whether the rows written to `file`, or to the files of the pattern `file`, come here.
  func wants(file: String) -> Bool
  /// The rows of the table written to `file` (one of the files of `pattern`, when given), once;
  /// nil for a table it does not take. `zone` is the run's, for `instant` columns.
  func claim(file: String, pattern: String?, columns: [Column], zone: ZoneRules) -> (any TableRowSink)?
}

/// One table's rows going to a sink.
public protocol TableRowSink: AnyObject {
  /// Appends one or more whole rows, one field per column, row after row. A sink may keep the
  /// array as it is: a table's writer hands the same array to every sink and to its lane.
  func append(_ fields: [Field])
  /// Hands over the rows still held; called when the table is complete.
  func flush()
}

/// A sink's rows on their way to its thread, in batches of whole rows: rows appended a few at a
/// time are gathered, and a writer's batch that arrives whole goes over as it is, not copied
/// (`TableWriter` hands the same array to every sink).
struct SinkBatch {
  /// Fields of a full batch.
  private let limit: Int
  private var fields: [Field] = []

  init(rows: Int, columns: Int) { limit = rows * columns }

  /// Adds whole `rows`; the batch to hand over when one is full.
  mutating func add(_ rows: [Field]) -> [Field]? {
    guard !rows.isEmpty else { return nil }
    if fields.isEmpty, rows.count >= limit { return rows }
    fields.append(contentsOf: rows)
    return fields.count >= limit ? take() : nil
  }

  /// The rows gathered so far, if any; the batch starts again empty. A handed-over batch shares
  /// its storage with the message that carries it, so it is not emptied in place (that would
  /// copy), and a run with thousands of sample tables keeps no capacity per table.
  mutating func take() -> [Field]? {
    guard !fields.isEmpty else { return nil }
    let taken = fields
    fields = []
    return taken
  }
}

/// The run's table sinks, in the order they were added.
public final class TableSinks {
  public private(set) var sinks: [any TableSink] = []

  public init() {}

  public func add(_ sink: any TableSink) { sinks.append(sink) }

  /// Whether some sink takes the rows of `file`.
  public func wants(file: String) -> Bool { sinks.contains { $0.wants(file: file) } }

  /// The sinks that take the rows of the table written to `file`.
  public func claim(file: String, pattern: String? = nil, columns: [Column], zone: ZoneRules) -> [any TableRowSink] {
    sinks.compactMap { $0.claim(file: file, pattern: pattern, columns: columns, zone: zone) }
  }
}
