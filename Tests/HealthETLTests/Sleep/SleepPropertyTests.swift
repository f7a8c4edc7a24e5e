import Foundation
import HealthETL
import HealthExtract
import SyntheticExport
import Testing

/// Sleep invariants (Pipelines/docs/sleep.md, "Sleep jobs") on generated exports: the project's
/// SampleData/export.zip and exports of other seeds (Watch stages, iPhone in bed, AutoSleep
/// overlapping some nights, repeated samples, naps, a DST change), whatever the numbers turn out to
/// be.
@Suite struct SleepPropertyTests {
  static func check(_ source: InputSource) throws {
    let recorder = SleepSampleRecorder()
    let output = try SleepTesting.run(source, zone: .auto) { _ in [recorder] }
    let dates = SleepTesting.checkInvariants(output)
    recorder.checkCoverage(output)
    #expect(dates > 0, "the generated export has sleep")
    // No date holds more than a day of staged sleep, unlike naive summing across sources.
    for day in output.days { #expect(day.measures.staged <= 86_400, "\(day.date)") }
  }

  @Test func theSampleExportKeepsTheInvariants() throws {
    try Self.check(.path(StageHarness.sampleExport))
  }

  @Test(arguments: [2, 3, 17] as [UInt64]) func generatedExportsKeepTheInvariants(seed: UInt64) throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "healthetl-sleep-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("export.xml").path
    _ = try SyntheticExportGenerator.write(SyntheticExportOptions(days: 40, seed: seed), to: path)
    try Self.check(.path(path))
  }
}
