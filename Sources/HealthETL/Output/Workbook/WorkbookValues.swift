public import HealthModel

// The plain-Swift half of the workbook writer: cell and column vocabulary, Excel's serial dates,
// sheet names and column widths. `Workbook.swift` holds every libxlsxwriter call.

/// A local wall-clock date and time: what a clock on the wall showed, not an instant. The caller
/// converts instants with the offset that applied (`instant.seconds + offsetSeconds`), because a
/// spreadsheet cell has no time zone.
public struct LocalDateTime: Hashable, Sendable {
  public var date: CivilDate
  /// 0 ..< 86 400.
  public var secondsSinceMidnight: Int

  public init(date: CivilDate, hour: Int, minute: Int, second: Int = 0) {
    self.date = date
    self.secondsSinceMidnight = hour * 3600 + minute * 60 + second
  }

  /// `seconds` counted from 1970-01-01 00:00 on the local clock, i.e. `instant.seconds + offsetSeconds`.
  public init(localSecondsSinceEpoch seconds: Int64) {
    let days = floorDiv(seconds, 86_400)
    date = CivilDate(daysSinceEpoch: days)
    secondsSinceMidnight = Int(seconds - days * 86_400)
  }
}

/// A column of a workbook sheet: its header and how its cells are typed and shown.
public struct WorkbookColumn: Hashable, Sendable {
  public enum Kind: Hashable, Sendable {
    case text
    /// A number shown with Excel's General format.
    case number
    /// A number shown rounded to a whole number (`0`); the cell keeps the full value.
    case integer
    /// A number shown with a fixed number of decimals (`0.0`, `0.00`, …, at most 10).
    case decimal(places: Int)
    /// `yyyy-mm-dd`.
    case date
    /// `yyyy-mm-dd hh:mm:ss`.
    case dateTime
    /// `yyyy-mm-dd hh:mm`.
    case dateTimeMinutes
    /// `hh:mm`, a time of day without a date.
    case timeOfDay
    /// `[h]:mm`: hours past 24 keep counting, so a 30-hour total shows `30:00`.
    case duration
    /// `[h]:mm:ss`, for durations shorter than a few minutes (a swim length).
    case durationWithSeconds
    /// `0.0%`: a fraction 0–1 (humidity 0.68) shown as a percentage (68.0%); the cell keeps 0.68.
    case percent
    /// TRUE / FALSE.
    case boolean
  }

  public var name: String
  public var kind: Kind

  public init(_ name: String, _ kind: Kind) {
    self.name = name
    self.kind = kind
  }

  /// Excel's number format for the kind; nil is General.
  var numberFormat: String? {
    switch kind {
    case .text, .number, .boolean: return nil
    case .integer: return "0"
    case .decimal(let places):
      let places = min(max(places, 0), 10)
      return places == 0 ? "0" : "0." + String(repeating: "0", count: places)
    case .date: return "yyyy-mm-dd"
    case .dateTime: return "yyyy-mm-dd hh:mm:ss"
    case .dateTimeMinutes: return "yyyy-mm-dd hh:mm"
    case .timeOfDay: return "hh:mm"
    case .duration: return "[h]:mm"
    case .durationWithSeconds: return "[h]:mm:ss"
    case .percent: return "0.0%"
    }
  }

  /// Whether a chart can plot the column as values.
  var isNumeric: Bool {
    switch kind {
    case .number, .integer, .decimal, .duration, .durationWithSeconds, .percent: return true
    case .text, .date, .dateTime, .dateTimeMinutes, .timeOfDay, .boolean: return false
    }
  }
}

/// One cell of a row. Each kind of value fits the column kinds named on its case; `.blank` fits
/// every column and is what a missing value is.
public enum WorkbookCell: Hashable, Sendable {
  case blank
  /// `.text`. Empty text is written as a blank cell; control characters other than tab and line
  /// breaks are dropped; text past Excel's 32 767 characters is cut there.
  case text(String)
  /// `.number`, `.integer`, `.decimal`. NaN and infinities have no spreadsheet form and are blank.
  case number(Double)
  /// `.date`.
  case date(CivilDate)
  /// `.dateTime`, `.dateTimeMinutes`.
  case dateTime(LocalDateTime)
  /// `.timeOfDay`: seconds after local midnight.
  case timeOfDay(secondsSinceMidnight: Int)
  /// `.duration`, `.durationWithSeconds`.
  case duration(seconds: Double)
  /// `.boolean`.
  case boolean(Bool)

  /// A number or duration other than 0, which a chart shows.
  var isNonzeroNumber: Bool {
    switch self {
    case .number(let value), .duration(seconds: let value): return value != 0 && value.isFinite
    default: return false
    }
  }

  var kindName: String {
    switch self {
    case .blank: return "blank"
    case .text: return "text"
    case .number: return "number"
    case .date: return "date"
    case .dateTime: return "date-time"
    case .timeOfDay: return "time of day"
    case .duration: return "duration"
    case .boolean: return "boolean"
    }
  }
}

/// Why a workbook could not be written; `description` is one line for the user.
public enum WorkbookError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The workbook file or its temporary folder cannot be created; `code` is the system's error
  /// number, when one is known.
  case cannotCreate(path: String, reason: String, code: Int32? = nil)
  /// libxlsxwriter reported an error (its own message, from `lxw_strerror`); `code` is the
  /// system's error number the failing call left (a full disk while the file is zipped), if any.
  case library(path: String, operation: String, message: String, code: Int32? = nil)
  /// The sheet part being written holds as many rows as a sheet can; the caller either calls
  /// `continueOnNewSheet()` or stops writing this table to the workbook.
  case sheetFull(sheet: String, rowsPerSheet: Int)
  /// A row that does not match its sheet's columns (a programming error of the caller).
  case invalidRow(sheet: String, detail: String)
  /// A chart that names a missing column or cannot plot one.
  case invalidChart(title: String, detail: String)
  /// The workbook was already closed (or failed to close).
  case closed(path: String)

  /// The system's error number behind the failure, when one is known.
  public var systemCode: Int32? {
    switch self {
    case .cannotCreate(_, _, let code), .library(_, _, _, let code): return code
    case .sheetFull, .invalidRow, .invalidChart, .closed: return nil
    }
  }

  public var description: String {
    switch self {
    case .cannotCreate(let path, let reason, _): return "cannot create workbook \(path): \(reason)"
    case .library(let path, let operation, let message, _):
      return "cannot write workbook \(path) (\(operation)): \(message)"
    case .sheetFull(let sheet, let rows):
      return
        "sheet '\(sheet)' is full: a spreadsheet sheet holds \(rows) rows including the header; continue on a new sheet or leave the rest to the CSV"
    case .invalidRow(let sheet, let detail): return "sheet '\(sheet)': \(detail)"
    case .invalidChart(let title, let detail): return "chart '\(title)': \(detail)"
    case .closed(let path): return "workbook \(path) is already closed"
    }
  }
}

/// A native chart drawn from columns of one sheet, placed on the workbook's Charts sheet.
public struct WorkbookChart: Hashable, Sendable {
  public enum Kind: Hashable, Sendable {
    case line
    case column
    /// Columns whose series stack on each other (sleep stages adding up to a night).
    case stackedColumn
  }

  public struct Series: Hashable, Sendable {
    /// A numeric or duration column of the sheet.
    public var column: String
    /// The legend entry; the column's header when nil.
    public var name: String?

    public init(_ column: String, name: String? = nil) {
      self.column = column
      self.name = name
    }
  }

  /// A chart drawn only where `column` has a value in at least half the rows where any of `of`
  /// has one: sleep stages are charted when most nights have them, not when one night does.
  public struct Majority: Hashable, Sendable {
    public var column: String
    public var of: [String]

    public init(_ column: String, of columns: [String]) {
      self.column = column
      self.of = columns
    }
  }

  public var kind: Kind
  public var title: String
  /// When set, the chart is drawn only where the rule holds (`Workbook.firstPlottable`).
  public var majority: Majority?
  /// The column along the horizontal axis (usually a date).
  public var categoryColumn: String
  public var series: [Series]
  /// Axis titles, with units, e.g. "Night" and "Sleep (h:mm)".
  public var categoryAxisTitle: String
  public var valueAxisTitle: String
  /// Where the value axis stops when a bar reaches beyond it (the bar is cut, the title says so):
  /// one 25 h "night" of overlapping manual entries would otherwise squash every real night.
  public var valueAxisCap: Double?

  /// A sheet longer than this many rows is charted over its last `recentRows` only, with a
  /// 7-day average (worked out into the Charts sheet, empty where fewer than
  /// `movingAverageLeastDays` of the 7 have a value) on each series of a chart that does not stack: 1,100 daily
  /// bars in a chart are hair-thin and unreadable (Pipelines/docs/daily.md, "`health.xlsx`").
  public static let longHistoryRows = 400
  public static let recentRows = 365
  public static let movingAverageDays = 7
  /// Days of the 7 that must have a value for the average to have one (as the report's line).
  public static let movingAverageLeastDays = 4

  public init(
    _ kind: Kind, title: String, categoryColumn: String, series: [Series], categoryAxisTitle: String,
    valueAxisTitle: String, majority: Majority? = nil, valueAxisCap: Double? = nil
  ) {
    self.valueAxisCap = valueAxisCap
    self.kind = kind
    self.title = title
    self.majority = majority
    self.categoryColumn = categoryColumn
    self.series = series
    self.categoryAxisTitle = categoryAxisTitle
    self.valueAxisTitle = valueAxisTitle
  }
}

/// What a closed workbook holds, for the run report.
public struct WorkbookSummary: Hashable, Sendable {
  public struct Sheet: Hashable, Sendable {
    /// The name the caller asked for.
    public var requestedName: String
    /// The sheets holding the table, in order, with their data rows (header not counted). More
    /// than one when the table went on past a sheet's capacity.
    public var parts: [Part]
    /// Text cells cut at Excel's 32 767-character limit.
    public var truncatedTexts: Int
    /// The table had no rows, so its sheet (a header only) was hidden: see `Workbook.close`.
    public var hidden: Bool = false
    public var dataRows: Int { parts.reduce(0) { $0 + $1.dataRows } }
  }

  public struct Part: Hashable, Sendable {
    public var name: String
    public var dataRows: Int
  }

  public var path: String
  public var sheets: [Sheet]
  /// Names of the charts drawn, in order.
  public var charts: [String]
}

/// Excel's serial date-times (the 1900 date system): days since 1899-12-30 plus the fraction of
/// the day. Excel counts a 1900-02-29 that never existed (a Lotus 1-2-3 compatibility bug), so
/// for 1900-01-01 … 1900-02-28 the serial is one less than that count; dates outside
/// 1900-01-01 … 9999-12-31 have no serial.
public enum ExcelSerialDate {
  /// 1970-01-01 is serial 25 569.
  static let unixEpochSerial: Int64 = 25_569
  static let firstDate = CivilDate(year: 1900, month: 1, day: 1)
  static let lastDate = CivilDate(year: 9999, month: 12, day: 31)
  static let firstRealLeapDayFix = CivilDate(year: 1900, month: 3, day: 1)

  /// The serial of midnight starting `date`; nil outside Excel's range.
  public static func serial(_ date: CivilDate) -> Double? {
    guard date >= firstDate, date <= lastDate else { return nil }
    let days = date.daysSinceEpoch + unixEpochSerial
    return Double(date < firstRealLeapDayFix ? days - 1 : days)
  }

  public static func serial(_ dateTime: LocalDateTime) -> Double? {
    guard let day = serial(dateTime.date) else { return nil }
    return day + Double(dateTime.secondsSinceMidnight) / 86_400
  }

  /// A duration as Excel stores one: a number of days.
  public static func duration(seconds: Double) -> Double { seconds / 86_400 }
}

/// Excel's sheet-name rules: at most 31 characters, none of `[ ] : * ? / \`, no apostrophe at
/// either end, not empty, not "History" (reserved by English Excel), unique ignoring case.
/// Apostrophes become typographic ones (’) anywhere: Excel allows them inside a name, but a
/// reference to such a sheet doubles them (`'Bob''s'!A1`), which Gnumeric cannot parse, so its
/// charts would lose their data.
struct SheetNamer {
  static let maximumLength = 31
  private var used: Set<String> = []

  /// A valid name not used before, as close to `requested` as the rules allow; a clash gets
  /// " (2)", " (3)", … (the base shortened to make room).
  mutating func claim(_ requested: String) -> String {
    let base = Self.sanitize(requested)
    var candidate = base
    var number = 2
    while used.contains(candidate.lowercased()) {
      let suffix = " (\(number))"
      candidate = Self.shortened(base, toUTF16: Self.maximumLength - suffix.utf16.count) + suffix
      number += 1
    }
    used.insert(candidate.lowercased())
    return candidate
  }

  /// The name for part `part` (2, 3, …) of a table whose first sheet is `first`.
  mutating func claimContinuation(of first: String, part: Int) -> String {
    let suffix = " (\(part))"
    return claim(Self.shortened(first, toUTF16: Self.maximumLength - suffix.utf16.count) + suffix)
  }

  static func sanitize(_ requested: String) -> String {
    var scalars = String.UnicodeScalarView()
    for scalar in requested.unicodeScalars {
      switch scalar {
      case "[", "]", ":", "*", "?", "/", "\\": scalars.append("_")
      case "'": scalars.append("\u{2019}")
      // Control characters cannot be written in a sheet name.
      case _ where scalar.value < 0x20 || scalar.value == 0x7F: scalars.append("_")
      default: scalars.append(scalar)
      }
    }
    var name = shortened(String(scalars), toUTF16: maximumLength)
    if name.trimmingSpaces.isEmpty { name = "Sheet" }
    if name.lowercased() == "history" { name += "_" }
    return name
  }

  /// `text` cut to `limit` UTF-16 units at the end of a word, so a tab never reads as a typo
  /// (`walking-running-distance-per-day` becomes `walking-running-distance-per`, not
  /// `…-per-da`): the cut goes back to the last space, `-`, `_` or `.` and drops those. A name
  /// without such a break in its first `limit` units is cut where it reaches the limit.
  static func shortened(_ text: String, toUTF16 limit: Int) -> String {
    let scalars = Array(text.unicodeScalars)
    let cut = truncate(text, toUTF16: limit)
    var kept = Array(cut.unicodeScalars)
    guard kept.count < scalars.count else { return text }
    if !isWordBreak(scalars[kept.count]) {
      guard let lastBreak = kept.lastIndex(where: isWordBreak) else { return cut }
      kept.removeSubrange(lastBreak...)
    }
    while let last = kept.last, isWordBreak(last) { kept.removeLast() }
    return kept.isEmpty ? cut : String(String.UnicodeScalarView(kept))
  }

  static func isWordBreak(_ scalar: Unicode.Scalar) -> Bool {
    scalar == " " || scalar == "-" || scalar == "_" || scalar == "."
  }

  /// The longest prefix of whole Unicode scalars that is at most `limit` UTF-16 units (Excel
  /// counts UTF-16 units, libxlsxwriter counts scalars; this satisfies both).
  static func truncate(_ text: String, toUTF16 limit: Int) -> String {
    guard text.utf16.count > limit else { return text }
    var scalars = String.UnicodeScalarView()
    var units = 0
    for scalar in text.unicodeScalars {
      units += scalar.utf16.count
      if units > limit { break }
      scalars.append(scalar)
    }
    return String(scalars)
  }
}

extension String {
  fileprivate var trimmingSpaces: Substring {
    var slice = self[...]
    while slice.first == " " { slice.removeFirst() }
    while slice.last == " " { slice.removeLast() }
    return slice
  }
}

/// Column widths in Excel's units (about one digit of the default font each), from the header and
/// the first rows of a sheet: enough to show a typical value, never absurdly wide.
struct ColumnWidthEstimate {
  static let sampledRows = 1000
  static let minimum = 6.0
  static let maximum = 60.0
  private(set) var characters: [Int]

  init(columns: [WorkbookColumn]) {
    // The header is bold and carries the autofilter button, about three characters more.
    characters = columns.map { $0.name.count + 3 }
  }

  mutating func observe(_ cell: WorkbookCell, column: Int, kind: WorkbookColumn.Kind) {
    let shown: Int
    switch cell {
    case .blank: return
    case .text(let text): shown = text.utf8.count > 200 ? 200 : text.count
    case .number(let value):
      guard value.isFinite else { return }
      shown = Self.numberWidth(value, kind: kind)
    case .date: shown = 10
    case .dateTime: shown = kind == .dateTimeMinutes ? 16 : 19
    case .timeOfDay: shown = 5
    case .duration(let seconds):
      guard seconds.isFinite else { return }
      shown = Self.wholeDigits(seconds / 3600) + (kind == .durationWithSeconds ? 6 : 3) + (seconds < 0 ? 1 : 0)
    case .boolean: shown = 5
    }
    characters[column] = max(characters[column], shown + 1)
  }

  var widths: [Double] { characters.map { min(max(Double($0), Self.minimum), Self.maximum) } }

  /// Digits of the whole part of a finite `value`; 16 for any magnitude an integer cannot hold,
  /// which is wider than a column is ever made.
  static func wholeDigits(_ value: Double) -> Int {
    abs(value) < 1e15 ? String(Int64(abs(value).rounded(.down))).count : 16
  }

  static func numberWidth(_ value: Double, kind: WorkbookColumn.Kind) -> Int {
    let sign = value < 0 ? 1 : 0
    let whole = wholeDigits(value)
    switch kind {
    case .integer: return sign + whole
    case .decimal(let places): return sign + whole + (places > 0 ? 1 + min(places, 10) : 0)
    default: return min(String(value).count, 11)
    }
  }
}
