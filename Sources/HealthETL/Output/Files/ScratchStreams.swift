import Foundation

/// Any number of append-only byte streams in one scratch file: where a `{type}` output keeps each
/// type's rows until the run's time zone is known (`DeferredInstants`).
///
/// An export may hold thousands of types. A scratch file per type held a descriptor per type open
/// (3,000 types ran out under `ulimit -n 1024`) and a write buffer per type. Here each stream
/// collects its bytes in memory and moves them to the end of the one file, as its next segment,
/// when it holds `streamChunk` bytes, or when the streams together hold `memoryLimit` bytes (then
/// all of them go); moved bytes give their memory back. Reading a stream back reads its segments
/// in order, then what is still in memory. So the streams hold two descriptors at most (one
/// writing, one reading), and memory is about twice `memoryLimit` (arrays grow by doubling) plus
/// one segment entry per stream per move (adjacent segments of a stream are one): the number of
/// types changes neither.
final class ScratchStreams {
  let memoryLimit: Int
  let streamChunk: Int
  /// Bytes per read while a stream is read back.
  let readChunk: Int
  private let transaction: OutputTransaction
  private let name: String
  private var buffers: [[UInt8]] = []
  private var segments: [[(offset: Int64, count: Int)]] = []
  /// Streams that got bytes since all were last moved, each once (its bytes may have moved since).
  private var dirty: [Int] = []
  private var isDirty: [Bool] = []
  private var buffered = 0
  private var file: OutputFile?
  private var fileLength: Int64 = 0
  private var reader: Int32 = -1
  private var chunk: [UInt8] = []

  /// - Parameter name: the start of the scratch file's name in the run's scratch folder.
  init(
    transaction: OutputTransaction, name: String, memoryLimit: Int = 4 << 20, streamChunk: Int = 256 << 10,
    readChunk: Int = 1 << 20
  ) {
    self.transaction = transaction
    self.name = name
    self.memoryLimit = max(1, memoryLimit)
    self.streamChunk = max(1, streamChunk)
    self.readChunk = max(1, readChunk)
  }

  deinit { if reader >= 0 { close(reader) } }

  var count: Int { buffers.count }
  /// Bytes the streams hold in memory now.
  var bytesInMemory: Int { buffered }

  /// A new, empty stream: its number.
  func addStream() -> Int {
    buffers.append([])
    segments.append([])
    isDirty.append(false)
    return buffers.count - 1
  }

  func append(_ bytes: [UInt8], to stream: Int) throws(OutputError) {
    if !isDirty[stream] {
      isDirty[stream] = true
      dirty.append(stream)
    }
    buffers[stream].append(contentsOf: bytes)
    buffered += bytes.count
    if buffers[stream].count >= streamChunk {
      try move(stream)
    } else if buffered >= memoryLimit {
      for stream in dirty {
        try move(stream)
        isDirty[stream] = false
      }
      dirty.removeAll(keepingCapacity: true)
    }
  }

  /// Moves `stream`'s bytes from memory to the end of the file.
  private func move(_ stream: Int) throws(OutputError) {
    let count = buffers[stream].count
    guard count > 0 else { return }
    // Named after this object as well: two samples jobs of one run never share a file.
    if file == nil {
      file = try transaction.createScratch(
        name + "-" + String(UInt(bitPattern: ObjectIdentifier(self).hashValue), radix: 16))
    }
    try file!.append { $0.append(contentsOf: buffers[stream]) }
    if let last = segments[stream].last, last.offset + Int64(last.count) == fileLength {
      segments[stream][segments[stream].count - 1].count += count
    } else {
      segments[stream].append((fileLength, count))
    }
    fileLength += Int64(count)
    buffered -= count
    buffers[stream] = []
  }

  /// Hands `stream`'s bytes to `body` in order, in pieces of at most `readChunk` bytes.
  func read(_ stream: Int, _ body: (UnsafeRawBufferPointer) throws(OutputError) -> Void) throws(OutputError) {
    if !segments[stream].isEmpty {
      if reader < 0, let file {
        try file.flush()
        reader = open(file.path, O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else { throw .openFailure(path: file.path, code: errno, creating: false) }
      }
      if chunk.isEmpty { chunk = [UInt8](repeating: 0, count: readChunk) }
      for segment in segments[stream] {
        var done = 0
        while done < segment.count {
          let size = min(readChunk, segment.count - done)
          let failed = chunk.withUnsafeMutableBytes {
            ScratchFileIO.read(
              reader, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<size]), at: segment.offset + Int64(done))
          }
          if failed != 0 { throw .system(path: file?.path ?? name, code: failed) }
          if let failure = chunk.withUnsafeBytes({ Self.hand(UnsafeRawBufferPointer(rebasing: $0[..<size]), to: body) })
          {
            throw failure
          }
          done += size
        }
      }
    }
    let failure = buffers[stream].withUnsafeBytes { buffer -> OutputError? in
      var start = 0
      while start < buffer.count {
        let end = min(start + readChunk, buffer.count)
        if let failure = Self.hand(UnsafeRawBufferPointer(rebasing: buffer[start..<end]), to: body) { return failure }
        start = end
      }
      return nil
    }
    if let failure { throw failure }
  }

  /// `body(piece)`, its error returned: `withUnsafeBytes` would pass it on untyped.
  private static func hand(
    _ piece: UnsafeRawBufferPointer, to body: (UnsafeRawBufferPointer) throws(OutputError) -> Void
  ) -> OutputError? {
    do throws(OutputError) { try body(piece) } catch { return error }
    return nil
  }

  /// Gives the file's disk space back once every stream has been read.
  func remove() {
    if reader >= 0 { close(reader) }
    reader = -1
    if let file { try? FileManager.default.removeItem(atPath: file.path) }
    file = nil
  }
}
