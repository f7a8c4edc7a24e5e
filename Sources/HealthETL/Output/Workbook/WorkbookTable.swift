import HealthModel

/// One output table as a sheet of `health.xlsx`: the same columns and values as its CSV, typed
/// cells instead of text. Numbers are rounded to the column's precision exactly as the CSV writes
/// them (so a cell equals the CSV's value) and shown by the column's display format; instants
/// become local date-times of the run's zone (a cell has no zone); seconds become durations.
///
/// The table's writer hands its rows over in batches to the workbook's thread
/// (`WorkbookThread`), where `SheetRows` turns them into cells. A table that fills a sheet goes
/// on in `<name> (2)`, `(3)`, …: a sheet is never over-full, so the workbook stays valid, and
/// `WorkbookSummary` lists every part for `run.json`.
public final class WorkbookTableWriter: TableRowSink {
  /// Rows per hand-over.
  static let batchRows = 512

  private let sheet: Int
  private let thread: WorkbookThread
  private var batch: SinkBatch

  init(sheet: Int, columnCount: Int, thread: WorkbookThread) {
    self.sheet = sheet
    self.thread = thread
    batch = SinkBatch(rows: Self.batchRows, columns: columnCount)
  }

  /// Appends whole rows of the table (the fields their CSV rows have). A row the workbook cannot
  /// take fails the workbook's close, which names it.
  public func append(_ fields: [Field]) {
    if let full = batch.add(fields) { thread.post(.rows(sheet: sheet, fields: full)) }
  }

  /// Hands the rows appended so far to the workbook's thread.
  public func flush() {
    if let rest = batch.take() { thread.post(.rows(sheet: sheet, fields: rest)) }
  }

  /// The sheet column of a table column.
  static func workbookColumn(_ column: Column) -> WorkbookColumn {
    let kind = kind(of: column)
    return WorkbookColumn(header(column.name, shownAs: kind), kind)
  }

  /// The header a sheet shows: the CSV's column name, except that seconds shown as a duration
  /// say the form shown instead of the unit stored (`duration_s` → `duration (h:mm:ss)`), so a
  /// header never says seconds over a cell that shows hours and minutes.
  static func header(_ name: String, shownAs kind: WorkbookColumn.Kind) -> String {
    guard name.hasSuffix("_s"), name.count > 2 else { return name }
    switch kind {
    case .duration: return name.dropLast(2) + " (h:mm)"
    case .durationWithSeconds: return name.dropLast(2) + " (h:mm:ss)"
    default: return name
    }
  }

  static func kind(of column: Column) -> WorkbookColumn.Kind {
    switch column.kind {
    case .text: return .text
    case .boolean: return .boolean
    case .date: return .date
    case .instant, .localTime: return .dateTime
    case .localMinute: return .dateTimeMinutes
    case .integer, .number:
      switch column.resolvedDisplay {
      case .hoursMinutes: return .duration
      case .hoursMinutesSeconds: return .durationWithSeconds
      case .decimals(let places): return places == 0 ? .integer : .decimal(places: places)
      case .percent: return .percent
      case .general, .automatic: return .number
      }
    }
  }

  /// How `health.xlsx` shows a column, for the column tables: `0.0`, `[h]:mm`,
  /// `yyyy-mm-dd hh:mm:ss`; empty for text and General.
  public static func shownFormat(_ column: Column) -> String {
    workbookColumn(column).numberFormat ?? ""
  }
}

/// A table's rows on the workbook's thread: fields become cells and go to the table's sheet.
final class SheetRows {
  let sheet: WorkbookSheet
  let columns: [Column]
  let zone: ZoneRules
  private var cells: [WorkbookCell] = []

  init(sheet: WorkbookSheet, columns: [Column], zone: ZoneRules) {
    self.sheet = sheet
    self.columns = columns
    self.zone = zone
    cells.reserveCapacity(columns.count)
  }

  /// Appends the rows of `fields` (one field per column, row after row).
  func append(_ fields: [Field]) throws(WorkbookError) {
    guard !columns.isEmpty else { return }
    var row = fields.startIndex
    while row + columns.count <= fields.endIndex {
      cells.removeAll(keepingCapacity: true)
      for (field, column) in zip(fields[row..<(row + columns.count)], columns) { cells.append(cell(field, column)) }
      if sheet.remainingRows == 0 { try sheet.continueOnNewSheet() }
      try sheet.appendRow(cells)
      row += columns.count
    }
  }

  private func cell(_ field: Field, _ column: Column) -> WorkbookCell {
    switch field {
    case .missing: return .blank
    case .text(let text): return .text(text)
    case .boolean(let value): return .boolean(value)
    case .date(let date): return .date(date)
    case .integer(let value): return number(Double(value), column)
    case .number(let value):
      guard value.isFinite else { return .blank }
      return number(column.precision.rounded(value), column)
    case .instant(let instant):
      let seconds = zone.localSeconds(at: instant)
      switch column.kind {
      case .date: return .date(zone.localDate(at: instant))
      // Cut to the minute as the CSV is, not rounded by the cell's format.
      case .localMinute: return .dateTime(LocalDateTime(localSecondsSinceEpoch: floorDiv(seconds, 60) * 60))
      default: return .dateTime(LocalDateTime(localSecondsSinceEpoch: seconds))
      }
    }
  }

  private func number(_ value: Double, _ column: Column) -> WorkbookCell {
    switch column.resolvedDisplay {
    case .hoursMinutes, .hoursMinutesSeconds: return .duration(seconds: value)
    default: return .number(value)
    }
  }
}
