public import HealthModel
import RunExecution

/// `health.xlsx` of one run: a sheet per table the plan marks for it, filled by the same
/// `TableWriter`s that write the CSV files (a table's first output gets the sheet), in
/// libxlsxwriter's constant-memory mode so memory stays flat however long the tables are.
///
/// Sheets are created up front in the plan's order, after the Charts sheet (the one a spreadsheet
/// opens on), so their tabs follow it whatever order the stages finish in. Which charts are drawn
/// is decided at close from what the chart's table holds, and a table without rows keeps a hidden
/// sheet (`Workbook.close(hidingEmptySheets:)`). A table whose rows are parts of a day (heart rate per minute: 525,600 rows
/// a year) is left to its CSV: a few years would fill several sheets of 1,048,576 rows that no
/// spreadsheet handles well; `leftToCSV` lists them for `run.json`. A table that still reaches a
/// sheet's last row goes on in `<name> (2)`.
public final class RunWorkbook: TableSink {
  /// The workbook's file in the output folder.
  public static let file = "health.xlsx"

  /// One table as a sheet: the output file that feeds it, the sheet's name, its columns.
  public struct SheetPlan: Sendable {
    public var file: String
    public var name: String
    public var columns: [Column]
  }

  private let thread: WorkbookThread
  /// Plan position of each sheet's table, by the output file that feeds it.
  private let sheetNumbers: [String: Int]
  private let columnCounts: [Int]
  private var sheets: [String: WorkbookTableWriter] = [:]
  /// Outputs that are not in the workbook, and why.
  public let leftToCSV: [(file: String, reason: String)]

  /// Starts the workbook's thread (`WorkbookThread`) on `executor` and creates the workbook and its
  /// sheets there.
  /// - Parameters:
  ///   - charts: drawn from the sheet fed by `chartsFrom`; each entry a chart and what to draw
  ///     instead when it has nothing to show (`WorkbookChart.firstPlottable`).
  static func start(
    on executor: RunExecutor, transaction: OutputTransaction, plan: [SheetPlan],
    leftToCSV: [(file: String, reason: String)], zone: ZoneRules, created: Instant?, charts: [[WorkbookChart]] = [],
    chartsFrom chartFile: String = ""
  ) throws(OutputError) -> RunWorkbook {
    var numbers: [String: Int] = [:]
    for (number, sheet) in plan.enumerated() where numbers[sheet.file] == nil { numbers[sheet.file] = number }
    let path = transaction.reserve(Self.file)
    let scratch = try transaction.scratchDirectory()
    do throws(WorkbookError) {
      // A fixed creation time keeps reruns byte-identical (2000-01-01 without an export date).
      let thread = try WorkbookThread.start(
        on: executor, path: path, temporaryDirectory: scratch, created: created?.seconds ?? 946_684_800, plan: plan,
        charts: charts, chartSheet: numbers[chartFile], zone: zone)
      return RunWorkbook(
        thread: thread, sheetNumbers: numbers, columnCounts: plan.map(\.columns.count), leftToCSV: leftToCSV)
    } catch {
      throw .writing(Self.file, reason: error.description, code: error.systemCode)
    }
  }

  private init(
    thread: WorkbookThread, sheetNumbers: [String: Int], columnCounts: [Int],
    leftToCSV: [(file: String, reason: String)]
  ) {
    self.thread = thread
    self.sheetNumbers = sheetNumbers
    self.columnCounts = columnCounts
    self.leftToCSV = leftToCSV
  }

  public func wants(file: String) -> Bool { sheetNumbers[file] != nil }

  public func claim(file: String, pattern: String?, columns: [Column], zone: ZoneRules) -> (any TableRowSink)? {
    claim(file: file)
  }

  /// The sheet fed by the table written to `file`, once; nil for a file without one.
  func claim(file: String) -> WorkbookTableWriter? {
    guard let number = sheetNumbers[file], sheets[file] == nil else { return nil }
    let sheet = WorkbookTableWriter(sheet: number, columnCount: columnCounts[number], thread: thread)
    sheets[file] = sheet
    return sheet
  }

  /// Starts drawing the charts and writing the file, on the workbook's thread; `closed()` waits
  /// for it. Every table must have been written.
  func startClosing() {
    for sheet in sheets.values { sheet.flush() }
    thread.startClosing()
  }

  /// What was written, once the file is complete.
  func closed() throws(OutputError) -> WorkbookSummary {
    do throws(WorkbookError) {
      return try thread.closed()
    } catch {
      throw .writing(Self.file, reason: error.description, code: error.systemCode)
    }
  }
}
