import Foundation
import HealthExtract
import HealthModel
import RunExecution

/// A workout's route, summed up (Pipelines/docs/workouts.md, "Routes").
public struct RouteSummary: Sendable, Equatable {
  /// Points read for the workout: GPX track points and inline `Location`s.
  public var points: Int
  /// Great-circle distance between consecutive points, in m; nil without coordinates.
  public var distanceMeters: Double?
  public var elevationGainMeters: Double?
  public var elevationLossMeters: Double?
  public var minimumLatitude: Double?
  public var minimumLongitude: Double?
  public var maximumLatitude: Double?
  public var maximumLongitude: Double?
}

/// What reading the routes found: the `routes` object of `run.json`.
public struct RouteReport: Sendable, Equatable {
  /// GPX files read (whole or in part).
  public var files = 0
  /// Route points written: GPX track points and inline `Location`s.
  public var points = 0
  /// Of those, inline `Location`s.
  public var inlinePoints = 0
  /// Route files no workout names, in the order read; their points have an empty `workout_id`.
  public var unreferenced: [String] = []
  /// Files workouts name that the export does not hold.
  public var missing = 0
  /// Files that could not be read to their end (points before the problem are kept).
  public var broken = 0
  /// Every missing or broken file, and every stretch that dropped points, with what was wrong,
  /// in the order found.
  public var problems: [Problem] = []
  /// Points dropped (not written, not measured), in all and by `RoutePointFilter.Reason`.
  public var droppedPoints = 0
  public var dropped: [String: Int] = [:]

  public struct Problem: Sendable, Equatable {
    public var file: String
    public var problem: String
  }

  /// At most this many problems and unreferenced names are listed; the counts are complete.
  static let listLimit = 20

  public func jsonObject() -> [String: Any] {
    [
      "files": files, "points": points, "inlinePoints": inlinePoints, "unreferencedFiles": unreferenced.count,
      "unreferenced": Array(unreferenced.prefix(Self.listLimit)), "missingFiles": missing, "brokenFiles": broken,
      "droppedPoints": droppedPoints, "dropped": dropped,
      "problems": problems.prefix(Self.listLimit).map { ["file": $0.file, "problem": $0.problem] },
    ]
  }
}

/// One point of a route as kept for splits between the route pass and the split pass: time,
/// metres from the previous kept point of the same stretch, elevation (NaN when none). 24 bytes.
struct RouteStep: BitwiseCopyable {
  var time: Double
  var step: Double
  var elevation: Double
}

/// A route point as plain bits, as it waits in scratch: NaN where the point has no value (a GPX
/// or `Location` number is never NaN: `DecimalParser` refuses `nan`).
struct PackedRoutePoint: BitwiseCopyable {
  var time: Double
  var latitude: Double
  var longitude: Double
  var elevation: Double
  var speed: Double
  var course: Double
  var horizontalAccuracy: Double
  var verticalAccuracy: Double
  var startsSegment: Bool

  init(_ point: RoutePoint) {
    time = point.time ?? .nan
    latitude = point.latitude ?? .nan
    longitude = point.longitude ?? .nan
    elevation = point.elevation ?? .nan
    speed = point.speed ?? .nan
    course = point.course ?? .nan
    horizontalAccuracy = point.horizontalAccuracy ?? .nan
    verticalAccuracy = point.verticalAccuracy ?? .nan
    startsSegment = point.startsSegment
  }

  var point: RoutePoint {
    func value(_ x: Double) -> Double? { x.isNaN ? nil : x }
    return RoutePoint(
      time: value(time), latitude: value(latitude), longitude: value(longitude), elevation: value(elevation),
      speed: value(speed), course: value(course), horizontalAccuracy: value(horizontalAccuracy),
      verticalAccuracy: value(verticalAccuracy), startsSegment: startsSegment)
  }
}

/// An inline `Location` as it waits in scratch for the end of the parse (the run's zone, which
/// the rows need, is known only then): its workout's ordinal and the point.
struct SpilledLocation: BitwiseCopyable {
  var ordinal: Int64
  var packed: PackedRoutePoint

  init(_ point: RoutePoint, ordinal: Int) {
    self.ordinal = Int64(ordinal)
    packed = PackedRoutePoint(point)
  }

  var point: RoutePoint { packed.point }
}

/// Takes every route of a run once, after the main parse (Pipelines/docs/workouts.md, "Routes"):
/// the inline `Location`s kept in scratch during the parse, then the points of every file of the
/// export's `workout-routes/` folder as `RouteFileReadAhead` read them in one streaming pass
/// beside the parse (zip members in archive order, decompressed as they are read). Each point is
/// checked (`RoutePointFilter`); a kept one is written to the
/// `route_points` outputs as it is parsed, added to its workout's running totals, and — for
/// workouts that get splits — put in scratch as a `RouteStep`. Nothing per point stays in memory,
/// but for the outline of each workout's first route file when the report asks for it
/// (`RouteShape`, bounded).
final class WorkoutRouteReader {
  /// The files it reads: every file directly in `workout-routes/`.
  static let filesRead = ExportFileClaim.folder("workout-routes")

  /// A workout's stretch of route steps in scratch: one GPX file or its inline route.
  struct Chunk {
    var first: Int
    var count: Int
    var firstTime: Double
  }

  private let workouts: [WorkoutKey]
  /// Whether each workout gets route splits (its steps go to scratch).
  private let wantsSteps: [Bool]
  private var writers: [RowWriter<RoutePointRow>]
  private let steps: RecordScratch<RouteStep>
  /// Route file (`workout-routes/x.gpx`) → the first workout, in document order, that names it.
  private var owners: [String: Int] = [:]
  /// The files whose outline is kept: some workout's first route file, when the report wants them.
  private let shapeFiles: Set<String>
  /// Route file → its simplified outline (nil entries are never stored).
  private(set) var shapes: [String: [RouteShape.Point]] = [:]

  /// Per workout with route points (most have none), by index.
  private(set) var aggregates: [Int: RouteAggregate] = [:]
  private(set) var chunks: [[Chunk]]
  private(set) var problems: [[String]]
  private(set) var report = RouteReport()
  private var failure: OutputError?
  /// The stretch being read: a GPX file or one workout's inline `Location`s.
  private var stretch = Stretch(
    file: nil, owner: nil, filter: RoutePointFilter(workoutStart: nil, workoutEnd: nil),
    dropped: DroppedRoutePoints(placeName: ""))

  /// What is known of the stretch being read.
  private struct Stretch {
    /// The file (`workout-routes/x.gpx`); nil for inline `Location`s.
    var file: String?
    var owner: Int?
    var filter: RoutePointFilter
    var read = 0
    var dropped: DroppedRoutePoints
    /// The outline being drawn, when the report wants this file's.
    var shape: RouteShape?
    /// `owner`'s `WorkoutRow.id`.
    var ownerID: String?
  }

  init(
    workouts: [WorkoutKey], wantsSteps: [Bool], writers: [RowWriter<RoutePointRow>],
    shapeFiles: Set<String> = [], transaction: OutputTransaction
  ) {
    self.workouts = workouts
    self.shapeFiles = shapeFiles
    self.wantsSteps = wantsSteps
    self.writers = writers
    steps = RecordScratch(transaction: transaction, name: "route-steps")
    chunks = Array(repeating: [], count: workouts.count)
    problems = Array(repeating: [], count: workouts.count)
    for (index, workout) in workouts.enumerated() {
      for file in workout.routeFiles {
        guard let path = file.map(Self.relativePath), owners[path] == nil else { continue }
        owners[path] = index
      }
    }
  }

  /// `/workout-routes/x.gpx` (a `FileReference` path) → `workout-routes/x.gpx`.
  static func relativePath(_ reference: String) -> String {
    String(reference.drop { $0 == "/" })
  }

  /// The first file `workout` names (the first of its `route` column), relative; nil for none.
  static func firstFile(of workout: WorkoutKey) -> String? {
    workout.routeFiles.lazy.compactMap { $0.map(relativePath) }.first { !$0.isEmpty }
  }

  /// The route steps of the workouts that get splits, for `SplitAssembler`.
  var stepScratch: RecordScratch<RouteStep> { steps }

  /// Writes the inline `Location`s of the kept workouts; those of a workout's copy go with it.
  func readInline(_ spill: RecordScratch<SpilledLocation>) throws(OutputError) {
    guard spill.count > 0 else { return }
    var byOrdinal: [Int64: Int] = [:]
    for (index, workout) in workouts.enumerated() { byOrdinal[Int64(workout.ordinal)] = index }
    var buffer: [SpilledLocation] = []
    var current: Int64 = -1
    var owner: Int?
    var next = 0
    while next < spill.count {
      let count = min(4096, spill.count - next)
      try spill.read(first: next, count: count, into: &buffer)
      next += count
      for location in buffer {
        if location.ordinal != current {
          if owner != nil { finishStretch() }
          current = location.ordinal
          owner = byOrdinal[current]
          if let owner { startStretch(nil, owner: owner) }
        }
        guard owner != nil else { continue }
        take(location.point, line: nil)
      }
    }
    if owner != nil { finishStretch() }
    if let failure { throw failure }
  }

  /// Takes every file of `workout-routes/` from `files`, which read and parsed them on a thread of
  /// their own (`RouteFileReadAhead`), in the files' order, and notes the files workouts name that
  /// are not there (in `companions`). Problems with route files are reported, never thrown; only
  /// failing to write is.
  func readFiles(_ files: RouteFileReadAhead, of companions: ExportInput.Companions) throws(OutputError) {
    var seen = Set<String>()
    var listingProblem: String?
    reading: while true {
      switch try files.next() {
      case .file(let path):
        seen.insert(path)
        let owner = owners[path]
        if owner == nil { report.unreferenced.append(path) }
        startStretch(path, owner: owner)
        if shapeFiles.contains(path) { stretch.shape = RouteShape() }
      case .points(let points):
        for lined in points { take(lined.point, line: lined.line) }
      case .fileEnd(let result):
        report.files += 1
        if let problem = result.problem {
          report.broken += 1
          addProblem(problem)
        }
        finishStretch()
      case .listingFailed(let error):
        if let machine = MartContext.machineFailure(error) { throw machine }
        listingProblem = error.description
        report.problems.append(.init(file: "workout-routes", problem: error.description))
      case .end:
        break reading
      }
    }
    if let failure { throw failure }
    var reason = "the export holds no such file"
    if case .unavailable(let why) = companions { reason = "not read: \(why)" }
    if let listingProblem { reason = "not reached: \(listingProblem)" }
    for (index, workout) in workouts.enumerated() {
      var named = Set<String>()
      for file in workout.routeFiles {
        guard let path = file.map(Self.relativePath), !path.isEmpty, named.insert(path).inserted,
          !seen.contains(path)
        else { continue }
        // A file named by two workouts is missing once.
        if owners[path] == index {
          report.missing += 1
          report.problems.append(.init(file: path, problem: "missing: \(reason)"))
        }
        problems[index].append("\(path): missing")
      }
    }
  }

  /// Closes the outputs.
  func close() throws(OutputError) -> [OutputSummary] {
    var summaries: [OutputSummary] = []
    for writer in writers { summaries.append(try writer.close()) }
    return summaries
  }

  /// A new file (nil: an inline route) of `owner`, when a workout has it: no distance joins it to
  /// the previous one, and its points are checked afresh.
  private func startStretch(_ file: String?, owner: Int?) {
    let workout = owner.map { workouts[$0] }
    stretch = Stretch(
      file: file, owner: owner,
      filter: RoutePointFilter(
        workoutStart: workout.map { Double($0.start.seconds) }, workoutEnd: workout.map { Double($0.end.seconds) }),
      dropped: DroppedRoutePoints(placeName: file == nil ? "Location" : "line"), ownerID: workout?.id)
    guard let owner else { return }
    aggregates[owner, default: RouteAggregate()].breakSegment()
    if wantsSteps[owner] { chunks[owner].append(Chunk(first: steps.count, count: 0, firstTime: .infinity)) }
  }

  /// Passes on the points the stretch still holds and reports those it dropped, as one problem.
  private func finishStretch() {
    while let decided = stretch.filter.next(flushing: true) { take(decided) }
    if let file = stretch.file, let outline = stretch.shape?.simplified() { shapes[file] = outline }
    report.droppedPoints += stretch.dropped.total
    for (index, reason) in RoutePointFilter.Reason.allCases.enumerated() where stretch.dropped.counts[index] > 0 {
      report.dropped[reason.rawValue, default: 0] += stretch.dropped.counts[index]
    }
    if let problem = stretch.dropped.problem(pointsRead: stretch.read) { addProblem(problem) }
  }

  /// A problem of the stretch being read, in `run.json` and on its workout's row.
  private func addProblem(_ problem: String) {
    let owner = stretch.owner
    let file = stretch.file ?? "inline route of workout \(stretch.ownerID ?? "")"
    report.problems.append(.init(file: file, problem: problem))
    if let owner { problems[owner].append("\(stretch.file ?? "inline route"): \(problem)") }
  }

  /// A point read (at `line` of a GPX file): checked, and passed on in time order.
  private func take(_ point: RoutePoint, line: Int?) {
    stretch.read += 1
    let place = line ?? stretch.read
    if let reason = stretch.filter.add(point, at: place) {
      stretch.dropped.add(reason, at: place)
      return
    }
    while let decided = stretch.filter.next(flushing: false) { take(decided) }
  }

  /// A point the filter decided on: counted when dropped; written and measured when kept.
  private func take(_ decided: RoutePointFilter.Decided) {
    guard failure == nil else { return }
    if let reason = decided.reason {
      stretch.dropped.add(reason, at: decided.place)
      return
    }
    let point = decided.point
    // Kept points have a position and a time.
    let latitude = point.latitude!
    let longitude = point.longitude!
    let time = point.time!
    report.points += 1
    if stretch.file == nil { report.inlinePoints += 1 }
    stretch.shape?.add(latitude: latitude, longitude: longitude)
    let owner = stretch.owner
    if !writers.isEmpty {
      let row = RoutePointRow(
        time: Instant(seconds: Int64(time.rounded(.down))), workoutID: stretch.ownerID, file: stretch.file,
        point: point)
      do throws(OutputError) {
        for index in writers.indices { try writers[index].append(row) }
      } catch {
        failure = error
      }
    }
    guard let owner else { return }
    let step = aggregates[owner, default: RouteAggregate()].add(point)
    guard wantsSteps[owner] else { return }
    steps.append(RouteStep(time: time, step: step, elevation: point.elevation ?? .nan))
    let last = chunks[owner].count - 1
    chunks[owner][last].count += 1
    chunks[owner][last].firstTime = min(chunks[owner][last].firstTime, time)
  }

  /// The summary of workout `index`'s route; nil when it has no points.
  func summary(_ index: Int) -> RouteSummary? {
    guard let aggregate = aggregates[index], aggregate.points > 0 else { return nil }
    return RouteSummary(
      points: aggregate.points, distanceMeters: aggregate.hasCoordinates ? aggregate.distanceMeters : nil,
      elevationGainMeters: aggregate.hasElevation ? aggregate.elevationGainMeters : nil,
      elevationLossMeters: aggregate.hasElevation ? aggregate.elevationLossMeters : nil,
      minimumLatitude: aggregate.minimumLatitude, minimumLongitude: aggregate.minimumLongitude,
      maximumLatitude: aggregate.maximumLatitude, maximumLongitude: aggregate.maximumLongitude)
  }
}
