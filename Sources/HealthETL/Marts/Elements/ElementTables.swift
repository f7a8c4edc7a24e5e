/// The table of an elements job, declared once: the export's other top-level elements, passed
/// through as written (Pipelines/README.md, "Other elements").
public enum ElementTables {
  static let element = Column.text("element", "the element's name (`ActivitySummary`, `Me`, …)")
  static let childElements = Column.integer(
    "child_elements", "how many elements it contained (an audiogram's `SensitivityPoint`s)")

  public static let elements = TableSchema(
    "elements", rows: "one row per top-level element, in document order", defaultFile: "elements/{name}.csv",
    columns: [element, childElements],
    variableColumns: "between `element` and `child_elements`, one text column per attribute of the element, "
      + "as written, in the order attributes first appear")

  /// The columns of a CSV holding elements with these attributes.
  static func columns(attributes: [String]) -> [Column] {
    [element] + attributes.map { Column.text($0, "attribute as written") } + [childElements]
  }

  public static let all = [elements]
}
