import Foundation
import HealthModel
import Testing

@testable import HealthETL

/// The server records wait in a scratch file from the moment each row is built until the delivery
/// delta reads them (Pipelines/docs/workouts.md, "Memory"): they come back in order, as written.
@Suite struct WorkoutServerRecordScratchTests {
  static func record(_ number: Int) -> WorkoutServerRecord {
    WorkoutServerRecord(
      recordDate: "2024\(1000 + number % 9000)", execTypeCode: number % 7 == 0 ? "" : "SERVER0\(number % 10)",
      execStartTime: "20240318\(100_000 + number)", execEndTime: "é✓ \(number)", execRuntime: String(number * 61),
      deviceTypeCode: ["WATCH", "PHONE", "ETC"][number % 3],
      recordUuid: String(format: "%08X-C2DA-5473-8C28-E278807A0917", number))
  }

  @Test func recordsComeBackInOrderAcrossPiecesOfTheFile() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("server-records-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder.path)
    defer { transaction.abandon() }
    // About 150 bytes each: 3,000 pass the scratch's 256 KB buffer and are read in several pieces.
    let written = (0..<3_000).map(Self.record)
    let scratch = WorkoutServerRecordScratch(transaction: transaction)
    let other = WorkoutServerRecordScratch(transaction: transaction)
    for record in written {
      scratch.append(record)
      other.append(Self.record(0))
    }
    #expect(3_000 * 150 > RowScratch.pieceBytes)
    let records = WorkoutServerRecords(scratch)
    #expect(records.count == 3_000)
    var read: [WorkoutServerRecord] = []
    try records.forEach { read.append($0) }
    #expect(read == written)
    // Twice, as a run's final delta reads them; a second mart's scratch is a file of its own.
    read = []
    try records.forEach { read.append($0) }
    #expect(read == written)
    var others = 0
    try WorkoutServerRecords(other).forEach {
      #expect($0 == Self.record(0)); others += 1
    }
    #expect(others == 3_000)
    // The product holds the scratch, never the records.
    #expect(Mirror(reflecting: records).children.allSatisfy { !($0.value is [WorkoutServerRecord]) })
    #expect(Mirror(reflecting: records).children.map(\.label) == ["scratch"])
  }

  @Test func anEmptyScratchHasNoRecordsAndNoFile() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("server-records-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder.path)
    defer { transaction.abandon() }
    var visited = 0
    try WorkoutServerRecords(WorkoutServerRecordScratch(transaction: transaction)).forEach { _ in visited += 1 }
    #expect(visited == 0)
  }

  /// The product of a workouts mart: the records of the rows it wrote, in the rows' order (start,
  /// then id), as `workout_records.json` holds them.
  @Test func theMartsProductIsItsRowsRecordsInOutputOrder() throws {
    let body = [
      WorkoutFixture.workout(
        "Running", duration: "30", start: "2024-03-18 09:00:00 +0000", end: "2024-03-18 09:30:00 +0000"),
      WorkoutFixture.workout(
        "Walking", duration: "20", start: "2024-03-17 09:00:00 +0000", end: "2024-03-17 09:20:00 +0000"),
      WorkoutFixture.workout(
        "Cycling", source: "Ann’s iPhone", device: WorkoutFixture.phone, duration: "45",
        start: "2024-03-18 09:00:00 +0000", end: "2024-03-18 09:45:00 +0000"),
    ].joined(separator: "\n")
    let run = try WorkoutFixture.run(body)
    defer { run.result.remove() }
    #expect(run.records.count == 3)
    #expect(run.records == run.rows.map(\.serverRecord))
    // The walk of the 17th first; the two of the 18th at 09:00 by their ids.
    #expect(run.records.first?.execRuntime == "1200")
    #expect(Set(run.records.dropFirst().map(\.execRuntime)) == ["1800", "2700"])
    #expect(run.rows[1].id < run.rows[2].id)
    #expect(run.records.map(\.recordUuid) == run.rows.map { $0.id.uppercased() })
    let file =
      try JSONSerialization.jsonObject(with: Data(run.text("workout_records.json").utf8)) as? [[String: String]]
    #expect(file?.map { $0["recordUuid"] } == run.records.map(\.recordUuid))
  }
}
