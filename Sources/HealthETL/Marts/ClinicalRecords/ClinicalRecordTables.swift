/// The table of a clinical-records job, declared once (Pipelines/README.md, "Clinical records").
public enum ClinicalRecordTables {
  /// `clinical_records.csv`: one row per `ClinicalRecord` element.
  public static let records = TableSchema(
    "records", rows: "one row per `ClinicalRecord` element, in document order", defaultFile: "clinical_records.csv",
    columns: [
      .text("type", "`type` as written (`Procedure`, `Immunization`, `DiagnosticReport`, …)"),
      .text("identifier", "`identifier`: the record's id at its provider"),
      .text("source", "`sourceName`: the provider (`Sutter Health`)"),
      .text("source_url", "`sourceURL`"),
      .text("fhir_version", "`fhirVersion` (`1.0.2` is DSTU2, `4.0.1` R4)"),
      .instant("received", "`receivedDate`: when the phone downloaded the record"),
      .text("resource_type", "the resource file's `resourceType`"),
      .text("code_system", "`system` of the resource's first coding (`http://loinc.org`)"),
      .text("code", "`code` of that coding"),
      .text("display", "its `display`, else the concept's `text`"),
      .text(
        "effective",
        "the resource's clinical date as written (FHIR dateTime: `2019-05-12`, `2019-05-12T10:00:00-07:00`)"),
      .text("file", "`resourceFilePath` as written"),
      .text("copy", "where the resource was copied in the output folder (`copyResources`); empty"),
      .text(
        "problem",
        "why the resource file was not read (missing, too large, not JSON, a path outside `clinical-records/`); empty"),
    ])

  public static let all = [records]
}
