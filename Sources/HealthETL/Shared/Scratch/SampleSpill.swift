import Foundation

/// One quantity sample as the statistics engine needs it: 40 bytes and no references, so runs of
/// them go to a scratch file and come back as raw bytes.
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
/// Memory: the buffer (`capacity` × 40 bytes) plus one read chunk per run (≤ 4096 records each),
/// never proportional to the number of samples. Lateness does not matter: a sample written a
/// million records after its neighbours in time still comes out in its place.
final class SampleSpill {
  /// Records per read chunk of a run during the merge.
  static let readChunk = 4096
  /// Records written to the scratch file per `OutputFile.append`, so that its own buffer stays
  /// near its 1 MiB flush threshold.
  static let writeChunk = 16_384

  let capacity: Int
  private let transaction: OutputTransaction
  private let scratchName: String
  private var buffer: [SpillRecord] = []
  private var scratch: OutputFile?
  /// Runs in the scratch file, in records: first record and count.
  private(set) var runs: [(first: Int, count: Int)] = []
  private var recordsWritten = 0
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
      let stride = MemoryLayout<SpillRecord>.stride
      var index = 0
      while index < buffer.count {
        let upper = Swift.min(index + Self.writeChunk, buffer.count)
        try file.append { out in
          buffer.withUnsafeBytes { out.append(contentsOf: $0[(index * stride)..<(upper * stride)]) }
        }
        index = upper
      }
      runs.append((recordsWritten, buffer.count))
      recordsWritten += buffer.count
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

/// Reads records back from the scratch file with `pread`.
final class SpillReader {
  let path: String
  private let descriptor: Int32

  init(path: String) throws(OutputError) {
    self.path = path
    descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw .openFailure(path: path, code: errno, creating: false) }
  }

  deinit { close(descriptor) }

  /// Replaces `records` with `count` records starting at record `first`.
  func read(first: Int, count: Int, into records: inout [SpillRecord]) throws(OutputError) {
    let stride = MemoryLayout<SpillRecord>.stride
    records.removeAll(keepingCapacity: true)
    let zero = SpillRecord(start: 0, end: 0, value: 0, created: 0, stream: 0, group: 0)
    records.append(contentsOf: repeatElement(zero, count: count))
    let failed = records.withUnsafeMutableBytes {
      ScratchFileIO.read(descriptor, into: $0, at: Int64(first) * Int64(stride))
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

  private struct Cursor {
    var chunk: [SpillRecord] = []
    var position = 0
    /// Next record to read from the file, and the end of the run (in records).
    var next: Int
    var end: Int
  }

  private let reader: SpillReader?
  private var cursors: [Cursor] = []
  private var heap = MergeHeap<Head>()
  /// The last, never-written buffer: run number `cursors.count`.
  private let tail: [SpillRecord]
  private var tailPosition = 0

  fileprivate init(reader: SpillReader?, runs: [(first: Int, count: Int)], tail: [SpillRecord]) throws(OutputError) {
    self.reader = reader
    self.tail = tail
    for (index, run) in runs.enumerated() {
      cursors.append(Cursor(next: run.first, end: run.first + run.count))
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

  /// The next record of file run `index`, reading its next chunk when the current one is used up.
  private func advance(_ index: Int) throws(OutputError) -> SpillRecord? {
    if cursors[index].position == cursors[index].chunk.count {
      let cursor = cursors[index]
      guard cursor.next < cursor.end, let reader else { return nil }
      let count = Swift.min(SampleSpill.readChunk, cursor.end - cursor.next)
      try reader.read(first: cursor.next, count: count, into: &cursors[index].chunk)
      cursors[index].next += count
      cursors[index].position = 0
    }
    let record = cursors[index].chunk[cursors[index].position]
    cursors[index].position += 1
    return record
  }
}
