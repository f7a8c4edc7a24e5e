import Foundation

/// `run.json`: what was read, what was decided, what was written, and what it cost
/// (Pipelines/docs/nightly.md, "`run.json` and `inspect --json`").
public struct RunReport {
  public struct Output: Sendable {
    public var path: String
    public var rows: Int
    public var bytes: Int64
    /// The type or element name a `{type}` or `{name}` file holds, as the export wrote it.
    public var name: String?
  }

  public let inventory: ExportInventory
  /// Taken last: the hash finishes on the core the stages' finish leaves idle.
  public var inputSHA256: String?
  public var outputs: [Output] = []
  public var stageSeconds: [String: Double] = [:]
  public var totalSeconds = 0.0
  public var peakMemoryMB = 0.0
  public var pipelines: [[String: String]] = []
  public var jobs = 0
  /// The delta this run committed (`workout_records.new.json`); nil when it wrote none.
  public var delta: Delta?
  /// The sections the marts contribute (`Mart.runReportSection`: `routes`,
  /// `electrocardiograms`, `clinicalRecords`), null where no mart of the run filled one.
  public var sections: [String: Any] = [:]
  /// The sections' lines for the end of the run (`RunReportSection.summaryLine`).
  public var summaryLines: [String] = []

  public struct Delta: Sendable {
    public var sequence: Int
    /// Whether the delta is final (a run's always is; a night's only at its end).
    public var final: Bool
    /// Records in the delta.
    public var records: Int
    /// Of those, records this run added.
    public var fresh: Int
  }

  /// `health.xlsx`: its sheets (a table over a sheet's rows goes on in `<name> (2)`) and the
  /// outputs left to their files.
  public var workbook: Workbook?

  public struct Workbook {
    public var summary: WorkbookSummary
    public var leftToCSV: [(file: String, reason: String)]
  }

  /// Server records no earlier run into this folder had emitted (nil when no delta was written).
  public var newWorkoutRecords: Int? { delta?.fresh }

  init(inventory: ExportInventory) { self.inventory = inventory }

  public func json() -> String {
    var object = inventory.jsonObject()
    var input = object["input"] as? [String: Any] ?? [:]
    input["sha256"] = inputSHA256 ?? NSNull()
    object["input"] = input
    object["outputs"] = outputs.map { output -> [String: Any] in
      var entry: [String: Any] = ["path": output.path, "rows": output.rows, "bytes": output.bytes]
      if let name = output.name { entry["name"] = name }
      return entry
    }
    object["stageSeconds"] = stageSeconds.mapValues { ($0 * 1000).rounded() / 1000 }
    object["totalSeconds"] = (totalSeconds * 1000).rounded() / 1000
    object["peakMemoryMB"] = (peakMemoryMB * 10).rounded() / 10
    object["pipelines"] = pipelines
    object["jobs"] = jobs
    // One run parses the export once, however many jobs it feeds; `input.xmlBytes`
    // is what that parse read, so a second read would show as twice the XML's size.
    object["parses"] = 1
    object["newWorkoutRecords"] = newWorkoutRecords ?? NSNull()
    object["delta"] =
      delta.map { ["file": ToolFiles.newRecords, "sequence": $0.sequence, "final": $0.final, "records": $0.records] }
      ?? NSNull()
    object["workbook"] =
      workbook.map { workbook -> [String: Any] in
        [
          "file": workbook.summary.path.split(separator: "/").last.map(String.init) ?? "",
          "sheets": workbook.summary.sheets.map { sheet -> [String: Any] in
            [
              "table": sheet.requestedName, "rows": sheet.dataRows,
              "parts": sheet.parts.map { ["sheet": $0.name, "rows": $0.dataRows] as [String: Any] },
              // Cells cut to a spreadsheet cell's 32,767 characters (the CSV keeps them whole).
              "truncatedTexts": sheet.truncatedTexts,
              // A table without rows keeps its sheet, hidden: a header alone is nothing to look at.
              "hidden": sheet.hidden ? "no rows" : NSNull(),
            ]
          },
          "charts": workbook.summary.charts,
          "leftToCSV": workbook.leftToCSV.map { ["file": $0.file, "reason": $0.reason] },
        ]
      } ?? NSNull()
    for (key, value) in sections { object[key] = value }
    return String(decoding: SortedJSON.data(object) ?? [], as: UTF8.self) + "\n"
  }
}
