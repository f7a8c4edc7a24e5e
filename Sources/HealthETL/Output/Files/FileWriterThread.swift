import Dispatch
import HealthExtract
import RunExecution

/// A dedicated thread of the run's executor that owns one output file's C handle (the workbook's
/// libxlsxwriter, the database's connection), so the handle is used from that thread only.
///
/// Writers hand messages over (`post`) and go on; at most `depth` are in flight, so a writer that
/// is ahead waits rather than piling rows up in memory. `work` runs on the thread: it sets the
/// file up, says `ready` (or throws, which `start` rethrows), then takes messages until
/// `close` (returning what the file holds) or `stop` (returning nil). A failure after `ready` is
/// reported by `closed()`.
final class FileWriterThread<Message: Sendable, Summary: Sendable, Failure: Error & Sendable> {
  /// What `work` reads its messages from.
  struct Inbox: Sendable {
    fileprivate let channel: Channel

    /// The next message, waiting for one.
    func next() -> Message { channel.messages.take() }

    /// The file is set up: `start` returns.
    func ready() { channel.answers.put(.ready) }
  }

  private let channel: Channel
  private let close: Message
  private let stop: Message
  private var ended = false

  private init(channel: Channel, close: Message, stop: Message) {
    self.channel = channel
    self.close = close
    self.stop = stop
  }

  /// Starts the thread on `executor` and waits until `work` is ready or has failed.
  static func start(
    on executor: RunExecutor, name: String, depth: Int, close: Message, stop: Message,
    work: @escaping @Sendable (Inbox) throws(Failure) -> Summary?
  ) throws(Failure) -> FileWriterThread {
    let channel = Channel(depth: depth)
    let thread = FileWriterThread(channel: channel, close: close, stop: stop)
    executor.startDedicated(name: name) {
      do throws(Failure) {
        if let summary = try work(Inbox(channel: channel)) { channel.answers.put(.closed(summary)) }
      } catch {
        channel.answers.put(.failed(error))
      }
      channel.ended.signal()
    }
    if case .failed(let error) = channel.answers.take() {
      thread.ended = true
      channel.ended.wait()
      throw error
    }
    return thread
  }

  /// Hands a message over; waits only while `depth` messages are in flight.
  func post(_ message: Message) {
    guard !ended else { return }
    channel.messages.put(message)
  }

  /// Asks for the file to be finished, without waiting.
  func startClosing() { post(close) }

  /// Waits for the file started by `startClosing`; the thread has ended when this returns.
  func closed() throws(Failure) -> Summary {
    precondition(!ended, "the file was closed or stopped already")
    ended = true
    let answer = channel.answers.take()
    channel.ended.wait()
    switch answer {
    case .closed(let summary): return summary
    case .failed(let error): throw error
    case .ready: preconditionFailure("the thread answered a close as if it had just started")
    }
  }

  /// A run that fails leaves the file unfinished; the thread is waited for either way.
  deinit {
    guard !ended else { return }
    channel.messages.put(stop)
    channel.ended.wait()
  }

  /// What the thread says back: it is ready, or the file is written, or why not.
  fileprivate enum Answer: Sendable {
    case ready
    case closed(Summary)
    case failed(Failure)
  }

  /// Messages one way (bounded), answers the other.
  fileprivate final class Channel: Sendable {
    let messages: HandOffQueue<Message>
    /// Two answers at most: ready (or failed), then closed (or failed).
    let answers = HandOffQueue<Answer>(capacity: 2)
    let ended = DispatchSemaphore(value: 0)

    init(depth: Int) { messages = HandOffQueue(capacity: depth) }
  }
}
