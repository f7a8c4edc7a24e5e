import Foundation
import Testing

/// No input crashes the program: mutated and truncated exports end in 0 (what could be read was
/// read) or 65 (bad input, one message), never a signal or another code.
@Suite struct MutatedInputTests {
  /// A small deterministic generator, so a failure can be replayed.
  struct Generator {
    var state: UInt64
    mutating func next(_ bound: Int) -> Int {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int((state >> 33) % UInt64(max(bound, 1)))
    }
  }

  static let insertions: [[UInt8]] = [
    Array("\"".utf8), Array("<".utf8), Array(">".utf8), Array("&".utf8), [0x0B], [0x00], [0xFF, 0xFE],
    Array("<Record>".utf8), Array("</Workout>".utf8), Array("2024-99-99 25:61:61 +9999".utf8),
  ]

  @Test(arguments: 0..<24)
  func mutatedExportsNeverCrash(seed: Int) throws {
    var random = Generator(state: UInt64(seed) &+ 0x9E37_79B9)
    var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: RunCommandTests.tiny)))
    if seed % 2 == 1 { bytes = Array(try Data(contentsOf: URL(fileURLWithPath: CLI.sampleExport))) }
    for _ in 0..<(1 + random.next(6)) where !bytes.isEmpty {
      let position = random.next(bytes.count)
      switch random.next(4) {
      case 0: bytes[position] = UInt8(random.next(256))
      case 1: bytes.removeSubrange(position..<min(bytes.count, position + 1 + random.next(40)))
      case 2: bytes.insert(contentsOf: Self.insertions[random.next(Self.insertions.count)], at: position)
      default: bytes.removeSubrange(position...)
      }
    }
    let directory = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let input = directory.appendingPathComponent(seed % 2 == 1 ? "export.zip" : "export.xml")
    try Data(bytes).write(to: input)
    for command in [["inspect"], ["run", "--quiet", "--out", directory.path + "/out"]] {
      let result = try CLI.run(command + [input.path])
      #expect([0, 65].contains(result.status), "\(command) seed \(seed): \(result.status) \(result.stderr)")
    }
  }
}
