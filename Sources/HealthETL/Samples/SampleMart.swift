import Foundation
import HealthModel

/// Writes every distinct sample (Pipelines/docs/samples.md, "Samples" and "Sample jobs") as a row: by
/// default one CSV per type (`samples/{type}.csv`), or one CSV, JSON or NDJSON file for all types,
/// as the pipeline asks; and, when the run writes `health.sqlite`, the rows of the first
/// destination's files into its tables (kept as fields until the zone is known, `ScratchRows`).
public final class SampleMart: Mart {
  /// The column names, in the order the row encoders below write them.
  static let columns = SampleTables.samples.columnNames
  /// The `value` column's precision: a unit conversion's binary noise goes, recorded digits stay.
  static let valuePrecision = SampleTables.samples.columns.first { $0.name == "value" }!.precision

  /// Where rows go: a file (with `{type}` for one file per type) in a format.
  public struct Destination: Sendable {
    public var file: String
    public var format: TableFormat

    /// Whether `file` names one file per type (`{type}`); worked out once, not per row.
    let perType: Bool

    public init(file: String, format: TableFormat) {
      self.file = file
      self.format = format
      perType = file.contains("{type}")
    }

    public static let perTypeCSV = Destination(file: "samples/{type}.csv", format: .csv)
  }

  private let transaction: OutputTransaction
  private let destinations: [Destination]
  private let types: Set<String>?
  /// Per type id: its file group, the types of one short name (`type` column) sharing a file; -1
  /// when the `types` filter drops it; nil until first seen.
  private var typeGroups: [Int?] = []
  /// Per group: its short name.
  private var groupNames: [String] = []
  private var groupByName: [String: Int] = [:]
  /// Rows wait here, one stream per file, until the zone is known; however many types there are,
  /// with a fixed budget of memory and descriptors.
  private let streams: ScratchStreams
  /// Per destination, per group (one slot when the destination is one file): its stream.
  private var streamSlots: [[Int?]]
  /// Per stream: rows staged.
  private var rows: [Int] = []
  private var nameBuffer: [UInt8] = []
  private var idBytes: [UInt8] = []
  private var json: [UInt8] = []
  private var row: [UInt8] = []
  private let uuid = UUIDv5.Writer()
  private var cache = EncodedVocabulary()
  private var failure: OutputError?
  /// With `health.sqlite`: the first destination's rows as fields, one stream per file.
  private let databaseStreams: ScratchStreams?
  private var databaseSlots: [Int?] = []
  private var fields: [Field] = []
  private var databaseRow: [UInt8] = []
  /// Every sample of a kept type becomes a row.
  public var sampleUse: SampleUse? { destinations.isEmpty ? nil : use }
  private var use = SampleUse()

  /// - Parameter tableSinks: the run's sinks; the first destination's rows are kept for those
  ///   that take its files (`health.sqlite`).
  public init(
    transaction: OutputTransaction, tableSinks: TableSinks = TableSinks(), destinations: [Destination] = [.perTypeCSV],
    types: Set<String>? = nil
  ) {
    self.transaction = transaction
    self.destinations = destinations
    self.types = types
    streams = ScratchStreams(transaction: transaction, name: "samples")
    streamSlots = destinations.map { _ in [] }
    databaseStreams =
      destinations.first.map { tableSinks.wants(file: $0.file) } ?? false
      ? ScratchStreams(transaction: transaction, name: "samples-database") : nil
  }

  public func consume(_ sample: borrowing Sample, catalog: SampleCatalog) {
    guard failure == nil else { return }
    let typeIndex = Int(sample.type)
    if typeIndex >= typeGroups.count {
      typeGroups.append(contentsOf: repeatElement(nil, count: typeIndex + 1 - typeGroups.count))
    }
    if typeGroups[typeIndex] == nil {
      typeGroups[typeIndex] = group(of: catalog.typeInfo(sample.type).shortName)
      if typeGroups[typeIndex]! >= 0 { use.showsWhole(sample.type) }
    }
    let group = typeGroups[typeIndex]!
    guard group >= 0 else { return }
    use.use(sample.type)
    do throws(OutputError) {
      writeSampleID(sample, catalog: catalog)
      for index in destinations.indices {
        let destination = destinations[index]
        let slot = destination.perType ? group : 0
        if slot >= streamSlots[index].count {
          streamSlots[index].append(contentsOf: repeatElement(nil, count: slot + 1 - streamSlots[index].count))
        }
        let stream: Int
        if let existing = streamSlots[index][slot] {
          stream = existing
        } else {
          stream = streams.addStream()
          rows.append(0)
          streamSlots[index][slot] = stream
        }
        row.removeAll(keepingCapacity: true)
        switch destination.format {
        case .csv: appendCSVRow(sample, catalog: catalog, to: &row)
        case .json:
          row.append(contentsOf: Array((rows[stream] == 0 ? "\n  " : ",\n  ").utf8))
          appendJSONRow(copy sample, id: String(decoding: idBytes, as: UTF8.self), catalog: catalog, to: &row)
        case .ndjson:
          appendJSONRow(copy sample, id: String(decoding: idBytes, as: UTF8.self), catalog: catalog, to: &row)
          row.append(0x0A)
        }
        try streams.append(row, to: stream)
        rows[stream] += 1
      }
      if let databaseStreams {
        try keepForDatabase(
          copy sample, catalog: catalog, slot: destinations[0].perType ? group : 0, in: databaseStreams)
      }
    } catch {
      failure = error
    }
  }

  /// The file group of a short type name, -1 when the `types` filter drops it.
  private func group(of shortName: String) -> Int {
    guard types?.contains(shortName) ?? true else { return -1 }
    if let known = groupByName[shortName] { return known }
    groupNames.append(shortName)
    groupByName[shortName] = groupNames.count - 1
    return groupNames.count - 1
  }

  /// Formats the staged rows in the run's zone into their final files: one per type name, named
  /// by `ContentFileNames`, in the order of the names.
  public func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary] {
    if let failure { throw failure }
    defer {
      streams.remove()
      databaseStreams?.remove()
    }
    var written: [OutputSummary] = []
    for (index, destination) in destinations.enumerated() {
      let slots = streamSlots[index]
      if destination.perType {
        let present = slots.indices.filter { slots[$0] != nil }
        let paths = ContentFileNames.paths(
          for: present.map { groupNames[$0] }, in: destination.file, placeholder: "{type}")
        for group in present.sorted(by: { groupNames[$0] < groupNames[$1] }) {
          let name = groupNames[group]
          written.append(
            try write(slots[group]!, to: paths[name]!, format: destination.format, context: context, name: name))
          if index == 0 { try writeDatabaseTable(slot: group, file: paths[name]!, pattern: destination.file, context) }
        }
      } else if let stream = slots.first ?? nil {
        written.append(try write(stream, to: destination.file, format: destination.format, context: context))
        if index == 0 { try writeDatabaseTable(slot: 0, file: destination.file, pattern: nil, context) }
      } else {
        // A single-file destination is written even when no sample matched.
        let writer = try TableWriter(
          transaction, path: destination.file, columns: SampleTables.samples.columns, format: destination.format,
          zone: context.zone.rules, byteOrderMark: context.settings.csvByteOrderMark)
        written.append(try writer.close())
      }
    }
    return written
  }

  /// The sample as the fields of its row, kept in the database stream of `slot`.
  private func keepForDatabase(
    _ sample: Sample, catalog: SampleCatalog, slot: Int, in databaseStreams: ScratchStreams
  ) throws(OutputError) {
    if slot >= databaseSlots.count {
      databaseSlots.append(contentsOf: repeatElement(nil, count: slot + 1 - databaseSlots.count))
    }
    let stream = databaseSlots[slot] ?? databaseStreams.addStream()
    databaseSlots[slot] = stream
    let info = catalog.typeInfo(sample.type)
    let finite = sample.kind != .category && sample.value.isFinite
    fields.removeAll(keepingCapacity: true)
    fields.append(.instant(sample.start))
    fields.append(.text(String(decoding: idBytes, as: UTF8.self)))
    fields.append(.text(info.shortName))
    fields.append(.text(info.kind.rawValue))
    if sample.kind == .category {
      fields.append(.text(catalog.categoryShortName(value: sample.categoryValue, type: sample.type)))
    } else if finite {
      fields.append(.number(sample.value))
    } else {
      fields.append(.text(sample.rawValueString))
    }
    fields.append(finite ? .text(catalog.unitConversion(sample.rawUnit)?.canonicalUnit) : .missing)
    fields.append(.text(sample.rawValueString))
    fields.append(.text(catalog.unit(sample.rawUnit)))
    fields.append(.instant(sample.start))
    fields.append(.instant(sample.end))
    fields.append(.instant(sample.created))
    fields.append(.text(catalog.sourceName(sample.source)))
    fields.append(.text(catalog.sourceVersion(sample.sourceVersion)))
    let device = catalog.device(sample.device)
    for value in [device?.name, device?.model, device?.hardware, device?.software] { fields.append(.text(value)) }
    if sample.metadata.isEmpty {
      fields.append(.missing)
    } else {
      json.removeAll(keepingCapacity: true)
      json.append(UInt8(ascii: "{"))
      for index in 0..<sample.metadata.count {
        if index > 0 { json.append(UInt8(ascii: ",")) }
        json.append(contentsOf: cache.metadataKeyJSON(sample.metadata.key(at: index), catalog))
        json.append(UInt8(ascii: ":"))
        JSONText.appendString(sample.metadata.value(at: index), to: &json)
      }
      json.append(UInt8(ascii: "}"))
      fields.append(.text(String(decoding: json, as: UTF8.self)))
    }
    databaseRow.removeAll(keepingCapacity: true)
    ScratchRows.append(fields, to: &databaseRow)
    try databaseStreams.append(databaseRow, to: stream)
  }

  /// The rows kept for `slot` into the table of `file` (one of the files of `pattern`).
  private func writeDatabaseTable(slot: Int, file: String, pattern: String?, _ context: MartContext)
    throws(OutputError)
  {
    guard let databaseStreams, slot < databaseSlots.count, let stream = databaseSlots[slot] else { return }
    let tables = context.tableSinks.claim(
      file: file, pattern: pattern, columns: SampleTables.samples.columns, zone: context.zone.rules)
    guard !tables.isEmpty else { return }
    var reader = ScratchRows.Reader()
    try databaseStreams.read(stream) { (piece) throws(OutputError) in
      try reader.rows(in: piece) { row in for table in tables { table.append(row) } }
    }
    for table in tables { table.flush() }
  }

  /// One file: the head of its format, the rows of `stream`, the tail.
  private func write(_ stream: Int, to path: String, format: TableFormat, context: MartContext, name: String? = nil)
    throws(OutputError) -> OutputSummary
  {
    let (header, footer): (String, String) =
      switch format {
      case .csv:
        ((context.settings.csvByteOrderMark ? "\u{FEFF}" : "") + Self.columns.joined(separator: ",") + "\n", "")
      case .json: ("[", rows[stream] == 0 ? "]\n" : "\n]\n")
      case .ndjson: ("", "")
      }
    try DeferredInstants.copy(
      stream, of: streams, into: try transaction.create(path), header: header, footer: footer,
      zone: context.zone.rules)
    return OutputSummary(path: path, rows: rows[stream], name: name)
  }

  /// Writes the UUID v5 of `healthetl:sample:<type>|<source>|<start>|<end>|<raw value>|<raw unit>`
  /// into `idBytes`.
  private func writeSampleID(_ sample: borrowing Sample, catalog: SampleCatalog) {
    Self.idName(
      sample, type: cache.typeName(sample.type, catalog), source: cache.sourceName(sample.source, catalog),
      rawUnit: cache.rawUnitName(sample.rawUnit, catalog), into: &nameBuffer)
    idBytes.removeAll(keepingCapacity: true)
    nameBuffer.withUnsafeBytes { uuid.append($0, to: &idBytes) }
  }

  /// The URL namespace followed by `healthetl:sample:<type>|<source>|<start>|<end>|<raw value>|<raw unit>`
  /// (Pipelines/docs/samples.md, "Sample id"), the names given as bytes.
  static func idName(
    _ sample: borrowing Sample, type: [UInt8], source: [UInt8], rawUnit: [UInt8], into name: inout [UInt8]
  ) {
    name.removeAll(keepingCapacity: true)
    name.append(contentsOf: UUIDv5.urlNamespace)
    name.append(contentsOf: idPrefix)
    name.append(contentsOf: type)
    name.append(UInt8(ascii: "|"))
    name.append(contentsOf: source)
    name.append(UInt8(ascii: "|"))
    appendInteger(sample.start.seconds, to: &name)
    name.append(UInt8(ascii: "|"))
    appendInteger(sample.end.seconds, to: &name)
    name.append(UInt8(ascii: "|"))
    name.append(contentsOf: sample.rawValue)
    name.append(UInt8(ascii: "|"))
    name.append(contentsOf: rawUnit)
  }

  /// The sample's id, as its `samples/` row has it; for stages that name a few samples.
  static func sampleID(_ sample: borrowing Sample, catalog: SampleCatalog, buffer: inout [UInt8]) -> String {
    idName(
      sample, type: Array(catalog.typeInfo(sample.type).shortName.utf8),
      source: Array(catalog.sourceName(sample.source).utf8), rawUnit: Array((catalog.unit(sample.rawUnit) ?? "").utf8),
      into: &buffer)
    return UUIDv5.make(buffer)
  }

  static let idPrefix = Array("healthetl:sample:".utf8)

  static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
    if value < 0 { out.append(UInt8(ascii: "-")) }
    var magnitude = value.magnitude
    var digits:
      (
        UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
        UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
      ) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    var count = 0
    withUnsafeMutableBytes(of: &digits) { buffer in
      repeat {
        buffer[count] = UInt8(48 + magnitude % 10)
        magnitude /= 10
        count += 1
      } while magnitude > 0
      while count > 0 {
        count -= 1
        out.append(buffer[count])
      }
    }
  }

  /// CSV row; the id was written to `idBytes` by `writeSampleID`. Everything that repeats (type,
  /// source, device, units, metadata keys) comes pre-encoded from the cache.
  private func appendCSVRow(_ sample: borrowing Sample, catalog: SampleCatalog, to out: inout [UInt8]) {
    let comma = UInt8(ascii: ",")
    DeferredInstants.appendToken(sample.start, localTime: true, to: &out)
    out.append(comma)
    out.append(contentsOf: idBytes)
    out.append(comma)
    out.append(contentsOf: cache.typeAndKindCSV(sample.type, catalog))
    switch sample.kind {
    case .category:
      out.append(contentsOf: cache.categoryCSV(value: sample.categoryValue, type: sample.type, catalog))
      out.append(comma)
    case .quantity, .other:
      if sample.value.isFinite {
        if sample.value == sample.value.rounded(), abs(sample.value) < 1e15 {
          Self.appendInteger(Int64(sample.value), to: &out)
        } else {
          CSVField.appendNumber(Self.valuePrecision.rounded(sample.value), to: &out)
        }
        out.append(comma)
        out.append(contentsOf: cache.canonicalUnitCSV(sample.rawUnit, catalog))
      } else if sample.hasRawValue {
        CSVField.append(sample.rawValue, to: &out)
        out.append(comma)
      } else {
        out.append(comma)
      }
    }
    out.append(comma)
    if sample.hasRawValue { CSVField.append(sample.rawValue, to: &out) }
    out.append(comma)
    out.append(contentsOf: cache.rawUnitCSV(sample.rawUnit, catalog))
    out.append(comma)
    DeferredInstants.appendToken(sample.start, to: &out)
    out.append(comma)
    DeferredInstants.appendToken(sample.end, to: &out)
    out.append(comma)
    if let created = sample.created { DeferredInstants.appendToken(created, to: &out) }
    out.append(comma)
    out.append(contentsOf: cache.sourceCSV(sample.source, catalog))
    out.append(comma)
    out.append(contentsOf: cache.versionCSV(sample.sourceVersion, catalog))
    out.append(contentsOf: cache.deviceCSV(sample.device, catalog))
    out.append(comma)
    if !sample.metadata.isEmpty {
      json.removeAll(keepingCapacity: true)
      json.append(UInt8(ascii: "{"))
      for index in 0..<sample.metadata.count {
        if index > 0 { json.append(comma) }
        json.append(contentsOf: cache.metadataKeyJSON(sample.metadata.key(at: index), catalog))
        json.append(UInt8(ascii: ":"))
        JSONText.appendString(sample.metadata.value(at: index), to: &json)
      }
      json.append(UInt8(ascii: "}"))
      json.withUnsafeBytes { CSVField.append($0, to: &out) }
    }
    out.append(0x0A)
  }

  private func appendJSONRow(_ sample: Sample, id: String, catalog: SampleCatalog, to out: inout [UInt8]) {
    let info = catalog.typeInfo(sample.type)
    func key(_ name: String) {
      JSONText.appendString(name, to: &out)
      out.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: " ")])
    }
    func text(_ value: String?) {
      if let value { JSONText.appendString(value, to: &out) } else { out.append(contentsOf: Array("null".utf8)) }
    }
    func separator() { out.append(contentsOf: [UInt8(ascii: ","), UInt8(ascii: " ")]) }
    func instant(_ value: Instant?) {
      guard let value else { return out.append(contentsOf: Array("null".utf8)) }
      out.append(UInt8(ascii: "\""))
      DeferredInstants.appendToken(value, to: &out)
      out.append(UInt8(ascii: "\""))
    }
    out.append(UInt8(ascii: "{"))
    key("local_time")
    out.append(UInt8(ascii: "\""))
    DeferredInstants.appendToken(sample.start, localTime: true, to: &out)
    out.append(UInt8(ascii: "\""))
    separator()
    key("id"); text(id); separator()
    key("type"); text(info.shortName); separator()
    key("kind"); text(info.kind.rawValue); separator()
    key("value")
    if info.kind == .category {
      text(catalog.categoryShortName(value: sample.categoryValue, type: sample.type))
    } else if sample.value.isFinite {
      CSVField.appendNumber(Self.valuePrecision.rounded(sample.value), to: &out)
    } else {
      text(sample.rawValueString)
    }
    separator()
    key("unit");
    text(info.kind == .category || !sample.value.isFinite ? nil : catalog.unitConversion(sample.rawUnit)?.canonicalUnit)
    separator()
    key("raw_value"); text(sample.rawValueString); separator()
    key("raw_unit"); text(catalog.unit(sample.rawUnit)); separator()
    key("start"); instant(sample.start); separator()
    key("end"); instant(sample.end); separator()
    key("created"); instant(sample.created); separator()
    key("source"); text(catalog.sourceName(sample.source)); separator()
    key("source_version"); text(catalog.sourceVersion(sample.sourceVersion))
    let device = catalog.device(sample.device)
    for (name, value) in [
      ("device_name", device?.name), ("device_model", device?.model),
      ("device_hardware", device?.hardware), ("device_software", device?.software),
    ] {
      separator(); key(name); text(value)
    }
    separator()
    key("metadata")
    out.append(UInt8(ascii: "{"))
    for index in 0..<sample.metadata.count {
      if index > 0 { separator() }
      JSONText.appendString(catalog.metadataKey(sample.metadata.key(at: index)), to: &out)
      out.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: " ")])
      JSONText.appendString(sample.metadata.value(at: index), to: &out)
    }
    out.append(contentsOf: [UInt8(ascii: "}"), UInt8(ascii: "}")])
  }
}
