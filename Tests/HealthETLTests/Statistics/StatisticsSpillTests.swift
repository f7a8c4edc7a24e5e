import Foundation
import HealthExtract
import Testing

@testable import HealthETL

/// The external sort behind the statistics stage: a bounded buffer, sorted runs in a scratch
/// file, a k-way merge. Lateness must not matter, and neither must the buffer size.
@Suite struct StatisticsSpillTests {
  /// A small deterministic generator (xorshift), so failures reproduce.
  struct Noise {
    var state: UInt64
    mutating func next(_ range: ClosedRange<Int64>) -> Int64 {
      state ^= state << 13
      state ^= state >> 7
      state ^= state << 17
      return range.lowerBound + Int64(state % UInt64(range.upperBound - range.lowerBound + 1))
    }
  }

  func withTransaction(_ body: (OutputTransaction) throws -> Void) throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stats-spill-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder.path)
    defer { transaction.abandon() }
    try body(transaction)
  }

  @Test(arguments: [1, 7, 64, 5000])
  func theMergeIsTheSortedInputWhateverTheBufferSize(capacity: Int) throws {
    try withTransaction { transaction in
      var noise = Noise(state: 0x9E37_79B9_7F4A_7C15)
      var records: [SpillRecord] = []
      for _ in 0..<1000 {
        let start = noise.next(0...10_000)
        records.append(
          SpillRecord(
            start: start, end: start + noise.next(0...600), value: Double(noise.next(0...50)),
            created: noise.next(0...3) == 0 ? SpillRecord.missingCreation : noise.next(0...20_000),
            stream: Int32(noise.next(0...2)), group: Int32(noise.next(0...3))))
      }
      let spill = SampleSpill(capacity: capacity, transaction: transaction, scratchName: "test.runs")
      for record in records { spill.append(record) }
      // 1000 records: 1000 / capacity full runs go to disk; what is left stays in memory.
      #expect(spill.runs.count == 1000 / capacity)
      let merge = try spill.merged()
      var merged: [SpillRecord] = []
      while let record = try merge.next() { merged.append(record) }
      #expect(merged == records.sorted(by: SpillRecord.precedes))
    }
  }

  /// Bytes changed on the disk between the write and the merge give an I/O error, never a read
  /// past the chunk (the decoder trusts the bytes it wrote).
  @Test func aDamagedRunIsAnErrorNotACrash() throws {
    try withTransaction { transaction in
      let spill = SampleSpill(capacity: 10, transaction: transaction, scratchName: "test.runs")
      for index in 0..<25 {
        spill.append(
          SpillRecord(
            start: Int64(index) * 60, end: Int64(index) * 60, value: 70, created: SpillRecord.missingCreation,
            stream: 0, group: 0))
      }
      let path = try #require(spill.scratchPath)
      _ = try spill.merged(again: true)  // flushes the runs to the file
      let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
      #expect(size > 0)
      try Data(repeating: 0xFF, count: size).write(to: URL(fileURLWithPath: path))
      #expect(throws: OutputError.self) {
        let merge = try spill.merged()
        while try merge.next() != nil {}
      }
    }
  }

  @Test func aSpilledRecordIsFortyBytes() {
    #expect(MemoryLayout<SpillRecord>.stride == 40)
  }

  /// An export written the way real ones are: one source's samples of a type, then another's;
  /// one app writing its batch backwards in time; types interleaved.
  static func scrambledExport() -> String {
    var lines: [String] = []
    var noise = Noise(state: 42)
    // iPhone steps, forward in time, 5–15 minute samples over two days.
    var t: Int64 = 1_704_067_200  // 2024-01-01 00:00:00Z
    while t < 1_704_067_200 + 2 * 86_400 {
      let length = noise.next(300...900)
      lines.append(step(Double(noise.next(10...400)), t, t + length, source: "Alex’s iPhone"))
      t += length + noise.next(0...600)
    }
    // Watch steps, backwards in time, overlapping the iPhone's.
    t = 1_704_067_200 + 2 * 86_400
    while t > 1_704_067_200 {
      let length = noise.next(60...1200)
      lines.append(step(Double(noise.next(0...300)), t - length, t, source: "Alex’s Apple Watch"))
      t -= length + noise.next(0...1800)
    }
    // Heart rate instants from two sources, shuffled, with manual steps between them.
    for index in 0..<400 {
      let at = 1_704_067_200 + noise.next(0...(2 * 86_400))
      lines.append(
        StatsFixture.heartRate(
          Double(noise.next(50...150)), text(at), source: index % 3 == 0 ? "Strap" : "Alex’s Apple Watch"))
      if index % 50 == 0 {
        lines.append(step(1000, at, at + 1800, source: "Alex’s iPhone", userEntered: true))
      }
    }
    return lines.joined(separator: "\n")
  }

  static func text(_ epoch: Int64) -> String {
    let date = Date(timeIntervalSince1970: TimeInterval(epoch))
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
    return formatter.string(from: date)
  }

  static func step(_ value: Double, _ start: Int64, _ end: Int64, source: String, userEntered: Bool = false) -> String {
    StatsFixture.steps(value, text(start), text(end), source: source, userEntered: userEntered)
  }

  @Test func aTinyBufferOverScrambledInputGivesTheSameFilesAsALargeOne() throws {
    let body = Self.scrambledExport()
    let jobs = [
      try StatsFixture.job("steps_h", "StepCount", "1h", ["sum", "count", "duration", "mostRecent"]),
      try StatsFixture.job("steps_src", "StepCount", "15m", ["sum"], separate: true),
      try StatsFixture.job("steps_d", "StepCount", "1d", ["sum"]),
      try StatsFixture.job("hr", "HeartRate", "5m", ["avg", "min", "max", "twavg", "mostRecentTime"]),
      try StatsFixture.job("hr_src", "HeartRate", "1h", ["twavg", "count"], separate: true),
    ]
    let tiny = try StatsFixture.run(body, jobs: jobs, zone: .named("Europe/Berlin"), bufferCapacity: 3)
    defer { tiny.result.remove() }
    let large = try StatsFixture.run(body, jobs: jobs, zone: .named("Europe/Berlin"))
    defer { large.result.remove() }
    #expect(tiny.stage.spilledSamples == large.stage.spilledSamples)
    #expect(tiny.stage.spilledRuns == tiny.stage.spilledSamples / 3)
    #expect(large.stage.spilledRuns == 0)
    for job in jobs {
      let expected = try large.text(job.name)
      #expect(try tiny.text(job.name) == expected, "\(job.name)")
      #expect(expected.split(separator: "\n").count >= 4, "\(job.name) has rows")
    }
  }
}
