import Foundation
import HealthExtract
import Testing

@testable import HealthETL

/// The ECG files are read during the parse when the run says the export is open, and in the
/// finish otherwise: the same rows either way (Pipelines/docs/electrocardiograms.md).
@Suite struct ElectrocardiogramReadAheadTests {
  static let ecg = """
    Name,Alex Example
    Recorded Date,2024-03-20 08:15:32 +0100
    Classification,Sinus Rhythm
    Sample Rate,512 hertz
    Lead,Lead I
    Unit,µV

    -19.512
    -22.107
    5

    """

  /// A folder export: an XML with one record, two ECG files, one CSV that is no ECG, and one
  /// ECG whose header has no date.
  static func export() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("healthetl-ecg-\(UUID())")
    let recordings = folder.appendingPathComponent("electrocardiograms")
    try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
    let files = [
      "ecg_2024-03-20.csv": ecg,
      "ecg_2024-03-21.csv": ecg.replacingOccurrences(of: "2024-03-20 08:15:32", with: "2024-03-21 09:00:00")
        .replacingOccurrences(of: "512 hertz", with: "250 hertz"),
      "weights.csv": "date,kg\n2024-03-20,70\n",
      "ecg_broken.csv": "Name,x\nSample Rate,512 hertz\n1\n2\n",
      // 125 samples at 1 Hz: the first 120 s are kept, 5 counted.
      "ecg_long.csv": "Recorded Date,2024-03-19 08:00:00 +0100\nSample Rate,1 hertz\n\n"
        + (1...125).map { "\($0)\n" }.joined(),
    ]
    for (name, text) in files { try Data(text.utf8).write(to: recordings.appendingPathComponent(name)) }
    let xml = """
      <?xml version="1.0" encoding="UTF-8"?>
      <HealthData locale="en_US">
       <ExportDate value="2024-03-22 09:00:00 +0100"/>
       <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" \
      creationDate="2024-03-20 08:16:00 +0100" startDate="2024-03-20 08:16:00 +0100" \
      endDate="2024-03-20 08:16:00 +0100" value="70"/>
      </HealthData>

      """
    try Data(xml.utf8).write(to: folder.appendingPathComponent("export.xml"))
    return folder
  }

  static func run(_ folder: URL, readsAhead: Bool) throws -> (StageHarness.Result, ElectrocardiogramReport) {
    var mart: ElectrocardiogramMart?
    let result = try StageHarness.run(
      .path(folder.appendingPathComponent("export.xml").path), zone: .named("Europe/Berlin"), readsAhead: readsAhead
    ) { _ in
      let made = ElectrocardiogramMart(destinations: [
        .init(table: .recordings, file: "ecg_recordings.csv", format: .csv),
        .init(table: .samples, file: "ecg_samples.csv", format: .csv),
      ])
      mart = made
      return [made]
    }
    return (result, mart!.report)
  }

  @Test(.timeLimit(.minutes(10))) func theSameRowsWhetherReadDuringTheParseOrInTheFinish() throws {
    let folder = try Self.export()
    defer { try? FileManager.default.removeItem(at: folder) }
    let (ahead, aheadReport) = try Self.run(folder, readsAhead: true)
    defer { ahead.remove() }
    let (late, lateReport) = try Self.run(folder, readsAhead: false)
    defer { late.remove() }
    for file in ["ecg_recordings.csv", "ecg_samples.csv"] {
      #expect(try ahead.text(file) == late.text(file), "\(file)")
    }
    #expect(aheadReport.files == 5 && lateReport.files == 5)
    #expect(aheadReport.recordings == 3 && aheadReport.samples == 126)
    #expect(aheadReport.notECGFiles == ["electrocardiograms/weights.csv"])
    // The broken header, and the long recording's cut.
    #expect(aheadReport.malformed == 2 && lateReport.malformed == 2)
    #expect(
      aheadReport.problems.map(\.problem).contains {
        $0.hasPrefix("cut at 120 s (120 samples at 1 Hz)") && $0.contains("5 samples after it not written")
      })
    // Three samples a recording, in file order: 0, 1/512 and 2/512 s; then 0, 1/250, 2/250 s.
    let samples = try ahead.csvRows("ecg_samples.csv")
    #expect(samples.count == 126)
    #expect(samples.prefix(3).map { $0["microvolts"] } == ["-19.512", "-22.107", "5"])
    #expect(samples.map { $0["recording"]! }.filter { $0.hasSuffix("03-21.csv") }.count == 3)
    let long = samples.filter { $0["recording"]!.hasSuffix("long.csv") }
    #expect(long.map { $0["microvolts"]! } == (1...120).map(String.init))
    // Nothing of the spool is left in the output folder.
    let left = try FileManager.default.contentsOfDirectory(atPath: ahead.directory.path)
    #expect(left.sorted() == ["ecg_recordings.csv", "ecg_samples.csv"])
  }
}
