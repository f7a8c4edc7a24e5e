import Dispatch
import Foundation
import Synchronization

/// Encodes a table's rows on a thread of its own while the caller computes the next ones.
///
/// After the parse, the marts finish one after another on one core while the other idles; the
/// longest table a run writes (heart rate per minute: 600,000 rows for four years) spends most of
/// its time turning values into text. Here the caller hands rows over in batches of `Field`s and
/// gets their bytes back in the same order, to write to its own file: only values cross threads,
/// and the file, its errors and the transaction stay with the caller.
///
/// At most `depth` batches are in flight: a caller that is ahead waits for the oldest one. The
/// thread never waits on the caller, so the two cannot block each other.
final class RowEncodingThread {
  /// Rows per batch: big enough that handing over costs nothing, small enough to stay in cache.
  static let batchRows = 2048
  static let depth = 4

  private let channel = Channel()
  private var inFlight = 0
  private var stopped = false

  init(encoder: RowEncoder) {
    let channel = channel
    let columns = Swift.max(1, encoder.columnCount)
    let thread = Thread {
      var encoder = encoder
      while let batch = channel.nextBatch() {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(batch.count / columns * 96)
        var row = batch.startIndex
        while row < batch.endIndex {
          encoder.encode(batch[row..<(row + columns)], to: &bytes)
          row += columns
        }
        channel.deliver(bytes)
      }
      channel.finished.signal()
    }
    thread.start()
  }

  /// Hands over `batch` (whole rows, one field per column) and writes, through `write`, whatever
  /// the thread has encoded meanwhile.
  func send(_ batch: [Field], write: ([UInt8]) throws(OutputError) -> Void) throws(OutputError) {
    while inFlight >= Self.depth { try writeOne(waiting: true, write) }
    channel.post(batch)
    inFlight += 1
    while inFlight > 0, try writeOne(waiting: false, write) {}
  }

  /// Writes the bytes of every batch handed over, then ends the thread.
  func finish(write: ([UInt8]) throws(OutputError) -> Void) throws(OutputError) {
    while inFlight > 0 { try writeOne(waiting: true, write) }
    stop()
  }

  /// Ends the thread, waiting for it; bytes not yet written are dropped. A writer that stops
  /// part-way (a full disk) leaves the thread nothing to wait for.
  func stop() {
    guard !stopped else { return }
    stopped = true
    channel.post(nil)
    channel.finished.wait()
  }

  deinit { stop() }

  @discardableResult
  private func writeOne(waiting: Bool, _ write: ([UInt8]) throws(OutputError) -> Void) throws(OutputError) -> Bool {
    guard let bytes = channel.take(waiting: waiting) else { return false }
    inFlight -= 1
    try write(bytes)
    return true
  }

  /// Batches one way, their bytes the other.
  private final class Channel: Sendable {
    private let batches = Mutex<[[Field]?]>([])
    private let batchPosted = DispatchSemaphore(value: 0)
    private let encoded = Mutex<[[UInt8]]>([])
    private let bytesReady = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)

    /// `nil` ends the thread.
    func post(_ batch: [Field]?) {
      batches.withLock { $0.append(batch) }
      batchPosted.signal()
    }

    func nextBatch() -> [Field]? {
      batchPosted.wait()
      return batches.withLock { $0.removeFirst() }
    }

    func deliver(_ bytes: [UInt8]) {
      encoded.withLock { $0.append(bytes) }
      bytesReady.signal()
    }

    /// The oldest encoded batch; without `waiting`, nil when none is ready yet.
    func take(waiting: Bool) -> [UInt8]? {
      if waiting {
        bytesReady.wait()
      } else if bytesReady.wait(timeout: .now()) == .timedOut {
        return nil
      }
      return encoded.withLock { $0.removeFirst() }
    }
  }
}
