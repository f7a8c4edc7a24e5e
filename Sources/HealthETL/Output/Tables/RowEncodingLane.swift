import Dispatch
import Foundation
import HealthExtract
import RunExecution
import Synchronization

/// Encodes and writes a table's rows on the run's pool (`RunExecutor`) while the caller computes
/// the next ones.
///
/// The longest tables a run writes (heart rate per minute: 600,000 rows for four years; route
/// points) spend most of their time turning values into text and copying it into the file. Here
/// the caller hands rows over in batches of `Field`s and goes on; pool jobs encode them and
/// append them, with the table's closing text, to the file the caller created (through a
/// descriptor of their own). Only values cross threads. A lane is not a thread: at most one job
/// of a lane runs at a time, taking its batches in order, so any number of tables share the
/// pool's few workers.
///
/// At most `depth` batches wait: a caller that is ahead waits for the pool. A write that fails
/// (a full disk) is kept, later batches are dropped, and `finish` reports it.
final class RowEncodingLane {
  /// Batches waiting at most: 8,192 rows of the writer's batches (`TableWriter.handOverRows`).
  static let depth = 16

  private let channel: Channel
  private let executor: RunExecutor
  private var ended = false

  /// `path` is the table's file, which already holds everything before the first row.
  init(encoder: RowEncoder, appendingTo path: String, meter: OutputMeter? = nil, executor: RunExecutor) {
    channel = Channel(encoder: encoder, path: path, meter: meter)
    self.executor = executor
  }

  /// Hands over `batch`: whole rows, one field per column.
  func send(_ batch: [Field]) {
    precondition(!ended, "rows sent after the table was finished")
    channel.room.wait()
    if channel.post(batch) { schedule() }
  }

  /// Waits until every row and the table's closing text are written and synced to disk.
  func finish() throws(OutputError) {
    stop()
    if let failure = channel.failure { throw failure }
  }

  /// A writer that stops part-way leaves its batches to be written; they are waited for.
  deinit { stop() }

  private func stop() {
    guard !ended else { return }
    ended = true
    if channel.end() { schedule() }
    channel.finished.wait()
  }

  private func schedule() {
    let channel = channel
    executor.submit { channel.drain() }
  }

  /// The lane's batches, its encoder and file (touched only by the one job that drains it), and
  /// the first error back.
  private final class Channel: Sendable {
    private struct Queue {
      var batches: [[Field]] = []
      /// A drain job is queued or running.
      var scheduled = false
      var ended = false
    }

    private struct Output {
      var encoder: RowEncoder
      let path: String
      let meter: OutputMeter?
      var file: OutputFile?
      var opened = false
      var failed = false
    }

    private let queue = Mutex(Queue())
    private let output: Mutex<Output>
    private let firstFailure = Mutex<OutputError?>(nil)
    /// Batches the caller may still hand over before waiting.
    let room = DispatchSemaphore(value: RowEncodingLane.depth)
    let finished = DispatchSemaphore(value: 0)

    init(encoder: RowEncoder, path: String, meter: OutputMeter?) {
      output = Mutex(Output(encoder: encoder, path: path, meter: meter))
    }

    /// Queues a batch; true when a drain job must be started.
    func post(_ batch: [Field]) -> Bool {
      queue.withLock { queue in
        queue.batches.append(batch)
        guard !queue.scheduled else { return false }
        queue.scheduled = true
        return true
      }
    }

    /// No more batches; true when a drain job must be started to write the end.
    func end() -> Bool {
      queue.withLock { queue in
        queue.ended = true
        guard !queue.scheduled else { return false }
        queue.scheduled = true
        return true
      }
    }

    /// A pool job: writes the waiting batches in order, and the table's end once it is ended.
    func drain() {
      while true {
        let next: (batch: [Field]?, ended: Bool)? = queue.withLock { queue in
          if !queue.batches.isEmpty { return (queue.batches.removeFirst(), false) }
          if queue.ended { return (nil, true) }
          queue.scheduled = false
          return nil
        }
        guard let next else { return }
        if let batch = next.batch {
          write(batch)
          room.signal()
        } else {
          close()
          finished.signal()
          return
        }
      }
    }

    private func write(_ batch: [Field]) {
      output.withLock { output in
        if !output.opened {
          output.opened = true
          do throws(OutputError) {
            output.file = try OutputFile(path: output.path, appending: true, meter: output.meter, writesBack: true)
          } catch {
            output.failed = true
            fail(error)
          }
        }
        // After a failure the batches are still taken, so the caller never waits for room.
        guard !output.failed, let file = output.file else { return }
        let columns = Swift.max(1, output.encoder.columnCount)
        do throws(OutputError) {
          var row = batch.startIndex
          while row < batch.endIndex {
            try file.append { output.encoder.encode(batch[row..<(row + columns)], to: &$0) }
            row += columns
          }
        } catch {
          output.failed = true
          fail(error)
        }
      }
    }

    private func close() {
      output.withLock { output in
        if !output.opened {
          output.opened = true
          do throws(OutputError) {
            output.file = try OutputFile(path: output.path, appending: true, meter: output.meter, writesBack: true)
          } catch {
            output.failed = true
            fail(error)
          }
        }
        guard !output.failed, let file = output.file else { return }
        do throws(OutputError) {
          try file.write(RowEncoder.tail(format: output.encoder.format, rows: output.encoder.rowsEncoded))
          try file.close()
        } catch {
          fail(error)
        }
      }
    }

    private func fail(_ error: OutputError) { firstFailure.withLock { if $0 == nil { $0 = error } } }

    var failure: OutputError? { firstFailure.withLock { $0 } }
  }
}
