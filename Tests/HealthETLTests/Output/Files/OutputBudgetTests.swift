import Foundation
import Testing

@testable import HealthETL

/// The output budget (Pipelines/docs/outputs.md, "Output budget"): the bytes a transaction's files stage
/// are counted as they go to disk, and the write that would pass the limit is refused before it
/// is made.
@Suite struct OutputBudgetTests {
  /// 64 MB + 50 × the export: a 75,000-byte zip may write 67,108,864 + 3,750,000 = 70,858,864.
  @Test func theLimitIsTheAllowancePlusTheRatio() {
    #expect(OutputBudget.standard.limit(inputBytes: 75_000) == 70_858_864)
    #expect(OutputBudget(ratio: 1, allowance: 0).limit(inputBytes: 1_000) == 1_000)
    #expect(OutputBudget.unlimited.limit(inputBytes: 1_000) == .max)
    #expect(OutputBudget(ratio: 1_000_000, allowance: 64 << 20).limit(inputBytes: .max / 2) == .max)
  }

  /// Three files of one transaction share the meter: 400 + 400 bytes pass a 1,000-byte budget,
  /// the third file's 400 would make 1,200 and is refused, with nothing of it on disk.
  @Test func theWriteThatPassesTheBudgetIsRefused() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("budget-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder)
    defer { transaction.abandon() }
    transaction.meter.apply(OutputBudget(ratio: 1, allowance: 0), inputBytes: 1_000)
    let chunk = [UInt8](repeating: 0x31, count: 400)
    for name in ["a.csv", "b.csv"] {
      let file = try transaction.create(name)
      try file.write(chunk)
      try file.close()
    }
    #expect(transaction.meter.bytes == 800)
    let third = try transaction.create("c.csv")
    try third.write(chunk)
    do {
      try third.close()
      Issue.record("the third file passed the budget")
    } catch {
      guard case .overBudget(let path, let bytes, let limit, let inputBytes) = error else {
        Issue.record("\(error)")
        return
      }
      #expect((bytes, limit, inputBytes) == (1_200, 1_000, 1_000))
      #expect(path.hasSuffix("/c.csv"))
      #expect(ETLError.output(error).exitCode == .dataError)
    }
    let attributes = try FileManager.default.attributesOfItem(atPath: transaction.stagedPath("c.csv"))
    #expect((attributes[.size] as? Int) == 0)
  }
}
