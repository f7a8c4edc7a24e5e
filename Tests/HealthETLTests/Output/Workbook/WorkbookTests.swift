import CArchive
import Foundation
import HealthModel
import Testing

@testable import HealthETL

/// The libxlsxwriter layer. Files are read back with libarchive (an independent zip reader) and
/// checked part by part; `Tests/EndToEnd/test_workbook_roundtrip.py` opens the workbook
/// `roundTripFixture` writes in a real spreadsheet program.
@Suite struct WorkbookTests {
  // MARK: - Serial dates (values from Excel's documented epoch: 1900-01-01 is 1, 1900-03-01 is 61)

  /// A hand-typed workout of 1e300 minutes trapped converting its hours to an integer; any
  /// finite value now gets a width, and no width passes the widest a column is made.
  @Test func anyFiniteValueGetsAColumnWidth() {
    let columns = [
      WorkbookColumn("duration_s", .duration), WorkbookColumn("hr", .decimal(places: 1)),
      WorkbookColumn("n", .integer), WorkbookColumn("x", .number),
    ]
    var estimate = ColumnWidthEstimate(columns: columns)
    for value in [6e301, -1e308, Double.greatestFiniteMagnitude, Double.leastNonzeroMagnitude] {
      estimate.observe(.duration(seconds: value), column: 0, kind: .duration)
      estimate.observe(.number(value), column: 1, kind: .decimal(places: 1))
      estimate.observe(.number(value), column: 2, kind: .integer)
      estimate.observe(.number(value), column: 3, kind: .number)
    }
    // Worked out: -1e308 s is 16 digits of hours + ":mm" + a sign + a space = 21; -1e308 at one
    // decimal 1 + 16 + 2 + 1 = 20; as an integer 1 + 16 + 1 = 18; General shows at most 11
    // characters (1.7976931348623157e+308) + 1 = 12.
    #expect(estimate.widths == [21, 20, 18, 12])
    // 16 digits stand for any magnitude an integer cannot hold.
    #expect(ColumnWidthEstimate.wholeDigits(-1e308) == 16)
    #expect(ColumnWidthEstimate.wholeDigits(-123.9) == 3)
  }

  @Test func serialDatesCountFromExcelsEpoch() {
    #expect(ExcelSerialDate.serial(CivilDate(year: 1900, month: 1, day: 1)) == 1)
    #expect(ExcelSerialDate.serial(CivilDate(year: 1900, month: 2, day: 28)) == 59)
    // Serial 60 is Excel's phantom 1900-02-29, so the real March 1st is 61.
    #expect(ExcelSerialDate.serial(CivilDate(year: 1900, month: 3, day: 1)) == 61)
    #expect(ExcelSerialDate.serial(CivilDate(year: 1970, month: 1, day: 1)) == 25_569)
    // 2024-01-01 is 45 292; plus 31 days of January, 29 of February and 14 more.
    #expect(ExcelSerialDate.serial(CivilDate(year: 2024, month: 3, day: 15)) == 45_366)
    #expect(ExcelSerialDate.serial(CivilDate(year: 9999, month: 12, day: 31)) == 2_958_465)
    #expect(ExcelSerialDate.serial(CivilDate(year: 1899, month: 12, day: 31)) == nil)
    #expect(ExcelSerialDate.serial(CivilDate(year: 10_000, month: 1, day: 1)) == nil)
  }

  @Test func dateTimesAddTheFractionOfTheirDay() {
    let evening = LocalDateTime(date: CivilDate(year: 2024, month: 3, day: 15), hour: 18, minute: 0)
    #expect(ExcelSerialDate.serial(evening) == 45_366.75)
    let last = LocalDateTime(date: CivilDate(year: 2024, month: 3, day: 15), hour: 23, minute: 59, second: 59)
    #expect(ExcelSerialDate.serial(last) == 45_366 + 86_399.0 / 86_400)
    // One second before the local epoch is the previous day's last second, not a negative time.
    let before = LocalDateTime(localSecondsSinceEpoch: -1)
    #expect(before.date == CivilDate(year: 1969, month: 12, day: 31))
    #expect(before.secondsSinceMidnight == 86_399)
    #expect(ExcelSerialDate.duration(seconds: 27_000) == 0.3125)
  }

  // MARK: - Sheet names

  @Test func sheetNamesFollowExcelsRules() {
    var namer = SheetNamer()
    #expect(namer.claim("Workout records") == "Workout records")
    #expect(namer.claim("Swim/laps: 50m*?[x]\\") == "Swim_laps_ 50m___x__")
    #expect(namer.claim("'quoted'") == "’quoted’")
    #expect(namer.claim("") == "Sheet")
    #expect(namer.claim("History") == "History_")
    #expect(namer.claim("tab\tname") == "tab_name")
    // A long name is cut after a whole word: the first 31 characters end inside "variability".
    let long = "Statistics of heart rate variability per hour"
    #expect(namer.claim(long) == "Statistics of heart rate")
    // Unique ignoring case; the clash suffix fits in the 31 characters.
    #expect(namer.claim("workout RECORDS") == "workout RECORDS (2)")
    #expect(namer.claim(long) == "Statistics of heart rate (2)")
    #expect(namer.claimContinuation(of: "Statistics of heart rate", part: 3) == "Statistics of heart rate (3)")
    // 32 characters: cut back from "per-da" to the last whole word; its clash needs 4 more.
    #expect(namer.claim("walking-running-distance-per-day") == "walking-running-distance-per")
    #expect(namer.claim("walking-running-distance-per-day") == "walking-running-distance (2)")
    // Exactly 31 characters before a break: kept whole, the break dropped.
    #expect(namer.claim("aaaaaaaaaa-bbbbbbbbbb-ccccccccc-dd") == "aaaaaaaaaa-bbbbbbbbbb-ccccccccc")
    // No break in the first 31 characters: cut at the limit.
    #expect(namer.claim(String(repeating: "x", count: 40)) == String(repeating: "x", count: 31))
    // A name cut inside a surrogate pair would be invalid UTF-16: the cut drops the whole emoji.
    let emoji = String(repeating: "a", count: 30) + "😴"
    #expect(namer.claim(emoji) == String(repeating: "a", count: 30))
  }

  // MARK: - Table columns as sheet columns

  /// A header says what the cell shows: seconds shown as h:mm lose their `_s`; a fraction is a
  /// percentage; other columns keep the CSV's name and General.
  @Test func headersSayTheFormShownAndFractionsArePercentages() {
    let asleep = WorkbookTableWriter.workbookColumn(.integer("asleep_s", unit: "s", display: .hoursMinutes, ""))
    #expect(asleep == WorkbookColumn("asleep (h:mm)", .duration))
    let duration = WorkbookTableWriter.workbookColumn(
      Column("duration_s", .number, unit: "s", precision: .asRecorded, ""))
    #expect(duration == WorkbookColumn("duration (h:mm:ss)", .durationWithSeconds))
    let humidity = WorkbookTableWriter.workbookColumn(
      Column("weather_humidity", .number, unit: "%", precision: .asRecorded, ""))
    #expect(humidity == WorkbookColumn("weather_humidity", .percent))
    #expect(humidity.numberFormat == "0.0%")
    let speed = WorkbookTableWriter.workbookColumn(
      Column("speed_m_s", .number, unit: "m/s", precision: .asRecorded, ""))
    #expect(speed == WorkbookColumn("speed_m_s", .number))
    // Seconds shown as a plain number keep their unit in the name.
    let count = WorkbookTableWriter.workbookColumn(.integer("gap_s", unit: "s", display: .decimals(0), ""))
    #expect(count == WorkbookColumn("gap_s", .integer))
  }

  @Test func libxlsxwriterAcceptsEverySanitizedName() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let workbook = try Workbook(path: folder + "/names.xlsx", temporaryDirectory: folder)
    let requested = ["Daily", "daily", "a[b]c", "'Bob's'", "History", String(repeating: "é", count: 40), ""]
    for name in requested { _ = try workbook.addSheet(name: name, columns: [WorkbookColumn("x", .text)]) }
    let summary = try workbook.close()
    let names = summary.sheets.map { $0.parts[0].name }
    #expect(
      names == ["Daily", "daily (2)", "a_b_c", "’Bob’s’", "History_", String(repeating: "é", count: 31), "Sheet"])
    let book = try Self.members(folder + "/names.xlsx")["xl/workbook.xml"] ?? ""
    #expect(book.contains(#"<sheet name="’Bob’s’" sheetId="4""#))
    #expect(book.contains(#"<sheet name="daily (2)" sheetId="2""#))
  }

  // MARK: - Typed cells

  @Test func cellsAreTypedAndFormatted() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let path = folder + "/typed.xlsx"
    let workbook = try Workbook(path: path, temporaryDirectory: folder)
    let sheet = try workbook.addSheet(
      name: "Typed",
      columns: [
        WorkbookColumn("date", .date), WorkbookColumn("start", .dateTime), WorkbookColumn("asleep", .duration),
        WorkbookColumn("km", .decimal(places: 2)), WorkbookColumn("steps", .integer),
        WorkbookColumn("bedtime", .timeOfDay), WorkbookColumn("note", .text), WorkbookColumn("ok", .boolean),
        WorkbookColumn("raw", .number),
      ])
    let day = CivilDate(year: 2024, month: 3, day: 15)
    try sheet.appendRow([
      .date(day), .dateTime(LocalDateTime(date: day, hour: 6, minute: 45)), .duration(seconds: 27_000),
      .number(7.415), .number(10_234), .timeOfDay(secondsSinceMidnight: 83_400), .text(#"a, "b" & <c> ü"#),
      .boolean(true), .number(-1.5e-7),
    ])
    try sheet.appendRow([.blank, .blank, .blank, .number(.nan), .number(.infinity), .blank, .text(""), .blank, .blank])
    try sheet.appendRow([
      .date(CivilDate(year: 1850, month: 1, day: 1)), .blank, .duration(seconds: 100_000), .blank, .blank, .blank,
      .text("ctl\u{1}x\ttab\u{1F}"), .boolean(false), .blank,
    ])
    #expect(sheet.dataRows == 3)
    try workbook.close()

    let parts = try Self.members(path)
    let cells = Self.cells(parts["xl/worksheets/sheet1.xml"] ?? "")
    let formats = Self.cellFormats(parts["xl/styles.xml"] ?? "")
    func check(_ ref: String, _ value: String, _ format: String?, type: String? = nil) {
      guard let cell = cells[ref] else {
        Issue.record("no cell \(ref)")
        return
      }
      #expect(cell.value == value, "\(ref)")
      #expect(cell.type == type, "\(ref)")
      let code: String?? = cell.style.flatMap { formats[$0] }
      #expect(code ?? nil == format, "\(ref)")
    }
    check("A1", "date", nil, type: "inlineStr")
    check("A2", "45366", "yyyy-mm-dd")
    check("B2", "45366.28125", "yyyy-mm-dd hh:mm:ss")  // 6:45 is 24 300 s = 0.28125 day
    check("C2", "0.3125", "[h]:mm")
    check("D2", "7.415", "0.00")  // the cell keeps the full value; the format rounds the display
    check("E2", "10234", "0")
    check("F2", "0.9652777777777778", "hh:mm")  // 83 400 / 86 400 to 16 digits, as libxlsxwriter prints it
    check("G2", #"a, "b" & <c> ü"#, nil, type: "inlineStr")
    check("H2", "1", nil, type: "b")
    check("I2", "-1.5E-07", nil)
    // Blanks, empty text, NaN and infinity leave no cell at all.
    #expect(cells.keys.filter { $0.hasSuffix("3") && $0.count == 2 }.isEmpty)
    // 1850 has no serial: the date stays readable as text.
    check("A4", "1850-01-01", nil, type: "inlineStr")
    check("C4", "1.157407407407407", "[h]:mm")
    check("G4", "ctlx\ttab", nil, type: "inlineStr")  // C0 controls dropped, tab kept
    check("H4", "0", nil, type: "b")

    let xml = parts["xl/worksheets/sheet1.xml"] ?? ""
    #expect(xml.contains(#"<pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/>"#))
    #expect(xml.contains(#"<autoFilter ref="A1:I4"/>"#))
    #expect(Self.bold(cells["A1"]?.style, styles: parts["xl/styles.xml"] ?? ""))
    #expect(!Self.bold(cells["A2"]?.style, styles: parts["xl/styles.xml"] ?? ""))
    // Widths (Excel adds 0.71 of padding): date = 10 + 1; start = 19 + 1; the header "bedtime" + 3.
    let widths = Self.columnWidths(xml)
    #expect(widths[1] == 11.7109375)
    #expect(widths[2] == 20.7109375)
    #expect(widths[6] == 10.7109375)
  }

  @Test func longTextIsCutAtExcelsLimitAndWidthsAreCapped() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let workbook = try Workbook(path: folder + "/long.xlsx", temporaryDirectory: folder)
    let sheet = try workbook.addSheet(name: "Long", columns: [WorkbookColumn("text", .text)])
    try sheet.appendRow([.text(String(repeating: "x", count: 40_000))])
    try sheet.appendRow([.text(String(repeating: "y", count: 32_767))])
    let summary = try workbook.close()
    #expect(summary.sheets[0].truncatedTexts == 1)
    let xml = try Self.members(folder + "/long.xlsx")["xl/worksheets/sheet1.xml"] ?? ""
    #expect(Self.cells(xml)["A2"]?.value.count == 32_767)
    #expect(Self.cells(xml)["A3"]?.value.count == 32_767)
    #expect(Self.columnWidths(xml)[1] == 60.7109375)
  }

  // MARK: - Row limit

  @Test func aFullSheetReportsAndTheCallerContinuesOrStops() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let path = folder + "/split.xlsx"
    // Four rows per sheet: the header and three data rows.
    let workbook = try Workbook(path: path, temporaryDirectory: folder, rowsPerSheet: 4)
    let columns = [WorkbookColumn("lap", .integer), WorkbookColumn("stroke", .text)]
    let laps = try workbook.addSheet(name: "Swim laps", columns: columns)
    let stopped = try workbook.addSheet(name: "Workout records", columns: columns)
    var continued: [String] = []
    for lap in 1...7 {
      let row: [WorkbookCell] = [.number(Double(lap)), .text("freestyle")]
      let refusal: WorkbookError?
      do {
        try laps.appendRow(row)
        refusal = nil
      } catch {
        refusal = error
      }
      guard let refusal else { continue }
      guard case .sheetFull(let sheet, let rows) = refusal else { throw refusal }
      #expect(laps.remainingRows == 0)
      #expect(rows == 4)
      continued.append(sheet)
      try laps.continueOnNewSheet()
      #expect(laps.remainingRows == 3)
      try laps.appendRow(row)
    }
    #expect(continued == ["Swim laps", "Swim laps (2)"])
    #expect(laps.currentSheetName == "Swim laps (3)")
    var refused: WorkbookError?
    for lap in 1...4 {
      do { try stopped.appendRow([.number(Double(lap)), .blank]) } catch { refused = error }
    }
    #expect(refused == .sheetFull(sheet: "Workout records", rowsPerSheet: 4))
    #expect(refused?.description.contains("'Workout records' is full") == true)
    #expect(stopped.dataRows == 3)

    let summary = try workbook.close()
    #expect(
      summary.sheets[0].parts == [
        .init(name: "Swim laps", dataRows: 3), .init(name: "Swim laps (2)", dataRows: 3),
        .init(name: "Swim laps (3)", dataRows: 1),
      ])
    #expect(summary.sheets[0].dataRows == 7)
    #expect(summary.sheets[1].parts == [.init(name: "Workout records", dataRows: 3)])

    let parts = try Self.members(path)
    let book = parts["xl/workbook.xml"] ?? ""
    for name in ["Swim laps", "Workout records", "Swim laps (2)", "Swim laps (3)"] {
      #expect(book.contains(#"<sheet name="\#(name)""#))
    }
    // Sheet order is creation order: the continuations come after "Workout records".
    let third = Self.cells(parts["xl/worksheets/sheet3.xml"] ?? "")
    #expect(third["A1"]?.value == "lap")
    #expect(third["A2"]?.value == "4")
    #expect(third["A4"]?.value == "6")
    #expect(third["A5"] == nil)
    #expect((parts["xl/worksheets/sheet4.xml"] ?? "").contains(#"<autoFilter ref="A1:B2"/>"#))
    #expect((parts["xl/worksheets/sheet2.xml"] ?? "").contains(#"<autoFilter ref="A1:B4"/>"#))
  }

  // MARK: - Charts

  @Test func chartsReferenceTheirSheetsRanges() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let path = folder + "/charts.xlsx"
    let workbook = try Workbook(path: path, temporaryDirectory: folder)
    let daily = try workbook.addSheet(
      name: "Daily", columns: [WorkbookColumn("date", .date), WorkbookColumn("steps", .integer)])
    let nights = try workbook.addSheet(
      name: "Bob's nights",
      columns: [WorkbookColumn("night", .date), WorkbookColumn("deep", .duration), WorkbookColumn("rem", .duration)])
    for day in 1...3 {
      try daily.appendRow([.date(CivilDate(year: 2024, month: 3, day: day)), .number(Double(day * 1000))])
    }
    try nights.appendRow([.date(CivilDate(year: 2024, month: 3, day: 1)), .duration(seconds: 3600), .blank])
    try workbook.addChart(
      WorkbookChart(
        .line, title: "Steps per day", categoryColumn: "date", series: [.init("steps")], categoryAxisTitle: "Date",
        valueAxisTitle: "Steps (count)"), of: daily)
    try workbook.addChart(
      WorkbookChart(
        .stackedColumn, title: "Sleep per night", categoryColumn: "night",
        series: [.init("deep", name: "Deep"), .init("rem", name: "REM")], categoryAxisTitle: "Night",
        valueAxisTitle: "Sleep (h:mm)"), of: nights)
    let summary = try workbook.close()
    #expect(summary.charts == ["Steps per day", "Sleep per night"])

    let parts = try Self.members(path)
    #expect((parts["xl/workbook.xml"] ?? "").contains(#"<sheet name="Charts" sheetId="3""#))
    #expect(parts["xl/drawings/drawing1.xml"] != nil)
    let line = parts["xl/charts/chart1.xml"] ?? ""
    #expect(line.contains("<c:lineChart>"))
    // A marker on every value: a day without neighbours still shows.
    #expect(line.contains(#"<c:marker><c:symbol val="circle"/><c:size val="3"/>"#))
    #expect(line.contains("<c:f>Daily!$A$2:$A$4</c:f>"))
    #expect(line.contains("<c:f>Daily!$B$2:$B$4</c:f>"))
    #expect(line.contains("Steps per day"))
    #expect(line.contains("Steps (count)"))
    #expect(line.contains(#"<c:numFmt formatCode="yyyy-mm-dd" sourceLinked="0"/>"#))
    let stacked = parts["xl/charts/chart2.xml"] ?? ""
    #expect(stacked.contains(#"<c:grouping val="stacked"/>"#))
    // The sheet "Bob’s nights" is quoted for its space; its apostrophe needs no escaping.
    #expect(stacked.contains("<c:f>'Bob’s nights'!$B$2</c:f>"))
    #expect(stacked.contains("<c:f>'Bob’s nights'!$C$2</c:f>"))
    #expect(stacked.contains(#"<c:numFmt formatCode="[h]:mm" sourceLinked="0"/>"#))
    #expect(stacked.contains("<c:v>REM</c:v>"))
  }

  @Test func chartsNameRealNumericColumns() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let workbook = try Workbook(path: folder + "/bad-chart.xlsx", temporaryDirectory: folder)
    let sheet = try workbook.addSheet(
      name: "Daily", columns: [WorkbookColumn("date", .date), WorkbookColumn("note", .text)])
    #expect(throws: WorkbookError.invalidChart(title: "t", detail: "sheet 'Daily' has no column 'steps'")) {
      try workbook.addChart(
        WorkbookChart(
          .line, title: "t", categoryColumn: "date", series: [.init("steps")], categoryAxisTitle: "x",
          valueAxisTitle: "y"),
        of: sheet)
    }
    #expect(throws: WorkbookError.invalidChart(title: "t", detail: "column 'note' holds no numbers to plot")) {
      try workbook.addChart(
        WorkbookChart(
          .line, title: "t", categoryColumn: "date", series: [.init("note")], categoryAxisTitle: "x",
          valueAxisTitle: "y"),
        of: sheet)
    }
  }

  // MARK: - Errors

  @Test func unwritablePlacesFailEarlyWithTheReason() throws {
    #expect(
      throws: WorkbookError.cannotCreate(
        path: "/nonexistent/dir/x.xlsx", reason: "No such file or directory", code: ENOENT)
    ) {
      _ = try Workbook(path: "/nonexistent/dir/x.xlsx", temporaryDirectory: "/tmp")
    }
    #expect(throws: WorkbookError.cannotCreate(path: "/etc/hostname/x.xlsx", reason: "Not a directory", code: ENOTDIR))
    {
      _ = try Workbook(path: "/etc/hostname/x.xlsx", temporaryDirectory: "/tmp")
    }
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    #expect(
      throws: WorkbookError.cannotCreate(
        path: folder + "/x.xlsx", reason: "temporary folder \(folder)/missing does not exist")
    ) {
      _ = try Workbook(path: folder + "/x.xlsx", temporaryDirectory: folder + "/missing")
    }
    // The probe leaves nothing behind.
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
  }

  @Test func aFailedCloseReportsLibxlsxwritersMessageAndLeavesNoFile() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let output = folder + "/out"
    try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: false)
    let workbook = try Workbook(path: output + "/x.xlsx", temporaryDirectory: folder)
    let sheet = try workbook.addSheet(name: "A", columns: [WorkbookColumn("n", .number)])
    try sheet.appendRow([.number(1)])
    try FileManager.default.removeItem(atPath: output)
    // The system's number comes with it: the folder of the file is gone.
    let expected = WorkbookError.library(
      path: output + "/x.xlsx", operation: "closing",
      message: "Error creating output xlsx file. Usually a permissions error.", code: ENOENT)
    #expect(throws: expected) { try workbook.close() }
    #expect(!expected.description.contains("\n"))
    #expect(throws: WorkbookError.closed(path: output + "/x.xlsx")) { try sheet.appendRow([.number(2)]) }
    #expect(throws: WorkbookError.closed(path: output + "/x.xlsx")) { try workbook.close() }
  }

  @Test func rowsMustMatchTheirColumns() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let workbook = try Workbook(path: folder + "/rows.xlsx", temporaryDirectory: folder)
    let sheet = try workbook.addSheet(
      name: "Daily", columns: [WorkbookColumn("date", .date), WorkbookColumn("steps", .integer)])
    #expect(throws: WorkbookError.invalidRow(sheet: "Daily", detail: "1 cells for 2 columns")) {
      try sheet.appendRow([.blank])
    }
    #expect(
      throws: WorkbookError.invalidRow(sheet: "Daily", detail: "column 'date' (date) cannot hold a text value")
    ) {
      try sheet.appendRow([.text("2024-03-01"), .blank])
    }
    #expect(sheet.dataRows == 0)
  }

  @Test func anAbandonedWorkbookWritesNothing() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    do {
      let workbook = try Workbook(path: folder + "/abandoned.xlsx", temporaryDirectory: folder)
      for name in ["A", "B"] {
        let sheet = try workbook.addSheet(name: name, columns: [WorkbookColumn("n", .number)])
        for value in 0..<100 { try sheet.appendRow([.number(Double(value))]) }
      }
      // One unlinked row file per sheet, open in this folder until the workbook goes.
      #expect(Self.openFiles(in: folder) == 2)
    }
    #expect(Self.openFiles(in: folder) == 0)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
  }

  /// Descriptors of this process open on files in `folder` (deleted ones included).
  static func openFiles(in folder: String) -> Int {
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return descriptors.filter {
      ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) ?? "").hasPrefix(
        folder + "/")
    }.count
  }

  // MARK: - The fixture the spreadsheet-program test opens

  /// Writes `health-roundtrip.xlsx` and `daily.csv` (the same Daily table as the pipeline's CSV
  /// would hold it) into `$HEALTHETL_WORKBOOK_FIXTURE_DIR`, or a temporary folder when unset.
  /// Five rows per sheet, so "Swim laps" continues on a second sheet.
  @Test func roundTripFixture() throws {
    let environment = ProcessInfo.processInfo.environment["HEALTHETL_WORKBOOK_FIXTURE_DIR"]
    let folder = try environment ?? Self.folder()
    defer { if environment == nil { try? FileManager.default.removeItem(atPath: folder) } }
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let summary = try Self.writeFixture(into: folder)
    #expect(summary.sheets.map(\.parts.count) == [1, 1, 1, 2])
    #expect(summary.sheets[3].parts.map(\.name) == ["Swim_laps_ 50m", "Swim_laps_ 50m (2)"])
    #expect(summary.charts.count == 3)
    #expect(FileManager.default.fileExists(atPath: folder + "/health-roundtrip.xlsx"))
  }

  static let dailyCSV = """
    date,steps,distance_km,resting_heart_rate_bpm,asleep_s,wake_time,bedtime,note,complete
    2024-02-29,0,0.125,61.25,100000,2024-02-29T23:59:59,,"ctl\u{1}char",true
    2024-03-09,10234,7.41,52.5,27000,2024-03-09T06:45:00,23:10,plain,true
    2024-03-10,8800,6,,24300,2024-03-10T07:02:30,00:15,"Comma, ""quoted"" and ünïcödé 😴",false
    2024-03-11,,,49,,,,"line1
    line2",

    """

  static func writeFixture(into folder: String) throws -> WorkbookSummary {
    try dailyCSV.write(toFile: folder + "/daily.csv", atomically: true, encoding: .utf8)
    let workbook = try Workbook(path: folder + "/health-roundtrip.xlsx", temporaryDirectory: folder, rowsPerSheet: 5)
    let daily = try workbook.addSheet(
      name: "Daily",
      columns: [
        WorkbookColumn("date", .date), WorkbookColumn("steps", .integer),
        WorkbookColumn("distance_km", .decimal(places: 2)),
        WorkbookColumn("resting_heart_rate_bpm", .decimal(places: 1)),
        WorkbookColumn("asleep", .duration), WorkbookColumn("wake_time", .dateTime),
        WorkbookColumn("bedtime", .timeOfDay), WorkbookColumn("note", .text), WorkbookColumn("complete", .boolean),
      ])
    func day(_ month: Int, _ day: Int) -> CivilDate { CivilDate(year: 2024, month: month, day: day) }
    func at(_ date: CivilDate, _ hour: Int, _ minute: Int, _ second: Int = 0) -> WorkbookCell {
      .dateTime(LocalDateTime(date: date, hour: hour, minute: minute, second: second))
    }
    let rows: [[WorkbookCell]] = [
      [
        .date(day(2, 29)), .number(0), .number(0.125), .number(61.25), .duration(seconds: 100_000),
        at(day(2, 29), 23, 59, 59),
        .blank, .text("ctl\u{1}char"), .boolean(true),
      ],
      [
        .date(day(3, 9)), .number(10_234), .number(7.41), .number(52.5), .duration(seconds: 27_000),
        at(day(3, 9), 6, 45),
        .timeOfDay(secondsSinceMidnight: 83_400), .text("plain"), .boolean(true),
      ],
      [
        .date(day(3, 10)), .number(8800), .number(6), .blank, .duration(seconds: 24_300), at(day(3, 10), 7, 2, 30),
        .timeOfDay(secondsSinceMidnight: 900), .text(#"Comma, "quoted" and ünïcödé 😴"#), .boolean(false),
      ],
      [.date(day(3, 11)), .blank, .number(.nan), .number(49), .blank, .blank, .blank, .text("line1\nline2"), .blank],
    ]
    for row in rows { try daily.appendRow(row) }

    let records = try workbook.addSheet(
      name: "Workout records",
      columns: [
        WorkbookColumn("start", .dateTimeMinutes), WorkbookColumn("type", .text), WorkbookColumn("value", .number),
        WorkbookColumn("unit", .text),
      ])
    try records.appendRow([
      at(day(3, 9), 18, 30), .text("HKQuantityTypeIdentifierDistanceSwimming"), .number(1234567.891), .text("m"),
    ])
    try records.appendRow([
      .dateTime(LocalDateTime(date: CivilDate(year: 1900, month: 3, day: 1), hour: 12, minute: 0)), .text("edge"),
      .number(-0.5), .blank,
    ])

    let nights = try workbook.addSheet(
      name: "Bob's nights",
      columns: [
        WorkbookColumn("night", .date), WorkbookColumn("deep", .duration), WorkbookColumn("core", .duration),
        WorkbookColumn("rem", .duration),
      ])
    try nights.appendRow([
      .date(day(3, 9)), .duration(seconds: 3600), .duration(seconds: 14_400), .duration(seconds: 5400),
    ])
    try nights.appendRow([.date(day(3, 10)), .duration(seconds: 2700), .duration(seconds: 16_200), .blank])

    let laps = try workbook.addSheet(name: "Swim/laps: 50m", columns: [WorkbookColumn("lap", .integer)])
    for lap in 1...6 {
      if laps.remainingRows == 0 { try laps.continueOnNewSheet() }
      try laps.appendRow([.number(Double(lap))])
    }

    try workbook.addChart(
      WorkbookChart(
        .line, title: "Steps per day", categoryColumn: "date", series: [.init("steps", name: "Steps")],
        categoryAxisTitle: "Date", valueAxisTitle: "Steps (count)"), of: daily)
    try workbook.addChart(
      WorkbookChart(
        .stackedColumn, title: "Sleep per night by stage", categoryColumn: "night",
        series: [.init("deep", name: "Deep"), .init("core", name: "Core"), .init("rem", name: "REM")],
        categoryAxisTitle: "Night", valueAxisTitle: "Asleep (h:mm)"), of: nights)
    try workbook.addChart(
      WorkbookChart(
        .line, title: "Resting heart rate", categoryColumn: "date",
        series: [.init("resting_heart_rate_bpm", name: "Resting heart rate")], categoryAxisTitle: "Date",
        valueAxisTitle: "Heart rate (bpm)"), of: daily)
    return try workbook.close()
  }

  // MARK: - Constant memory

  /// `HEALTHETL_WORKBOOK_BENCH_ROWS=500000 swift test -c release --filter WorkbookTests/constantMemory`:
  /// writes that many rows of six typed columns, prints the time and the peak memory of the
  /// write (Linux's high-water mark, reset just before), and checks memory stayed flat.
  @Test(.enabled(if: ProcessInfo.processInfo.environment["HEALTHETL_WORKBOOK_BENCH_ROWS"] != nil))
  func constantMemory() throws {
    let rows = Int(ProcessInfo.processInfo.environment["HEALTHETL_WORKBOOK_BENCH_ROWS"] ?? "") ?? 500_000
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let path = folder + "/bench.xlsx"
    let baseline = Self.residentKilobytes(peak: false)
    // Writing "5" to clear_refs resets the high-water mark to the current RSS.
    try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    let clock = ContinuousClock()
    var summary: WorkbookSummary?
    let elapsed = try clock.measure {
      let workbook = try Workbook(path: path, temporaryDirectory: folder)
      let sheet = try workbook.addSheet(
        name: "Samples",
        columns: [
          WorkbookColumn("date", .date), WorkbookColumn("start", .dateTime),
          WorkbookColumn("value", .decimal(places: 1)),
          WorkbookColumn("count", .integer), WorkbookColumn("duration", .duration), WorkbookColumn("source", .text),
        ])
      let sources = ["Apple Watch", "iPhone", "Polar H10", "Withings"]
      let start = LocalDateTime(date: CivilDate(year: 2020, month: 1, day: 1), hour: 0, minute: 0)
      let startSeconds = start.date.daysSinceEpoch * 86_400
      for index in 0..<rows {
        let local = LocalDateTime(localSecondsSinceEpoch: startSeconds + Int64(index) * 60)
        try sheet.appendRow([
          .date(local.date), .dateTime(local), .number(Double(index % 1000) / 10), .number(Double(index)),
          .duration(seconds: Double(index % 7200)), .text(sources[index % sources.count]),
        ])
      }
      summary = try workbook.close()
    }
    let peak = Self.residentKilobytes(peak: true)
    let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    print(
      "workbook bench: \(rows) rows × 6 columns in \(elapsed); peak RSS \(peak / 1024) MiB (before \(baseline / 1024) MiB); file \(size / 1_048_576) MiB"
    )
    #expect(summary?.sheets[0].dataRows == rows)
    // Rows go to the temporary file as they are written; the workbook itself should stay within
    // a few dozen MiB of what the process held before, whatever the row count.
    #expect(peak - baseline < 64 * 1024)
  }

  /// VmRSS or VmHWM of this process, in KiB.
  static func residentKilobytes(peak: Bool) -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let key = peak ? "VmHWM:" : "VmRSS:"
    for line in status.split(separator: "\n") where line.hasPrefix(key) {
      return Int(line.dropFirst(key.count).trimmingCharacters(in: .whitespaces).split(separator: " ")[0]) ?? 0
    }
    return 0
  }

  // MARK: - Reading the parts back

  static func folder() throws -> String {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("workbook-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return folder
  }

  struct ZipError: Error, CustomStringConvertible { var description: String }

  /// Every member of a zip file, as text.
  static func members(_ path: String) throws -> [String: String] {
    guard let archive = archive_read_new() else { throw ZipError(description: "libarchive: out of memory") }
    defer { archive_read_free(archive) }
    archive_read_support_format_zip(archive)
    guard archive_read_open_filename(archive, path, 1 << 16) == ARCHIVE_OK else {
      throw ZipError(description: "\(path) is not a zip: \(String(cString: archive_error_string(archive)))")
    }
    var result: [String: String] = [:]
    var entry: OpaquePointer?
    while archive_read_next_header(archive, &entry) == ARCHIVE_OK {
      let name = String(cString: archive_entry_pathname(entry))
      var bytes: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 1 << 16)
      while true {
        let got = buffer.withUnsafeMutableBytes { archive_read_data(archive, $0.baseAddress, $0.count) }
        guard got >= 0 else {
          throw ZipError(description: "\(name): \(String(cString: archive_error_string(archive)))")
        }
        if got == 0 { break }
        bytes.append(contentsOf: buffer[0..<got])
      }
      result[name] = String(decoding: bytes, as: UTF8.self)
    }
    return result
  }

  struct Cell: Equatable {
    var value: String
    var type: String?
    var style: Int?
  }

  /// The cells of a worksheet part by reference ("B2"), values unescaped.
  static func cells(_ xml: String) -> [String: Cell] {
    var result: [String: Cell] = [:]
    let pattern = #/<c r="([A-Z]+[0-9]+)"(?: s="(\d+)")?(?: t="(\w+)")?>(.*?)</c>/#.dotMatchesNewlines()
    for match in xml.matches(of: pattern) {
      let body = String(match.4)
      let text: String
      if let value = body.firstMatch(of: #/<v>(.*?)</v>/#) {
        text = String(value.1)
      } else if let inline = body.firstMatch(of: #/<t(?: [^>]*)?>(.*?)</t>/#.dotMatchesNewlines()) {
        text = String(inline.1)
      } else {
        text = ""
      }
      result[String(match.1)] = Cell(
        value: unescape(text), type: match.3.map(String.init), style: match.2.flatMap { Int($0) })
    }
    return result
  }

  static func unescape(_ text: String) -> String {
    text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
      .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
      .replacingOccurrences(of: "&amp;", with: "&")
  }

  /// Style index → number format code (nil for General), from styles.xml.
  static func cellFormats(_ styles: String) -> [Int: String?] {
    var codes: [Int: String] = [1: "0", 2: "0.00"]
    for match in styles.matches(of: #/<numFmt numFmtId="(\d+)" formatCode="([^"]*)"/>/#) {
      codes[Int(match.1)!] = unescape(String(match.2))
    }
    guard let xfs = styles.firstMatch(of: #/<cellXfs[^>]*>(.*?)</cellXfs>/#.dotMatchesNewlines()) else { return [:] }
    var result: [Int: String?] = [:]
    for (index, xf) in String(xfs.1).matches(of: #/<xf numFmtId="(\d+)"/#).enumerated() {
      result[index] = codes[Int(xf.1)!]
    }
    return result
  }

  static func bold(_ style: Int?, styles: String) -> Bool {
    guard let style, let xfs = styles.firstMatch(of: #/<cellXfs[^>]*>(.*?)</cellXfs>/#.dotMatchesNewlines()),
      let fonts = styles.firstMatch(of: #/<fonts[^>]*>(.*?)</fonts>/#.dotMatchesNewlines())
    else { return false }
    let fontIDs = String(xfs.1).matches(of: #/<xf numFmtId="\d+" fontId="(\d+)"/#).map { Int($0.1)! }
    let fontBodies = String(fonts.1).matches(of: #/<font>(.*?)</font>/#.dotMatchesNewlines()).map { String($0.1) }
    guard style < fontIDs.count, fontIDs[style] < fontBodies.count else { return false }
    return fontBodies[fontIDs[style]].contains("<b/>")
  }

  /// Column number (1-based) → width.
  static func columnWidths(_ xml: String) -> [Int: Double] {
    var result: [Int: Double] = [:]
    for match in xml.matches(of: #/<col min="(\d+)" max="(\d+)" width="([0-9.]+)"/#) {
      for column in Int(match.1)!...Int(match.2)! { result[column] = Double(match.3) }
    }
    return result
  }
}
