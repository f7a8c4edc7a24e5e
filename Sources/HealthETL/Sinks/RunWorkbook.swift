import HealthModel

/// `health.xlsx` of one run: a sheet per table the plan marks for it, filled by the same
/// `TableWriter`s that write the CSV files (a table's first output gets the sheet), in
/// libxlsxwriter's constant-memory mode so memory stays flat however long the tables are.
///
/// Sheets are created up front in the plan's order, so their tabs follow it whatever order the
/// stages finish in. A table whose rows are parts of a day (heart rate per minute: 525,600 rows
/// a year) is left to its CSV: a few years would fill several sheets of 1,048,576 rows that no
/// spreadsheet handles well; `leftToCSV` lists them for `run.json`. A table that still reaches a
/// sheet's last row goes on in `<name> (2)`.
public final class RunWorkbook {
  /// The workbook's file in the output folder.
  public static let file = "health.xlsx"

  /// One table as a sheet: the output file that feeds it, the sheet's name, its columns.
  public struct SheetPlan: Sendable {
    public var file: String
    public var name: String
    public var columns: [Column]
  }

  let workbook: Workbook
  private let zone: ZoneRules
  private var sheets: [String: WorkbookTableWriter] = [:]
  private var claimed: Set<String> = []
  /// Outputs that are not in the workbook, and why.
  public let leftToCSV: [(file: String, reason: String)]

  init(
    transaction: OutputTransaction, plan: [SheetPlan], leftToCSV: [(file: String, reason: String)], zone: ZoneRules,
    created: Instant?
  ) throws(OutputError) {
    self.zone = zone
    self.leftToCSV = leftToCSV
    let path = transaction.reserve(Self.file)
    let scratch = try transaction.scratchDirectory()
    do throws(WorkbookError) {
      // A fixed creation time keeps reruns byte-identical (2000-01-01 without an export date).
      workbook = try Workbook(path: path, temporaryDirectory: scratch, created: created?.seconds ?? 946_684_800)
      for sheet in plan {
        let added = try workbook.addSheet(
          name: sheet.name, columns: sheet.columns.map(WorkbookTableWriter.workbookColumn))
        sheets[sheet.file] = WorkbookTableWriter(sheet: added, columns: sheet.columns, zone: zone, path: Self.file)
      }
    } catch {
      throw .ioError(path: Self.file, reason: error.description)
    }
  }

  /// The sheet fed by the table written to `file`, once; nil for a file without one.
  func claim(file: String) -> WorkbookTableWriter? {
    guard let sheet = sheets[file], claimed.insert(file).inserted else { return nil }
    return sheet
  }

  /// Draws the charts of the Daily sheet and writes the file.
  func close(charts: [WorkbookChart], of file: String) throws(OutputError) -> WorkbookSummary {
    do throws(WorkbookError) {
      if let daily = sheets[file] {
        for chart in charts { try workbook.addChart(chart, of: daily.sheet) }
      }
      return try workbook.close()
    } catch {
      throw .ioError(path: Self.file, reason: error.description)
    }
  }
}
