/// Which points of a route are kept, and in which order (Pipelines/docs/workouts.md, "Routes"): one
/// filter per stretch (a GPX file, or a workout's inline `Location`s), fed the points in file
/// order. A dropped point is left out of everything — `route_points`, the route totals, the
/// outline and the splits — so no point can put a route where a person cannot have been, or make
/// it longer than a person can move.
///
/// A point is dropped when
/// - it has no latitude or longitude, or one outside −90…90 / −180…180;
/// - its elevation lies outside −500…9,000 m: the lowest dry land (the Dead Sea shore, −430 m)
///   and the highest summit (8,849 m), with room for GPS error;
/// - it has no time: without one it can neither be placed in its workout nor checked for speed;
/// - its time lies more than a minute outside its workout (the real routes end up to 9 s after
///   theirs);
/// - it is out of time order by more than `reorderWindow` points. Apple writes a route in time
///   order (none of the 35 real files goes back once; equal times do occur), so the points pass
///   through a buffer of 64 that puts a point back in its place: a point dated too late sinks to
///   where its time belongs, one dated earlier than a point already passed on is dropped;
/// - it is a jump: farther from the last kept point of its segment than 100 m/s allows. A gap
///   counts at least 1 s (times are whole seconds) and at most 60 s (after a longer gap the fix was
///   lost and the straight line says nothing about speed), so no step is longer than 6 km.
///   When four points in a row have been dropped as jumps, the fifth jump starts a new segment
///   (no distance measured to it): the position really moved, or the last kept point was the glitch.
struct RoutePointFilter {
  /// Why a point was dropped; `rawValue` is the key in `run.json`.
  enum Reason: String, CaseIterable, Sendable {
    case noPosition, latitudeOutOfRange, longitudeOutOfRange, elevationOutOfRange, noTime, outsideWorkout
    case timeGoesBack, jump

    /// The reason as a route problem says it.
    var text: String {
      switch self {
      case .noPosition: return "no latitude or longitude"
      case .latitudeOutOfRange: return "latitude outside -90…90"
      case .longitudeOutOfRange: return "longitude outside -180…180"
      case .elevationOutOfRange: return "elevation outside -500…9000 m"
      case .noTime: return "no time"
      case .outsideWorkout: return "time more than 60 s outside the workout"
      case .timeGoesBack: return "time more than 64 points out of order"
      case .jump: return "a jump faster than 100 m/s"
      }
    }
  }

  /// A point the filter has decided on: kept (`reason` nil) or dropped, with where it was read.
  struct Decided {
    var point: RoutePoint
    var place: Int
    var reason: Reason?
  }

  static let latitudes = -90.0...90.0
  static let longitudes = -180.0...180.0
  static let elevations = -500.0...9_000.0
  /// m/s: faster than any person moves under their own power or by gravity on a workout (speed
  /// skiing's record is 70.8 m/s, a bicycle's behind a pace car 82.2 m/s, a downhill bike on snow
  /// 63.3 m/s). Also the ceiling for the distance samples splits are cut from.
  static let fastestSpeed = 100.0
  /// Seconds a step counts at least (whole-second times) and at most (a lost fix).
  static let shortestGap = 1.0
  static let longestGap = 60.0
  /// Seconds a point may lie before its workout's start or after its end.
  static let workoutMargin = 60.0
  /// Jumps in a row after which the position is taken to have moved.
  static let jumpsBeforeRestart = 5
  /// Points held to put the ones out of time order back in place.
  static let reorderWindow = 64

  /// The times a point may have: its workout's, widened by `workoutMargin`; nil for a file no
  /// workout names.
  private let window: ClosedRange<Double>?
  /// Points waiting, sorted by time (equal times in file order) from `head` on.
  private var held: [Decided] = []
  private var head = 0
  /// The time of the last point passed on.
  private var lastTime: Double?
  /// The last kept point of the current segment (nil after a segment break).
  private var lastPosition: (latitude: Double, longitude: Double, time: Double)?
  private var jumps = 0

  init(workoutStart: Double?, workoutEnd: Double?) {
    if let workoutStart, let workoutEnd, workoutStart <= workoutEnd {
      window = (workoutStart - Self.workoutMargin)...(workoutEnd + Self.workoutMargin)
    } else {
      window = nil
    }
  }

  /// Whether a step of `meters` in `seconds` is faster than a person moves.
  static func isJump(meters: Double, seconds: Double) -> Bool {
    meters > fastestSpeed * min(max(seconds, shortestGap), longestGap)
  }

  /// Takes the next point of the file, read at `place` (its line, or its number among the inline
  /// `Location`s). Returns why it is dropped when that shows from the point alone; otherwise it
  /// waits, to come out of `next` in time order.
  mutating func add(_ point: RoutePoint, at place: Int) -> Reason? {
    guard let latitude = point.latitude, let longitude = point.longitude else { return .noPosition }
    guard Self.latitudes.contains(latitude) else { return .latitudeOutOfRange }
    guard Self.longitudes.contains(longitude) else { return .longitudeOutOfRange }
    if let elevation = point.elevation, !Self.elevations.contains(elevation) { return .elevationOutOfRange }
    guard let time = point.time, time.isFinite else { return .noTime }
    if let window, !window.contains(time) { return .outsideWorkout }
    // In time order (every real file) this appends; otherwise the point moves back to its place.
    var index = held.count
    while index > head, held[index - 1].point.time! > time { index -= 1 }
    held.insert(Decided(point: point, place: place), at: index)
    return nil
  }

  /// The next point decided on, in time order: once more than `reorderWindow` wait, or any that
  /// wait at the end of the file (`flushing`). A kept point that restarts after jumps gets
  /// `startsSegment`.
  mutating func next(flushing: Bool) -> Decided? {
    guard held.count - head > (flushing ? 0 : Self.reorderWindow) else {
      if head == held.count {
        held.removeAll(keepingCapacity: true)
        head = 0
      }
      return nil
    }
    var decided = held[head]
    head += 1
    if head >= 4 * Self.reorderWindow {
      held.removeFirst(head)
      head = 0
    }
    decided.reason = judge(&decided.point)
    return decided
  }

  /// Whether the point, next in time order, is dropped for its time or as a jump.
  private mutating func judge(_ point: inout RoutePoint) -> Reason? {
    let time = point.time!
    if point.startsSegment { lastPosition = nil }
    if let lastTime, time < lastTime { return .timeGoesBack }
    if let last = lastPosition,
      Self.isJump(
        meters: RouteAggregate.distance(last.latitude, last.longitude, point.latitude!, point.longitude!),
        seconds: time - last.time)
    {
      if time - last.time > Self.longestGap {
        // After more than a minute without a fix (a tunnel, a lost signal) the straight line says
        // nothing about speed: the track goes on as a new segment, the gap not counted as
        // distance, instead of dropping the real points after it as jumps.
        point.startsSegment = true
      } else {
        jumps += 1
        guard jumps >= Self.jumpsBeforeRestart else { return .jump }
        point.startsSegment = true
      }
    }
    jumps = 0
    lastTime = time
    lastPosition = (point.latitude!, point.longitude!, time)
    return nil
  }
}

/// The points a stretch dropped, by reason, with where each reason was first seen: one route
/// problem however many points (Pipelines/docs/workouts.md, "Routes").
struct DroppedRoutePoints {
  /// What a place is (`line` of a GPX file, `Location` of an inline route).
  let placeName: String
  private(set) var total = 0
  private(set) var counts = [Int](repeating: 0, count: RoutePointFilter.Reason.allCases.count)
  private var firstSeen = [Int?](repeating: nil, count: RoutePointFilter.Reason.allCases.count)

  init(placeName: String) {
    self.placeName = placeName
  }

  mutating func add(_ reason: RoutePointFilter.Reason, at place: Int) {
    let index = RoutePointFilter.Reason.allCases.firstIndex(of: reason)!
    total += 1
    counts[index] += 1
    if firstSeen[index] == nil { firstSeen[index] = place }
  }

  /// `dropped 50 of 100 points: a jump faster than 100 m/s ×50 (first at line 5)`; nil when none
  /// was. One line, without `;` (the separator of `route_problems`).
  func problem(pointsRead: Int) -> String? {
    guard total > 0 else { return nil }
    var parts: [String] = []
    for (index, reason) in RoutePointFilter.Reason.allCases.enumerated() where counts[index] > 0 {
      parts.append("\(reason.text) ×\(counts[index]) (first at \(placeName) \(firstSeen[index] ?? 0))")
    }
    return "dropped \(total) of \(pointsRead) points: " + parts.joined(separator: ", ")
  }
}
