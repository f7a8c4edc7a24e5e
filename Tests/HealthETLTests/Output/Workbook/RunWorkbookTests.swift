import Foundation
import HealthModel
import Testing

@testable import HealthETL

/// `health.xlsx` written on the workbook's thread: rows of interleaved tables arrive in order, a
/// row the workbook cannot take fails the close by name, and a run that stops leaves no file and
/// no thread behind.
///
/// The limit catches a hang, never slowness: on a busy 2-core machine a test can wait minutes for
/// one of the two threads Swift Testing runs tests on (one minute once failed every test here).
@Suite(.timeLimit(.minutes(10))) struct RunWorkbookTests {
  static let plan = [
    RunWorkbook.SheetPlan(file: "a.csv", name: "A", columns: [.integer("n", ""), .text("label", "")]),
    RunWorkbook.SheetPlan(file: "b.csv", name: "B", columns: [.date("date", "")]),
  ]

  static func workbook(_ folder: String) throws -> (OutputTransaction, RunWorkbook) {
    let transaction = try OutputTransaction(outputDirectory: folder)
    let workbook = try RunWorkbook.start(
      on: testExecutor, transaction: transaction, plan: plan, leftToCSV: [], zone: .utc, created: nil)
    return (transaction, workbook)
  }

  static func folder() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("run-workbook-\(UUID().uuidString)").path
  }

  @Test func rowsOfTwoTablesKeepTheirOrderAcrossManyHandOvers() throws {
    let folder = Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let (transaction, workbook) = try Self.workbook(folder)
    defer { transaction.abandon() }
    let a = try #require(workbook.claim(file: "a.csv"))
    let b = try #require(workbook.claim(file: "b.csv"))
    #expect(workbook.claim(file: "a.csv") == nil)  // one sheet per table
    // 5,000 rows are ten hand-overs of A, interleaved with B's rows.
    for n in 0..<5000 {
      a.append([.integer(Int64(n)), .text("row \(n)")])
      if n % 1000 == 0 { b.append([.date(CivilDate(year: 2024, month: 1, day: 1 + n / 1000))]) }
    }
    workbook.startClosing()
    let summary = try workbook.closed()
    #expect(summary.sheets.map(\.dataRows) == [5000, 5])
    let parts = try WorkbookTests.members(transaction.stagedPath(RunWorkbook.file))
    let sheetA = WorkbookTests.cells(try #require(parts["xl/worksheets/sheet1.xml"]))
    // Row 1 is the header; data row r holds n = r - 2.
    for row in [2, 513, 514, 2049, 5001] {
      #expect(sheetA["A\(row)"]?.value == String(row - 2))
      #expect(sheetA["B\(row)"]?.value == "row \(row - 2)")
    }
    let sheetB = WorkbookTests.cells(try #require(parts["xl/worksheets/sheet2.xml"]))
    // 2024-01-01 is Excel serial 45292; B's rows are its first five days.
    #expect((2...6).map { sheetB["A\($0)"]?.value } == ["45292", "45293", "45294", "45295", "45296"])
  }

  /// A Daily table like bwassim's (Garmin + iPhone): steps, nights without stages (0 h deep),
  /// no resting heart rate, an average heart rate. The charts show what is there, the Charts
  /// sheet comes first, and a table without rows has a hidden sheet.
  @Test func chartsComeFirstAndShowWhatTheDailyTableHolds() throws {
    let folder = Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder)
    defer { transaction.abandon() }
    let number = { (name: String) in Column(name, .number, precision: .asRecorded, "") }
    let plan = [
      RunWorkbook.SheetPlan(
        file: "daily.csv", name: "Daily",
        columns: [
          .date("date", ""), .integer("steps", ""), number("deep_h"), number("asleep_h"), number("resting_hr_bpm"),
          number("hr_avg_bpm"),
        ]),
      RunWorkbook.SheetPlan(file: "laps.csv", name: "Swim laps", columns: [.integer("lap", "")]),
    ]
    let workbook = try RunWorkbook.start(
      on: testExecutor, transaction: transaction, plan: plan, leftToCSV: [], zone: .utc, created: nil,
      charts: DailyTables.charts,
      chartsFrom: "daily.csv")
    let daily = try #require(workbook.claim(file: "daily.csv"))
    _ = try #require(workbook.claim(file: "laps.csv"))
    daily.append([
      .date(CivilDate(year: 2021, month: 1, day: 24)), .integer(8000), .number(0), .number(6.5), .missing, .number(61),
    ])
    daily.append([
      .date(CivilDate(year: 2021, month: 1, day: 25)), .integer(9000), .number(0), .missing, .missing, .number(63),
    ])
    workbook.startClosing()
    let summary = try workbook.closed()
    #expect(summary.charts == ["Steps per day", "Sleep per night", "Average heart rate per day"])
    #expect(summary.sheets.map(\.hidden) == [false, true])
    let parts = try WorkbookTests.members(transaction.stagedPath(RunWorkbook.file))
    let book = try #require(parts["xl/workbook.xml"])
    let sheets = book.matches(of: #/<sheet name="([^"]+)" sheetId="(\d)"( state="hidden")?/#).map {
      "\($0.1)\($0.3 == nil ? "" : " hidden")"
    }
    #expect(sheets == ["Charts", "Daily", "Swim laps hidden"])
    // Printed, the Charts sheet is landscape and one page wide: a 960 px chart is not cut in two.
    let charts = try #require(parts["xl/worksheets/sheet1.xml"])
    #expect(charts.contains("<pageSetUpPr fitToPage=\"1\"/>"))
    #expect(charts.contains("fitToHeight=\"0\"") && charts.contains("orientation=\"landscape\""))
    // Sleep: asleep alone (no night has stages, in_bed_h is not a column); heart: the average.
    let sleep = try #require(parts["xl/charts/chart2.xml"])
    #expect(sleep.contains("<c:v>Asleep</c:v>") && !sleep.contains("Deep"))
    #expect(sleep.contains("<c:f>Daily!$D$2:$D$3</c:f>"))
    // Two dates: every one labelled, level.
    #expect(!sleep.contains("tickLblSkip") && !sleep.contains("rot=\"-2700000\""))
    let heart = try #require(parts["xl/charts/chart3.xml"])
    #expect(heart.contains("<c:f>Daily!$F$2:$F$3</c:f>"))
    #expect(parts["xl/charts/chart4.xml"] == nil)
  }

  /// A Daily sheet of `rows` dates from 2021-01-01 with the columns the charts read; `row(n)` the
  /// cells of date n after the date.
  static func daily(
    rows: Int, columns: [String], row: (Int) -> [Field]
  ) throws -> (summary: WorkbookSummary, parts: [String: String]) {
    let folder = Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder)
    defer { transaction.abandon() }
    let plan = [
      RunWorkbook.SheetPlan(
        file: "daily.csv", name: "Daily",
        columns: [.date("date", "")] + columns.map { Column($0, .number, precision: .asRecorded, "") })
    ]
    let workbook = try RunWorkbook.start(
      on: testExecutor, transaction: transaction, plan: plan, leftToCSV: [], zone: .utc, created: nil,
      charts: DailyTables.charts, chartsFrom: "daily.csv")
    let sheet = try #require(workbook.claim(file: "daily.csv"))
    for n in 0..<rows {
      sheet.append(
        [.date(CivilDate(daysSinceEpoch: CivilDate(year: 2021, month: 1, day: 1).daysSinceEpoch + Int64(n)))] + row(n))
    }
    workbook.startClosing()
    let summary = try workbook.closed()
    return (summary, try WorkbookTests.members(transaction.stagedPath(RunWorkbook.file)))
  }

  /// 63 nights from a sleep app (asleep and in bed, no stages), one of which also has an awake
  /// value: the stage chart drew a lone 2 h Awake bar. Stages are charted when at least half the
  /// nights with sleep have them: 1 of 63 has a stage column (awake), 0 have core → asleep and in
  /// bed. With core on 32 of 63 nights (32 × 2 ≥ 63) the stages are charted.
  @Test(arguments: [0, 31, 32]) func sleepStagesAreChartedWhenMostNightsHaveThem(stagedNights: Int) throws {
    let columns = ["core_h", "awake_h", "asleep_h", "in_bed_h"]
    let (summary, parts) = try Self.daily(rows: 63, columns: columns) { n in
      [
        n < stagedNights ? .number(4) : .missing, n == 40 || n < stagedNights ? .number(2) : .missing,
        .number(7), .number(7.5),
      ]
    }
    let staged = stagedNights * 2 >= 63
    #expect(summary.charts == [staged ? "Sleep per night by stage" : "Sleep per night"])
    let chart = try #require(parts["xl/charts/chart1.xml"])
    #expect(chart.contains("<c:v>Asleep</c:v>") == !staged)
    #expect(chart.contains("<c:v>Awake</c:v>") == staged)
    // 63 dates, every 6th labelled, slanted by 45°.
    #expect(chart.contains("<c:tickLblSkip val=\"6\"/>") && chart.contains("rot=\"-2700000\""))
  }

  /// 500 days of steps: the chart shows the last 365 (rows 137–501 of the sheet) with a 7-day
  /// average, not 500 hair-thin bars; 400 days or fewer are charted whole, without it. The
  /// averages are on the Charts sheet (column S the dates, T the steps' average, rows 2–366), and
  /// the days are dots under the line.
  @Test(arguments: [400, 500]) func aLongHistoryIsChartedOverItsLastYearWithASevenDayLine(days: Int) throws {
    let (_, parts) = try Self.daily(rows: days, columns: ["steps"]) { n in [.number(Double(5000 + n))] }
    let chart = try #require(parts["xl/charts/chart1.xml"])
    #expect(!chart.contains("<c:trendline>"))
    // At most 12 date labels: every 31st of 365 days, every 34th of 400.
    #expect(chart.contains(days > 400 ? "<c:tickLblSkip val=\"31\"/>" : "<c:tickLblSkip val=\"34\"/>"))
    if days > 400 {
      #expect(chart.contains("<c:f>Daily!$B$137:$B$501</c:f>"))
      #expect(chart.contains("<c:f>Charts!$T$2:$T$366</c:f>"))
      #expect(chart.contains("<c:v>Steps, 7-day average</c:v>"))
      #expect(chart.contains("<c:lineChart>") && !chart.contains("<c:barChart>"))
      // Blanks as gaps: Excel's default, which libxlsxwriter leaves unwritten (not "span" or "zero").
      #expect(!chart.contains("dispBlanksAs"))
      #expect(chart.contains("Steps per day, last 365 days"))
    } else {
      #expect(chart.contains("<c:f>Daily!$B$2:$B$401</c:f>"))
      #expect(chart.contains("<c:barChart>") && !chart.contains("Charts!"))
    }
  }

  /// 500 days of steps (5,000 + day) with none on days 300–359 (two months): the last 365 rows are
  /// days 135–499. A day's 7-day average is the mean of the steps of it and the 6 days before, when
  /// at least 4 have steps: day 135's is 5,132 (129–135); day 302's 5,297.5 (296–299); days
  /// 303–362 have fewer than 4 (day 303: 297–299; day 362: 360–362) — the cells are empty and the
  /// line stops; day 363's is 5,361.5 (360–363). Before, Excel's trendline averaged the last 7
  /// points, whatever their days, across the two months.
  @Test func aSevenDayLineStopsWhereTheDaysHaveNoValue() throws {
    let (_, parts) = try Self.daily(rows: 500, columns: ["steps"]) { n in
      [(300..<360).contains(n) ? .missing : .number(Double(5000 + n))]
    }
    let charts = try #require(parts["xl/worksheets/sheet1.xml"])
    // The T cells written, by row: row r holds day 133 + r.
    let cells = Dictionary(
      uniqueKeysWithValues: charts.matches(of: #/<c r="T(\d+)"[^>]*><v>([^<]+)</v></c>/#).map {
        (Int($0.1)! + 133, Double($0.2)!)
      })
    #expect(cells[135] == 5132)
    #expect(cells[302] == 5297.5)
    #expect((303...362).allSatisfy { cells[$0] == nil })
    #expect(cells[363] == 5361.5)
    #expect(cells[499] == 5496)
    #expect(cells.count == 365 - 60)
    #expect(charts.contains("Steps, 7-day average"))
    // Printed, the sheet is the chart (24 rows from row 1), not the averages beside it.
    let book = try #require(parts["xl/workbook.xml"])
    #expect(book.contains(#"<definedName name="_xlnm.Print_Area" localSheetId="0">Charts!$A$1:$R$25</definedName>"#))
  }

  /// Nights of 7 h asleep and 8 h in bed, and one 25 h "night" of overlapping manual entries
  /// (the sleep-apps-oddities profile): the hours axis stops at 16, the title counts the cut bar.
  /// Without such a night the axis is Excel's own.
  @Test(arguments: [true, false]) func aNightBeyond16HoursIsCutAtTheAxis(withLongNight: Bool) throws {
    let (_, parts) = try Self.daily(rows: 10, columns: ["asleep_h", "in_bed_h"]) { n in
      withLongNight && n == 5 ? [.number(25), .number(25.5)] : [.number(7), .number(8)]
    }
    let chart = try #require(parts["xl/charts/chart1.xml"])
    #expect(chart.contains("Sleep per night"))
    #expect(chart.contains(#"<c:max val="16"/>"#) == withLongNight)
    #expect(chart.contains("Sleep per night; 1 bar over 16 hours cut at the axis") == withLongNight)
  }

  /// A heart rate every third day for 500 days (the dogsheep fixture's shape): never 4 values in
  /// 7 days, so no 7-day average exists: the chart keeps its bars and draws no empty line.
  @Test func daysTooSparseForAnAverageKeepTheirBars() throws {
    let (_, parts) = try Self.daily(rows: 500, columns: ["steps"]) { n in
      [n % 3 == 0 ? .number(Double(5000 + n)) : .missing]
    }
    let charts = try #require(parts["xl/worksheets/sheet1.xml"])
    #expect(!charts.contains("7-day average"))
    let chart = try #require(parts["xl/charts/chart1.xml"])
    #expect(chart.contains("<c:barChart>") && !chart.contains("7-day average"))
  }

  /// Steps for 500 days that stop 100 days before the sheet ends (an iPhone replaced by a
  /// Garmin without steps): the chart ends at the last step count, rows 137–501, not on a year of
  /// blanks.
  @Test func aLongHistoryIsChartedUpToItsLastValue() throws {
    let (_, parts) = try Self.daily(rows: 600, columns: ["steps", "asleep_h"]) { n in
      [n < 500 ? .number(Double(5000 + n)) : .missing, .number(7)]
    }
    let chart = try #require(parts["xl/charts/chart1.xml"])
    #expect(chart.contains("<c:f>Daily!$B$137:$B$501</c:f>"))
    #expect(chart.contains("Steps per day, 365 days to its last value"))
    let sleep = try #require(parts["xl/charts/chart2.xml"])
    #expect(sleep.contains("<c:f>Daily!$C$237:$C$601</c:f>") && sleep.contains("Sleep per night, last 365 days"))
  }

  /// 600 days whose steps begin on day 500 (bwassim's Garmin export: steps from October 2020 only):
  /// the chart starts at the first value, row 501, not a year earlier on 265 blank days; sleep,
  /// measured all along, keeps its year.
  @Test func aLongHistoryIsChartedFromItsFirstValueWhenThatIsLater() throws {
    let (_, parts) = try Self.daily(rows: 600, columns: ["steps", "asleep_h"]) { n in
      [n >= 500 ? .number(Double(5000 + n)) : .missing, .number(7)]
    }
    let chart = try #require(parts["xl/charts/chart1.xml"])
    #expect(chart.contains("<c:f>Daily!$B$502:$B$601</c:f>"))
    #expect(chart.contains("Steps per day, last 100 days"))
    let sleep = try #require(parts["xl/charts/chart2.xml"])
    #expect(sleep.contains("<c:f>Daily!$C$237:$C$601</c:f>") && sleep.contains("Sleep per night, last 365 days"))
  }

  /// A column without a single value (no resting heart rate from a Garmin) is hidden; the others,
  /// and every column of a sheet without rows, stay visible.
  @Test func columnsWithoutAValueAreHidden() throws {
    let (_, parts) = try Self.daily(rows: 3, columns: ["steps", "resting_hr_bpm", "hr_avg_bpm"]) { n in
      [.number(8000), .missing, n == 1 ? .number(61) : .missing]
    }
    let sheet = try #require(parts["xl/worksheets/sheet2.xml"])
    let hidden = sheet.matches(of: #/<col min="(\d+)" max="\d+"[^>]*hidden="1"/#).map { Int($0.1)! }
    #expect(hidden == [3])
  }

  /// No value to chart: no chart at all, the Charts sheet says so.
  @Test func aDailyTableWithoutValuesDrawsNoChart() throws {
    let folder = Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder)
    defer { transaction.abandon() }
    let plan = [
      RunWorkbook.SheetPlan(file: "daily.csv", name: "Daily", columns: [.date("date", ""), .integer("steps", "")])
    ]
    let workbook = try RunWorkbook.start(
      on: testExecutor, transaction: transaction, plan: plan, leftToCSV: [], zone: .utc, created: nil,
      charts: DailyTables.charts,
      chartsFrom: "daily.csv")
    let daily = try #require(workbook.claim(file: "daily.csv"))
    daily.append([.date(CivilDate(year: 2021, month: 1, day: 24)), .missing])
    workbook.startClosing()
    let summary = try workbook.closed()
    #expect(summary.charts == [])
    let parts = try WorkbookTests.members(transaction.stagedPath(RunWorkbook.file))
    #expect(parts.keys.filter { $0.hasPrefix("xl/charts/") }.isEmpty)
    let charts = WorkbookTests.cells(try #require(parts["xl/worksheets/sheet1.xml"]))
    #expect(charts["A1"]?.value == "No chart: the charted columns hold no values.")
  }

  @Test func aRowTheWorkbookCannotTakeFailsTheCloseByNameAndWritesNoFile() throws {
    let folder = Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let (transaction, workbook) = try Self.workbook(folder)
    defer { transaction.abandon() }
    let b = try #require(workbook.claim(file: "b.csv"))
    b.append([.date(CivilDate(year: 2024, month: 1, day: 1))])
    b.append([.text("not a date")])  // a programming error: a text value in a date column
    workbook.startClosing()
    do {
      _ = try workbook.closed()
      Issue.record("the close took a text value in a date column")
    } catch {
      guard case .ioError(let path, let reason, _) = error else {
        Issue.record("unexpected error \(error)")
        return
      }
      #expect(path == "health.xlsx")
      #expect(reason == "sheet 'B': column 'date' (date) cannot hold a text value")
    }
    #expect(!FileManager.default.fileExists(atPath: transaction.stagedPath(RunWorkbook.file)))
  }

  /// A run that fails before the workbook is closed, or after its close started but before
  /// anybody waited for it (the report failed): the workbook is dropped and its thread ends —
  /// without a trap for messages it never read. A hang would hold the suite.
  @Test(arguments: [false, true]) func aWorkbookDroppedByAFailedRunEndsItsThread(closeStarted: Bool) throws {
    let folder = Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder)
    defer { transaction.abandon() }
    do {
      let workbook = try RunWorkbook.start(
        on: testExecutor, transaction: transaction, plan: Self.plan, leftToCSV: [], zone: .utc, created: nil)
      let a = try #require(workbook.claim(file: "a.csv"))
      for n in 0..<20_000 { a.append([.integer(Int64(n)), .missing]) }
      if closeStarted { workbook.startClosing() }
    }
    // Only a close that started writes the file; the transaction removes it with the rest.
    if !closeStarted { #expect(!FileManager.default.fileExists(atPath: transaction.stagedPath(RunWorkbook.file))) }
  }

  @Test func aWorkbookThatCannotBeCreatedFailsAtOnce() throws {
    let folder = Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder)
    defer { transaction.abandon() }
    // A folder where the file should go: nothing can be created there.
    try FileManager.default.createDirectory(
      atPath: transaction.stagedPath(RunWorkbook.file), withIntermediateDirectories: true)
    do {
      _ = try RunWorkbook.start(
        on: testExecutor, transaction: transaction, plan: Self.plan, leftToCSV: [], zone: .utc, created: nil)
      Issue.record("a workbook was created over a folder")
    } catch {
      guard case .ioError(let path, let reason, _) = error else {
        Issue.record("unexpected error \(error)")
        return
      }
      #expect(path == "health.xlsx")
      #expect(reason.hasPrefix("cannot create workbook"))
    }
  }
}
