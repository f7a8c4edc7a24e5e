import Dispatch
import Foundation
import HealthExtract
import RunExecution
import Synchronization

/// The export's route files (`workout-routes/*.gpx`) read and parsed on a thread of their own, in
/// the order they are listed, from as soon as the export is open: the workouts' finish takes the
/// points afterwards, in the same order.
///
/// libxml2's parse of the GPX files and the numbers of their points were the biggest part of the
/// workouts' finish. Started when the export is opened (`WorkoutMart.exportOpened`), it runs on
/// the core time the export's parse leaves idle, so by the finish the points wait in a file
/// (Sources/README.md, "Where the time goes"). The thread never waits for its taker: parsed points
/// go to an unlinked spool file in the run's scratch folder, in chunks of `chunkPoints`, and only
/// a small entry per file and per chunk stays in memory, so memory does not follow the size of the
/// files, and nothing is left behind or synced at commit. The thread is one of the run's
/// dedicated ones.
final class RouteFileReadAhead {
  /// A route point and the line of the file where it starts.
  struct LinedPoint: Sendable {
    var point: RoutePoint
    var line: Int
  }

  /// A point as the spool keeps it, NaN where the point has no value (a GPX number or time is
  /// never NaN: `DecimalParser` refuses `nan`): 80 bytes, where a `LinedPoint` takes 136.
  private struct SpooledPoint: BitwiseCopyable {
    var time: Double
    var latitude: Double
    var longitude: Double
    var elevation: Double
    var speed: Double
    var course: Double
    var horizontalAccuracy: Double
    var verticalAccuracy: Double
    var line: Int
    var startsSegment: Bool

    init(_ point: RoutePoint, line: Int) {
      time = point.time ?? .nan
      latitude = point.latitude ?? .nan
      longitude = point.longitude ?? .nan
      elevation = point.elevation ?? .nan
      speed = point.speed ?? .nan
      course = point.course ?? .nan
      horizontalAccuracy = point.horizontalAccuracy ?? .nan
      verticalAccuracy = point.verticalAccuracy ?? .nan
      self.line = line
      startsSegment = point.startsSegment
    }

    var lined: LinedPoint {
      func value(_ x: Double) -> Double? { x.isNaN ? nil : x }
      return LinedPoint(
        point: RoutePoint(
          time: value(time), latitude: value(latitude), longitude: value(longitude), elevation: value(elevation),
          speed: value(speed), course: value(course), horizontalAccuracy: value(horizontalAccuracy),
          verticalAccuracy: value(verticalAccuracy), startsSegment: startsSegment),
        line: line)
    }
  }

  /// What the taker gets, in order.
  enum Event: Sendable {
    /// A file begins (its path relative to the export's folder).
    case file(String)
    /// The next points of the file begun last.
    case points([LinedPoint])
    /// How reading the file begun last ended.
    case fileEnd(GPXReadResult)
    /// The folder (or the zip's list of members) could not be read to its end.
    case listingFailed(ExtractError)
    /// Nothing follows.
    case end
  }

  /// Points a chunk (about 100 KB of the spool).
  static let chunkPoints = 1024

  /// What the thread has read, as it keeps it: points by where they are in the spool.
  private enum Entry: Sendable {
    case file(String)
    case points(offset: Int64, count: Int)
    case fileEnd(GPXReadResult)
    case listingFailed(ExtractError)
    /// Writing the spool failed with this `errno`; nothing follows but the end.
    case spoolFailed(Int32)
    case end
  }

  /// The entries not yet taken, and how the two threads meet.
  private final class Shared: Sendable {
    private let entries = Mutex(Entries())
    /// One signal per entry published.
    private let published = DispatchSemaphore(value: 0)
    private let stop = Atomic(false)
    /// Signalled once the thread is done with the spool.
    let ended = DispatchSemaphore(value: 0)

    struct Entries {
      var items: [Entry] = []
      var head = 0
    }

    func publish(_ entry: Entry) {
      entries.withLock { $0.items.append(entry) }
      published.signal()
    }

    /// The next entry, waiting for the thread to publish it.
    func take() -> Entry {
      published.wait()
      return entries.withLock { queue in
        let entry = queue.items[queue.head]
        queue.head += 1
        // What was taken goes once it is most of the array, so taking stays O(1) on average.
        if queue.head >= 1024, queue.head * 2 >= queue.items.count {
          queue.items.removeFirst(queue.head)
          queue.head = 0
        }
        return entry
      }
    }

    func setStopped() { stop.store(true, ordering: .releasing) }
    var isStopped: Bool { stop.load(ordering: .acquiring) }
  }

  private let shared = Shared()
  private let spool: Int32
  private let spoolPath: String
  private var finished = false

  /// Starts reading the files directly in `folder` of `companions` on a dedicated thread of
  /// `executor`, spooling their points into a file made (and at once unlinked) in `scratchFolder`.
  /// - Throws: `OutputError` when the spool file cannot be made; no thread is started then.
  static func start(
    _ companions: ExportInput.Companions, folder: String, scratchFolder: String, on executor: RunExecutor
  ) throws(OutputError) -> RouteFileReadAhead {
    let reader = try RouteFileReadAhead(spoolPath: scratchFolder + "/route-files")
    let shared = reader.shared
    let spool = reader.spool
    executor.startDedicated(name: "routes") {
      Self.read(companions, folder: folder, spool: spool, into: shared)
      shared.ended.signal()
    }
    return reader
  }

  private init(spoolPath: String) throws(OutputError) {
    self.spoolPath = spoolPath
    let descriptor = open(spoolPath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      let code = errno
      if ExtractError.isOutOfDescriptors(code) {
        throw .tooManyOpenFiles(path: spoolPath, limit: ExtractError.descriptorLimit(for: code))
      }
      throw .cannotCreate(path: spoolPath, reason: String(cString: strerror(code)), code: code)
    }
    // The points live as long as the descriptor: no file to remove, none for the commit's sync.
    unlink(spoolPath)
    spool = descriptor
  }

  /// The next event; `.end` once there are no more, and from then on.
  /// - Throws: `OutputError.system` when the spool could not be written or read.
  func next() throws(OutputError) -> Event {
    guard !finished else { return .end }
    switch shared.take() {
    case .file(let path): return .file(path)
    case .fileEnd(let result): return .fileEnd(result)
    case .listingFailed(let error): return .listingFailed(error)
    case .points(let offset, let count):
      var failed: Int32 = 0
      let spooled = [SpooledPoint](unsafeUninitializedCapacity: count) { storage, initialized in
        // Plain bits: the spool's bytes are the points.
        failed = ScratchFileIO.read(spool, into: UnsafeMutableRawBufferPointer(storage), at: offset)
        initialized = failed == 0 ? count : 0
      }
      if failed != 0 {
        stopAndWait()
        throw .system(path: spoolPath, code: failed)
      }
      return .points(spooled.map(\.lined))
    case .spoolFailed(let code):
      stopAndWait()
      throw .system(path: spoolPath, code: code)
    case .end:
      finished = true
      shared.ended.wait()
      close(spool)
      return .end
    }
  }

  /// A reader left before the end stops the thread, and waits for it.
  deinit {
    guard !finished else { return }
    stopAndWait()
  }

  /// Stops the thread, waits for it to be done with the spool, and closes it.
  private func stopAndWait() {
    guard !finished else { return }
    finished = true
    shared.setStopped()
    shared.ended.wait()
    close(spool)
  }

  private static func read(_ companions: ExportInput.Companions, folder: String, spool: Int32, into shared: Shared) {
    var chunk: [SpooledPoint] = []
    var offset: Int64 = 0
    var failed = false
    /// Writes the chunk to the spool and publishes it; false once writing failed.
    func passOn() -> Bool {
      guard !chunk.isEmpty else { return true }
      let code = chunk.withUnsafeBytes { ScratchFileIO.write(spool, $0, at: offset) }
      guard code == 0 else {
        failed = true
        shared.publish(.spoolFailed(code))
        return false
      }
      shared.publish(.points(offset: offset, count: chunk.count))
      offset += Int64(chunk.count * MemoryLayout<SpooledPoint>.stride)
      chunk.removeAll(keepingCapacity: true)
      return true
    }
    do throws(ExtractError) {
      try ExportInput.forEachFile(of: companions, in: folder) { stream in
        guard !failed, !shared.isStopped else { return }
        shared.publish(.file(stream.relativePath))
        chunk.reserveCapacity(chunkPoints)
        var going = true
        let result = GPXReader.read(stream) { point in
          guard going else { return }
          chunk.append(SpooledPoint(RoutePoint(gpx: point), line: point.line))
          if chunk.count == chunkPoints { going = !shared.isStopped && passOn() }
        }
        guard going, passOn() else { return }
        shared.publish(.fileEnd(result))
      }
    } catch {
      if !failed { shared.publish(.listingFailed(error)) }
    }
    // Always published, even once stopped or failed: the taker reads entries until this one.
    shared.publish(.end)
  }
}
