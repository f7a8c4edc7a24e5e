import Foundation
import Testing

@testable import HealthETL

/// The report's route outlines (Pipelines/report/DATA.md, "workouts"), worked out by hand.
@Suite struct RouteShapeTests {
  /// A peak 3 m off the line between the ends, and two shoulders 0.5 m off:
  ///
  ///     x: 0    1    2    3    4
  ///     y: 0   0.5   3   0.5   0
  ///
  /// The peak is 3 m from the chord (y = 0), so it is kept at 1 m. Each shoulder is then
  /// |2·(0 − 0.5) − (0 − 1)·3| / √13 = 2 / 3.606 = 0.555 m from its half's chord: dropped at 1 m,
  /// kept at 0.5 m.
  @Test func douglasPeuckerKeepsWhatIsFartherThanTheTolerance() {
    let x = [0.0, 1, 2, 3, 4]
    let y = [0.0, 0.5, 3, 0.5, 0]
    #expect(RouteShape.douglasPeucker(x: x, y: y, tolerance: 1) == [0, 2, 4])
    #expect(RouteShape.douglasPeucker(x: x, y: y, tolerance: 0.5) == [0, 1, 2, 3, 4])
    #expect(RouteShape.douglasPeucker(x: x, y: y, tolerance: 3) == [0, 4])
  }

  /// A loop whose ends coincide: distances are to the first point. (4, 0) is 4 m from it.
  @Test func aClosedLoopMeasuresFromItsStart() {
    #expect(RouteShape.douglasPeucker(x: [0, 2, 4, 2, 0], y: [0, 1, 0, -1, 0], tolerance: 1) == [0, 2, 4])
  }

  /// On the equator a degree is 111,320 m both ways, so 0.00001° is 1.1132 m. The middle point of
  /// three is 1.1132 m off the straight line between the others: kept at the first tolerance, 1 m.
  @Test func pointsAreSimplifiedOnLocalMetres() throws {
    var shape = RouteShape()
    shape.add(latitude: 0, longitude: 0)
    shape.add(latitude: 0.00001, longitude: 0.001)
    shape.add(latitude: 0, longitude: 0.002)
    #expect(try #require(shape.simplified()).count == 3)
    // A straight line keeps its ends only.
    var line = RouteShape()
    for k in 0..<1000 { line.add(latitude: 47 + Double(k) * 0.0001, longitude: 8) }
    #expect(
      line.simplified() == [
        RouteShape.Point(latitude: 47, longitude: 8), RouteShape.Point(latitude: 47 + 999 * 0.0001, longitude: 8),
      ])
  }

  /// A zigzag 10 m wide with 1,000 corners cannot be drawn with 300 points at 1 m; the tolerance
  /// doubles until at most 300 are left, ends included.
  @Test func atMost300PointsRemain() throws {
    var shape = RouteShape()
    for k in 0..<1000 { shape.add(latitude: Double(k % 2) * 0.0001, longitude: Double(k) * 0.0001) }
    let outline = try #require(shape.simplified())
    #expect(outline.count <= 300)
    #expect(outline.first == RouteShape.Point(latitude: 0, longitude: 0))
    #expect(outline.last == RouteShape.Point(latitude: 0.0001, longitude: 0.0999))
  }

  /// The kept points follow from one full pass: the same as Douglas–Peucker run afresh at each
  /// tolerance, here written the plain recursive way, on random walks (loops included).
  @Test func oneFullPassKeepsWhatEachToleranceWould() {
    func plain(_ x: [Double], _ y: [Double], _ a: Int, _ b: Int, _ tolerance: Double, _ kept: inout Set<Int>) {
      guard b - a > 1 else { return }
      let dx = x[b] - x[a]
      let dy = y[b] - y[a]
      let length = hypot(dx, dy)
      var farthest = -1.0
      var at = -1
      for i in (a + 1)..<b {
        let d = length > 0 ? abs(dx * (y[a] - y[i]) - (x[a] - x[i]) * dy) / length : hypot(x[i] - x[a], y[i] - y[a])
        if d > farthest { (farthest, at) = (d, i) }
      }
      guard farthest > tolerance else { return }
      kept.insert(at)
      plain(x, y, a, at, tolerance, &kept)
      plain(x, y, at, b, tolerance, &kept)
    }
    var generator = SystemRandomNumberGenerator()
    for walk in 0..<40 {
      let n = 2 + walk * 7
      var x = [0.0]
      var y = [0.0]
      for _ in 1..<n {
        x.append(x.last! + Double.random(in: -20...20, using: &generator))
        y.append(y.last! + Double.random(in: -20...20, using: &generator))
      }
      if walk % 3 == 0 {  // a loop: the ends coincide
        x[n - 1] = 0
        y[n - 1] = 0
      }
      // One pass with the smallest tolerance serves every larger one, as `simplified` uses it.
      let importance = RouteShape.importance(x: x, y: y, above: 0.5)
      for tolerance in [0.5, 1, 2, 4, 8, 16, 32, 64] {
        var kept: Set<Int> = [0, n - 1]
        plain(x, y, 0, n - 1, tolerance, &kept)
        #expect(importance.indices.filter { importance[$0] > tolerance } == kept.sorted())
        #expect(
          RouteShape.douglasPeucker(x: x, y: y, tolerance: tolerance) == kept.sorted(), "walk \(walk) at \(tolerance)")
      }
    }
  }

  @Test func fewerThanTwoPointsIsNoOutline() {
    var shape = RouteShape()
    #expect(shape.simplified() == nil)
    shape.add(latitude: 1, longitude: 2)
    shape.add(latitude: .nan, longitude: 2)
    #expect(shape.simplified() == nil)
    shape.add(latitude: 1, longitude: 3)
    #expect(shape.simplified()?.count == 2)
  }

  /// Past 65,536 points every other point held is dropped and one in two (then four) taken, so a
  /// route of any length is held in bounded memory; its last point is kept all the same.
  /// 200,001 points along a meridian, then one 1 km east: the stride doubles at 65,536 and at
  /// 131,072 points read, so the multiples of 4 are held, up to 200,000; the last point, number
  /// 200,001, is not one of them and is added back.
  @Test func aVeryLongRouteIsThinnedEvenlyAndKeepsItsLastPoint() throws {
    var shape = RouteShape()
    for k in 0...200_000 { shape.add(latitude: Double(k) * 0.000001, longitude: 0) }
    shape.add(latitude: 0.2, longitude: 0.01)
    #expect(shape.heldCount == 50_001)
    let outline = try #require(shape.simplified())
    #expect(
      outline == [
        RouteShape.Point(latitude: 0, longitude: 0),
        RouteShape.Point(latitude: Double(200_000) * 0.000001, longitude: 0),
        RouteShape.Point(latitude: 0.2, longitude: 0.01),
      ])
  }
}
