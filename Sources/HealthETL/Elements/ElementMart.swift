import Foundation

/// Passes the export's other top-level elements through (`ActivitySummary`, `ClinicalRecord`,
/// `Audiogram`, `VisionPrescription`, `Me`, and any element HealthETL does not know): one row per
/// element with its attributes as written, so nothing in the export is dropped silently.
///
/// These elements are few (an activity summary a day), so rows are kept until the end, where each
/// element name's columns are known: its attributes in the order they first appeared.
public final class ElementMart: Mart {
  /// Where rows go: `{name}` in a csv file name writes one file per element name.
  public typealias Destination = TableDestination<String>

  private let transaction: OutputTransaction
  private let destinations: [Destination]
  private let names: Set<String>?
  private var elements: [GenericElement] = []

  public init(transaction: OutputTransaction, destinations: [Destination], names: Set<String>? = nil) {
    self.transaction = transaction
    self.destinations = destinations
    self.names = names
  }

  public func consume(_ element: GenericElement) {
    guard names?.contains(element.name) ?? true else { return }
    elements.append(element)
  }

  public func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary] {
    var order: [String] = []
    var byName: [String: [GenericElement]] = [:]
    for element in elements {
      if byName[element.name] == nil { order.append(element.name) }
      byName[element.name, default: []].append(element)
    }
    var written: [OutputSummary] = []
    for destination in destinations {
      if destination.file.contains("{name}") {
        let paths = ContentFileNames.paths(for: order, in: destination.file, placeholder: "{name}")
        for name in order.sorted() {
          var summary = try write(byName[name]!, to: paths[name]!, format: destination.format, context: context)
          summary.name = name
          written.append(summary)
        }
      } else {
        written.append(try write(elements, to: destination.file, format: destination.format, context: context))
      }
    }
    return written
  }

  /// The most attribute columns a CSV gets; past them, it is written long (Pipelines/README.md,
  /// "Other elements"). A real export's elements have at most a dozen attributes; N elements each
  /// with an attribute of its own made N × N cells (100,000 in 1.2 MB of XML: ~10 GB).
  static let widestTable = 100

  /// One table: `element`, the attributes, `child_elements`. CSV needs one set of columns: the
  /// union of the rows' attributes in first-seen order — or, past `widestTable` of them, one row
  /// per attribute, so that the file follows the size of what was read. JSON objects carry only
  /// their own.
  private func write(_ rows: [GenericElement], to path: String, format: TableFormat, context: MartContext)
    throws(OutputError) -> OutputSummary
  {
    if format != .csv { return try writeObjects(rows, to: path, format: format) }
    var attributes: [String] = []
    var seen: Set<String> = []
    for row in rows {
      for attribute in row.attributes where seen.insert(attribute.name).inserted { attributes.append(attribute.name) }
    }
    if attributes.count > Self.widestTable {
      var writer = try context.writer(ElementTables.long, file: path, format: format)
      for (index, row) in rows.enumerated() {
        var seen: Set<String> = []
        let own = row.attributes.filter { seen.insert($0.name).inserted }
        if own.isEmpty { try writer.append(ElementAttributeRow(element: row, number: index + 1, attribute: nil)) }
        for attribute in own {
          try writer.append(ElementAttributeRow(element: row, number: index + 1, attribute: attribute))
        }
      }
      return try writer.close()
    }
    var writer = try context.writer(ElementTables.table(attributes: attributes), file: path, format: format)
    for row in rows { try writer.append(ElementRow(row)) }
    return try writer.close()
  }

  private func writeObjects(_ rows: [GenericElement], to path: String, format: TableFormat) throws(OutputError)
    -> OutputSummary
  {
    let file = try transaction.create(path)
    var out: [UInt8] = format == .json ? [UInt8(ascii: "[")] : []
    for (index, row) in rows.enumerated() {
      if format == .json { out.append(contentsOf: Array((index == 0 ? "\n  " : ",\n  ").utf8)) }
      out.append(contentsOf: Array("{\"element\": ".utf8))
      JSONText.appendString(row.name, to: &out)
      var seen: Set<String> = []
      for attribute in row.attributes where seen.insert(attribute.name).inserted {
        out.append(contentsOf: Array(", ".utf8))
        JSONText.appendString(attribute.name, to: &out)
        out.append(contentsOf: Array(": ".utf8))
        JSONText.appendString(attribute.value, to: &out)
      }
      out.append(contentsOf: Array(", \"child_elements\": \(row.childCount)}".utf8))
      if format == .ndjson { out.append(0x0A) }
    }
    if format == .json { out.append(contentsOf: Array((rows.isEmpty ? "]\n" : "\n]\n").utf8)) }
    try file.write(out)
    try file.close()
    return OutputSummary(path: path, rows: rows.count)
  }
}
