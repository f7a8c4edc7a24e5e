import HealthModel

/// The table of a clinical-records job, declared once (Pipelines/docs/clinical-records.md, "Clinical records").
public enum ClinicalRecordTables {
  /// `clinical_records.csv`: one row per `ClinicalRecord` element.
  static let records = RowTable<ClinicalRecordRow>(
    "records", rows: "one row per `ClinicalRecord` element, in document order", defaultFile: "clinical_records.csv",
    columns: [
      .text("type", "`type` as written (`Procedure`, `Immunization`, `DiagnosticReport`, …)") { $0.attribute("type") },
      .text("identifier", "`identifier`: the record's id at its provider") { $0.attribute("identifier") },
      .text("source", "`sourceName`: the provider (`Sutter Health`)") { $0.attribute("sourceName") },
      .text("source_url", "`sourceURL`") { $0.attribute("sourceURL") },
      .text("fhir_version", "`fhirVersion` (`1.0.2` is DSTU2, `4.0.1` R4)") { $0.attribute("fhirVersion") },
      .instant("received", "`receivedDate`: when the phone downloaded the record") {
        $0.attribute("receivedDate").flatMap { HealthDateParser.parse($0)?.instant }
      },
      .text("resource_type", "the resource file's `resourceType`") { $0.resource.summary.resourceType },
      .text("code_system", "`system` of the resource's first coding (`http://loinc.org`)") {
        $0.resource.summary.codeSystem
      },
      .text("code", "`code` of that coding") { $0.resource.summary.code },
      .text("display", "its `display`, else the concept's `text`") { $0.resource.summary.display },
      .text(
        "effective",
        "the resource's clinical date as written (FHIR dateTime: `2019-05-12`, `2019-05-12T10:00:00-07:00`)"
      ) { $0.resource.summary.effective },
      .text("file", "`resourceFilePath` as written") { $0.attribute("resourceFilePath") },
      .text("copy", "where the resource was copied in the output folder (`copyResources`); empty") {
        $0.resource.copy
      },
      .text(
        "problem",
        "why the resource file was not read (missing, too large, not JSON, a path outside `clinical-records/`); empty"
      ) { $0.resource.problem },
    ])

  public static let all = [records.schema]
}

/// A row of `records`: a `ClinicalRecord` element's attributes and what was found for its
/// resource file.
struct ClinicalRecordRow {
  let fields: ClinicalRecordFields
  let resource: ClinicalRecordResource

  /// The element's attribute `name` as written.
  func attribute(_ name: String) -> String? { ClinicalRecordFields.Name(rawValue: name).flatMap(fields.value(of:)) }
}

/// The attributes of a `ClinicalRecord` element that its row shows (the first of a repeated one),
/// and their form in the scratch file: per attribute a byte (1: present), then when present its
/// length (4 bytes, little-endian) and its UTF-8 bytes.
struct ClinicalRecordFields {
  enum Name: String, CaseIterable {
    case type, identifier, sourceName, sourceURL, fhirVersion, receivedDate, resourceFilePath
  }

  private var values: [String?]

  init(_ element: GenericElement) {
    values = Name.allCases.map { name in element.attributes.first { $0.name == name.rawValue }?.value }
  }

  private init(values: [String?]) { self.values = values }

  func value(of name: Name) -> String? { values[Name.allCases.firstIndex(of: name)!] }

  func encoded() -> [UInt8] {
    var bytes: [UInt8] = []
    for value in values {
      guard let value else {
        bytes.append(0)
        continue
      }
      bytes.append(1)
      let utf8 = Array(value.utf8)
      withUnsafeBytes(of: UInt32(utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
      bytes.append(contentsOf: utf8)
    }
    return bytes
  }

  /// The record that starts at `start` in `bytes` and where it ends; nil when `bytes` end first.
  static func decode(_ bytes: [UInt8], from start: Int) -> (ClinicalRecordFields, end: Int)? {
    var values: [String?] = []
    var index = start
    for _ in Name.allCases {
      guard index < bytes.count else { return nil }
      let present = bytes[index] == 1
      index += 1
      guard present else {
        values.append(nil)
        continue
      }
      guard index + 4 <= bytes.count else { return nil }
      let length = (0..<4).reduce(0) { $0 | Int(bytes[index + $1]) << (8 * $1) }
      index += 4
      guard index + length <= bytes.count else { return nil }
      values.append(String(decoding: bytes[index..<(index + length)], as: UTF8.self))
      index += length
    }
    return (ClinicalRecordFields(values: values), index)
  }
}

/// What was found for one resource file.
struct ClinicalRecordResource {
  var summary = FHIRResourceSummary()
  /// Where the file was copied in the output folder; nil when it was not.
  var copy: String?
  /// Why the file was not read; nil when it was.
  var problem: String?
}
