import Foundation

/// An export folder for the clinical-record tests: resource files in `clinical-records/`, and an
/// `export.xml` with one `ClinicalRecord` per path named, in order.
enum ClinicalExportFolder {
  /// - Parameters:
  ///   - files: file name → contents, written into `clinical-records/`.
  ///   - named: the `resourceFilePath` of each record, below `/clinical-records/`.
  static func make(files: [String: Data], named: [String]) throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("healthetl-clinical-\(UUID())")
    let resources = folder.appendingPathComponent("clinical-records")
    try FileManager.default.createDirectory(at: resources, withIntermediateDirectories: true)
    for (name, bytes) in files { try bytes.write(to: resources.appendingPathComponent(name)) }
    let records = named.map { name in
      """
      <ClinicalRecord type="Observation" identifier="\(name)" sourceName="Clinic" sourceURL="https://example.org" \
      fhirVersion="4.0.1" receivedDate="2024-03-20 08:15:32 +0100" resourceFilePath="/clinical-records/\(name)"/>
      """
    }
    let xml = """
      <?xml version="1.0" encoding="UTF-8"?>
      <HealthData locale="en_US">
       <ExportDate value="2027-01-01 09:00:00 +0000"/>
      \(records.joined(separator: "\n"))
      </HealthData>

      """
    try Data(xml.utf8).write(to: folder.appendingPathComponent("export.xml"))
    return folder
  }
}
