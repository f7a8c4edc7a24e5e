import Foundation

/// One quantity sample as the statistics engine needs it: 40 bytes and no references; sorted runs
/// of them go to a scratch file in a compact form (`SpillRunCodec`).
struct SpillRecord: Equatable {
  var start: Int64
  var end: Int64
  /// In the type's canonical unit.
  var value: Double
  /// Epoch seconds; `Int64.min` when the record has none (it then counts as the earliest).
  var created: Int64
  /// The statistics stream (one per distinct type the jobs ask for).
  var stream: Int32
  /// The sample's group (source name + entered by hand; Pipelines/docs/samples.md, "Source priority"),
  /// interned by the stage.
  var group: Int32

  static let missingCreation = Int64.min

  /// The merge order: stream, then start, then every other field. It is a total order on the
  /// record's content, so the merged stream — and every floating-point sum taken over it — is the
  /// same whatever the buffer size and however the samples were split into runs.
  @inline(__always) static func precedes(_ a: SpillRecord, _ b: SpillRecord) -> Bool {
    if a.stream != b.stream { return a.stream < b.stream }
    if a.start != b.start { return a.start < b.start }
    if a.end != b.end { return a.end < b.end }
    if a.group != b.group { return a.group < b.group }
    if a.created != b.created { return a.created < b.created }
    return a.value.bitPattern < b.value.bitPattern
  }
}

/// An external sort of `SpillRecord`s.
///
/// Samples arrive in document order: grouped by type and source, not by time (one source's year
/// of steps, then another's; some apps write batches backwards). Merging sources by priority
/// needs every source's samples of a stretch of time together, and the run's zone is known only
/// at the end of the file, so nothing can be aggregated while the export streams. Instead,
/// records are appended to a buffer of fixed capacity; a full buffer is sorted and written to a
/// scratch file as one sorted run. At the end, `merged()` k-way merges the runs (and the last,
/// unwritten buffer) through a binary heap into one time-ordered stream.
///
/// Runs are stored compactly (`SpillRunCodec`, mostly 5–9 bytes a record).
///
/// Memory: the buffer (`capacity` × 40 bytes) plus, per run, one read chunk (64 KiB) and its
/// decoded records (4096, 160 KiB), never proportional to the number of samples. Lateness does
/// not matter: a sample written a million records after its neighbours in time still comes out
/// in its place.
final class SampleSpill {
  /// Bytes per read of a run during the merge.
  static let readChunk = 64 << 10
  /// Records decoded at a time per run during the merge.
  static let decodedRecords = 4096
  /// Records encoded into the scratch file per `OutputFile.append`, so that its own buffer stays
  /// near its 1 MiB flush threshold.
  static let writeChunk = 65_536

  let capacity: Int
  private let transaction: OutputTransaction
  private let scratchName: String
  private var buffer: [SpillRecord] = []
  private var scratch: OutputFile?
  /// A sorted run in the scratch file (`SpillRunCodec`): where its bytes are and how many
  /// records they hold.
  struct Run {
    var offset: Int
    var bytes: Int
    var count: Int
  }

  /// The runs in the scratch file, in the order written.
  private(set) var runs: [Run] = []
  /// The scratch file, once a run was written (tests damage it).
  var scratchPath: String? { scratch?.path }
  private var bytesWritten = 0
  /// The first write error; `append` cannot throw, so it is reported by `merged()`.
  private var failure: OutputError?
  private(set) var count = 0

  init(capacity: Int, transaction: OutputTransaction, scratchName: String) {
    precondition(capacity >= 1)
    self.capacity = capacity
    self.transaction = transaction
    self.scratchName = scratchName
  }

  /// Adds one record; sorts and writes the buffer as a run when it is full. Allocation-free
  /// after the first call (the buffer is reserved once).
  @inline(__always) func append(_ record: SpillRecord) {
    if buffer.capacity == 0 { buffer.reserveCapacity(capacity) }
    buffer.append(record)
    count += 1
    if buffer.count == capacity { spillBuffer() }
  }

  private func spillBuffer() {
    guard failure == nil else {
      buffer.removeAll(keepingCapacity: true)
      return
    }
    buffer.sort(by: SpillRecord.precedes)
    do throws(OutputError) {
      if scratch == nil { scratch = try transaction.createScratch(scratchName) }
      let file = scratch!
      let offset = bytesWritten
      var state = SpillRunCodec.State()
      var index = 0
      while index < buffer.count {
        let upper = Swift.min(index + Self.writeChunk, buffer.count)
        try file.append { out in
          let before = out.count
          for record in buffer[index..<upper] { SpillRunCodec.encode(record, after: &state, to: &out) }
          bytesWritten += out.count - before
        }
        index = upper
      }
      runs.append(Run(offset: offset, bytes: bytesWritten - offset, count: buffer.count))
    } catch {
      failure = error
    }
    buffer.removeAll(keepingCapacity: true)
  }

  /// All records in `SpillRecord.precedes` order. Call once, after the last `append` — or, with
  /// `again`, keep the records for another pass (the unwritten buffer stays in memory).
  func merged(again: Bool = false) throws(OutputError) -> SpillMerge {
    if let failure { throw failure }
    buffer.sort(by: SpillRecord.precedes)
    var reader: SpillReader?
    if let scratch {
      try scratch.flush()
      reader = try SpillReader(path: scratch.path)
    }
    let tail = buffer
    if !again { buffer = [] }
    return try SpillMerge(reader: reader, runs: runs, tail: tail)
  }
}

/// Reads runs' bytes back from the scratch file with `pread`.
final class SpillReader {
  let path: String
  private let descriptor: Int32

  init(path: String) throws(OutputError) {
    self.path = path
    descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw .openFailure(path: path, code: errno, creating: false) }
  }

  deinit { close(descriptor) }

  /// Appends the `count` bytes at `offset` to `bytes`.
  func read(at offset: Int, count: Int, appendingTo bytes: inout [UInt8]) throws(OutputError) {
    let old = bytes.count
    bytes.append(contentsOf: repeatElement(0, count: count))
    let failed = bytes.withUnsafeMutableBytes {
      ScratchFileIO.read(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: $0[old...]), at: Int64(offset))
    }
    if failed != 0 { throw .system(path: path, code: failed) }
  }
}

/// The k-way merge of sorted runs: a heap of run heads, one read chunk per run.
final class SpillMerge {
  private struct Head: Comparable {
    var record: SpillRecord
    var run: Int

    static func < (a: Head, b: Head) -> Bool {
      if SpillRecord.precedes(a.record, b.record) { return true }
      if SpillRecord.precedes(b.record, a.record) { return false }
      return a.run < b.run
    }
  }

  /// One run's place in the merge: records decoded a chunk at a time from the bytes read, so
  /// taking the next one is an index, as it was with raw records. A value kept in place in
  /// `cursors`, so taking a record retains nothing.
  private struct Cursor {
    var records: [SpillRecord] = []
    var position = 0
    var bytes: [UInt8] = []
    var bytePosition = 0
    /// Next byte to read from the file, and the end of the run's bytes.
    var next: Int
    let end: Int
    /// Records of the run not yet decoded.
    var remaining: Int
    var state = SpillRunCodec.State()
  }

  private let reader: SpillReader?
  private var cursors: [Cursor] = []
  private var heap = MergeHeap<Head>()
  /// The last, never-written buffer: run number `cursors.count`.
  private let tail: [SpillRecord]
  private var tailPosition = 0

  fileprivate init(reader: SpillReader?, runs: [SampleSpill.Run], tail: [SpillRecord]) throws(OutputError) {
    self.reader = reader
    self.tail = tail
    for (index, run) in runs.enumerated() {
      cursors.append(Cursor(next: run.offset, end: run.offset + run.bytes, remaining: run.count))
      if let record = try advance(index) { heap.push(Head(record: record, run: index)) }
    }
    if let first = tail.first {
      tailPosition = 1
      heap.push(Head(record: first, run: cursors.count))
    }
  }

  /// The next record of the merged stream, nil at the end.
  func next() throws(OutputError) -> SpillRecord? {
    guard let head = heap.min else { return nil }
    let following: SpillRecord?
    if head.run == cursors.count {
      following = tailPosition < tail.count ? tail[tailPosition] : nil
      tailPosition += 1
    } else {
      following = try advance(head.run)
    }
    if let following { heap.replaceMin(with: Head(record: following, run: head.run)) } else { heap.popMin() }
    return head.record
  }

  /// The next record of file run `index`, decoding its next records when they are used up.
  private func advance(_ index: Int) throws(OutputError) -> SpillRecord? {
    if cursors[index].position == cursors[index].records.count {
      guard cursors[index].remaining > 0 else { return nil }
      try decodeRecords(of: &cursors[index])
    }
    defer { cursors[index].position += 1 }
    return cursors[index].records[cursors[index].position]
  }

  /// Replaces `cursor`'s records with its run's next ones (at most `SampleSpill.decodedRecords`),
  /// reading the run's bytes as they are needed. The run's last bytes are followed by
  /// `maximumRecordBytes` zeros, so even bytes the disk changed since they were written cannot
  /// make a decode read past them (a zero ends every varint); the decoder then runs out of room
  /// and the merge throws.
  private func decodeRecords(of cursor: inout Cursor) throws(OutputError) {
    var records = cursor.records
    cursor.records = []
    records.removeAll(keepingCapacity: true)
    let wanted = Swift.min(SampleSpill.decodedRecords, cursor.remaining)
    var position = cursor.bytePosition
    var state = cursor.state
    while records.count < wanted {
      if cursor.bytes.count - position < SpillRunCodec.maximumRecordBytes {
        guard cursor.next < cursor.end, let reader else { throw .system(path: reader?.path ?? "", code: EIO) }
        let count = Swift.min(SampleSpill.readChunk, cursor.end - cursor.next)
        cursor.bytes.removeSubrange(0..<Swift.min(position, cursor.bytes.count))
        position = 0
        try reader.read(at: cursor.next, count: count, appendingTo: &cursor.bytes)
        cursor.next += count
        if cursor.next == cursor.end {
          cursor.bytes.append(contentsOf: repeatElement(0, count: SpillRunCodec.maximumRecordBytes))
        }
      }
      let limit = cursor.bytes.count - SpillRunCodec.maximumRecordBytes
      cursor.bytes.withUnsafeBytes { raw in
        while records.count < wanted && position <= limit {
          records.append(SpillRunCodec.decode(raw, at: &position, after: &state))
        }
      }
    }
    cursor.bytePosition = position
    cursor.state = state
    cursor.remaining -= records.count
    cursor.records = records
    cursor.position = 0
  }
}
