import Foundation
import HealthExtract
import Testing

@testable import HealthETL

/// The resource files are read during the parse when the run says the export is open, and in the
/// finish otherwise: the same rows, copies and counts either way
/// (Pipelines/docs/clinical-records.md).
@Suite struct ClinicalRecordReadAheadTests {
  static let observation = #"{"resourceType":"Observation","code":{"coding":[{"code":"8867-4"}],"text":"Pulse"}}"#

  /// A folder export whose records name a resource, a file that is no resource, one too large to
  /// read, one the export lacks and a path outside the folder; one file no record names.
  static func export() throws -> URL {
    try ClinicalExportFolder.make(
      files: [
        "Observation-1.json": Data(observation.utf8), "Unnamed.json": Data(observation.utf8),
        "Bad.json": Data("not json".utf8), "Big.json": Data(count: ClinicalRecordMart.largestResource + 1),
      ],
      named: ["Observation-1.json", "Bad.json", "Big.json", "Missing.json", "../Observation-1.json"])
  }

  static func run(_ folder: URL, readsAhead: Bool) throws -> (StageHarness.Result, ClinicalRecordReport) {
    var mart: ClinicalRecordMart?
    let result = try StageHarness.run(
      .path(folder.appendingPathComponent("export.xml").path), zone: .named("Europe/Berlin"), readsAhead: readsAhead
    ) { transaction in
      let made = ClinicalRecordMart(
        transaction: transaction, destinations: [.init(table: .records, file: "clinical_records.csv", format: .csv)],
        copyResources: true)
      mart = made
      return [made]
    }
    return (result, mart!.report)
  }

  @Test(.timeLimit(.minutes(10))) func theSameRowsAndCopiesWhetherReadDuringTheParseOrInTheFinish() throws {
    let folder = try Self.export()
    defer { try? FileManager.default.removeItem(at: folder) }
    let (ahead, aheadReport) = try Self.run(folder, readsAhead: true)
    defer { ahead.remove() }
    let (late, lateReport) = try Self.run(folder, readsAhead: false)
    defer { late.remove() }
    #expect(try ahead.text("clinical_records.csv") == late.text("clinical_records.csv"))
    for report in [aheadReport, lateReport] {
      #expect(report.records == 5)
      // Only the named files count: the one summarized, and the two whose bytes were read.
      #expect(report.resourcesRead == 1)
      #expect(report.resourcesCopied == 2)
      #expect(report.resourceProblems == 4)
    }
    let rows = try ahead.csvRows("clinical_records.csv")
    #expect(rows.map { $0["code"]! } == ["8867-4", "", "", "", ""])
    #expect(
      rows.map { $0["copy"]! } == ["clinical-records/Observation-1.json", "clinical-records/Bad.json", "", "", ""])
    let problems = rows.map { $0["problem"]! }
    #expect(problems[0].isEmpty)
    #expect(problems[2].contains("larger than 8 MB"))
    #expect(problems[3] == "missing: the export holds no such file")
    #expect(problems[4].contains("is not a file in clinical-records/"))
    #expect(try ahead.text("clinical-records/Observation-1.json") == Self.observation)
    #expect(try ahead.text("clinical-records/Bad.json") == "not json")
    // The unnamed file is not copied, and nothing of the spool is left in the output folder.
    let left = try FileManager.default.subpathsOfDirectory(atPath: ahead.directory.path).sorted()
    #expect(
      left == [
        "clinical-records", "clinical-records/Bad.json", "clinical-records/Observation-1.json", "clinical_records.csv",
      ])
  }

  /// What waits for the finish is weighed by its strings: a resource's display of 100,000
  /// characters weighs them, plus its type's 11; a note counted as a fixed 1 KB let thousands
  /// of such summaries wait past the reader's bound.
  @Test func aNoteWeighsItsStrings() throws {
    let long = #"{"resourceType":"Observation","code":{"text":""# + String(repeating: "x", count: 100_000) + #""}}"#
    let summary = try FHIRResourceSummary.summarize(Array(long.utf8))
    #expect(ClinicalRecordMart.ResourceNote.read(.success(summary)).bytesInMemory == 100_011)
    #expect(ClinicalRecordMart.ResourceNote.unread(FHIRResourceProblem(description: "gone")).bytesInMemory == 4)
    #expect(ClinicalRecordMart.ResourceNote.end.bytesInMemory == 0)
  }
}
