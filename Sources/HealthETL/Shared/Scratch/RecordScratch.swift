import Foundation

/// An append-only scratch file of fixed-size records (plain structs without references), read
/// back by position: what route points go to between the moment they are read and the moment
/// they can be used, so that memory does not grow with them. The file lives in the run's
/// scratch folder and is never an output.
final class RecordScratch<Record: BitwiseCopyable> {
  private let transaction: OutputTransaction
  private let name: String
  private var file: OutputFile?
  private var descriptor: Int32 = -1
  private var pending: [Record] = []
  /// Records appended so far.
  private(set) var count = 0
  /// The first write error; `append` cannot throw, so it is reported by `read`.
  private var failure: OutputError?

  /// Records buffered before they go to the file.
  static var bufferRecords: Int { max(1, (256 * 1024) / max(1, MemoryLayout<Record>.stride)) }

  init(transaction: OutputTransaction, name: String) {
    self.transaction = transaction
    self.name = name
  }

  deinit { if descriptor >= 0 { close(descriptor) } }

  func append(_ record: Record) {
    if pending.capacity == 0 { pending.reserveCapacity(Self.bufferRecords) }
    pending.append(record)
    count += 1
    if pending.count == Self.bufferRecords { spill() }
  }

  /// Appends `records` in order, as `append` one at a time would.
  func append(contentsOf records: [Record]) {
    if pending.capacity == 0 { pending.reserveCapacity(Self.bufferRecords) }
    var rest = records[...]
    while !rest.isEmpty {
      let part = rest.prefix(Self.bufferRecords - pending.count)
      pending.append(contentsOf: part)
      count += part.count
      rest = rest.dropFirst(part.count)
      if pending.count == Self.bufferRecords { spill() }
    }
  }

  private func spill() {
    defer { pending.removeAll(keepingCapacity: true) }
    guard failure == nil, !pending.isEmpty else { return }
    do throws(OutputError) {
      if file == nil { file = try transaction.createScratch(name) }
      try file!.append { out in pending.withUnsafeBytes { out.append(contentsOf: $0) } }
    } catch {
      failure = error
    }
  }

  /// `count` records from record `first` on, into `records` (replacing what it held).
  func read(first: Int, count wanted: Int, into records: inout [Record]) throws(OutputError) {
    if let failure { throw failure }
    if !pending.isEmpty { spill() }
    if let failure { throw failure }
    records.removeAll(keepingCapacity: true)
    guard wanted > 0 else { return }
    guard let file else { return }
    if descriptor < 0 {
      try file.flush()
      descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
      guard descriptor >= 0 else { throw .system(path: file.path, code: errno) }
    }
    let stride = MemoryLayout<Record>.stride
    // Straight into the records' storage: they are plain bits, so the file's bytes are them.
    var failed: Int32 = 0
    records = [Record](unsafeUninitializedCapacity: wanted) { storage, initialized in
      failed = ScratchFileIO.read(
        descriptor, into: UnsafeMutableRawBufferPointer(storage), at: Int64(first) * Int64(stride))
      initialized = failed == 0 ? wanted : 0
    }
    if failed != 0 { throw .system(path: file.path, code: failed) }
  }
}
