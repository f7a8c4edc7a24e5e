import Foundation
import HealthExtract
import Testing

@testable import HealthETL

/// `copyResources` and the values taken from resources (Pipelines/docs/clinical-records.md, "Clinical records";
/// issue 31, item 6), over an export folder written here.
@Suite struct ClinicalRecordCopyTests {
  /// `A.json`, `A.JSON` and `A` once shared one copy (`A.json`, holding the file read last) and all
  /// three rows named it: two records pointed at another's content. Each now has a copy of its
  /// own with its own bytes. `A.JSON`'s display holds a NUL and a DEL (as JSON escapes): both
  /// become spaces and are counted.
  @Test func filesNamedAlikeGetACopyEach() throws {
    let files = [
      "A.json": #"{"resourceType":"Observation","code":{"coding":[{"code":"1"}],"text":"one"}}"#,
      "A.JSON": #"{"resourceType":"Observation","code":{"coding":[{"code":"2"}],"text":"t\u0000w\u007fo"}}"#,
      "A": #"{"resourceType":"Observation","code":{"coding":[{"code":"3"}],"text":"three"}}"#,
    ]
    let folder = try ClinicalExportFolder.make(
      files: files.mapValues { Data($0.utf8) }, named: ["A.json", "A.JSON", "A"])
    defer { try? FileManager.default.removeItem(at: folder) }
    let export = folder.appendingPathComponent("export.xml")
    var mart: ClinicalRecordMart?
    let result = try StageHarness.run(.path(export.path)) { transaction in
      let made = ClinicalRecordMart(
        transaction: transaction, destinations: [.init(table: .records, file: "clinical_records.csv", format: .csv)],
        copyResources: true)
      mart = made
      return [made]
    }
    defer { result.remove() }
    let rows = try result.csvRows("clinical_records.csv")
    #expect(rows.map { $0["code"]! } == ["1", "2", "3"])
    #expect(rows.map { $0["display"]! } == ["one", "t w o", "three"])
    let copies = rows.map { $0["copy"]! }
    #expect(Set(copies).count == 3, "\(copies)")
    #expect(copies[0] == "clinical-records/A.json")
    for (row, copy) in zip(["A.json", "A.JSON", "A"], copies) {
      #expect(try result.text(copy) == files[row], "\(row) → \(copy)")
    }
    #expect(mart?.report.resourcesCopied == 3)
    #expect(mart?.report.controlCharactersReplaced == 2)
  }
}

/// The records stream through a scratch file (issue 31, item 5): 100,000 records with long URLs,
/// held as elements to the end, took 320 MB.
@Suite struct ClinicalRecordStreamingTests {
  /// N records with a 500-byte `sourceURL` each (about 620 bytes in the scratch file), at
  /// N = 500 … 4,000 (0.3 → 2.5 MB of records): the rows are every record in document order,
  /// while the bytes of records in memory never pass the limit (64 KB) plus one record.
  @Test func memoryHoldsNoMoreThanTheLimitWhateverTheRecords() throws {
    let limit = 64 << 10
    for size in [500, 1_000, 2_000, 4_000] {
      let url = "https://fhir.example.org/" + String(repeating: "x", count: 475)
      let body = (0..<size).map { index in
        """
        <ClinicalRecord type="Observation" identifier="r\(index)" sourceName="Clinic" sourceURL="\(url)" \
        fhirVersion="4.0.1" receivedDate="2024-03-20 08:15:32 +0100" resourceFilePath="/clinical-records/O-\(index % 7).json"/>
        """
      }.joined(separator: "\n")
      var mart: ClinicalRecordMart?
      let result = try StageHarness.run(StageHarness.export(body)) { transaction in
        let made = ClinicalRecordMart(
          transaction: transaction, destinations: [.init(table: .records, file: "clinical_records.csv", format: .csv)],
          copyResources: false, memoryLimit: limit)
        mart = made
        return [made]
      }
      defer { result.remove() }
      let rows = try result.csvRows("clinical_records.csv")
      #expect(rows.count == size)
      #expect(rows.map { $0["identifier"]! } == (0..<size).map { "r\($0)" })
      #expect(rows.last?["source_url"] == url)
      #expect(rows.last?["file"] == "/clinical-records/O-\((size - 1) % 7).json")
      // No resource file is at hand: each row says why.
      #expect(rows.last?["problem"]?.isEmpty == false)
      #expect(mart?.report.records == size)
      let held = try #require(mart?.mostRecordBytesInMemory)
      #expect(held > 0 && held <= limit + 1_000, "\(held) bytes held for \(size) records")
    }
  }
}
