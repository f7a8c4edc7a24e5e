/// The report job's one output: `report.html`, the page of `Pipelines/report/` with its chart
/// library and data filled in (Pipelines/report/DATA.md).
public enum ReportTables {
  public static let page = TableSchema(
    "report",
    rows: "one self-contained HTML page with the chart library and the report data (Pipelines/report/DATA.md) inside",
    defaultFile: "report.html", columns: [],
    variableColumns: "none; the page embeds one JSON document described in `Pipelines/report/DATA.md`")

  public static let all = [page]

  /// The template, relative to the pipeline file's folder, when the job names none.
  public static let defaultTemplate = "report/report.html"
  /// Chart.js 3.9.1 from Debian's `libjs-chart.js`, when the job names no other file.
  public static let debianChartLibrary = "/usr/share/javascript/chart.js/chart.min.js"
}
