import Foundation

/// Running totals of a workout's route, updated point by point as route files stream, so no
/// point is kept (Pipelines/docs/workouts.md, "Routes").
///
/// - distance: great-circle (haversine) distance between consecutive points of one track
///   segment, on a sphere of the Earth's mean radius; nothing is measured across a segment break,
///   between two route files, or to or from a point without coordinates;
/// - elevation gain and loss: the rises and falls between consecutive points of a segment that
///   both have an elevation, summed as they are (no threshold or smoothing: the Watch's
///   elevations are already barometer-fused, and on the real routes the plain sum comes within
///   a few percent of the workout's own `HKElevationAscended`);
/// - bounding box: the extreme latitudes and longitudes.
struct RouteAggregate: Equatable {
  var points = 0
  var distanceMeters = 0.0
  var elevationGainMeters = 0.0
  var elevationLossMeters = 0.0
  var minimumLatitude: Double?
  var maximumLatitude: Double?
  var minimumLongitude: Double?
  var maximumLongitude: Double?
  /// Whether any point had coordinates or an elevation (distance and gain are otherwise unknown).
  var hasCoordinates = false
  var hasElevation = false

  private var lastPosition: (latitude: Double, longitude: Double)?
  private var lastElevation: Double?

  static func == (a: RouteAggregate, b: RouteAggregate) -> Bool {
    a.points == b.points && a.distanceMeters == b.distanceMeters && a.elevationGainMeters == b.elevationGainMeters
      && a.elevationLossMeters == b.elevationLossMeters && a.minimumLatitude == b.minimumLatitude
      && a.maximumLatitude == b.maximumLatitude && a.minimumLongitude == b.minimumLongitude
      && a.maximumLongitude == b.maximumLongitude
  }

  /// IUGG mean Earth radius, in metres.
  static let earthRadius = 6_371_008.8

  /// Great-circle distance in metres between two positions in degrees (haversine formula).
  static func distance(_ latitude1: Double, _ longitude1: Double, _ latitude2: Double, _ longitude2: Double) -> Double {
    let radians = Double.pi / 180
    let phi1 = latitude1 * radians
    let phi2 = latitude2 * radians
    let sinHalfPhi = sin((phi2 - phi1) / 2)
    let sinHalfLambda = sin((longitude2 - longitude1) * radians / 2)
    let h = sinHalfPhi * sinHalfPhi + cos(phi1) * cos(phi2) * sinHalfLambda * sinHalfLambda
    return 2 * earthRadius * asin(min(1, h.squareRoot()))
  }

  /// Starts a new stretch: the next point is not joined to the last one (a new file or segment).
  mutating func breakSegment() {
    lastPosition = nil
    lastElevation = nil
  }

  /// Adds a point; returns the distance from the previous point of the same stretch (0 for the
  /// first, or when either lacks coordinates).
  @discardableResult
  mutating func add(_ point: RoutePoint) -> Double {
    points += 1
    if point.startsSegment { breakSegment() }
    var step = 0.0
    if let latitude = point.latitude, let longitude = point.longitude, latitude.isFinite, longitude.isFinite {
      hasCoordinates = true
      if let last = lastPosition {
        step = Self.distance(last.latitude, last.longitude, latitude, longitude)
        distanceMeters += step
      }
      lastPosition = (latitude, longitude)
      minimumLatitude = min(minimumLatitude ?? latitude, latitude)
      maximumLatitude = max(maximumLatitude ?? latitude, latitude)
      minimumLongitude = min(minimumLongitude ?? longitude, longitude)
      maximumLongitude = max(maximumLongitude ?? longitude, longitude)
    } else {
      lastPosition = nil
    }
    if let elevation = point.elevation, elevation.isFinite {
      hasElevation = true
      if let last = lastElevation {
        if elevation > last { elevationGainMeters += elevation - last } else { elevationLossMeters += last - elevation }
      }
      lastElevation = elevation
    } else {
      lastElevation = nil
    }
    return step
  }
}

/// The stretches of a workout during which it was paused: `pause` … `resume` and `motionPaused`
/// … `motionResumed` events, merged where they overlap; a pause never resumed lasts to the
/// workout's end (Pipelines/docs/workouts.md, "Splits").
struct PauseIntervals: Equatable {
  /// Sorted, disjoint `[start, end)` in epoch seconds.
  private(set) var intervals: [(start: Double, end: Double)] = []
  /// Per interval: the seconds paused before it (the sum of the lengths of those before), so
  /// that a stretch's paused seconds are found by two binary searches, not by a walk from the
  /// first pause (a workout of many pauses and many splits cost their product).
  private var pausedBefore: [Double] = []

  static func == (a: PauseIntervals, b: PauseIntervals) -> Bool {
    a.intervals.elementsEqual(b.intervals) { $0.start == $1.start && $0.end == $1.end }
  }

  init(_ intervals: [(start: Double, end: Double)] = []) {
    var merged: [(start: Double, end: Double)] = []
    for interval in intervals.sorted(by: { $0.start < $1.start }) where interval.end > interval.start {
      if let last = merged.last, interval.start <= last.end {
        merged[merged.count - 1].end = max(last.end, interval.end)
      } else {
        merged.append(interval)
      }
    }
    self.intervals = merged
    var total = 0.0
    pausedBefore = merged.map { interval in
      defer { total += interval.end - interval.start }
      return total
    }
  }

  /// Pauses from `(kind, time)` events in document order: `true` pauses, `false` resumes. Manual
  /// pauses and motion pauses are tracked apart, so a motion resume does not end a manual pause.
  init(manual: [(pauses: Bool, time: Double)], motion: [(pauses: Bool, time: Double)], workoutEnd: Double) {
    var all: [(start: Double, end: Double)] = []
    for events in [manual, motion] {
      var open: Double?
      for event in events.sorted(by: { $0.time < $1.time }) {
        if event.pauses {
          if open == nil { open = event.time }
        } else if let start = open {
          all.append((start, event.time))
          open = nil
        }
      }
      if let start = open { all.append((start, workoutEnd)) }
    }
    self.init(all)
  }

  /// Seconds of `[start, end)` spent paused.
  func pausedSeconds(from start: Double, to end: Double) -> Double {
    guard end > start else { return 0 }
    // The first pause ending after `start`, and the first starting at or after `end`.
    let first = firstIndex { $0.end > start }
    let past = firstIndex { $0.start >= end }
    guard first < past else { return 0 }
    if past - first == 1 { return min(end, intervals[first].end) - max(start, intervals[first].start) }
    let last = past - 1
    let head = intervals[first].end - max(start, intervals[first].start)
    let middle = pausedBefore[last] - pausedBefore[first + 1]
    let tail = min(end, intervals[last].end) - intervals[last].start
    return head + middle + tail
  }

  /// `time` less the seconds paused before it: a clock that stands still during pauses (one
  /// value at every instant of a pause), so the moving seconds between two instants are the
  /// difference of their readings.
  func movingClock(at time: Double) -> Double {
    let next = firstIndex { $0.end > time }
    if next < intervals.count, intervals[next].start <= time {
      return intervals[next].start - pausedBefore[next]
    }
    return next == 0 ? time : time - (pausedBefore[next - 1] + intervals[next - 1].end - intervals[next - 1].start)
  }

  /// The index of the first interval for which `isPast` holds (it holds for all after it), or
  /// the count.
  private func firstIndex(where isPast: ((start: Double, end: Double)) -> Bool) -> Int {
    var low = 0
    var high = intervals.count
    while low < high {
      let middle = (low + high) / 2
      if isPast(intervals[middle]) { high = middle } else { low = middle + 1 }
    }
    return low
  }
}

/// One split of a workout as the accumulator closes it.
struct SplitMeasure: Equatable {
  /// 1-based.
  var index: Int
  var start: Double
  var end: Double
  var distanceMeters: Double
  /// Seconds of `[start, end)` not paused.
  var movingSeconds: Double
  var elevationStart: Double?
  var elevationEnd: Double?
  var elevationGainMeters: Double?
  var elevationLossMeters: Double?
}

/// Cuts a stream of positions — (time, distance covered since the previous position, elevation),
/// in time order — into splits of `unit` metres (Pipelines/docs/workouts.md, "Splits").
///
/// A boundary is placed where the cumulative distance reaches the next multiple of `unit`,
/// interpolating time and elevation linearly between the two positions around it; the last
/// split is the remainder. Moving time is the split's time minus the pauses inside it. Only the
/// open split and the closed ones are held, and distance stops counting at `longestDistance`, so
/// no workout has more than 2,000 km (1,243 mi) of splits whatever its data says.
struct SplitAccumulator {
  let unit: Double
  let pauses: PauseIntervals
  private(set) var splits: [SplitMeasure] = []
  /// Whether the positions went past `longestDistance` (what lies beyond is left out).
  private(set) var reachedLongestDistance = false

  /// Metres after which a workout's splits stop: twice the 24-hour cycling record (1,026 km), far
  /// beyond any one workout a person records.
  static let longestDistance = 2_000_000.0

  private var started = false
  /// The last position: time, cumulative distance, elevation.
  private var time = 0.0
  private var covered = 0.0
  private var elevation: Double?
  /// The open split.
  private var splitStart = 0.0
  private var splitCovered = 0.0
  private var splitElevation: Double?
  private var gain = 0.0
  private var loss = 0.0
  private var elevationSeen = false

  init(unit: Double, pauses: PauseIntervals) {
    self.unit = unit
    self.pauses = pauses
  }

  /// Adds a position `step` metres after the previous one (0 for the first, or after a break).
  mutating func add(time newTime: Double, step: Double, elevation newElevation: Double?) {
    guard started else {
      started = true
      time = newTime
      splitStart = newTime
      elevation = newElevation
      splitElevation = newElevation
      return
    }
    guard !reachedLongestDistance else { return }
    // A position earlier than the last (overlapping files or samples) adds its distance at the
    // last time: time never runs backwards.
    var target = max(newTime, time)
    var step = step.isFinite ? max(0, step) : 0
    var newElevation = newElevation
    if covered + step > Self.longestDistance {
      // Cut where the step reaches the limit, as a boundary is.
      let fraction = (Self.longestDistance - covered) / step
      target = time + fraction * (target - time)
      if let from = elevation, let to = newElevation { newElevation = from + fraction * (to - from) }
      step = Self.longestDistance - covered
      reachedLongestDistance = true
    }
    let targetCovered = covered + step
    while step > 0, splitCovered + unit <= targetCovered {
      let boundary = splitCovered + unit
      let fraction = (boundary - covered) / (targetCovered - covered)
      let boundaryTime = time + fraction * (target - time)
      var boundaryElevation: Double?
      if let from = elevation, let to = newElevation { boundaryElevation = from + fraction * (to - from) }
      climb(to: boundaryElevation)
      close(end: boundaryTime, distance: unit, elevationEnd: boundaryElevation)
      // The next split opens at the boundary, where the segment continues.
      time = boundaryTime
      covered = boundary
      elevation = boundaryElevation
      splitStart = boundaryTime
      splitCovered = boundary
      splitElevation = boundaryElevation
    }
    climb(to: newElevation)
    time = target
    covered = targetCovered
    elevation = newElevation
  }

  private mutating func climb(to next: Double?) {
    guard let from = elevation, let to = next else { return }
    elevationSeen = true
    if to > from { gain += to - from } else { loss += from - to }
  }

  private mutating func close(end: Double, distance: Double, elevationEnd: Double?) {
    splits.append(
      SplitMeasure(
        index: splits.count + 1, start: splitStart, end: end, distanceMeters: distance,
        movingSeconds: max(0, end - splitStart - pauses.pausedSeconds(from: splitStart, to: end)),
        elevationStart: splitElevation, elevationEnd: elevationEnd,
        elevationGainMeters: elevationSeen ? gain : nil, elevationLossMeters: elevationSeen ? loss : nil))
    gain = 0
    loss = 0
    elevationSeen = false
  }

  /// Closes the last, partial split (when it covered any distance) and returns every split.
  mutating func finish() -> [SplitMeasure] {
    if started, covered - splitCovered > 0 {
      close(end: time, distance: covered - splitCovered, elevationEnd: elevation)
    }
    started = false
    return splits
  }
}
