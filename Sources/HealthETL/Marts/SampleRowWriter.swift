import Foundation
import HealthModel

/// Writes every distinct sample as a row of `samples/<Type>.csv` (SPEC §3), one file per type.
public final class SampleRowWriter: OutputStage {
  public static let columns = [
    "id", "type", "kind", "value", "unit", "raw_value", "raw_unit", "start", "end", "created", "source",
    "source_version", "device_name", "device_model", "device_hardware", "device_software", "metadata",
  ]

  private let transaction: OutputTransaction
  private var files: [Int32: DeferredInstantFile] = [:]
  private var fileNames: [Int32: String] = [:]
  private var nameBuffer: [UInt8] = []
  private var row: [UInt8] = []
  private var failure: OutputError?

  public init(transaction: OutputTransaction) {
    self.transaction = transaction
  }

  public func consume(_ sample: borrowing Sample, catalog: SampleCatalog) {
    guard failure == nil else { return }
    do throws(OutputError) {
      if files[sample.type] == nil {
        let name = Self.fileName(catalog.typeInfo(sample.type).shortName)
        fileNames[sample.type] = name
        files[sample.type] = DeferredInstantFile(scratch: try transaction.createScratch("samples-" + name))
      }
      let id = sampleID(sample, catalog: catalog)
      row.removeAll(keepingCapacity: true)
      appendRow(sample, id: id, catalog: catalog, to: &row)
      try files[sample.type]!.appendRow(row)
    } catch {
      failure = error
    }
  }

  /// Formats the staged rows in the run's zone into their final files.
  public func finish(_ context: StageContext) throws(OutputError) -> [OutputSummary] {
    if let failure { throw failure }
    var written: [OutputSummary] = []
    let header = (context.settings.csvByteOrderMark ? "\u{FEFF}" : "") + Self.columns.joined(separator: ",") + "\n"
    for (type, file) in files.sorted(by: { fileNames[$0.key]! < fileNames[$1.key]! }) {
      let relative = "samples/" + fileNames[type]!
      try file.finish(into: try transaction.create(relative), header: header, zone: context.zone.rules)
      written.append(OutputSummary(path: relative, rows: file.rows))
    }
    return written
  }

  /// `StepCount.csv`; anything outside `[A-Za-z0-9_-]` becomes `_`.
  static func fileName(_ shortName: String) -> String {
    let safe = shortName.unicodeScalars.map { scalar -> Character in
      scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || scalar == "_" || scalar == "-")
        ? Character(scalar) : "_"
    }
    return String(safe) + ".csv"
  }

  /// UUID v5 of `healthetl:sample:<type>|<source>|<start>|<end>|<raw value>|<raw unit>`.
  private func sampleID(_ sample: borrowing Sample, catalog: SampleCatalog) -> String {
    nameBuffer.removeAll(keepingCapacity: true)
    nameBuffer.append(contentsOf: UUIDv5.urlNamespace)
    nameBuffer.append(contentsOf: "healthetl:sample:".utf8)
    nameBuffer.append(contentsOf: catalog.typeInfo(sample.type).shortName.utf8)
    nameBuffer.append(UInt8(ascii: "|"))
    nameBuffer.append(contentsOf: catalog.sourceName(sample.source).utf8)
    nameBuffer.append(UInt8(ascii: "|"))
    nameBuffer.append(contentsOf: String(sample.start.seconds).utf8)
    nameBuffer.append(UInt8(ascii: "|"))
    nameBuffer.append(contentsOf: String(sample.end.seconds).utf8)
    nameBuffer.append(UInt8(ascii: "|"))
    nameBuffer.append(contentsOf: sample.rawValue)
    nameBuffer.append(UInt8(ascii: "|"))
    if let unit = catalog.unit(sample.rawUnit) { nameBuffer.append(contentsOf: unit.utf8) }
    return UUIDv5.make(nameBuffer)
  }

  private func appendRow(_ sample: borrowing Sample, id: String, catalog: SampleCatalog, to out: inout [UInt8]) {
    let info = catalog.typeInfo(sample.type)
    let comma = UInt8(ascii: ",")
    out.append(contentsOf: id.utf8)
    out.append(comma)
    CSVField.append(info.shortName, to: &out)
    out.append(comma)
    out.append(contentsOf: info.kind.rawValue.utf8)
    out.append(comma)
    switch info.kind {
    case .category:
      CSVField.append(catalog.categoryShortName(value: sample.categoryValue, type: sample.type), to: &out)
      out.append(comma)
    case .quantity, .other:
      if sample.value.isFinite {
        CSVField.appendNumber(sample.value, to: &out)
        out.append(comma)
        CSVField.append(catalog.unitConversion(sample.rawUnit)?.canonicalUnit, to: &out)
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
    CSVField.append(catalog.unit(sample.rawUnit), to: &out)
    out.append(comma)
    DeferredInstantFile.appendToken(sample.start, to: &out)
    out.append(comma)
    DeferredInstantFile.appendToken(sample.end, to: &out)
    out.append(comma)
    if let created = sample.created { DeferredInstantFile.appendToken(created, to: &out) }
    out.append(comma)
    CSVField.append(catalog.sourceName(sample.source), to: &out)
    out.append(comma)
    CSVField.append(catalog.sourceVersion(sample.sourceVersion), to: &out)
    let device = catalog.device(sample.device)
    for field in [device?.name, device?.model, device?.hardware, device?.software] {
      out.append(comma)
      CSVField.append(field, to: &out)
    }
    out.append(comma)
    if !sample.metadata.isEmpty {
      var json: [UInt8] = [UInt8(ascii: "{")]
      for index in 0..<sample.metadata.count {
        if index > 0 { json.append(comma) }
        JSONText.appendString(catalog.metadataKey(sample.metadata.key(at: index)), to: &json)
        json.append(UInt8(ascii: ":"))
        JSONText.appendString(sample.metadata.value(at: index), to: &json)
      }
      json.append(UInt8(ascii: "}"))
      json.withUnsafeBytes { CSVField.append($0, to: &out) }
    }
    out.append(0x0A)
  }
}
