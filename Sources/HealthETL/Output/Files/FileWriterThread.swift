import Dispatch
import HealthExtract
import RunExecution
import Synchronization

/// A dedicated thread of the run's executor that owns one output file's C handle (the workbook's
/// libxlsxwriter, the database's connection), so the handle is used from that thread only.
///
/// Writers hand messages over (`post`) and go on; messages of at most `budget` units of weight are
/// in flight, so a writer that is ahead waits rather than piling rows up in memory without bound.
/// A message weighs what its writer says (the database's: its fields), so the bound is one of
/// memory, however wide a table's rows. `work` runs on the thread: it sets the
/// file up, says `ready` (or throws, which `start` rethrows), then takes messages until
/// `close` (returning what the file holds) or `stop` (returning nil). A failure after `ready` is
/// reported by `closed()`.
final class FileWriterThread<Message: Sendable, Summary: Sendable, Failure: Error & Sendable> {
  /// What `work` reads its messages from.
  struct Inbox: Sendable {
    fileprivate let channel: Channel

    /// The next message, waiting for one; its weight is room again.
    func next() -> Message {
      let (message, weight) = channel.messages.take()
      for _ in 0..<weight { channel.room.signal() }
      return message
    }

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
    on executor: RunExecutor, name: String, budget: Int, close: Message, stop: Message,
    work: @escaping @Sendable (Inbox) throws(Failure) -> Summary?
  ) throws(Failure) -> FileWriterThread {
    let channel = Channel(budget: budget)
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

  /// Hands a message of `weight` units over (at least 1, at most the budget); waits only while the
  /// messages in flight leave no room for it.
  func post(_ message: Message, weight: Int = 1) {
    guard !ended else { return }
    channel.put(message, weight: weight)
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
    channel.put(stop, weight: 1)
    channel.ended.wait()
  }

  /// What the thread says back: it is ready, or the file is written, or why not.
  fileprivate enum Answer: Sendable {
    case ready
    case closed(Summary)
    case failed(Failure)
  }

  /// Messages one way (bounded by their weight), answers the other.
  fileprivate final class Channel: Sendable {
    /// Never full: every message weighs at least 1, so no more than `budget` wait.
    let messages: HandOffQueue<(Message, Int)>
    /// One unit per unit of weight not in flight. Created at 0 and raised, as `HandOffQueue`'s.
    let room = DispatchSemaphore(value: 0)
    /// Held while one message waits for its room, so two writers never each hold part of the room
    /// with none left for either.
    let posting = Mutex(())
    let budget: Int
    /// Two answers at most: ready (or failed), then closed (or failed).
    let answers = HandOffQueue<Answer>(capacity: 2)
    let ended = DispatchSemaphore(value: 0)

    init(budget: Int) {
      self.budget = max(1, budget)
      messages = HandOffQueue(capacity: self.budget)
      for _ in 0..<self.budget { room.signal() }
    }

    func put(_ message: Message, weight: Int) {
      let weight = min(max(1, weight), budget)
      posting.withLock { _ in
        for _ in 0..<weight { room.wait() }
      }
      messages.put((message, weight))
    }
  }
}
