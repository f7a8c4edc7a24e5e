public import HealthModel
public import RunExecution

/// A column of a table whose rows are `Row`s: its declaration bound to how a row gives its value,
/// so that name and value are written side by side once and a row never becomes a positional
/// list by hand.
public struct RowColumn<Row>: Sendable {
  public let column: Column
  let value: @Sendable (Row) -> Field

  public init(_ column: Column, _ value: @escaping @Sendable (Row) -> Field) {
    self.column = column
    self.value = value
  }

  public static func text(_ name: String, _ meaning: String, _ value: @escaping @Sendable (Row) -> String?)
    -> RowColumn
  {
    RowColumn(.text(name, meaning)) { .text(value($0)) }
  }
  public static func integer(
    _ name: String, unit: String? = nil, display: SheetDisplay = .automatic, _ meaning: String,
    _ value: @escaping @Sendable (Row) -> Int64?
  ) -> RowColumn {
    RowColumn(.integer(name, unit: unit, display: display, meaning)) { .integer(value($0)) }
  }
  public static func number(
    _ name: String, unit: String? = nil, precision: NumberPrecision, display: SheetDisplay = .automatic,
    _ meaning: String, _ value: @escaping @Sendable (Row) -> Double?
  ) -> RowColumn {
    RowColumn(.number(name, unit: unit, precision: precision, display: display, meaning)) { .number(value($0)) }
  }
  /// A number column whose precision and display come from its unit (`Column.measure`).
  public static func measure(
    _ name: String, unit: String?, sum: Bool = false, _ meaning: String, _ value: @escaping @Sendable (Row) -> Double?
  ) -> RowColumn {
    RowColumn(.measure(name, unit: unit, sum: sum, meaning)) { .number(value($0)) }
  }
  public static func boolean(_ name: String, _ meaning: String, _ value: @escaping @Sendable (Row) -> Bool?)
    -> RowColumn
  {
    RowColumn(.boolean(name, meaning)) { .boolean(value($0)) }
  }
  public static func instant(_ name: String, _ meaning: String, _ value: @escaping @Sendable (Row) -> Instant?)
    -> RowColumn
  {
    RowColumn(.instant(name, meaning)) { .instant(value($0)) }
  }
  public static func date(_ name: String, _ meaning: String, _ value: @escaping @Sendable (Row) -> CivilDate?)
    -> RowColumn
  {
    RowColumn(.date(name, meaning)) { row in value(row).map(Field.date) ?? .missing }
  }
  /// The `local_time` column of a table whose rows are parts of a day: the wall clock of `value`.
  public static func localTime(_ meaning: String, _ value: @escaping @Sendable (Row) -> Instant?) -> RowColumn {
    RowColumn(.localTime(meaning)) { .instant(value($0)) }
  }
  public static func localMinute(
    _ name: String, _ meaning: String, _ value: @escaping @Sendable (Row) -> Instant?
  ) -> RowColumn {
    RowColumn(.localMinute(name, meaning)) { .instant(value($0)) }
  }
}

/// An output table declared once with each column bound to its value: the `TableSchema` every
/// writer, the workbook and the column tables read, and the one place a row becomes its fields.
public struct RowTable<Row>: Sendable {
  public let schema: TableSchema
  /// The columns themselves, not an array of their closures: an array stores a closure at its most
  /// general form, so every field went through one more thunk that returned it indirectly.
  private let bound: [RowColumn<Row>]

  public init(
    _ name: String, rows: String, defaultFile: String, columns: [RowColumn<Row>], variableColumns: String? = nil,
    inWorkbook: Bool = false, keys: TableKeys = .none
  ) {
    schema = TableSchema(
      name, rows: rows, defaultFile: defaultFile, columns: columns.map(\.column), variableColumns: variableColumns,
      inWorkbook: inWorkbook, keys: keys)
    bound = columns
  }

  /// The table a job writes when its columns depend on the job (a query's options, the attributes
  /// seen): `schema` stays the declaration of every column it can have.
  public init(_ schema: TableSchema, columns: [RowColumn<Row>]) {
    self.schema = TableSchema(
      schema.name, rows: schema.rows, defaultFile: schema.defaultFile, columns: columns.map(\.column),
      variableColumns: schema.variableColumns, inWorkbook: schema.inWorkbook, keys: schema.keys)
    bound = columns
  }

  public var name: String { schema.name }
  public var columns: [Column] { schema.columns }
  public var columnNames: [String] { schema.columnNames }

  /// The fields of `row`, one per column.
  public func fields(of row: Row) -> [Field] { bound.map { $0.value(row) } }

  /// Appends the fields of `row`, one per column, to `fields`: a table's writer builds its rows
  /// straight into the batch it hands over (`TableWriter`).
  public func appendFields(of row: Row, to fields: inout [Field]) {
    // By index: iterating the closures copied each one, retaining and releasing its context for
    // every field of every row.
    for index in bound.indices { fields.append(bound[index].value(row)) }
  }
}

/// A `TableWriter` for one `RowTable`: rows go in typed and reach the writer as the fields their
/// declaration gives them.
public struct RowWriter<Row> {
  private var writer: TableWriter
  private let table: RowTable<Row>

  public init(
    _ transaction: OutputTransaction, path relativePath: String, table: RowTable<Row>, format: TableFormat = .csv,
    zone: ZoneRules, byteOrderMark: Bool = false, sinks: TableSinks? = nil, lane: RunExecutor? = nil
  ) throws(OutputError) {
    writer = try TableWriter(
      transaction, path: relativePath, columns: table.columns, format: format, zone: zone,
      byteOrderMark: byteOrderMark, sinks: sinks, lane: lane)
    self.table = table
  }

  public var rows: Int { writer.rows }

  public mutating func append(_ row: Row) throws(OutputError) {
    try writer.append(row, of: table)
  }

  public func close() throws(OutputError) -> OutputSummary { try writer.close() }
}
