import Foundation
import HealthExtract
import HealthModel
import RunExecution

/// The thread that owns one run's `health.xlsx`: libxlsxwriter is called from this thread only.
///
/// Writing a workbook costs the run about a second on a four-year export — cells formatted into
/// each sheet's row file, then the whole file deflated on close — and none of it is needed by
/// another stage. So the tables' writers hand their rows over (`post`) and go on, and the close
/// deflates while the report is written; only values cross threads. A problem with a row is kept
/// and reported by the close, which then writes nothing.
typealias WorkbookThread = FileWriterThread<WorkbookMessage, WorkbookSummary, WorkbookError>

enum WorkbookMessage: Sendable {
  /// Rows of the plan's sheet number `sheet`, one field per column, row after row.
  case rows(sheet: Int, fields: [Field])
  /// Draws the charts and writes the file.
  case close
  /// Ends the thread without writing the file.
  case stop
}

extension FileWriterThread where Message == WorkbookMessage, Summary == WorkbookSummary, Failure == WorkbookError {
  /// Starts the thread and waits until it has created the workbook and its sheets: the Charts
  /// sheet first when there are `charts` to draw from plan sheet number `chartSheet`.
  /// - Parameter charts: each entry a chart and what to draw instead when it has nothing to
  ///   show (`WorkbookChart.firstPlottable`), decided at close from what the sheet holds then.
  static func start(
    on executor: RunExecutor, path: String, temporaryDirectory: String, created: Int64, plan: [RunWorkbook.SheetPlan],
    charts: [[WorkbookChart]], chartSheet: Int?, zone: ZoneRules
  ) throws(WorkbookError) -> WorkbookThread {
    try start(on: executor, name: "workbook", budget: 16, close: .close, stop: .stop) { inbox throws(WorkbookError) in
      let workbook = try Workbook(path: path, temporaryDirectory: temporaryDirectory, created: created)
      if chartSheet != nil, !charts.isEmpty { try workbook.addChartsSheet() }
      var tables: [SheetRows] = []
      for (number, sheet) in plan.enumerated() {
        let added = try workbook.addSheet(
          name: sheet.name, columns: sheet.columns.map(WorkbookTableWriter.workbookColumn),
          keepingChartValues: number == chartSheet && !charts.isEmpty)
        tables.append(SheetRows(sheet: added, columns: sheet.columns, zone: zone))
      }
      inbox.ready()
      var failure: WorkbookError?
      while true {
        switch inbox.next() {
        case .rows(let sheet, let fields):
          guard failure == nil else { continue }
          do throws(WorkbookError) { try tables[sheet].append(fields) } catch { failure = error }
        case .close:
          if let failure { throw failure }
          if let chartSheet {
            let sheet = tables[chartSheet].sheet
            for choices in charts {
              if let chart = WorkbookChart.firstPlottable(of: choices, in: sheet) {
                try workbook.addChart(chart, of: sheet)
              }
            }
          }
          return try workbook.close(hidingEmptySheets: true)
        case .stop:
          return nil
        }
      }
    }
  }
}
