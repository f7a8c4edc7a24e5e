import Dispatch
import Foundation
import HealthExtract
import Synchronization

/// Encodes and writes a table's rows on a thread of its own while the caller computes the next
/// ones.
///
/// After the parse, the marts finish one after another on one core while the other idles; the
/// longest table a run writes (heart rate per minute: 600,000 rows for four years) spends most of
/// its time turning values into text and copying it into the file. Here the caller hands rows
/// over in batches of `Field`s and goes on; the thread encodes them and appends them, with the
/// table's closing text, to the file the caller created (through a descriptor of its own). Only
/// values cross threads.
///
/// At most `depth` batches wait: a caller that is ahead waits for the thread. A write that fails
/// (a full disk) is kept, later batches are dropped, and `finish` reports it.
final class RowEncodingThread {
  /// Rows per batch: big enough that handing over costs nothing, small enough to stay in cache.
  static let batchRows = 2048
  static let depth = 4

  private let channel = Channel()
  private var ended = false

  /// Starts the thread; `path` is the table's file, which already holds everything before the
  /// first row.
  init(encoder: RowEncoder, appendingTo path: String) {
    let channel = channel
    let columns = Swift.max(1, encoder.columnCount)
    let thread = Thread {
      var encoder = encoder
      var file: OutputFile?
      do throws(OutputError) { file = try OutputFile(path: path, appending: true) } catch { channel.fail(error) }
      // After a failure the batches are still taken, so the caller never waits for room.
      var failed = file == nil
      while let batch = channel.nextBatch() {
        guard !failed, let file else { continue }
        do throws(OutputError) {
          var row = batch.startIndex
          while row < batch.endIndex {
            try file.append { encoder.encode(batch[row..<(row + columns)], to: &$0) }
            row += columns
          }
        } catch {
          failed = true
          channel.fail(error)
        }
      }
      if !failed, let file {
        do throws(OutputError) {
          try file.write(RowEncoder.tail(format: encoder.format, rows: encoder.rowsEncoded))
          try file.close()
        } catch {
          channel.fail(error)
        }
      }
      channel.finished.signal()
    }
    thread.start()
  }

  /// Hands over `batch`: whole rows, one field per column.
  func send(_ batch: [Field]) {
    precondition(!ended, "rows sent after the table was finished")
    channel.post(batch)
  }

  /// Waits until every row and the table's closing text are written and synced to disk.
  func finish() throws(OutputError) {
    stop()
    if let failure = channel.failure { throw failure }
  }

  /// A writer that stops part-way leaves the thread to end on its own; it is waited for.
  deinit { stop() }

  private func stop() {
    guard !ended else { return }
    ended = true
    channel.post(nil)
    channel.finished.wait()
  }

  /// Batches to the thread, and the first error back.
  private final class Channel: Sendable {
    /// `nil` ends the thread.
    let batches = HandOffQueue<[Field]?>(capacity: RowEncodingThread.depth)
    private let firstFailure = Mutex<OutputError?>(nil)
    let finished = DispatchSemaphore(value: 0)

    func post(_ batch: [Field]?) { batches.put(batch) }

    func nextBatch() -> [Field]? { batches.take() }

    func fail(_ error: OutputError) { firstFailure.withLock { if $0 == nil { $0 = error } } }

    var failure: OutputError? { firstFailure.withLock { $0 } }
  }
}
