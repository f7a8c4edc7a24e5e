public import HealthModel
public import RunExecution

/// One table output in CSV, JSON or NDJSON (`RowEncoder` says how each value is written), staged
/// by the run's transaction, and the sinks that take its rows besides (a sheet of `health.xlsx`,
/// a table of `health.sqlite`).
public struct TableWriter {
  private let file: OutputFile
  public let relativePath: String
  private let columnCount: Int
  private var encoder: RowEncoder
  private var line: [UInt8] = []
  public private(set) var rows = 0
  /// Where the rows also go.
  private let sinks: [any TableRowSink]
  /// The rows not yet handed to the sinks and the lane, each row's fields built here once: the
  /// sinks and the lane are handed the same array, which they share, never copy.
  private var pending: [Field] = []
  /// With `encodeOnThread`: the lane of the run's pool that encodes the rows.
  private let lane: RowEncodingLane?

  /// Rows handed over at a time: big enough that handing over costs nothing next to the rows,
  /// small enough to stay in cache.
  static let handOverRows = 512

  /// - Parameters:
  ///   - columns: the table's columns (its declaration, or the part of it a job asked for).
  ///   - zone: the run's zone, for `instant` columns.
  ///   - sinks: the run's table sinks; those that take this table get its rows.
  ///   - lane: encode rows on this executor's pool (`RowEncodingLane`), for long tables written
  ///     after the parse, when both cores are not already busy; nil encodes on the caller's thread.
  public init(
    _ transaction: OutputTransaction, path relativePath: String, columns: [Column], format: TableFormat = .csv,
    zone: ZoneRules, byteOrderMark: Bool = false, sinks: TableSinks? = nil, lane executor: RunExecutor? = nil
  ) throws(OutputError) {
    file = try transaction.create(relativePath)
    self.sinks = sinks?.claim(file: relativePath, columns: columns, zone: zone) ?? []
    self.relativePath = relativePath
    columnCount = columns.count
    encoder = RowEncoder(columns: columns, format: format, zone: zone)
    try file.write(RowEncoder.head(columns: columns, format: format, byteOrderMark: byteOrderMark))
    if let executor {
      // The lane appends after what is on disk.
      try file.flush()
      lane = RowEncodingLane(encoder: encoder, appendingTo: file.path, meter: file.meter, executor: executor)
    } else {
      lane = nil
    }
  }

  /// Appends a row, one field per column.
  public mutating func append(_ fields: [Field]) throws(OutputError) {
    precondition(fields.count == columnCount, "\(relativePath): \(fields.count) fields for \(columnCount) columns")
    let start = pending.count
    pending.append(contentsOf: fields)
    try appended(from: start)
  }

  /// Appends `row` of `table`, its fields built straight into the rows handed over.
  public mutating func append<Row>(_ row: Row, of table: RowTable<Row>) throws(OutputError) {
    let start = pending.count
    table.appendFields(of: row, to: &pending)
    precondition(
      pending.count - start == columnCount,
      "\(relativePath): \(pending.count - start) fields for \(columnCount) columns")
    try appended(from: start)
  }

  /// The row from `start` of `pending` is complete.
  private mutating func appended(from start: Int) throws(OutputError) {
    rows += 1
    if lane == nil {
      line.removeAll(keepingCapacity: true)
      encoder.encode(pending[start...], to: &line)
      try file.write(line)
      if sinks.isEmpty {
        pending.removeAll(keepingCapacity: true)
        return
      }
    }
    if pending.count >= Self.handOverRows * columnCount { handOver() }
  }

  /// Hands the pending rows to the sinks and the lane.
  private mutating func handOver() {
    handOver(pending)
    // The array is theirs now: emptying it in place would copy it.
    pending = []
    pending.reserveCapacity(Self.handOverRows * columnCount)
  }

  private func handOver(_ rows: [Field]) {
    guard !rows.isEmpty else { return }
    for sink in sinks { sink.append(rows) }
    lane?.send(rows)
  }

  /// Writes the rest of the table, then syncs and closes the file.
  public func close() throws(OutputError) -> OutputSummary {
    handOver(pending)
    for sink in sinks { sink.flush() }
    if let lane {
      // The lane writes the rows and the closing text.
      try lane.finish()
    } else {
      try file.write(RowEncoder.tail(format: encoder.format, rows: rows))
    }
    try file.close()
    return OutputSummary(path: relativePath, rows: rows)
  }
}

/// One file a stage writes one of its tables to (`Table` is the stage's own enum of tables).
public struct TableDestination<Table: Sendable & Equatable>: Sendable, Equatable {
  public var table: Table
  /// Relative to the output folder.
  public var file: String
  /// `csv`, `json` (an array of objects) or `ndjson`.
  public var format: TableFormat

  public init(table: Table, file: String, format: TableFormat) {
    self.table = table
    self.file = file
    self.format = format
  }
}

/// A stage's own enumeration of its tables (a `TableDestination`'s `Table`), each with its
/// declaration; outputs are matched to it by the declaration's name.
public protocol MartTable: Sendable, Equatable, CaseIterable {
  var schema: TableSchema { get }
}
