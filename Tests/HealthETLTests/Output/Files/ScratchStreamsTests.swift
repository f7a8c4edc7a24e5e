import Foundation
import HealthModel
import Testing

@testable import HealthETL

/// Many streams in one scratch file, with a fixed memory budget, read back exactly as written;
/// and instants resolved when a read cuts a token in two.
@Suite struct ScratchStreamsTests {
  static func transaction() throws -> (OutputTransaction, URL) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "healthetl-streams-\(UUID().uuidString)")
    return (try OutputTransaction(outputDirectory: directory.path), directory)
  }

  static func read(_ stream: Int, of streams: ScratchStreams) throws -> [UInt8] {
    var bytes: [UInt8] = []
    try streams.read(stream) { bytes.append(contentsOf: $0) }
    return bytes
  }

  @Test func thousandsOfStreamsComeBackAsWrittenFromOneFile() throws {
    let (transaction, directory) = try Self.transaction()
    defer {
      transaction.abandon()
      try? FileManager.default.removeItem(at: directory)
    }
    // 3,000 streams written in turns, 1,000 bytes of memory, 200 per stream: every stream ends
    // up in segments, some adjacent, some not, and each has a tail still in memory.
    let streams = ScratchStreams(
      transaction: transaction, name: "test", memoryLimit: 1000, streamChunk: 200, readChunk: 7)
    var expected: [[UInt8]] = []
    for _ in 0..<3000 { expected.append([]); _ = streams.addStream() }
    var state: UInt64 = 42
    for round in 0..<6000 {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      let stream = round < 3000 ? round : Int(state >> 33) % 3000
      let row = Array("row \(round) of \(stream)\n".utf8)
      try streams.append(row, to: stream)
      expected[stream] += row
    }
    // One run of one stream: its segments merge.
    for round in 0..<500 {
      let row = Array("long \(round)\n".utf8)
      try streams.append(row, to: 7)
      expected[7] += row
    }
    for stream in [0, 7, 1234, 2999] { #expect(try Self.read(stream, of: streams) == expected[stream]) }
    for stream in 0..<3000 { #expect(try Self.read(stream, of: streams) == expected[stream]) }
    let scratch = transaction.stagingDirectory + "/" + ToolFiles.scratch
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).count == 1)
    streams.remove()
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty)
  }

  @Test func tokensCutByAReadAreResolvedWhole() throws {
    let (transaction, directory) = try Self.transaction()
    defer {
      transaction.abandon()
      try? FileManager.default.removeItem(at: directory)
    }
    // Reads of 3 bytes cut every 10-byte token somewhere; 2024-03-18T07:00:00Z at +01:00.
    let streams = ScratchStreams(transaction: transaction, name: "test", memoryLimit: 25, streamChunk: 40, readChunk: 3)
    let stream = streams.addStream()
    for value in 0..<4 {
      var row: [UInt8] = []
      DeferredInstants.appendToken(Instant(seconds: 1_710_745_200 + Int64(value) * 60), localTime: true, to: &row)
      row += Array(",".utf8)
      DeferredInstants.appendToken(Instant(seconds: 1_710_745_200), to: &row)
      row += Array(",\(value)\n".utf8)
      try streams.append(row, to: stream)
    }
    let output = try transaction.create("t.csv")
    try DeferredInstants.copy(
      stream, of: streams, into: output, header: "local,start,value\n", zone: .fixed(offsetSeconds: 3600))
    #expect(
      try String(contentsOfFile: transaction.stagedPath("t.csv"), encoding: .utf8) == """
        local,start,value
        2024-03-18 08:00:00,2024-03-18T08:00:00+01:00,0
        2024-03-18 08:01:00,2024-03-18T08:00:00+01:00,1
        2024-03-18 08:02:00,2024-03-18T08:00:00+01:00,2
        2024-03-18 08:03:00,2024-03-18T08:00:00+01:00,3

        """)
  }
}
