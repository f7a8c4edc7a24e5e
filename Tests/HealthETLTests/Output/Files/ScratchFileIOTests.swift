import Foundation
import Testing

@testable import HealthETL

/// Whole reads and writes of scratch files.
@Suite struct ScratchFileIOTests {
  @Test func bytesWrittenAtAnOffsetComeBackAndTheEndIsAnError() throws {
    var template = Array((NSTemporaryDirectory() + "/healthetl-scratch-XXXXXX").utf8CString)
    let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }

    let bytes: [UInt8] = Array(0..<200)
    #expect(bytes.withUnsafeBytes { ScratchFileIO.write(descriptor, $0, at: 100) } == 0)
    // 100 bytes of hole, then the 200 written: 300 in all.
    var back = [UInt8](repeating: 0xFF, count: 200)
    #expect(back.withUnsafeMutableBytes { ScratchFileIO.read(descriptor, into: $0, at: 100) } == 0)
    #expect(back == bytes)
    var hole = [UInt8](repeating: 0xFF, count: 100)
    #expect(hole.withUnsafeMutableBytes { ScratchFileIO.read(descriptor, into: $0, at: 0) } == 0)
    #expect(hole == [UInt8](repeating: 0, count: 100))
    // Asking past the end is EIO, not a silent short read.
    var past = [UInt8](repeating: 0, count: 10)
    #expect(past.withUnsafeMutableBytes { ScratchFileIO.read(descriptor, into: $0, at: 295) } == EIO)
    // A closed descriptor says so.
    #expect(past.withUnsafeMutableBytes { ScratchFileIO.read(-1, into: $0, at: 0) } == EBADF)
  }
}
