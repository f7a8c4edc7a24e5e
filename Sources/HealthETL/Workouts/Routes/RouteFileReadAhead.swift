import Dispatch
import HealthExtract
import RunExecution
import Synchronization

/// The export's route files (`workout-routes/*.gpx`) read and parsed on a thread of their own, in
/// the order they are listed, while the workouts' finish takes the points of the files before.
///
/// libxml2's parse of the GPX files and the numbers of their points were the biggest part of the
/// workouts' finish, which runs on the main thread after the export's parse, when the other core
/// is mostly idle (Sources/README.md, "Where the time goes"). Only parsed values cross threads, in
/// chunks of `chunkPoints`, with at most `depth` chunks waiting, so memory does not follow the
/// size of a file. The thread is one of the run's dedicated ones; it starts after the export's
/// parse, whose two threads have ended by then.
final class RouteFileReadAhead {
  /// A route point and the line of the file where it starts.
  struct LinedPoint: Sendable {
    var point: RoutePoint
    var line: Int
  }

  /// What the reading thread hands over, in order.
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

  /// Points a chunk; chunks waiting at most: 8,192 points (about 1 MB) parsed ahead.
  static let chunkPoints = 1024
  static let depth = 8

  private let events = HandOffQueue<Event>(capacity: RouteFileReadAhead.depth)
  private let stopped = Stop()
  private let ended = DispatchSemaphore(value: 0)
  private var finished = false

  /// Starts reading the files directly in `folder` of `companions` on `executor`.
  init(_ companions: ExportInput.Companions, folder: String, executor: RunExecutor) {
    let events = events
    let stopped = stopped
    let ended = ended
    executor.startDedicated(name: "routes") {
      Self.read(companions, folder: folder, into: events, unless: stopped)
      ended.signal()
    }
  }

  /// The next event; `.end` once there are no more, and from then on.
  func next() -> Event {
    guard !finished else { return .end }
    let event = events.take()
    if case .end = event {
      finished = true
      ended.wait()
    }
    return event
  }

  /// A reader left before the end stops the thread, and waits for it.
  deinit {
    guard !finished else { return }
    stopped.set()
    // Take what is queued, so that a put waiting for room sees the stop.
    while true {
      if case .end = events.take() { break }
    }
    ended.wait()
  }

  private static func read(
    _ companions: ExportInput.Companions, folder: String, into events: HandOffQueue<Event>, unless stopped: Stop
  ) {
    func put(_ event: Event) -> Bool { events.put(event, unless: { stopped.isSet }) }
    var chunk: [LinedPoint] = []
    do throws(ExtractError) {
      try ExportInput.forEachFile(of: companions, in: folder) { stream in
        guard !stopped.isSet, put(.file(stream.relativePath)) else { return }
        chunk.reserveCapacity(chunkPoints)
        var going = true
        let result = GPXReader.read(stream) { point in
          guard going else { return }
          chunk.append(LinedPoint(point: RoutePoint(gpx: point), line: point.line))
          if chunk.count == chunkPoints {
            going = put(.points(chunk))
            chunk = []
            chunk.reserveCapacity(chunkPoints)
          }
        }
        guard going else { return }
        if !chunk.isEmpty, !put(.points(chunk)) { return }
        chunk = []
        _ = put(.fileEnd(result))
      }
    } catch {
      _ = put(.listingFailed(error))
    }
    // Always queued, even once stopped: the reader left early takes events until this one.
    events.put(.end)
  }

  /// Set once, read from both threads.
  private final class Stop: Sendable {
    private let value = Atomic(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
  }
}
