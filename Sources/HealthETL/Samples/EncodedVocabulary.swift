import HealthModel

/// The repeated parts of sample rows (type, source, device, units, metadata keys), encoded once
/// per distinct id as the bytes a CSV or JSON row needs, so writing a row copies bytes instead of
/// converting strings.
struct EncodedVocabulary {
  private var typeNames: [[UInt8]?] = []
  private var typeAndKind: [[UInt8]?] = []
  private var sourceNames: [[UInt8]?] = []
  private var sources: [[UInt8]?] = []
  private var versions: [[UInt8]?] = []
  private var devices: [[UInt8]?] = []
  private var rawUnitNames: [[UInt8]?] = []
  private var rawUnits: [[UInt8]?] = []
  private var canonicalUnits: [[UInt8]?] = []
  private var metadataKeys: [[UInt8]?] = []
  private var categories: [Int64: [UInt8]] = [:]

  /// `table[id]`, computing it with `make` the first time; id -1 (absent) gives no bytes.
  private static func lookup(_ table: inout [[UInt8]?], _ id: Int32, _ make: () -> [UInt8]) -> [UInt8] {
    guard id >= 0 else { return [] }
    let index = Int(id)
    if index >= table.count { table.append(contentsOf: repeatElement(nil, count: index + 1 - table.count)) }
    if let known = table[index] { return known }
    let bytes = make()
    table[index] = bytes
    return bytes
  }

  private static func csv(_ text: String?) -> [UInt8] {
    var out: [UInt8] = []
    CSVField.append(text, to: &out)
    return out
  }

  mutating func typeName(_ id: Int32, _ catalog: SampleCatalog) -> [UInt8] {
    Self.lookup(&typeNames, id) { Array(catalog.typeInfo(id).shortName.utf8) }
  }

  /// `type,kind,` as CSV.
  mutating func typeAndKindCSV(_ id: Int32, _ catalog: SampleCatalog) -> [UInt8] {
    Self.lookup(&typeAndKind, id) {
      let info = catalog.typeInfo(id)
      return Self.csv(info.shortName) + [UInt8(ascii: ",")] + Array(info.kind.rawValue.utf8) + [UInt8(ascii: ",")]
    }
  }

  mutating func sourceName(_ id: Int32, _ catalog: SampleCatalog) -> [UInt8] {
    Self.lookup(&sourceNames, id) { Array(catalog.sourceName(id).utf8) }
  }

  mutating func sourceCSV(_ id: Int32, _ catalog: SampleCatalog) -> [UInt8] {
    Self.lookup(&sources, id) { Self.csv(catalog.sourceName(id)) }
  }

  mutating func versionCSV(_ id: Int32, _ catalog: SampleCatalog) -> [UInt8] {
    Self.lookup(&versions, id) { Self.csv(catalog.sourceVersion(id)) }
  }

  /// `,name,model,hardware,software` as CSV (four empty fields without a device).
  mutating func deviceCSV(_ id: Int32, _ catalog: SampleCatalog) -> [UInt8] {
    guard id >= 0 else { return Array(",,,,".utf8) }
    return Self.lookup(&devices, id) {
      let device = catalog.device(id)
      var out: [UInt8] = []
      for field in [device?.name, device?.model, device?.hardware, device?.software] {
        out.append(UInt8(ascii: ","))
        CSVField.append(field, to: &out)
      }
      return out
    }
  }

  mutating func rawUnitName(_ id: Int32, _ catalog: SampleCatalog) -> [UInt8] {
    Self.lookup(&rawUnitNames, id) { Array((catalog.unit(id) ?? "").utf8) }
  }

  mutating func rawUnitCSV(_ id: Int32, _ catalog: SampleCatalog) -> [UInt8] {
    Self.lookup(&rawUnits, id) { Self.csv(catalog.unit(id)) }
  }

  mutating func canonicalUnitCSV(_ id: Int32, _ catalog: SampleCatalog) -> [UInt8] {
    Self.lookup(&canonicalUnits, id) { Self.csv(catalog.unitConversion(id)?.canonicalUnit) }
  }

  mutating func metadataKeyJSON(_ id: Int32, _ catalog: SampleCatalog) -> [UInt8] {
    Self.lookup(&metadataKeys, id) {
      var out: [UInt8] = []
      JSONText.appendString(catalog.metadataKey(id), to: &out)
      return out
    }
  }

  mutating func categoryCSV(value: Int32, type: Int32, _ catalog: SampleCatalog) -> [UInt8] {
    let key = Int64(value) << 32 | Int64(UInt32(bitPattern: type))
    if let known = categories[key] { return known }
    let bytes = Self.csv(catalog.categoryShortName(value: value, type: type))
    categories[key] = bytes
    return bytes
  }
}
