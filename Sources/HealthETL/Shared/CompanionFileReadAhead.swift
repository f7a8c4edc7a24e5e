import Dispatch
import Foundation
import HealthExtract
import RunExecution
import Synchronization

/// Files beside the export's XML (route GPX files, ECG CSV files) read and parsed on a dedicated
/// thread of the run from when the export is opened, on the core time the parse leaves idle, and
/// taken by a mart's finish after the parse, in the order they were listed.
///
/// The thread does not wait for its taker: what a file's parse makes goes either into memory, as a
/// small `Note` (a file's header, how it ended), or into an unlinked spool file in the run's
/// scratch folder, as fixed-size `Record`s (a point, a sample) in chunks of `chunkRecords`. So
/// memory follows the number of files and chunks, not their size, up to about 4 MB of entries
/// waiting (thousands of files), past which the thread waits for the finish; nothing is left
/// behind or synced at commit (Sources/README.md, "Where the time goes").
final class CompanionFileReadAhead<Record: BitwiseCopyable, Note: Sendable> {
  /// Which files are read.
  enum Files: Sendable {
    /// Every regular file directly in this folder beside the XML (`workout-routes`).
    case inFolder(String)
    /// Every regular file one folder below the XML whose relative path the test accepts (Apple
    /// localises the ECG folder's name).
    case inSubfolders(where: @Sendable (String) -> Bool)
  }

  /// How one file is parsed, on the reading thread: `note` keeps a value in memory, `record` puts
  /// one in the spool and says whether to go on (false once the taker left or the spool failed).
  typealias Parse = @Sendable (_ file: ExportFileStream, _ note: (Note) -> Void, _ record: (Record) -> Bool) -> Void

  /// What the taker gets, in order.
  enum Event {
    /// A file begins (its path relative to the export's folder).
    case file(String)
    case note(Note)
    /// The next records of the file begun last.
    case records([Record])
    /// The folder (or the zip's list of members) could not be read to its end.
    case listingFailed(ExtractError)
    /// Nothing follows.
    case end
  }

  /// What the thread has made, as it keeps it: records by where they are in the spool.
  private enum Entry: Sendable {
    case file(String)
    case note(Note)
    case records(offset: Int64, count: Int)
    case listingFailed(ExtractError)
    /// Writing the spool failed, or passed the run's output budget; nothing follows but the end.
    case failed(OutputError)
    case end
  }

  /// The entries not yet taken, and how the two threads meet. At most about `waitingLimit` bytes
  /// of entries wait (but one, however long): a folder of a million files, or one of very long
  /// names, makes the thread wait for its taker (the finish) rather than hold them all.
  private final class Shared: Sendable {
    private let entries = Mutex(Entries())
    /// One signal per entry published.
    private let published = DispatchSemaphore(value: 0)
    /// Signalled when the taker makes room for a thread that waits for it.
    private let room = DispatchSemaphore(value: 0)
    private let stop = Atomic(false)
    /// Signalled once the thread is done with the spool.
    let ended = DispatchSemaphore(value: 0)

    /// Bytes of entries that may wait.
    let waitingLimit: Int
    /// What a note holds in memory, as its reader says.
    let noteBytes: @Sendable (Note) -> Int

    init(waitingLimit: Int, noteBytes: @escaping @Sendable (Note) -> Int) {
      self.waitingLimit = waitingLimit
      self.noteBytes = noteBytes
    }

    struct Entries {
      var items: [(entry: Entry, bytes: Int)] = []
      var head = 0
      var waitingBytes = 0
      var publisherWaits = false
    }

    /// What an entry holds in memory, roughly: its path, its note's bytes, or a fixed part.
    func bytes(of entry: Entry) -> Int {
      if case .file(let path) = entry { return 64 + path.utf8.count }
      if case .note(let note) = entry { return 64 + noteBytes(note) }
      return 64
    }

    /// Publishes `entry`, waiting first while too much waits and something does.
    func publish(_ entry: Entry) {
      let bytes = bytes(of: entry)
      while true {
        let appended = entries.withLock { queue in
          let waiting = queue.head < queue.items.count
          guard !waiting || queue.waitingBytes + bytes <= waitingLimit else {
            queue.publisherWaits = true
            return false
          }
          queue.items.append((entry, bytes))
          queue.waitingBytes += bytes
          return true
        }
        if appended { break }
        room.wait()
      }
      published.signal()
    }

    /// The next entry, waiting for the thread to publish it.
    func take() -> Entry {
      published.wait()
      let (entry, wakePublisher) = entries.withLock { queue in
        let taken = queue.items[queue.head]
        queue.head += 1
        queue.waitingBytes -= taken.bytes
        // What was taken goes once it is most of the array, so taking stays O(1) on average.
        if queue.head >= 1024, queue.head * 2 >= queue.items.count {
          queue.items.removeFirst(queue.head)
          queue.head = 0
        }
        let wake = queue.publisherWaits
        queue.publisherWaits = false
        return (taken.entry, wake)
      }
      if wakePublisher { room.signal() }
      return entry
    }

    func setStopped() { stop.store(true, ordering: .releasing) }
    var isStopped: Bool { stop.load(ordering: .acquiring) }
  }

  /// Bytes of entries that may wait for the taker by default: thousands of files' entries.
  static var waitingLimit: Int { 4 << 20 }

  private let shared: Shared
  private let spool: Int32
  private let spoolPath: String
  private var finished = false

  /// Starts reading `files` of `companions` on a dedicated thread of `executor` named `name`,
  /// each parsed by `parse`, its records spooled into a file made (and at once unlinked) in
  /// `scratchFolder`. The spool counts against the run's output budget (`meter`), as the rows it
  /// becomes do: a zip member of a few KB can inflate to millions of points. `noteBytes` weighs
  /// a note's strings, for the bound on what waits (a resource's display can be megabytes).
  /// - Throws: `OutputError` when the spool file cannot be made; no thread is started then.
  static func start(
    _ files: Files, of companions: ExportInput.Companions, chunkRecords: Int, scratchFolder: String,
    meter: OutputMeter?, name: String, waitingLimit: Int = waitingLimit,
    noteBytes: @escaping @Sendable (Note) -> Int, on executor: RunExecutor, parse: @escaping Parse
  ) throws(OutputError) -> CompanionFileReadAhead {
    let reader = try CompanionFileReadAhead(
      spoolPath: scratchFolder + "/" + name, waitingLimit: waitingLimit, noteBytes: noteBytes)
    let shared = reader.shared
    let spool = (descriptor: reader.spool, path: reader.spoolPath)
    let chunkRecords = max(1, chunkRecords)
    executor.startDedicated(name: name) {
      Self.read(
        files, of: companions, chunkRecords: chunkRecords, spool: spool, meter: meter,
        into: shared, parse: parse)
      shared.ended.signal()
    }
    return reader
  }

  private init(spoolPath: String, waitingLimit: Int, noteBytes: @escaping @Sendable (Note) -> Int)
    throws(OutputError)
  {
    self.spoolPath = spoolPath
    shared = Shared(waitingLimit: waitingLimit, noteBytes: noteBytes)
    let descriptor = open(spoolPath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      let code = errno
      if ExtractError.isOutOfDescriptors(code) {
        throw .tooManyOpenFiles(path: spoolPath, limit: ExtractError.descriptorLimit(for: code))
      }
      throw .cannotCreate(path: spoolPath, reason: String(cString: strerror(code)), code: code)
    }
    // The records live as long as the descriptor: no file to remove, none for the commit's sync.
    unlink(spoolPath)
    spool = descriptor
  }

  /// The next event; `.end` once there are no more, and from then on.
  /// - Throws: `OutputError` when the spool could not be written or read.
  func next() throws(OutputError) -> Event {
    guard !finished else { return .end }
    switch shared.take() {
    case .file(let path): return .file(path)
    case .note(let note): return .note(note)
    case .listingFailed(let error): return .listingFailed(error)
    case .records(let offset, let count):
      var failed: Int32 = 0
      let records = [Record](unsafeUninitializedCapacity: count) { storage, initialized in
        // Plain bits: the spool's bytes are the records.
        failed = ScratchFileIO.read(spool, into: UnsafeMutableRawBufferPointer(storage), at: offset)
        initialized = failed == 0 ? count : 0
      }
      if failed != 0 {
        stopAndWait()
        throw .system(path: spoolPath, code: failed)
      }
      return .records(records)
    case .failed(let error):
      stopAndWait()
      throw error
    case .end:
      finished = true
      shared.ended.wait()
      close(spool)
      return .end
    }
  }

  /// A reader left before the end stops the thread, and waits for it.
  deinit { stopAndWait() }

  /// Stops the thread, waits for it to be done with the spool, and closes it. What it published
  /// meanwhile is taken, so that a thread waiting for room sees the stop.
  private func stopAndWait() {
    guard !finished else { return }
    finished = true
    shared.setStopped()
    while true {
      if case .end = shared.take() { break }
    }
    shared.ended.wait()
    close(spool)
  }

  private static func read(
    _ files: Files, of companions: ExportInput.Companions, chunkRecords: Int, spool: (descriptor: Int32, path: String),
    meter: OutputMeter?, into shared: Shared, parse: Parse
  ) {
    var chunk: [Record] = []
    var offset: Int64 = 0
    var failed = false
    /// Writes the chunk to the spool and publishes it; false once writing failed.
    func passOn() -> Bool {
      guard !failed else { return false }
      guard !chunk.isEmpty else { return true }
      do throws(OutputError) {
        // Counted before it is written, as every output is (Pipelines/docs/outputs.md).
        try meter?.add(chunk.count * MemoryLayout<Record>.stride, path: spool.path)
        let code = chunk.withUnsafeBytes { ScratchFileIO.write(spool.descriptor, $0, at: offset) }
        if code != 0 { throw .system(path: spool.path, code: code) }
      } catch {
        failed = true
        shared.publish(.failed(error))
        return false
      }
      shared.publish(.records(offset: offset, count: chunk.count))
      offset += Int64(chunk.count * MemoryLayout<Record>.stride)
      chunk.removeAll(keepingCapacity: true)
      return true
    }
    let readFile = { (stream: ExportFileStream) in
      guard !failed, !shared.isStopped else { return }
      shared.publish(.file(stream.relativePath))
      chunk.reserveCapacity(chunkRecords)
      parse(
        stream,
        { note in
          // The records before a note come before it.
          guard passOn() else { return }
          shared.publish(.note(note))
        },
        { record in
          guard !failed, !shared.isStopped else { return false }
          chunk.append(record)
          return chunk.count < chunkRecords || passOn()
        })
      if !shared.isStopped { _ = passOn() }
    }
    do throws(ExtractError) {
      switch files {
      case .inFolder(let folder): try ExportInput.forEachFile(of: companions, in: folder, readFile)
      case .inSubfolders(let include): try ExportInput.forEachFileInSubfolders(of: companions, where: include, readFile)
      }
    } catch {
      if !failed { shared.publish(.listingFailed(error)) }
    }
    // Always published, even once stopped or failed: the taker reads entries until this one.
    shared.publish(.end)
  }
}
