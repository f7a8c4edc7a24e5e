import Foundation
import Testing

@testable import HealthETL

/// The input's SHA-256 (`input.sha256` in run.json, the nightly batch's key of an export), read
/// with `read(2)` in 1 MiB chunks. The expected values are the FIPS 180-2 examples ("abc", a
/// million "a"), the hash of nothing, and, for a file of three chunks, Python's hashlib.
@Suite struct InputDigestTests {
  static let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
  static let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
  static let millionA = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
  /// 3,000,000 × "a": two full chunks and part of a third.
  static let threeMillionA = "2a152c894398719c0570f83fac34ac03a0f6e8e474b995c2403aa5434f7b9dd4"

  private func file(_ bytes: [UInt8]) throws -> String {
    let path = NSTemporaryDirectory() + "healthetl-digest-\(UUID().uuidString)"
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
  }

  @Test(arguments: [
    (0, Self.empty), (-1, Self.abc), (1_000_000, Self.millionA), (3_000_000, Self.threeMillionA),
  ])
  func hashesWholeFilesAcrossChunks(count: Int, expected: String) throws {
    let path = try file(count < 0 ? Array("abc".utf8) : [UInt8](repeating: UInt8(ascii: "a"), count: count))
    defer { unlink(path) }
    let descriptor = open(path, O_RDONLY)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    #expect(try InputDigest.sha256(reading: descriptor) == expected)
    // The run's thread and the nightly batch's hash of an inbox file agree with it.
    #expect(InputDigest.start(path: path, on: testExecutor).wait() == expected)
    #expect(try NightlyBatch.sha256(ofFile: path) == expected)
  }

  @Test func aCancelledHashHasNoValue() throws {
    let path = try file([UInt8](repeating: 1, count: 3_000_000))
    defer { unlink(path) }
    let descriptor = open(path, O_RDONLY)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    #expect(try InputDigest.sha256(reading: descriptor, unless: { true }) == nil)
  }

  @Test func aFailedReadNamesItsReason() throws {
    // A folder opens for reading, but reading it fails with EISDIR.
    let descriptor = open(NSTemporaryDirectory(), O_RDONLY | O_DIRECTORY)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    #expect(throws: InputDigest.ReadFailure.self) { try InputDigest.sha256(reading: descriptor) }
    do {
      _ = try InputDigest.sha256(reading: descriptor)
    } catch {
      #expect(error.code == EISDIR)
      #expect(error.reason == String(cString: strerror(EISDIR)))
    }
  }

  @Test func aFileThatCannotBeOpenedHasNoHash() {
    #expect(
      InputDigest.start(
        path: NSTemporaryDirectory() + "healthetl-digest-missing-\(UUID().uuidString)", on: testExecutor
      ).wait() == nil)
  }
}
