import Testing

@testable import HealthExtract
@testable import SyntheticExport

/// The reader's question of each chunk, "does it hold a character the byte filter replaces?",
/// answered a word at a time (`XMLByteFilter.hasForbiddenControlCharacters`): a wrong "no" would
/// let the character through to libxml2, which rejects the whole export. Checked against the
/// byte-by-byte definition on generated buffers whose one odd byte sits at every position of the
/// 32-byte blocks, the 8-byte words after them and the tail.
@Suite struct ControlCharacterScanTests {
  static func forbidden(_ byte: UInt8) -> Bool { byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D }

  static func scan(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { XMLByteFilter.hasForbiddenControlCharacters($0) }
  }

  @Test func oneByteAnywhereInBuffersOfEveryLengthUpTo80() {
    // Text with tabs and line ends (allowed, and below 0x20 like the forbidden ones).
    let text = Array("ab\tcd=\"v\"\r\n".utf8)
    for length in 0...80 {
      let clean = (0..<length).map { text[$0 % text.count] }
      #expect(Self.scan(clean) == false, "clean, length \(length)")
      for position in 0..<length {
        for odd: UInt8 in [0x00, 0x01, 0x0B, 0x0C, 0x1F, 0x20, 0x7F, 0x80, 0xFF] {
          var bytes = clean
          bytes[position] = odd
          #expect(Self.scan(bytes) == Self.forbidden(odd), "length \(length), \(odd) at \(position)")
        }
      }
    }
  }

  @Test func randomBuffersAgreeWithTheByteByByteDefinition() {
    // A fixed seed, so a failure repeats; mostly printable bytes with a few of every kind.
    var generator = SplitMix64(state: 0x5EED_2026)
    for _ in 0..<2000 {
      let length = Int(generator.next() % 700)
      let bytes = (0..<length).map { _ -> UInt8 in
        let roll = generator.next() % 1000
        return roll < 3 ? UInt8(truncatingIfNeeded: generator.next() % 0x20) : UInt8(0x20 + roll % 0x5F)
      }
      #expect(Self.scan(bytes) == bytes.contains(where: Self.forbidden))
    }
  }
}
