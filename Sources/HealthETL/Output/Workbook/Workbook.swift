internal import CXLSXWriter
import Foundation
import HealthModel

/// An `.xlsx` workbook written through libxlsxwriter in constant-memory mode: each row goes to a
/// temporary file in `temporaryDirectory` as soon as the next one starts, so memory stays flat
/// however long the tables are, and the file appears at `path` only when `close()` assembles it.
///
/// Every sheet has a bold, frozen header row, an autofilter over what was written and column
/// widths from the header and the first rows. Rows must be appended in order (constant-memory
/// mode cannot go back). A sheet holds at most `rowsPerSheet` rows including its header; when a
/// table reaches that, `appendRow` throws `.sheetFull` and the caller decides: continue on a new
/// sheet `<name> (2)` or stop writing that table to the workbook. Checking first reads best:
///
///     if sheet.remainingRows == 0 { try sheet.continueOnNewSheet() }  // or stop, and say so
///     try sheet.appendRow(cells)
///
/// Not thread-safe: one task writes a workbook.
public final class Workbook {
  /// Excel's rows per sheet, header included.
  public static let excelRowsPerSheet = 1_048_576

  public let path: String
  /// Rows per sheet including the header; `excelRowsPerSheet` except in tests.
  public let rowsPerSheet: Int

  private var handle: UnsafeMutablePointer<lxw_workbook>?
  /// libxlsxwriter keeps the pointer it is given, so the copy lives as long as the workbook.
  private let temporaryDirectoryCString: UnsafeMutablePointer<CChar>
  private var namer = SheetNamer()
  private var tables: [SheetTable] = []
  private var numberFormats: [String: UnsafeMutablePointer<lxw_format>] = [:]
  private let headerFormat: UnsafeMutablePointer<lxw_format>
  private var chartsSheet: UnsafeMutablePointer<lxw_worksheet>?
  private var chartsSheetName = ""
  private var charts: [(chart: WorkbookChart, table: SheetTable, category: Int, values: [Int])] = []

  /// - Parameters:
  ///   - path: where `close()` writes the workbook (replacing a file there).
  ///   - temporaryDirectory: an existing folder for libxlsxwriter's row files, e.g. the run's
  ///     staging folder (they are unlinked as soon as they are opened, so nothing is left behind).
  ///   - rowsPerSheet: rows per sheet including the header; only tests pass a smaller value.
  ///   - created: the creation time the file records (seconds since 1970); the time of writing
  ///     when nil. A run passes the export's date, so a rerun writes the same bytes.
  public init(
    path: String, temporaryDirectory: String, rowsPerSheet: Int = Workbook.excelRowsPerSheet, created: Int64? = nil
  ) throws(WorkbookError) {
    precondition((2...Self.excelRowsPerSheet).contains(rowsPerSheet), "a sheet holds 2 ... 1,048,576 rows")
    self.path = path
    self.rowsPerSheet = rowsPerSheet
    try Self.checkWritable(path: path, temporaryDirectory: temporaryDirectory)
    guard let directory = strdup(temporaryDirectory) else {
      throw .cannotCreate(path: path, reason: "out of memory")
    }
    var options = lxw_workbook_options()
    options.constant_memory = 1
    options.tmpdir = directory
    // A sheet of 1,048,576 rows of a few dozen columns stays far below zip's 4 GB member
    // limit, and Excel accepts only its own flavour of ZIP64, so plain zip is the safe choice.
    options.use_zip64 = 0
    errno = 0
    guard let workbook = workbook_new_opt(path, &options), let bold = workbook_add_format(workbook) else {
      free(directory)
      throw .cannotCreate(
        path: path, reason: "libxlsxwriter could not allocate the workbook", code: Self.refusalErrno())
    }
    format_set_bold(bold)
    if let created, created > 0 {
      var properties = lxw_doc_properties()
      properties.created = time_t(created)
      workbook_set_properties(workbook, &properties)
    }
    handle = workbook
    temporaryDirectoryCString = directory
    headerFormat = bold
  }

  deinit {
    // Abandoned without close(): free the memory and the row files without writing anything.
    // libxlsxwriter frees a worksheet without closing its row file, so that is done here.
    if let handle {
      for table in tables {
        for part in table.parts { Self.closeRowFile(of: part.sheet) }
      }
      if let chartsSheet { Self.closeRowFile(of: chartsSheet) }
      lxw_workbook_free(handle)
    }
    free(temporaryDirectoryCString)
  }

  /// Adds a sheet for one table and writes its header row.
  /// - Parameter name: made valid and unique (see `SheetNamer`); the summary lists the real name.
  /// - Parameter keepingChartValues: keeps the values of the sheet's numbers and dates for the
  ///   7-day averages of its charts (`WorkbookChart.movingAverageDays`); for the sheet charts are
  ///   drawn from.
  public func addSheet(name: String, columns: [WorkbookColumn], keepingChartValues: Bool = false)
    throws(WorkbookError) -> WorkbookSheet
  {
    let workbook = try live()
    guard !columns.isEmpty, columns.count <= 16_384 else {
      throw .invalidRow(sheet: name, detail: "a sheet needs 1 ... 16,384 columns, not \(columns.count)")
    }
    let formats = columns.map { $0.numberFormat.flatMap { numberFormat($0, in: workbook) } }
    let table = SheetTable(requestedName: name, columns: columns, formats: formats)
    if keepingChartValues { table.keptValues = Array(repeating: [], count: columns.count) }
    let sheetName = namer.claim(name)
    try table.parts.append(startPart(named: sheetName, of: table, in: workbook))
    tables.append(table)
    return WorkbookSheet(workbook: self, table: table)
  }

  /// Adds the Charts sheet now, so its tab comes before the sheets added after (the first sheet
  /// is the one a spreadsheet opens on). Without this call the first chart adds it.
  public func addChartsSheet() throws(WorkbookError) {
    let workbook = try live()
    guard chartsSheet == nil else { return }
    chartsSheetName = namer.claim("Charts")
    errno = 0
    guard let created = workbook_add_worksheet(workbook, chartsSheetName) else {
      throw Self.sheetRefused(path: path, name: chartsSheetName)
    }
    chartsSheet = created
  }

  /// Draws `chart` from columns of `sheet` on the workbook's Charts sheet, which the first chart
  /// creates unless `addChartsSheet()` did (so its tab comes after the sheets added before). A
  /// chart plots the first sheet of a table that went on over several; the ranges are fixed when
  /// the workbook closes.
  public func addChart(_ chart: WorkbookChart, of sheet: WorkbookSheet) throws(WorkbookError) {
    _ = try live()
    guard sheet.workbook === self else {
      throw .invalidChart(title: chart.title, detail: "the sheet belongs to another workbook")
    }
    let columns = sheet.table.columns
    func index(_ name: String) throws(WorkbookError) -> Int {
      guard let index = columns.firstIndex(where: { $0.name == name }) else {
        throw .invalidChart(title: chart.title, detail: "sheet '\(sheet.table.requestedName)' has no column '\(name)'")
      }
      return index
    }
    let category = try index(chart.categoryColumn)
    guard !chart.series.isEmpty else { throw .invalidChart(title: chart.title, detail: "no series to plot") }
    var values: [Int] = []
    for series in chart.series {
      let column = try index(series.column)
      guard columns[column].isNumeric else {
        throw .invalidChart(title: chart.title, detail: "column '\(series.column)' holds no numbers to plot")
      }
      values.append(column)
    }
    try addChartsSheet()
    charts.append((chart, sheet.table, category, values))
  }

  /// Finishes every sheet and chart and writes the file. On failure nothing is left at `path`.
  /// The workbook cannot be used afterwards either way.
  /// - Parameter hidingEmptySheets: hides the sheet of a table that got no rows (a header
  ///   alone), as long as another sheet stays visible. Constant-memory mode cannot take a sheet
  ///   out once added, and a hidden sheet keeps the set of sheets the same from one export to
  ///   the next; the summary marks it `hidden`.
  @discardableResult
  public func close(hidingEmptySheets: Bool = false) throws(WorkbookError) -> WorkbookSummary {
    let workbook = try live()
    handle = nil
    var failure: WorkbookError?
    let emptyTables = hidingEmptySheets ? Set(tables.indices.filter { tables[$0].dataRows == 0 }) : []
    let hidden = chartsSheet == nil && emptyTables.count == tables.count ? [] : emptyTables
    hideSheets(of: hidden)
    for table in tables {
      let widths = table.widths.widths
      // A column without a single value in a table with rows is hidden: a sheet of a Watch-less
      // export is not 20 empty heart-rate columns wide. Excel and LibreOffice unhide it from the
      // column headers; the header stays for the autofilter and the CSV's order.
      var hiddenColumn = lxw_row_col_options()
      hiddenColumn.hidden = 1
      for part in table.parts {
        for (column, width) in widths.enumerated() {
          if table.dataRows > 0, table.valueCounts[column] == 0 {
            worksheet_set_column_opt(part.sheet, lxw_col_t(column), lxw_col_t(column), width, nil, &hiddenColumn)
          } else {
            worksheet_set_column(part.sheet, lxw_col_t(column), lxw_col_t(column), width, nil)
          }
        }
        let lastRow = lxw_row_t(part.dataRows)
        let lastColumn = lxw_col_t(table.columns.count - 1)
        let status = worksheet_autofilter(part.sheet, 0, 0, lastRow, lastColumn)
        if status != LXW_NO_ERROR, failure == nil {
          failure = .library(path: path, operation: "autofilter on '\(part.name)'", message: Self.message(status))
        }
      }
    }
    if let chartsSheet, failure == nil {
      failure = drawCharts(on: chartsSheet, in: workbook)
    }
    // libxlsxwriter returns its own code; the system's (a full disk while it zips) is in errno.
    errno = 0
    let status = workbook_close(workbook)
    if failure == nil, status != LXW_NO_ERROR {
      failure = .library(path: path, operation: "closing", message: Self.message(status), code: Self.systemCode(status))
    }
    if let failure {
      unlink(path)
      throw failure
    }
    return WorkbookSummary(
      path: path,
      sheets: tables.map {
        WorkbookSummary.Sheet(
          requestedName: $0.requestedName,
          parts: $0.parts.map { WorkbookSummary.Part(name: $0.name, dataRows: $0.dataRows) },
          truncatedTexts: $0.truncatedTexts)
      }.enumerated().map { number, sheet in
        var sheet = sheet
        sheet.hidden = hidden.contains(number)
        return sheet
      },
      charts: charts.map(\.chart.title))
  }

  // MARK: - Rows

  func append(_ cells: [WorkbookCell], to table: SheetTable) throws(WorkbookError) {
    guard handle != nil else { throw .closed(path: path) }
    guard cells.count == table.columns.count else {
      throw .invalidRow(sheet: table.current.name, detail: "\(cells.count) cells for \(table.columns.count) columns")
    }
    guard table.current.dataRows < rowsPerSheet - 1 else {
      throw .sheetFull(sheet: table.current.name, rowsPerSheet: rowsPerSheet)
    }
    let part = table.current
    let sheet = part.sheet
    let row = lxw_row_t(part.dataRows + 1)
    let sampling = table.sampledRows < ColumnWidthEstimate.sampledRows
    let keeping = table.keptValues != nil && table.parts.count == 1
    if keeping {
      for index in cells.indices { table.keptValues![index].append(.nan) }
    }
    for (index, cell) in cells.enumerated() {
      let column = table.columns[index]
      let col = lxw_col_t(index)
      let format = table.formats[index]
      let status: lxw_error
      switch (cell, column.kind) {
      case (.blank, _):
        continue
      case (.text(var text), .text):
        if text.utf8.contains(where: Self.isControlByte) { text = Self.removingControlCharacters(text) }
        if text.isEmpty { continue }
        if text.utf8.count > Self.maximumTextLength, text.utf16.count > Self.maximumTextLength {
          table.truncatedTexts += 1
          text = SheetNamer.truncate(text, toUTF16: Self.maximumTextLength)
        }
        status = worksheet_write_string(sheet, row, col, text, nil)
      case (.number(let value), .number), (.number(let value), .integer), (.number(let value), .decimal),
        (.number(let value), .percent):
        // libxlsxwriter would write "NAN" into the file, which Excel rejects as corrupt.
        guard value.isFinite else { continue }
        status = worksheet_write_number(sheet, row, col, value, format)
      case (.date(let date), .date):
        status = writeSerial(ExcelSerialDate.serial(date), orText: date.description, sheet, row, col, format)
      case (.dateTime(let dateTime), .dateTime), (.dateTime(let dateTime), .dateTimeMinutes):
        status = writeSerial(
          ExcelSerialDate.serial(dateTime), orText: Self.isoText(dateTime), sheet, row, col, format)
      case (.timeOfDay(let seconds), .timeOfDay):
        status = worksheet_write_number(sheet, row, col, Double(seconds) / 86_400, format)
      case (.duration(let seconds), .duration), (.duration(let seconds), .durationWithSeconds):
        guard seconds.isFinite else { continue }
        status = worksheet_write_number(sheet, row, col, ExcelSerialDate.duration(seconds: seconds), format)
      case (.boolean(let value), .boolean):
        status = worksheet_write_boolean(sheet, row, col, value ? 1 : 0, nil)
      default:
        throw .invalidRow(
          sheet: part.name, detail: "column '\(column.name)' (\(column.kind)) cannot hold a \(cell.kindName) value")
      }
      guard status == LXW_NO_ERROR else {
        throw .library(
          path: path, operation: "writing row \(row + 1) of '\(part.name)'", message: Self.message(status),
          code: Self.systemCode(status))
      }
      if sampling { table.widths.observe(cell, column: index, kind: column.kind) }
      if keeping { table.keptValues![index][part.dataRows] = Self.chartValue(cell) }
      if cell.isNonzeroNumber {
        table.plottable[index] = true
        if table.parts.count == 1 {
          if table.firstPlottableRows[index] == 0 { table.firstPlottableRows[index] = part.dataRows + 1 }
          table.lastPlottableRows[index] = part.dataRows + 1
        }
      }
      table.valueCounts[index] += 1
    }
    part.dataRows += 1
    if sampling { table.sampledRows += 1 }
  }

  /// A cell as a chart reads it: a number, a date's serial, a duration in days; NaN otherwise.
  private static func chartValue(_ cell: WorkbookCell) -> Double {
    switch cell {
    case .number(let value): return value
    case .date(let date): return ExcelSerialDate.serial(date) ?? .nan
    case .dateTime(let dateTime): return ExcelSerialDate.serial(dateTime) ?? .nan
    case .duration(let seconds): return ExcelSerialDate.duration(seconds: seconds)
    default: return .nan
    }
  }

  func continueOnNewSheet(_ table: SheetTable) throws(WorkbookError) -> String {
    let workbook = try live()
    let name = namer.claimContinuation(of: table.parts[0].name, part: table.parts.count + 1)
    try table.parts.append(startPart(named: name, of: table, in: workbook))
    return name
  }

  /// Excel's limit on the characters of one cell.
  static let maximumTextLength = 32_767

  /// C0 controls other than tab, line feed and carriage return. XML cannot carry them, and the
  /// `_x0001_` escape libxlsxwriter would write is decoded by Excel, dropped by LibreOffice and
  /// shown literally by Gnumeric; removing them gives every program the same text.
  static func isControlByte(_ byte: UInt8) -> Bool { byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D }

  static func removingControlCharacters(_ text: String) -> String {
    String(decoding: text.utf8.filter { !isControlByte($0) }, as: UTF8.self)
  }

  // MARK: - libxlsxwriter plumbing

  private func live() throws(WorkbookError) -> UnsafeMutablePointer<lxw_workbook> {
    guard let handle else { throw .closed(path: path) }
    return handle
  }

  private func startPart(named name: String, of table: SheetTable, in workbook: UnsafeMutablePointer<lxw_workbook>)
    throws(WorkbookError) -> SheetPart
  {
    // Constant-memory mode opens a row file per sheet here: a sheet is refused for want of a
    // descriptor (errno) or of memory, never for its name (`SheetNamer` made it valid).
    errno = 0
    guard let sheet = workbook_add_worksheet(workbook, name) else { throw Self.sheetRefused(path: path, name: name) }
    worksheet_freeze_panes(sheet, 1, 0)
    for (index, column) in table.columns.enumerated() {
      let status = worksheet_write_string(sheet, 0, lxw_col_t(index), column.name, headerFormat)
      guard status == LXW_NO_ERROR else {
        throw .library(
          path: path, operation: "writing the header of '\(name)'", message: Self.message(status),
          code: Self.systemCode(status))
      }
    }
    return SheetPart(name: name, sheet: sheet)
  }

  private func numberFormat(_ code: String, in workbook: UnsafeMutablePointer<lxw_workbook>)
    -> UnsafeMutablePointer<lxw_format>?
  {
    if let format = numberFormats[code] { return format }
    guard let format = workbook_add_format(workbook) else { return nil }
    format_set_num_format(format, code)
    numberFormats[code] = format
    return format
  }

  /// Dates Excel cannot show (before 1900 or after 9999) keep their value as ISO text.
  private func writeSerial(
    _ serial: Double?, orText text: String, _ sheet: UnsafeMutablePointer<lxw_worksheet>, _ row: lxw_row_t,
    _ col: lxw_col_t, _ format: UnsafeMutablePointer<lxw_format>?
  ) -> lxw_error {
    if let serial { return worksheet_write_number(sheet, row, col, serial, format) }
    return worksheet_write_string(sheet, row, col, text, nil)
  }

  /// Hides the sheets of `tables` (their numbers); the first sheet left visible becomes the one
  /// the workbook opens on, since a spreadsheet cannot open on a hidden sheet.
  private func hideSheets(of hidden: Set<Int>) {
    guard !hidden.isEmpty else { return }
    for number in hidden {
      for part in tables[number].parts { worksheet_hide(part.sheet) }
    }
    if chartsSheet == nil, let first = tables.indices.first(where: { !hidden.contains($0) }) {
      worksheet_activate(tables[first].parts[0].sheet)
    }
  }

  private func drawCharts(
    on sheet: UnsafeMutablePointer<lxw_worksheet>, in workbook: UnsafeMutablePointer<lxw_workbook>
  )
    -> WorkbookError?
  {
    // Charts of 960 × 432 px (twice and one and a half times the default), one under another.
    let rowsPerChart = 24
    // Printed (or converted to PDF), a chart is wider than a portrait page and was cut in two:
    // landscape, one page wide.
    worksheet_set_landscape(sheet)
    worksheet_fit_to_pages(sheet, 1, 0)
    // The 7-day averages beside the charts are the lines' data, not a page: printed, they made
    // a 900-day export's Charts sheet seven pages of numbers.
    worksheet_print_area(
      sheet, 0, 0, lxw_row_t(max(1, charts.count * rowsPerChart)), lxw_col_t(Self.averagesColumn - 1))
    if charts.isEmpty {
      let status = worksheet_write_string(sheet, 0, 0, "No chart: the charted columns hold no values.", nil)
      if status != LXW_NO_ERROR {
        return .library(path: path, operation: "writing '\(chartsSheetName)'", message: Self.message(status))
      }
    }
    // Each chart's rows: a long history is the year up to the chart's last value only (an export
    // whose steps stopped years ago still shows them), from its first value when that is later
    // (a Garmin export whose steps begin three months before the end is not nine months of
    // blank), with a 7-day line where bars do not stack.
    let windows = charts.map { entry -> (first: Int, end: Int, isLong: Bool) in
      let dataRows = entry.table.parts[0].dataRows
      let lastValueRow = entry.values.map { entry.table.lastPlottableRows[$0] }.max() ?? 0
      let firstValueRow = entry.values.map { entry.table.firstPlottableRows[$0] }.filter { $0 > 0 }.min() ?? 1
      let isLong = lastValueRow > WorkbookChart.longHistoryRows
      // An empty table still gets a (blank) one-row range: a chart needs a range to be valid.
      let end = isLong ? lastValueRow : max(dataRows, 1)
      return (isLong ? max(end - WorkbookChart.recentRows + 1, firstValueRow) : 1, end, isLong)
    }
    let averages = sevenDayAverages(windows: windows)
    if let failure = writeAverages(averages, on: sheet, in: workbook) { return failure }
    for (index, entry) in charts.enumerated() {
      let (chart, table, category, values) = entry
      let window = windows[index]
      let averaged = averages.first { $0.chart == index }
      let type: lxw_chart_type
      switch chart.kind {
      case .line: type = LXW_CHART_LINE
      // Bars and a line cannot share a chart here (libxlsxwriter 1.1 combines no charts): a long
      // history's days become dots under their 7-day line.
      case .column: type = averaged == nil ? LXW_CHART_COLUMN : LXW_CHART_LINE
      case .stackedColumn: type = LXW_CHART_COLUMN_STACKED
      }
      guard let drawn = workbook_add_chart(workbook, UInt8(type.rawValue)) else {
        return .library(path: path, operation: "adding chart '\(chart.title)'", message: "out of memory")
      }
      // A 7-day average without its days is no value: a gap, not a line across it.
      chart_show_blanks_as(drawn, UInt8(LXW_CHART_BLANKS_AS_GAP.rawValue))
      let first = table.parts[0]
      let firstRow = lxw_row_t(window.first)
      let windowEnd = lxw_row_t(window.end)
      let rows = window.end - window.first + 1
      let days = rows == 1 ? "1 day" : "\(rows) days"
      let suffix =
        !window.isLong ? "" : window.end == first.dataRows ? ", last \(days)" : ", \(days) to its last value"
      for (position, (series, column)) in zip(chart.series, values).enumerated() {
        guard let added = chart_add_series(drawn, nil, nil) else {
          return .library(path: path, operation: "adding a series to '\(chart.title)'", message: "out of memory")
        }
        chart_series_set_categories(added, first.name, firstRow, lxw_col_t(category), windowEnd, lxw_col_t(category))
        chart_series_set_values(added, first.name, firstRow, lxw_col_t(column), windowEnd, lxw_col_t(column))
        if chart.kind == .column, averaged != nil {
          // The days as dots, not joined: the 7-day line is the line.
          var line = lxw_chart_line()
          line.none = 1
          chart_series_set_line(added, &line)
          chart_series_set_marker_type(added, UInt8(LXW_CHART_MARKER_CIRCLE.rawValue))
          chart_series_set_marker_size(added, 3)
        } else if chart.kind == .line {
          // A line joins neighbouring days only, so a day measured alone (a heart rate every few
          // days) would draw nothing: a small marker on each value shows it.
          chart_series_set_marker_type(added, UInt8(LXW_CHART_MARKER_CIRCLE.rawValue))
          chart_series_set_marker_size(added, 3)
        }
        var name = series.name ?? table.columns[column].name
        // A leading "=" would make libxlsxwriter read the name as a cell reference.
        if name.hasPrefix("=") { name = " " + name }
        chart_series_set_name(added, name)
        // A series with no 7-day average draws no empty line in the legend.
        guard let averaged, averaged.columns[position].contains(where: { $0 != nil }) else { continue }
        guard let line = chart_add_series(drawn, nil, nil) else {
          return .library(path: path, operation: "adding a series to '\(chart.title)'", message: "out of memory")
        }
        chart_series_set_categories(line, first.name, firstRow, lxw_col_t(category), windowEnd, lxw_col_t(category))
        let averageColumn = lxw_col_t(averaged.firstColumn + 1 + position)
        chart_series_set_values(
          line, chartsSheetName, 1, averageColumn, lxw_row_t(averaged.dates.count), averageColumn)
        chart_series_set_marker_type(line, UInt8(LXW_CHART_MARKER_NONE.rawValue))
        chart_series_set_name(line, name + ", 7-day average")
      }
      var cut = ""
      if let cap = chart.valueAxisCap, let beyond = barsBeyond(cap, chart: entry, window: window), beyond > 0 {
        if let axis = chart_axis_get(drawn, LXW_CHART_AXIS_TYPE_Y) { chart_axis_set_max(axis, cap) }
        cut =
          "; \(beyond) \(beyond == 1 ? "bar" : "bars") over \(Self.number(cap)) "
          + "\(chart.valueAxisTitle.lowercased()) cut at the axis"
      }
      chart_title_set_name(drawn, chart.title + suffix + cut)
      if let axis = chart_axis_get(drawn, LXW_CHART_AXIS_TYPE_X) {
        chart_axis_set_name(axis, chart.categoryAxisTitle)
        if let code = table.columns[category].numberFormat { chart_axis_set_num_format(axis, code) }
        // A crowded date axis: Excel thins its labels itself, Gnumeric drew 93 dates' labels
        // every 5 days end to end, unreadable. Every n-th date (at most `Self.dateLabels`; Excel
        // keeps to it, Gnumeric ignores it), slanted so that none touches where they are dense.
        if rows > Self.dateLabels {
          chart_axis_set_interval_unit(axis, UInt16((rows + Self.dateLabels - 1) / Self.dateLabels))
          var font = lxw_chart_font()
          font.rotation = -45
          chart_axis_set_num_font(axis, &font)
        }
      }
      if let axis = chart_axis_get(drawn, LXW_CHART_AXIS_TYPE_Y) {
        chart_axis_set_name(axis, chart.valueAxisTitle)
        if let code = table.columns[values[0]].numberFormat { chart_axis_set_num_format(axis, code) }
      }
      let legend = chart.series.count > 1 || averaged != nil ? LXW_CHART_LEGEND_BOTTOM : LXW_CHART_LEGEND_NONE
      chart_legend_set_position(drawn, UInt8(legend.rawValue))
      var options = lxw_chart_options()
      options.x_scale = 2
      options.y_scale = 1.5
      let status = worksheet_insert_chart_opt(sheet, lxw_row_t(1 + index * rowsPerChart), 1, drawn, &options)
      if status != LXW_NO_ERROR {
        return .library(path: path, operation: "placing chart '\(chart.title)'", message: Self.message(status))
      }
    }
    return nil
  }

  /// How many of `chart`'s bars in `window` reach beyond `cap` (a stack by its total); nil when
  /// the sheet's values were not kept.
  private func barsBeyond(
    _ cap: Double, chart entry: (chart: WorkbookChart, table: SheetTable, category: Int, values: [Int]),
    window: (first: Int, end: Int, isLong: Bool)
  ) -> Int? {
    guard let kept = entry.table.keptValues, kept[entry.category].count >= window.end else { return nil }
    var beyond = 0
    for row in (window.first - 1)..<window.end {
      let values = entry.values.map { kept[$0][row] }.filter(\.isFinite)
      let height = entry.chart.kind == .stackedColumn ? values.reduce(0, +) : values.max() ?? 0
      if height > cap { beyond += 1 }
    }
    return beyond
  }

  private static func number(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(value)
  }

  /// One chart's 7-day averages, written to the Charts sheet from `firstColumn`: the dates of
  /// its rows, then a column per series, which the chart's lines read.
  struct SevenDayAverages {
    var chart: Int
    var firstColumn: Int
    var dates: [Double]
    var names: [String]
    var columns: [[Double?]]
  }

  /// The Charts sheet's first column of averages: right of the charts (960 px from column B).
  static let averagesColumn = 18

  /// Date labels a chart's 960 px axis holds without touching (a `2024-03-18` is about 70 px).
  static let dateLabels = 12

  /// The 7-day averages of each long-history chart that does not stack (Pipelines/docs/daily.md,
  /// "`health.xlsx`"): for each row of its window, the mean of the values of the days from 6 days
  /// before its date to its date, when at least `WorkbookChart.movingAverageLeastDays` of them have
  /// one; else none, so a line never crosses months without a value.
  private func sevenDayAverages(windows: [(first: Int, end: Int, isLong: Bool)]) -> [SevenDayAverages] {
    var result: [SevenDayAverages] = []
    var column = Self.averagesColumn
    for (index, entry) in charts.enumerated() where windows[index].isLong && entry.chart.kind != .stackedColumn {
      guard let kept = entry.table.keptValues, kept[entry.category].count >= windows[index].end else { continue }
      let dates = kept[entry.category]
      let rows = (windows[index].first - 1)..<windows[index].end
      let span = Double(WorkbookChart.movingAverageDays)
      var columns: [[Double?]] = []
      for value in entry.values {
        let series = kept[value]
        columns.append(
          rows.map { row -> Double? in
            let day = dates[row]
            guard day.isFinite else { return nil }
            var sum = 0.0
            var count = 0
            var other = row
            while other >= 0 {
              let date = dates[other]
              if date.isFinite {
                if date <= day - span { break }
                if date <= day, series[other].isFinite {
                  sum += series[other]
                  count += 1
                }
              }
              other -= 1
            }
            return count >= WorkbookChart.movingAverageLeastDays ? sum / Double(count) : nil
          })
      }
      // Days too sparse for any 7-day average (a heart rate every few days) keep their bars.
      guard columns.contains(where: { $0.contains { $0 != nil } }) else { continue }
      let names = zip(entry.chart.series, entry.values).map { series, value in
        "\(series.name ?? entry.table.columns[value].name), 7-day average"
      }
      result.append(
        SevenDayAverages(
          chart: index, firstColumn: column, dates: rows.map { dates[$0] }, names: names, columns: columns))
      column += entry.values.count + 2
    }
    return result
  }

  /// Writes `averages` to the Charts sheet, row by row (constant-memory mode writes rows in order).
  private func writeAverages(
    _ averages: [SevenDayAverages], on sheet: UnsafeMutablePointer<lxw_worksheet>,
    in workbook: UnsafeMutablePointer<lxw_workbook>
  ) -> WorkbookError? {
    guard !averages.isEmpty else { return nil }
    var status = LXW_NO_ERROR
    func check(_ result: lxw_error) { if status == LXW_NO_ERROR { status = result } }
    let formats = averages.map {
      average -> (date: UnsafeMutablePointer<lxw_format>?, value: UnsafeMutablePointer<lxw_format>?) in
      let entry = charts[average.chart]
      return (
        entry.table.columns[entry.category].numberFormat.flatMap { numberFormat($0, in: workbook) },
        entry.table.formats[entry.values[0]]
      )
    }
    for average in averages {
      check(worksheet_write_string(sheet, 0, lxw_col_t(average.firstColumn), "date", headerFormat))
      worksheet_set_column(sheet, lxw_col_t(average.firstColumn), lxw_col_t(average.firstColumn), 11, nil)
      for (position, name) in average.names.enumerated() {
        let column = lxw_col_t(average.firstColumn + 1 + position)
        check(worksheet_write_string(sheet, 0, column, name, headerFormat))
        worksheet_set_column(sheet, column, column, Double(max(12, name.count)), nil)
      }
    }
    let rows = averages.map(\.dates.count).max() ?? 0
    for row in 0..<rows {
      for (average, format) in zip(averages, formats) where row < average.dates.count {
        let cell = lxw_row_t(row + 1)
        check(worksheet_write_number(sheet, cell, lxw_col_t(average.firstColumn), average.dates[row], format.date))
        for (position, values) in average.columns.enumerated() {
          guard let value = values[row] else { continue }
          check(worksheet_write_number(sheet, cell, lxw_col_t(average.firstColumn + 1 + position), value, format.value))
        }
      }
    }
    guard status == LXW_NO_ERROR else {
      return .library(path: path, operation: "writing the 7-day averages", message: Self.message(status))
    }
    return nil
  }

  private static func closeRowFile(of sheet: UnsafeMutablePointer<lxw_worksheet>) {
    if let file = sheet.pointee.optimize_tmpfile {
      fclose(file)
      sheet.pointee.optimize_tmpfile = nil
    }
  }

  /// The system's error number behind a libxlsxwriter status, for the nightly batch to tell the
  /// machine's fault: a failed allocation is `ENOMEM`; a file libxlsxwriter could not create,
  /// read or zip says why in errno (cleared before the call); a refusal of a value has none.
  private static func systemCode(_ status: lxw_error) -> Int32? {
    switch status {
    case LXW_ERROR_MEMORY_MALLOC_FAILED: return ENOMEM
    case LXW_ERROR_CREATING_XLSX_FILE, LXW_ERROR_CREATING_TMPFILE, LXW_ERROR_READING_TMPFILE,
      LXW_ERROR_ZIP_FILE_OPERATION, LXW_ERROR_ZIP_FILE_ADD, LXW_ERROR_ZIP_CLOSE:
      return errno != 0 ? errno : nil
    default: return nil
    }
  }

  /// Why libxlsxwriter returned no workbook or sheet (it says only on stderr): the errno of the
  /// file it could not open (cleared before the call), else a failed allocation, its only other
  /// reason for a valid name.
  private static func refusalErrno() -> Int32 { errno != 0 ? errno : ENOMEM }

  private static func sheetRefused(path: String, name: String) -> WorkbookError {
    let code = refusalErrno()
    return .library(
      path: path, operation: "adding sheet '\(name)'",
      message: "the sheet was refused (\(String(cString: strerror(code))))", code: code)
  }

  private static func message(_ status: lxw_error) -> String {
    lxw_strerror(status).map { String(cString: $0) } ?? "libxlsxwriter error \(status.rawValue)"
  }

  private static func isoText(_ dateTime: LocalDateTime) -> String {
    let seconds = dateTime.secondsSinceMidnight
    func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(dateTime.date)T\(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60))"
  }

  /// Fails early, with the reason, on what libxlsxwriter would only notice when closing (the
  /// output) or never report at all (a missing temporary folder makes it drop the rows).
  private static func checkWritable(path: String, temporaryDirectory: String) throws(WorkbookError) {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: temporaryDirectory, isDirectory: &isDirectory), isDirectory.boolValue
    else {
      throw .cannotCreate(path: path, reason: "temporary folder \(temporaryDirectory) does not exist")
    }
    guard access(temporaryDirectory, W_OK | X_OK) == 0 else {
      let code = errno
      throw .cannotCreate(
        path: path, reason: "temporary folder \(temporaryDirectory): \(String(cString: strerror(code)))", code: code)
    }
    if let code = probeCreate(path) {
      throw .cannotCreate(path: path, reason: String(cString: strerror(code)), code: code)
    }
  }
}

/// A handle on one table of a workbook: append its rows in order.
public final class WorkbookSheet {
  let workbook: Workbook
  let table: SheetTable

  init(workbook: Workbook, table: SheetTable) {
    self.workbook = workbook
    self.table = table
  }

  /// The sheet rows are going to now (the first sheet's name until the table continues).
  public var currentSheetName: String { table.current.name }

  /// Data rows the current sheet can still take.
  public var remainingRows: Int { workbook.rowsPerSheet - 1 - table.current.dataRows }

  /// Data rows written over all of the table's sheets.
  public var dataRows: Int { table.dataRows }

  /// Whether column `name` holds a number other than 0 so far: a chart of it would show
  /// something (a series of blanks and zeros draws nothing).
  public func hasPlottableValues(inColumn name: String) -> Bool {
    table.columns.firstIndex { $0.name == name }.map { table.plottable[$0] } ?? false
  }

  /// How many cells of column `name` hold a value so far (blank cells not counted).
  public func valueCount(inColumn name: String) -> Int {
    table.columns.firstIndex { $0.name == name }.map { table.valueCounts[$0] } ?? 0
  }

  /// Writes the next row: one cell per column, `.blank` for missing values.
  /// - Throws: `.sheetFull` when `remainingRows` is 0 (nothing is written; the caller continues on
  ///   a new sheet or stops), `.invalidRow` for a cell that does not fit its column.
  public func appendRow(_ cells: [WorkbookCell]) throws(WorkbookError) {
    try workbook.append(cells, to: table)
  }

  /// Starts the next sheet of this table, `<first sheet name> (2)`, `(3)`, …, with the same
  /// header, widths and formats; later rows go there. Returns its name.
  @discardableResult
  public func continueOnNewSheet() throws(WorkbookError) -> String {
    try workbook.continueOnNewSheet(table)
  }
}

extension WorkbookChart {
  /// What to draw of `choices` (a chart, then what to draw instead when it has nothing to show)
  /// from `sheet` as it stands: the first choice with a series holding a number other than 0 (and
  /// whose `majority` rule holds), keeping only such series; nil when none has one, so no chart is
  /// drawn empty.
  public static func firstPlottable(of choices: [WorkbookChart], in sheet: WorkbookSheet) -> WorkbookChart? {
    for choice in choices {
      if let majority = choice.majority {
        let rows = majority.of.map { sheet.valueCount(inColumn: $0) }.max() ?? 0
        guard sheet.valueCount(inColumn: majority.column) * 2 >= rows else { continue }
      }
      var chart = choice
      chart.series = choice.series.filter { sheet.hasPlottableValues(inColumn: $0.column) }
      if !chart.series.isEmpty { return chart }
    }
    return nil
  }
}

/// The state of one table: its columns and formats, and the sheets it has filled.
final class SheetTable {
  let requestedName: String
  let columns: [WorkbookColumn]
  let formats: [UnsafeMutablePointer<lxw_format>?]
  var parts: [SheetPart] = []
  var widths: ColumnWidthEstimate
  var sampledRows = 0
  var truncatedTexts = 0
  /// Per column: a number other than 0 was written.
  var plottable: [Bool]
  /// Per column: the cells written (not blank).
  var valueCounts: [Int]
  /// Per column: the last row of the first sheet holding a number other than 0 (1 is the first
  /// data row), 0 when none.
  var lastPlottableRows: [Int]
  /// Per column: the first such row, 0 when none.
  var firstPlottableRows: [Int]
  /// Per column, the first sheet's values as a chart reads them (`Workbook.chartValue`), NaN for
  /// a blank; nil unless the sheet was added keeping them.
  var keptValues: [[Double]]?

  init(requestedName: String, columns: [WorkbookColumn], formats: [UnsafeMutablePointer<lxw_format>?]) {
    self.requestedName = requestedName
    self.columns = columns
    self.formats = formats
    widths = ColumnWidthEstimate(columns: columns)
    plottable = Array(repeating: false, count: columns.count)
    valueCounts = Array(repeating: 0, count: columns.count)
    lastPlottableRows = Array(repeating: 0, count: columns.count)
    firstPlottableRows = Array(repeating: 0, count: columns.count)
  }

  var current: SheetPart { parts[parts.count - 1] }
  var dataRows: Int { parts.reduce(0) { $0 + $1.dataRows } }
}

final class SheetPart {
  let name: String
  let sheet: UnsafeMutablePointer<lxw_worksheet>
  var dataRows = 0

  init(name: String, sheet: UnsafeMutablePointer<lxw_worksheet>) {
    self.name = name
    self.sheet = sheet
  }
}

/// Opens (creating if need be) `path` for writing and closes it again, removing it if it did not
/// exist; the system's error number when that fails. Outside the class, whose `close()` would shadow the call.
private func probeCreate(_ path: String) -> Int32? {
  let existed = access(path, F_OK) == 0
  let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
  guard descriptor >= 0 else { return errno }
  close(descriptor)
  if !existed { unlink(path) }
  return nil
}
