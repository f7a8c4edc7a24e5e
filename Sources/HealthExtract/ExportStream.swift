import Dispatch
import Foundation
public import RunExecution
import Synchronization

/// What to read: a path (`-` for standard input) or bytes in memory.
public enum InputSource: Sendable {
  case path(String)
  case bytes([UInt8], name: String)

  func open() throws(ExtractError) -> ExportInput {
    switch self {
    case .path(let path): return try ExportInput.open(path)
    case .bytes(let bytes, let name): return ExportInput.memory(bytes, name: name)
    }
  }

  /// The input as chunks for a parse: read ahead on a thread of its own for a file or folder on
  /// disk, whose reads always return; on the parse's thread otherwise.
  func chunks(hasher: (@Sendable () -> any InputHasher)? = nil, on executor: RunExecutor) throws(ExtractError)
    -> any ExportChunks
  {
    if case .path(let path) = self, path != "-", ExportInput.isFileOrFolder(path) {
      return try ReadAhead.start(path: path, hasher: hasher, on: executor)
    }
    return DirectChunks(try open())
  }
}

/// A digest of the input, fed as it is read: the caller's (a SHA-256), so extracting needs no
/// cryptography of its own.
public protocol InputHasher: AnyObject {
  func update(_ bytes: UnsafeRawBufferPointer)
  /// The digest as lower-case hex, once every byte was fed.
  func finalizeHex() -> String
}

/// What was opened, reported before the first element.
public struct InputInfo: Sendable {
  public var path: String
  public var form: ExportInput.Form
  public var memberName: String
  public var inputBytes: Int64?
  public var xmlBytesExpected: Int64?
}

/// Reads an export on two threads: libxml2 parses on a reader thread while the calling thread
/// runs the handler over the previous batch. On a two-core machine the handler's work then hides
/// behind the parse instead of adding to it.
public final class ExportStream {
  private let source: InputSource
  private let allowTruncated: Bool
  private let recover: Bool
  private let hasher: (@Sendable () -> any InputHasher)?
  private let executor: RunExecutor

  /// Batches in flight between the threads: enough to absorb jitter, few enough to keep memory flat.
  static let depth = 4

  /// - Parameters:
  ///   - recover: read past XML that is not well-formed, leaving out what cannot be trusted
  ///     (`ReadSummary.recovery`); implies `allowTruncated`.
  ///   - hashingInput: makes a digest of the file as given, fed as it is read; its result is
  ///     `ReadSummary.inputSHA256` when the input is an export XML on disk read to its end (a
  ///     zip, a pipe or a stopped parse leave it nil).
  ///   - executor: the run's threads: the parse and the read-ahead each take a dedicated one for
  ///     the read.
  public init(
    source: InputSource, allowTruncated: Bool = false, recover: Bool = false,
    hashingInput hasher: (@Sendable () -> any InputHasher)? = nil, executor: RunExecutor
  ) {
    self.executor = executor
    self.source = source
    self.allowTruncated = allowTruncated
    self.recover = recover
    self.hasher = hasher
  }

  /// Reads everything, calling `opened` once the input is open, then the handler for every element
  /// and `progress` after each batch, all on the calling thread.
  public func read(
    into handler: any ExportEventHandler, opened: (InputInfo) -> Void = { _ in },
    progress: (ReadProgress) -> Void = { _ in }
  ) throws(ExtractError) -> ReadSummary {
    let channel = BatchChannel(depth: Self.depth)
    let source = self.source
    let allowTruncated = self.allowTruncated
    let recover = self.recover
    let hasher = self.hasher
    let executor = self.executor
    // libxml2 on a thread of its own: it must never wait behind the pool's jobs.
    executor.startDedicated(name: "libxml2", stackSize: 1 << 22) {
      do throws(ExtractError) {
        let input = try source.chunks(hasher: hasher, on: executor)
        channel.send(.opened(input.info))
        let summary = try LibXML2Parser().parse(input, allowTruncated: allowTruncated, recover: recover) { batch in
          channel.send(.batch(batch))
          return channel.spare()
        }
        channel.send(.finished(summary))
      } catch {
        channel.send(.failed(error))
      }
    }
    let replayer = EventReplayer(handler: handler)
    while true {
      switch channel.receive() {
      case .opened(let info): opened(info)
      case .batch(let batch):
        replayer.replay(batch)
        progress(batch.progress)
        channel.recycle(batch)
      case .finished(let summary): return summary
      case .failed(let error): throw error
      }
    }
  }
}

/// A bounded queue of messages from the reader thread, plus a pool of emptied batches going back.
final class BatchChannel: Sendable {
  enum Message: Sendable {
    case opened(InputInfo)
    case batch(EventBatch)
    case finished(ReadSummary)
    case failed(ExtractError)
  }

  private let messages: HandOffQueue<Message>
  private let pool = Mutex<[EventBatch]>([])

  init(depth: Int) { messages = HandOffQueue(capacity: depth) }

  func send(_ message: Message) { messages.put(message) }

  func receive() -> Message { messages.take() }

  /// An empty batch for the reader: a recycled one when there is one.
  func spare() -> EventBatch {
    pool.withLock { $0.popLast() } ?? EventBatch()
  }

  func recycle(_ batch: EventBatch) {
    var emptied = batch
    emptied.clear()
    pool.withLock { $0.append(emptied) }
  }
}
