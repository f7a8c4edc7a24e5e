import Foundation
import HealthModel

/// The column tables of `Pipelines/README.md`, rendered from the tables' declarations, so the
/// documentation cannot drift from what the writers write (a test compares them).
public enum TableDocumentation {
  /// Every table of every job kind, in kind order: (`sleep.daily`, its declaration).
  public static var all: [(id: String, schema: TableSchema)] {
    JobKinds.all.flatMap { kind in kind.tables.map { ("\(kind.name).\($0.name)", $0) } }
  }

  /// The marker lines around a generated block in the README.
  public static func begin(_ id: String) -> String { "<!-- generated: \(id) (make docs) -->" }
  public static let end = "<!-- end generated -->"

  /// The Markdown block of one table, markers included. Tables that can be sheets of
  /// `health.xlsx` say how each column is shown there.
  public static func markdown(id: String, schema: TableSchema) -> String {
    var lines = [begin(id), "", "`\(schema.name)`: \(schema.rows); default file `\(schema.defaultFile)`.", ""]
    if schema.inWorkbook {
      lines.append("| column | type | unit | precision | shown in health.xlsx | meaning |")
      lines.append("|---|---|---|---|---|---|")
    } else {
      lines.append("| column | type | unit | precision | meaning |")
      lines.append("|---|---|---|---|---|")
    }
    for column in schema.columns {
      let precision = column.kind == .number ? column.precision.description : ""
      var cells = [
        "`\(column.name)`", column.kind.rawValue, column.unit.map { "`\($0)`" } ?? "", precision,
      ]
      if schema.inWorkbook {
        let format = WorkbookTableWriter.shownFormat(column)
        cells.append(column.precision == .byUnit ? "by unit" : format.isEmpty ? "" : "`\(format)`")
      }
      cells.append(column.meaning.replacingOccurrences(of: "|", with: "\\|"))
      lines.append("| " + cells.joined(separator: " | ") + " |")
    }
    if let variable = schema.variableColumns { lines += ["", "Columns: \(variable)."] }
    if let keys = keysSentence(schema.keys) { lines += ["", keys] }
    lines += ["", end]
    return lines.joined(separator: "\n")
  }

  /// `In health.sqlite: primary key (`date`); …`: a table's keys, indexes and references.
  static func keysSentence(_ keys: TableKeys) -> String? {
    func list(_ columns: [String]) -> String { "(" + columns.map { "`\($0)`" }.joined(separator: ", ") + ")" }
    var parts: [String] = []
    if !keys.primary.isEmpty { parts.append("primary key " + list(keys.primary)) }
    if !keys.indexes.isEmpty { parts.append("indexed by " + keys.indexes.map(list).joined(separator: " and ")) }
    for reference in keys.references {
      parts.append("`\(reference.column)` refers to the job's `\(reference.table)` table")
    }
    return parts.isEmpty ? nil : "In `health.sqlite`: " + parts.joined(separator: "; ") + "."
  }

  /// The precision table: decimals of values and sums per canonical unit, and how
  /// `health.xlsx` shows them.
  public static var precisionMarkdown: String {
    var lines = [
      begin("precision"), "",
      "| unit | values | sums | shown in health.xlsx (values, sums) | why |", "|---|---|---|---|---|",
    ]
    for entry in UnitPrecision.table + [UnitPrecision.other] {
      let unit = entry.unit == "other" ? "any other" : "`\(entry.unit)`"
      let shown = [entry.display, entry.sumDisplay].map { $0.description.isEmpty ? "General" : "`\($0.description)`" }
      lines.append(
        "| \(unit) | \(UnitPrecision.precision(unit: entry.unit).description) | "
          + "\(UnitPrecision.precision(unit: entry.unit, sum: true).description) | "
          + shown.joined(separator: ", ") + " | \(entry.reason) |")
    }
    lines += ["", end]
    return lines.joined(separator: "\n")
  }

  /// The unit table: what every known unit converts to, as decimal constants.
  public static var unitsMarkdown: String {
    var lines = [begin("units"), "", "| unit | canonical in samples | converts to | conversion |", "|---|---|---|---|"]
    for (symbol, conversion) in UnitConversion.known {
      lines.append(
        "| `\(symbol)` | `\(conversion.canonicalUnit)` | `\(conversion.baseUnit)` | \(conversion.formula) |")
    }
    lines += ["", end]
    return lines.joined(separator: "\n")
  }

  /// Every block, separated by blank lines: what `healthetl pipelines tables` prints.
  public static var allMarkdown: String {
    (all.map { markdown(id: $0.id, schema: $0.schema) } + [unitsMarkdown, precisionMarkdown]).joined(
      separator: "\n\n") + "\n"
  }
}
