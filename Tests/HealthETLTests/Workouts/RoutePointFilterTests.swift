import Foundation
import Testing

@testable import HealthETL

/// Which route points are kept, and in which order (Pipelines/docs/workouts.md, "Routes"), worked out by
/// hand.
@Suite struct RoutePointFilterTests {
  typealias Reason = RoutePointFilter.Reason

  /// Feeds `points` (lines 1, 2, …) to a filter for a workout of `[0, 600]` s, and returns what
  /// comes out, in the order decided: a point dropped for what it is at once, the others in time
  /// order.
  static func run(_ points: [RoutePoint], workout: ClosedRange<Double>? = 0...600) -> [(
    time: Double?, line: Int, reason: Reason?
  )] {
    var filter = RoutePointFilter(workoutStart: workout?.lowerBound, workoutEnd: workout?.upperBound)
    var out: [(time: Double?, line: Int, reason: Reason?)] = []
    for (index, point) in points.enumerated() {
      if let reason = filter.add(point, at: index + 1) { out.append((point.time, index + 1, reason)) }
      while let decided = filter.next(flushing: false) {
        out.append((decided.point.time, decided.place, decided.reason))
      }
    }
    while let decided = filter.next(flushing: true) { out.append((decided.point.time, decided.place, decided.reason)) }
    return out
  }

  static func point(_ time: Double?, _ latitude: Double? = 52.5, _ longitude: Double? = 13.4, elevation: Double? = nil)
    -> RoutePoint
  {
    RoutePoint(time: time, latitude: latitude, longitude: longitude, elevation: elevation)
  }

  /// Latitude 91, longitude 181, ±1e308 (finite numbers, so they parse), −90.0001, an elevation
  /// of 9000.5 m, a point without latitude and one without time: each dropped with its reason.
  /// Elevations of −500 m and 9000 m, the ends of the range, are kept.
  @Test func pointsOutsideTheRangesAreDroppedWithTheirReason() {
    let out = Self.run([
      Self.point(0), Self.point(1, 91), Self.point(2, 52.5, 181), Self.point(3, 1e308), Self.point(4, 52.5, -1e308),
      Self.point(5, -90.0001), Self.point(6, elevation: 9000.5), Self.point(7, nil), Self.point(nil),
      Self.point(9, elevation: -500), Self.point(10, elevation: 9000),
    ])
    #expect(out.filter { $0.reason != nil }.map(\.line) == [2, 3, 4, 5, 6, 7, 8, 9])
    #expect(
      out.filter { $0.reason != nil }.map(\.reason)
        == [
          .latitudeOutOfRange, .longitudeOutOfRange, .latitudeOutOfRange, .longitudeOutOfRange, .latitudeOutOfRange,
          .elevationOutOfRange, .noPosition, .noTime,
        ])
    #expect(out.filter { $0.reason == nil }.map(\.time) == [0, 9, 10])
  }

  /// A ride loses its fix for 10 minutes and comes back 6.6 km on (11 m/s). Capped at a minute,
  /// that step would be 110 m/s, a jump; after a gap of more than a minute it starts a new segment
  /// instead, and no point is dropped. 0.06° of longitude at 52.5° N is 4.06 km, 0.1° 6.77 km.
  @Test func aLongGapStartsASegmentInsteadOfDroppingWhatFollows() {
    var filter = RoutePointFilter(workoutStart: 0, workoutEnd: 1200)
    let points = [
      Self.point(0, 52.5, 13.4), Self.point(1, 52.5, 13.40001), Self.point(601, 52.5, 13.5),
      Self.point(602, 52.5, 13.50001), Self.point(603, 52.5, 13.50002),
    ]
    var decided: [RoutePointFilter.Decided] = []
    for (index, point) in points.enumerated() {
      #expect(filter.add(point, at: index + 1) == nil)
    }
    while let next = filter.next(flushing: true) { decided.append(next) }
    #expect(decided.map(\.reason) == [nil, nil, nil, nil, nil])
    #expect(decided.map(\.point.startsSegment) == [false, false, true, false, false])
    // Within a minute a step is judged by its speed: 4,060 m in 59 s is 69 m/s, 6,770 m is 115 m/s.
    #expect(!RoutePointFilter.isJump(meters: 4_060, seconds: 59))
    #expect(RoutePointFilter.isJump(meters: 6_770, seconds: 59))
  }

  /// The workout runs 0…600 s; a minute either side is its margin.
  @Test func pointsMoreThanAMinuteOutsideTheWorkoutAreDropped() {
    let out = Self.run([
      Self.point(-61), Self.point(-60), Self.point(660), Self.point(661), Self.point(253_402_300_799),
    ])
    #expect(
      out.sorted { $0.line < $1.line }.map(\.reason) == [.outsideWorkout, nil, nil, .outsideWorkout, .outsideWorkout])
    // A file no workout names has no window.
    #expect(Self.run([Self.point(-61), Self.point(253_402_300_799)], workout: nil).map(\.reason) == [nil, nil])
  }

  /// 100 m/s, a gap counting at least 1 s and at most 60 s.
  @Test func aJumpIsFasterThan100MetresASecond() {
    #expect(!RoutePointFilter.isJump(meters: 100, seconds: 1))
    #expect(RoutePointFilter.isJump(meters: 100.001, seconds: 1))
    #expect(!RoutePointFilter.isJump(meters: 100, seconds: 0))
    #expect(RoutePointFilter.isJump(meters: 201, seconds: 2))
    #expect(!RoutePointFilter.isJump(meters: 6000, seconds: 3600))
    #expect(RoutePointFilter.isJump(meters: 6000.001, seconds: 3600))
  }

  /// 100 points alternating between (0, 0) and (0, 180), one a second: each step is half the
  /// Earth's circumference, π × 6,371,008.8 m = 20,015,114 m in 1 s. Every point at (0, 180) is a
  /// jump from the (0, 0) before it; every (0, 0) is 0 m from the last kept point: 50 kept, 50
  /// dropped, never four jumps in a row.
  @Test func alternatingHalfWayRoundTheEarthKeepsHalf() {
    #expect(abs(RouteAggregate.distance(0, 0, 0, 180) - 20_015_114.442035925) < 1e-6)
    let out = Self.run((0..<100).map { Self.point(Double($0), 0, $0 % 2 == 0 ? 0 : 180) })
    #expect(out.count == 100)
    #expect(out.filter { $0.reason == nil }.map(\.line) == Array(stride(from: 1, through: 99, by: 2)))
    #expect(out.filter { $0.reason == .jump }.count == 50)
  }

  /// A first point 0.01° east of the rest (1,113 m at the equator, in 1 s): the four points after
  /// it are jumps from it; the fifth jump starts a new segment, and the sixth is 0 m from it.
  @Test func fiveJumpsInARowStartANewSegment() {
    var filter = RoutePointFilter(workoutStart: 0, workoutEnd: 600)
    #expect(filter.add(Self.point(0, 0, 0.01), at: 1) == nil)
    var decided: [RoutePointFilter.Decided] = []
    for second in 1...6 {
      #expect(filter.add(Self.point(Double(second), 0, 0), at: second + 1) == nil)
    }
    while let next = filter.next(flushing: true) { decided.append(next) }
    #expect(decided.map(\.reason) == [nil, .jump, .jump, .jump, .jump, nil, nil])
    #expect(decided.map(\.point.startsSegment) == [false, false, false, false, false, true, false])
  }

  /// Times 0…69 s in file order, with a point dated 30 s after the 3rd (it sinks 27 places), one
  /// dated 10 s after the 70th (59 places back: within the 64 held) and one dated 1 s after that
  /// (70 places back). The first two are put back in their place, the third is dropped.
  @Test func pointsOutOfOrderArePutBackWithinSixtyFourPlaces() {
    var points = (0..<70).map { Self.point(Double($0), 52.5, 13.4) }
    points.insert(Self.point(30, 52.5, 13.4), at: 3)
    points.append(Self.point(10, 52.5, 13.4))
    points.append(Self.point(1, 52.5, 13.4))
    let out = Self.run(points)
    #expect(out.count == 73)
    #expect(out.filter { $0.reason != nil }.map(\.line) == [73])
    #expect(out.filter { $0.reason != nil }.map(\.reason) == [.timeGoesBack])
    let kept = out.filter { $0.reason == nil }
    var expected: [Double?] = []
    for second in 0..<70 {
      expected += second == 10 || second == 30 ? [Double(second), Double(second)] : [Double(second)]
    }
    #expect(kept.map(\.time) == expected)
    // Equal times keep their file order: the 11th point (line 12) before the one of line 72.
    #expect(kept.filter { $0.time == 10 }.map(\.line) == [12, 72])
    #expect(kept.filter { $0.time == 30 }.map(\.line) == [4, 32])
  }

  @Test func oneProblemPerStretch() {
    var dropped = DroppedRoutePoints(placeName: "line")
    #expect(dropped.problem(pointsRead: 3) == nil)
    dropped.add(.jump, at: 9)
    dropped.add(.latitudeOutOfRange, at: 12)
    dropped.add(.jump, at: 4)
    #expect(
      dropped.problem(pointsRead: 100)
        == "dropped 3 of 100 points: latitude outside -90…90 ×1 (first at line 12), a jump faster than 100 m/s ×2 (first at line 9)"
    )
  }
}
