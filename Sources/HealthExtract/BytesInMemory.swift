/// Bytes held in memory, read the way the readers read a file (`read(into:)`, 0 at the end): for
/// the tests and fuzz harnesses that hand a reader a document without a file.
struct BytesInMemory {
  private let bytes: [UInt8]
  private var offset = 0

  init(_ bytes: [UInt8]) { self.bytes = bytes }

  /// Copies the next bytes into `buffer`, as many as fit; 0 once all were read.
  mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
    let count = min(buffer.count, bytes.count - offset)
    guard count > 0 else { return 0 }
    bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: count) }
    offset += count
    return count
  }
}
