import Foundation
import HealthModel

/// The column tables of `Pipelines/README.md`, rendered from the tables' declarations, so the
/// documentation cannot drift from what the writers write (a test compares them).
public enum TableDocumentation {
  /// Every table of every job kind, in kind order: (`sleep.daily`, its declaration).
  public static var all: [(id: String, schema: TableSchema)] {
    PipelineDefinition.Kind.allCases.flatMap { kind in kind.tables.map { ("\(kind.rawValue).\($0.name)", $0) } }
  }

  /// The marker lines around a generated block in the README.
  public static func begin(_ id: String) -> String { "<!-- generated: \(id) (make docs) -->" }
  public static let end = "<!-- end generated -->"

  /// The Markdown block of one table, markers included.
  public static func markdown(id: String, schema: TableSchema) -> String {
    var lines = [begin(id), "", "`\(schema.name)`: \(schema.rows); default file `\(schema.defaultFile)`.", ""]
    lines.append("| column | type | unit | precision | meaning |")
    lines.append("|---|---|---|---|---|")
    for column in schema.columns {
      let precision = column.kind == .number ? column.precision.description : ""
      lines.append(
        "| `\(column.name)` | \(column.kind.rawValue) | \(column.unit.map { "`\($0)`" } ?? "") | \(precision) | "
          + column.meaning.replacingOccurrences(of: "|", with: "\\|") + " |")
    }
    if let variable = schema.variableColumns { lines += ["", "Columns: \(variable)."] }
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
    (all.map { markdown(id: $0.id, schema: $0.schema) } + [unitsMarkdown]).joined(separator: "\n\n") + "\n"
  }
}
