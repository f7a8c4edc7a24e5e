import Foundation
import Testing

@testable import HealthETL

/// Outputs are handed to the kernel's writeback as they grow, so that the commit's one sync has
/// little left to wait for; scratch files, removed unwritten, never are (`OutputFile`).
@Suite struct OutputWritebackTests {
  /// A transaction on a new output folder, handed with that folder's path; its staging folder
  /// is removed afterwards unless the body committed it.
  private func withTransaction(_ body: (OutputTransaction, _ folder: String) throws -> Void) throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("writeback-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder)
    defer { transaction.abandon() }
    try body(transaction, folder)
  }

  /// 20 MiB in 1 MiB writes: writeback starts at 8 and 16 MiB written, and at close for the last
  /// 4 MiB; the file holds every byte in order.
  @Test func aLargeOutputIsWrittenBackAsItGrows() throws {
    try withTransaction { transaction, _ in
      let file = try transaction.create("big.csv")
      for index in 0..<20 { try file.write([UInt8](repeating: UInt8(index), count: 1 << 20)) }
      #expect(file.writebacksStarted == 2)
      try file.close()
      #expect(file.writebacksStarted == 3)
      let bytes = try #require(FileManager.default.contents(atPath: transaction.stagedPath("big.csv")))
      #expect(bytes.count == 20 << 20)
      #expect(bytes[0] == 0 && bytes[(8 << 20) - 1] == 7 && bytes[8 << 20] == 8 && bytes[(20 << 20) - 1] == 19)
    }
  }

  /// A file of 1 MiB is written back at close; one of 1 MiB less a byte waits for the commit's
  /// sync, as do a run's thousands of small tables.
  @Test func aSmallOutputWaitsForTheCommit() throws {
    try withTransaction { transaction, _ in
      let atThreshold = try transaction.create("one-mib.csv")
      try atThreshold.write([UInt8](repeating: 0x31, count: 1 << 20))
      try atThreshold.close()
      #expect(atThreshold.writebacksStarted == 1)
      let below = try transaction.create("small.csv")
      try below.write([UInt8](repeating: 0x31, count: (1 << 20) - 1))
      try below.close()
      #expect(below.writebacksStarted == 0)
    }
  }

  /// A scratch file of 20 MiB is never written back.
  @Test func scratchIsNeverWrittenBack() throws {
    try withTransaction { transaction, _ in
      let scratch = try transaction.createScratch("spill")
      for _ in 0..<20 { try scratch.write([UInt8](repeating: 0x20, count: 1 << 20)) }
      try scratch.close()
      #expect(scratch.writebacksStarted == 0)
    }
  }

  /// A scratch file still open at the commit is emptied, so the commit's sync has none of its
  /// pages to write; the outputs are untouched.
  @Test func theCommitEmptiesScratchStillOpen() throws {
    try withTransaction { transaction, folder in
      let scratch = try transaction.createScratch("spill")
      try scratch.write([UInt8](repeating: 0x20, count: 3 << 20))
      try scratch.flush()
      let held = open(transaction.stagedPath(ToolFiles.scratch + "/spill"), O_RDONLY)
      try #require(held >= 0)
      defer { close(held) }
      let output = try transaction.create("kept.csv")
      try output.write(Array("a,b\n".utf8))
      try output.close()
      try transaction.commit()
      var info = stat()
      #expect(fstat(held, &info) == 0 && info.st_size == 0)
      #expect(!FileManager.default.fileExists(atPath: folder + "/" + ToolFiles.scratch))
      #expect(FileManager.default.contents(atPath: folder + "/kept.csv") == Data("a,b\n".utf8))
    }
  }

  /// The commit still puts the files in place whole after their writeback was started.
  @Test func theCommitPlacesFilesWrittenBack() throws {
    try withTransaction { transaction, folder in
      let file = try transaction.create("stats/heart-rate.csv")
      try file.write([UInt8](repeating: 0x39, count: 9 << 20))
      try file.close()
      try transaction.commit()
      let attributes = try FileManager.default.attributesOfItem(atPath: folder + "/stats/heart-rate.csv")
      #expect((attributes[.size] as? NSNumber)?.intValue == 9 << 20)
    }
  }
}
