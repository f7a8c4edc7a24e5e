import HealthExtract
import RunExecution

/// The export's route files (`workout-routes/*.gpx`) read and parsed on a thread of their own
/// (`CompanionFileReadAhead`) from when the export is opened (`WorkoutMart.exportOpened`), and
/// taken by the workouts' finish in the order they are listed.
///
/// libxml2's parse of the GPX files and the numbers of their points were the biggest part of the
/// workouts' finish, which waited for them at its start; now that parse runs on the core time the
/// export's parse leaves idle, and by the finish the points wait in a spool file.
final class RouteFileReadAhead {
  /// A route point and the line of the file where it starts.
  struct LinedPoint: Sendable {
    var point: RoutePoint
    var line: Int
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

  /// Points a chunk (80 KB of the spool).
  static let chunkPoints = 1024

  /// A point as the spool keeps it, with its line: 80 bytes, where a `LinedPoint` takes 136.
  struct SpooledPoint: BitwiseCopyable {
    var packed: PackedRoutePoint
    var line: Int

    init(_ point: RoutePoint, line: Int) {
      packed = PackedRoutePoint(point)
      self.line = line
    }

    var lined: LinedPoint { LinedPoint(point: packed.point, line: line) }
  }

  private let files: CompanionFileReadAhead<SpooledPoint, GPXReadResult>

  private init(_ files: CompanionFileReadAhead<SpooledPoint, GPXReadResult>) { self.files = files }

  /// Starts reading the files directly in `folder` of `companions` on a dedicated thread of
  /// `executor`, their points spooled in `scratchFolder` and counted by `meter`.
  /// - Throws: `OutputError` when the spool file cannot be made; no thread is started then.
  static func start(
    _ companions: ExportInput.Companions, folder: String, scratchFolder: String, meter: OutputMeter?,
    waitingLimit: Int = CompanionFileReadAhead<SpooledPoint, GPXReadResult>.waitingLimit, on executor: RunExecutor
  ) throws(OutputError) -> RouteFileReadAhead {
    RouteFileReadAhead(
      try .start(
        .inFolder(folder), of: companions, chunkRecords: chunkPoints, scratchFolder: scratchFolder, meter: meter,
        name: "routes", waitingLimit: waitingLimit, noteBytes: { $0.problem?.utf8.count ?? 0 }, on: executor
      ) { stream, note, record in
        var going = true
        let result = GPXReader.read(stream) { point in
          if going { going = record(SpooledPoint(RoutePoint(gpx: point), line: point.line)) }
        }
        if going { note(result) }
      })
  }

  /// The next event; `.end` once there are no more, and from then on.
  /// - Throws: `OutputError` when the spool could not be written or read.
  func next() throws(OutputError) -> Event {
    switch try files.next() {
    case .file(let path): return .file(path)
    case .records(let points): return .points(points.map(\.lined))
    case .note(let result): return .fileEnd(result)
    case .listingFailed(let error): return .listingFailed(error)
    case .end: return .end
    }
  }
}
