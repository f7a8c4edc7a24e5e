import Foundation
import Testing

/// SIGTERM, SIGINT and SIGHUP stop a run cleanly: its staging folder is removed, the previous
/// outputs stay as they were, the lock is released, one line goes to stderr and the exit status
/// is 128 + the signal (Pipelines/docs/nightly.md, "Runs and the nightly batch"). Before, the staging
/// folder (389 MB in one case) stayed until a later run into the same folder.
@Suite(.serialized) struct SignalTests {
  @Test(arguments: [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT"), (SIGHUP, "SIGHUP")])
  func aStoppedRunRemovesItsStagingAndKeepsTheOldOutputs(signal: Int32, name: String) throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let bigger = work.appendingPathComponent("bigger.xml").path
    #expect(try CLI.run(["sample", "--days", "60", "--seed", "3", "--out", bigger]).status == 0)
    let out = work.appendingPathComponent("out")
    let run = ["run", "--quiet", "--pipeline", CLI.samplesPipeline, "--out", out.path]
    #expect(try CLI.run(run + [CLI.sampleExport]).status == 0)
    let old = try CLI.snapshot(out)

    let process = Process()
    process.executableURL = URL(fileURLWithPath: CLI.binary)
    process.arguments = run + [bigger]
    let err = Pipe()
    process.standardError = err
    try process.run()
    // The signal is sent once the run has staged files, i.e. mid-run.
    let staging = "." + out.lastPathComponent + ".healthetl-staging-\(process.processIdentifier)"
    let deadline = Date().addingTimeInterval(60)
    var stagedFiles = 0
    while Date() < deadline, process.isRunning {
      stagedFiles =
        (try? FileManager.default.subpathsOfDirectory(atPath: work.appendingPathComponent(staging).path))?
        .count ?? 0
      if stagedFiles > 0 { break }
      Thread.sleep(forTimeInterval: 0.01)
    }
    #expect(stagedFiles > 0, "the run never staged a file; the test did not test anything")
    kill(process.processIdentifier, signal)
    let stderr = String(decoding: err.fileHandleForReading.readToEndRetryingInterrupts(), as: UTF8.self)
    process.waitUntilExit()

    #expect(process.terminationReason == .exit)
    #expect(process.terminationStatus == 128 + signal)
    #expect(
      stderr
        == "healthetl: stopped by \(name); this run's unfinished outputs were removed, earlier outputs are untouched\n")
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: work.path).filter { $0.contains("staging") }
    #expect(leftovers.isEmpty, "\(leftovers)")
    #expect(try CLI.snapshot(out) == old)
    // The lock was released: the next run goes ahead at once.
    #expect(try CLI.run(run + [CLI.sampleExport]).status == 0)
  }

  /// A run stopped while it had created its output folder leaves no folder behind.
  @Test func aStoppedRunIntoANewFolderLeavesNothing() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let bigger = work.appendingPathComponent("bigger.xml").path
    #expect(try CLI.run(["sample", "--days", "60", "--seed", "3", "--out", bigger]).status == 0)
    let out = work.appendingPathComponent("new/out")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CLI.binary)
    process.arguments = ["run", "--quiet", "--pipeline", CLI.samplesPipeline, "--out", out.path, bigger]
    process.standardError = FileHandle.nullDevice
    try process.run()
    let staging = work.appendingPathComponent("new/.out.healthetl-staging-\(process.processIdentifier)").path
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline, process.isRunning,
      ((try? FileManager.default.subpathsOfDirectory(atPath: staging)) ?? []).isEmpty
    {
      Thread.sleep(forTimeInterval: 0.01)
    }
    kill(process.processIdentifier, SIGTERM)
    process.waitUntilExit()
    #expect(process.terminationStatus == 143)
    // `sample` wrote `bigger.xml` and its `workout-routes/`; the run's `new/` must be gone.
    let left = try FileManager.default.contentsOfDirectory(atPath: work.path).sorted()
    #expect(left == ["bigger.xml", "workout-routes"], "\(left)")
  }
}
