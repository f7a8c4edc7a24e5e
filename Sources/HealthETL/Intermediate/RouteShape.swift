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
    var tolerance = 1.0
    while true {
      let kept = Self.douglasPeucker(x: x, y: y, tolerance: tolerance)
      if kept.count <= limit { return kept.map { points[$0] } }
      tolerance *= 2
    }
  }

  /// Indices kept by Douglas–Peucker at `tolerance` metres, ascending; the distance is to the
  /// line through a stretch's ends (to its first point when they coincide).
  static func douglasPeucker(x: [Double], y: [Double], tolerance: Double) -> [Int] {
    var marked = [Bool](repeating: false, count: x.count)
    marked[0] = true
    marked[x.count - 1] = true
    var stack = [(0, x.count - 1)]
    while let (a, b) = stack.popLast() {
      let dx = x[b] - x[a]
      let dy = y[b] - y[a]
      let length = hypot(dx, dy)
      var farthest = -1.0
      var at = -1
      for i in (a + 1)..<max(a + 1, b) {
        let distance =
          length > 0
          ? abs(dx * (y[a] - y[i]) - (x[a] - x[i]) * dy) / length
          : hypot(x[i] - x[a], y[i] - y[a])
        if distance > farthest {
          farthest = distance
          at = i
        }
      }
      if at >= 0, farthest > tolerance {
        marked[at] = true
        stack.append((a, at))
        stack.append((at, b))
      }
    }
    return marked.indices.filter { marked[$0] }
  }
}
