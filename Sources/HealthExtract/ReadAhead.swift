import Dispatch
import Foundation
import RunExecution
import Synchronization

/// Reads an export on a thread of its own, a few chunks ahead of libxml2.
///
/// libxml2's thread is the one every run waits for; reading the file (and, for `export.zip`,
/// inflating the member with libarchive) took its share of that thread's time. Here a third
/// thread opens the input, reads it and hands the chunks over, while the parse works on the
/// previous ones; the main thread's normalizing and this reading share the other core. The
/// `ExportInput` — a libarchive handle among others — is opened, read and closed on that thread
/// only: chunks, progress and errors cross as values.
///
/// On its way, each chunk is scanned for the control characters the byte filter replaces (a
/// clean chunk, nearly every one, is not scanned again on the parse's thread), and, when the
/// caller asks and the input is an export XML on disk, hashed: the run's SHA-256 of its input
/// then costs no second read of the file.
///
/// For files and folders only: a read of them always returns, so the thread can be stopped
/// whenever the parse stops early. Standard input and pipes are read on the parse's thread
/// (`DirectChunks`).
final class ReadAhead: ExportChunks {
  /// Chunks read but not yet parsed: enough to ride out a slow read, few enough for flat memory.
  static let depth = 4

  let info: InputInfo
  private(set) var progress = ReadProgress()
  private let channel: Channel
  private var stopped = false
  /// The thread has said its last (the end, or an error): nothing more will come.
  private var exhausted = false
  private(set) var inputSHA256: String?

  /// Starts the reading thread on `executor`, opens `path` there and waits until it is open (or
  /// refused).
  /// - Parameter hasher: makes the digest of the file as given, on the reading thread; used only
  ///   for an export XML on disk (a zip is hashed as it is, not as its member inflates).
  static func start(path: String, hasher: (@Sendable () -> any InputHasher)? = nil, on executor: RunExecutor)
    throws(ExtractError) -> ReadAhead
  {
    let channel = Channel()
    executor.startDedicated(name: "read-ahead") {
      let input: ExportInput
      do throws(ExtractError) {
        input = try ExportInput.open(path)
      } catch {
        channel.opened(.failure(error))
        channel.finished.signal()
        return
      }
      channel.opened(.success(input.info))
      let fileSize = input.plainFileSize
      let digest = fileSize == nil ? nil : hasher?()
      var hashed: Int64 = 0
      while !channel.isStopping {
        var buffer = channel.spare() ?? [UInt8](repeating: 0, count: LibXML2Parser.chunkSize)
        let read = buffer.withUnsafeMutableBytes { bytes -> Result<(Int, Bool), ExtractError> in
          let count: Int
          do throws(ExtractError) { count = try input.read(into: bytes) } catch { return .failure(error) }
          let chunk = UnsafeRawBufferPointer(rebasing: bytes[0..<count])
          digest?.update(chunk)
          hashed += Int64(count)
          return .success((count, !XMLByteFilter.hasForbiddenControlCharacters(chunk)))
        }
        let message: Message
        switch read {
        // Only a file hashed whole, as long as it was when opened, has its digest.
        case .success((0, _)): message = .end(input.progress, sha256: hashed == fileSize ? digest?.finalizeHex() : nil)
        // Handed over, not copied: the parse edits the chunk in place.
        case .success((let count, let clean)):
          message = .chunk(consume buffer, count: count, progress: input.progress, scannedClean: clean)
        case .failure(let error): message = .failed(error)
        }
        guard channel.post(message), case .chunk = message else { break }
      }
      if channel.lastWord() == .damage { channel.damageFound(input.damage()) }
      input.close()
      channel.finished.signal()
    }
    switch channel.waitUntilOpened() {
    case .success(let info): return ReadAhead(info: info, channel: channel)
    case .failure(let error):
      channel.finished.wait()
      throw error
    }
  }

  private init(info: InputInfo, channel: Channel) {
    self.info = info
    self.channel = channel
  }

  func nextChunk(
    _ body: (UnsafeMutableRawBufferPointer, _ scannedClean: Bool) throws(ExtractError) -> Void
  ) throws(ExtractError) -> Bool {
    guard !stopped, !exhausted else { return false }
    let message = channel.next()
    // `consume`: the chunk's one reference, so editing it in place copies nothing.
    switch consume message {
    case .chunk(var bytes, let count, let progress, let clean):
      self.progress = progress
      let parsed = bytes.withUnsafeMutableBytes { buffer -> ExtractError? in
        do throws(ExtractError) { try body(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]), clean) } catch {
          return error
        }
        return nil
      }
      if let parsed { throw parsed }
      channel.recycle(bytes)
      return true
    case .end(let progress, let sha256):
      self.progress = progress
      inputSHA256 = sha256
      exhausted = true
      return false
    case .failed(let error):
      exhausted = true
      throw error
    }
  }

  func damage() -> ExtractError? {
    guard !stopped else { return nil }
    stop(.damage)
    return channel.damage
  }

  /// Every way out of a parse stops the thread and waits for it.
  deinit { if !stopped { stop(.close) } }

  private func stop(_ word: LastWord) {
    stopped = true
    channel.stop(word)
    channel.finished.wait()
  }

  enum Message: Sendable {
    case chunk([UInt8], count: Int, progress: ReadProgress, scannedClean: Bool)
    case end(ReadProgress, sha256: String?)
    case failed(ExtractError)
  }

  /// What the reading thread does once it stops: close the input, or first read the rest of a zip
  /// member for the damage it shows.
  enum LastWord: Sendable { case close, damage }

  private final class Channel: Sendable {
    private let messages = HandOffQueue<Message>(capacity: ReadAhead.depth)
    private let pool = Mutex<[[UInt8]]>([])
    private let openResult = HandOffQueue<Result<InputInfo, ExtractError>>(capacity: 1)
    private let word = HandOffQueue<LastWord>(capacity: 1)
    private let stopping = Atomic<Bool>(false)
    private let found = Mutex<ExtractError?>(nil)
    let finished = DispatchSemaphore(value: 0)

    func opened(_ result: Result<InputInfo, ExtractError>) { openResult.put(result) }

    func waitUntilOpened() -> Result<InputInfo, ExtractError> { openResult.take() }

    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Waits for room, unless the parse has stopped meanwhile; false then.
    func post(_ message: Message) -> Bool { messages.put(message, unless: { isStopping }) }

    func next() -> Message { messages.take() }

    func spare() -> [UInt8]? { pool.withLock { $0.popLast() } }

    func recycle(_ buffer: [UInt8]) { pool.withLock { $0.append(buffer) } }

    func stop(_ last: LastWord) {
      stopping.store(true, ordering: .releasing)
      word.put(last)
    }

    /// Waits for the parse's last word (it always has one: `ReadAhead` stops the thread).
    func lastWord() -> LastWord { word.take() }

    func damageFound(_ damage: ExtractError?) { found.withLock { $0 = damage } }

    var damage: ExtractError? { found.withLock { $0 } }
  }
}
