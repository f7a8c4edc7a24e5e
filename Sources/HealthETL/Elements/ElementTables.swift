/// The table of an elements job, declared once: the export's other top-level elements, passed
/// through as written (Pipelines/docs/samples.md, "Other elements").
public enum ElementTables {
  static let element = Column.text("element", "the element's name (`ActivitySummary`, `Me`, …)")
  static let childElements = Column.integer(
    "child_elements", "how many elements it contained (an audiogram's `SensitivityPoint`s)")

  public static let elements = TableSchema(
    "elements", rows: "one row per top-level element, in document order", defaultFile: "elements/{name}.csv",
    columns: [element, childElements],
    variableColumns: "between `element` and `child_elements`, one text column per attribute of the element, "
      + "as written, in the order attributes first appear")

  /// The table of a CSV holding elements with these attributes.
  static func table(attributes: [String]) -> RowTable<ElementRow> {
    RowTable(
      elements,
      columns: [RowColumn(element) { .text($0.element.name) }]
        + attributes.map { name in .text(name, "attribute as written") { $0.values[name] } }
        + [RowColumn(childElements) { .integer(Int64($0.element.childCount)) }])
  }

  /// The long form of a table with more than `ElementMart.widestTable` attributes: one row per
  /// attribute of each element (one with both empty for an element without any).
  static let long = RowTable<ElementAttributeRow>(
    elements,
    columns: [
      RowColumn(element) { .text($0.element.name) },
      .integer("number", "the element's position in the file, from 1 (its rows share it)") { Int64($0.number) },
      .text("attribute", "the attribute's name") { $0.attribute?.name },
      .text("value", "its value as written") { $0.attribute?.value },
      RowColumn(childElements) { .integer(Int64($0.element.childCount)) },
    ])

  public static let all = [elements]
}

/// A row of a long elements CSV: one attribute of an element.
struct ElementAttributeRow {
  let element: GenericElement
  let number: Int
  let attribute: (name: String, value: String)?
}

/// A row of an elements CSV: the element, and its attributes by name (the first of a repeated one).
struct ElementRow {
  let element: GenericElement
  let values: [String: String]

  init(_ element: GenericElement) {
    self.element = element
    var values: [String: String] = [:]
    for attribute in element.attributes where values[attribute.name] == nil { values[attribute.name] = attribute.value }
    self.values = values
  }
}
