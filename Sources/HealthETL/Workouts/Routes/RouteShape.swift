import Foundation

/// A route's outline for the report (Pipelines/report/DATA.md, "workouts"): the points of one
/// route file in order, simplified with Douglas–Peucker on local metres until at most `limit`
/// remain.
///
/// Memory is bounded whatever the file: past `heldLimit` points, every other point held is
/// dropped and only every second (then fourth, …) point read is taken, so a route of more than
/// 65,536 points (18 hours at one a second) is simplified from an even thinning of itself. The
/// last point read is always kept.
struct RouteShape {
  struct Point: Equatable, Sendable {
    var latitude: Double
    var longitude: Double
  }

  /// Points drawn at most.
  static let limit = 300
  static let heldLimit = 65_536
  /// Metres per degree of latitude (and of longitude at the equator), as the reference uses.
  static let metersPerDegree = 111_320.0

  private var held: [Point] = []
  /// Take one point read in `stride`.
  private var stride = 1
  private var read = 0
  private var last: Point?

  /// Points held now (at most `heldLimit`).
  var heldCount: Int { held.count }

  mutating func add(latitude: Double, longitude: Double) {
    guard latitude.isFinite, longitude.isFinite else { return }
    let point = Point(latitude: latitude, longitude: longitude)
    last = point
    defer { read += 1 }
    guard read % stride == 0 else { return }
    if held.count == Self.heldLimit {
      held = held.indices.lazy.filter { $0 % 2 == 0 }.map { held[$0] }
      stride *= 2
      guard read % stride == 0 else { return }
    }
    held.append(point)
  }

  /// The simplified outline; nil for fewer than two points.
  func simplified(limit: Int = RouteShape.limit) -> [Point]? {
    var points = held
    if let last, read > 0, (read - 1) % stride != 0 { points.append(last) }
    guard points.count >= 2 else { return nil }
    guard points.count > 2 else { return points }
    // Local metres around the first point: good to well under a metre over a workout's extent.
    let origin = points[0]
    let scale = cos(origin.latitude * (.pi / 180)) * Self.metersPerDegree
    let x = points.map { ($0.longitude - origin.longitude) * scale }
    let y = points.map { ($0.latitude - origin.latitude) * Self.metersPerDegree }
    // Which points a tolerance keeps follows from one full pass (see `importance`); only the
    // doubling is repeated.
    var tolerance = 1.0
    let importance = Self.importance(x: x, y: y, above: tolerance)
    while true {
      let kept = importance.indices.filter { importance[$0] > tolerance }
      if kept.count <= limit { return kept.map { points[$0] } }
      tolerance *= 2
    }
  }

  /// Indices kept by Douglas–Peucker at `tolerance` metres, ascending.
  static func douglasPeucker(x: [Double], y: [Double], tolerance: Double) -> [Int] {
    let importance = importance(x: x, y: y, above: tolerance)
    return importance.indices.filter { importance[$0] > tolerance }
  }

  /// Per point, the largest tolerance at which Douglas–Peucker still keeps it (infinite for the
  /// ends). A stretch splits at its farthest point from the line through its ends (from its first
  /// point when they coincide), whatever the tolerance; so the pass that splits every stretch
  /// finds every split there is, and a point is kept at tolerance t exactly when it and every
  /// split above it are farther than t: its importance is the least of those distances.
  /// A stretch whose farthest point is within `floor` is not split further (its points stay at
  /// 0), since no tolerance at or above `floor` would split it: a straight stretch costs one scan,
  /// not one per point.
  static func importance(x: [Double], y: [Double], above floor: Double) -> [Double] {
    var importance = [Double](repeating: 0, count: x.count)
    guard !x.isEmpty else { return importance }
    importance[0] = .infinity
    importance[x.count - 1] = .infinity
    var stack: [(a: Int, b: Int, bound: Double)] = [(0, x.count - 1, .infinity)]
    while let (a, b, bound) = stack.popLast() {
      guard b - a > 1 else { continue }
      let dx = x[b] - x[a]
      let dy = y[b] - y[a]
      let length = hypot(dx, dy)
      var farthest = -1.0
      var at = a + 1
      for i in (a + 1)..<b {
        let distance =
          length > 0 ? abs(dx * (y[a] - y[i]) - (x[a] - x[i]) * dy) / length : hypot(x[i] - x[a], y[i] - y[a])
        if distance > farthest {
          farthest = distance
          at = i
        }
      }
      guard farthest > floor else { continue }
      let kept = min(bound, farthest)
      importance[at] = kept
      stack.append((a, at, kept))
      stack.append((at, b, kept))
    }
    return importance
  }
}
