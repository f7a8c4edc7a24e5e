import HealthModel

/// The table of a clinical-records job, declared once (Pipelines/README.md, "Clinical records").
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

/// A row of `records`: a `ClinicalRecord` element and what was found for its resource file.
struct ClinicalRecordRow {
  let element: GenericElement
  let resource: ClinicalRecordResource

  /// The element's attribute `name` as written.
  func attribute(_ name: String) -> String? { ClinicalRecordMart.attribute(name, of: element) }
}

/// What was found for one resource file.
struct ClinicalRecordResource {
  var summary = FHIRResourceSummary()
  /// Where the file was copied in the output folder; nil when it was not.
  var copy: String?
  /// Why the file was not read; nil when it was.
  var problem: String?
}
