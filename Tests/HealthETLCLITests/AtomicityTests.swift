import Foundation
import Testing

/// A failed or killed run leaves the previous outputs untouched; two runs never write one folder at
/// once (Pipelines/docs/nightly.md, "Runs and the nightly batch").
@Suite(.serialized) struct AtomicityTests {
  /// Kills real runs with SIGKILL at several points. After each kill the folder holds exactly the
  /// previous outputs or exactly the complete new ones (a kill after the swap), never a mix.
  @Test func sigkillAtAnyPointLeavesOldOrNewNeverAMix() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let bigger = work.appendingPathComponent("bigger.xml").path
    #expect(try CLI.run(["sample", "--days", "60", "--seed", "3", "--out", bigger]).status == 0)
    let out = work.appendingPathComponent("out")
    let reference = work.appendingPathComponent("reference")
    let run = ["run", "--quiet", "--pipeline", CLI.samplesPipeline, "--out"]
    #expect(try CLI.run(run + [out.path, CLI.sampleExport]).status == 0)
    var old = try CLI.snapshot(out)
    let started = Date()
    #expect(try CLI.run(run + [reference.path, bigger]).status == 0)
    let fullRun = Date().timeIntervalSince(started)
    var new = try CLI.snapshot(reference)
    new["run.json"] = nil

    var sawOld = 0
    for fraction in [0.05, 0.2, 0.4, 0.6, 0.8, 0.95] {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: CLI.binary)
      process.arguments = run + [out.path, bigger]
      try process.run()
      Thread.sleep(forTimeInterval: fullRun * fraction)
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      var now = try CLI.snapshot(out)
      if now == old {
        sawOld += 1
        continue
      }
      // Otherwise it must be the complete new set (the kill came after the swap).
      #expect(now["run.json"] != nil)
      now["run.json"] = nil
      #expect(now == new, "killed at \(fraction) of a run: the folder is neither the old nor the new outputs")
      // Restore the old outputs for the next round; their run.json has new timings, so the
      // restored folder is the "old" one from now on.
      #expect(try CLI.run(run + [out.path, CLI.sampleExport]).status == 0)
      old = try CLI.snapshot(out)
    }
    #expect(sawOld > 0, "no kill landed before the swap; the test did not test anything")
    // Killed runs leave staging folders behind; the next run removes them.
    #expect(try CLI.run(run + [out.path, CLI.sampleExport]).status == 0)
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: work.path).filter {
      $0.contains("healthetl-staging")
    }
    #expect(leftovers.isEmpty, "\(leftovers)")
  }

  /// A second run into a folder whose lock is held exits 75 and changes nothing.
  @Test func aLockedFolderIsExit75() throws {
    let out = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: out) }
    let lockPath = out.appendingPathComponent(".healthetl.lock").path
    let descriptor = open(lockPath, O_RDWR | O_CREAT, 0o644)
    #expect(descriptor >= 0)
    defer { close(descriptor) }
    #expect(flock(descriptor, LOCK_EX | LOCK_NB) == 0)
    let result = try CLI.run(["run", "--quiet", "--pipeline", CLI.samplesPipeline, "--out", out.path, CLI.sampleExport])
    #expect(result.status == 75)
    #expect(result.stderr.contains("another healthetl run is writing"))
    #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("run.json").path))
  }

  /// An output folder that is a symbolic link keeps being one: the swap happens where it points.
  @Test func aSymlinkedOutputFolderStaysALink() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let real = work.appendingPathComponent("real")
    let link = work.appendingPathComponent("out")
    try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
    for _ in 0..<2 {
      let result = try CLI.run([
        "run", "--quiet", "--pipeline", CLI.pipeline("sleep"), "--out", link.path, CLI.sampleExport,
      ])
      #expect(result.status == 0, "\(result.stderr)")
    }
    let attributes = try FileManager.default.attributesOfItem(atPath: link.path)
    #expect(attributes[.type] as? FileAttributeType == .typeSymbolicLink)
    #expect(FileManager.default.fileExists(atPath: real.appendingPathComponent("sleep_daily.csv").path))
  }

  /// `--out .` writes into the current folder, which stays the same folder (a shell sitting in it
  /// is not left in a deleted one).
  @Test func theCurrentFolderAsOutputKeepsItsIdentity() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let before = try FileManager.default.attributesOfItem(atPath: work.path)[.systemFileNumber] as? Int
    for _ in 0..<2 {
      let result = try CLI.run(
        ["run", "--quiet", "--pipeline", CLI.pipeline("sleep"), "--out", ".", CLI.sampleExport], in: work)
      #expect(result.status == 0, "\(result.stderr)")
    }
    let after = try FileManager.default.attributesOfItem(atPath: work.path)[.systemFileNumber] as? Int
    #expect(before == after)
    #expect(FileManager.default.fileExists(atPath: work.appendingPathComponent("sleep_daily.csv").path))
    let siblings = try FileManager.default.contentsOfDirectory(atPath: work.deletingLastPathComponent().path)
    #expect(!siblings.contains { $0.hasPrefix("." + work.lastPathComponent + ".healthetl-staging") })
  }
}
