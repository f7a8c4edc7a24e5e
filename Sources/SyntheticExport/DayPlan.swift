internal import HealthModel

/// A half-open stretch of time in epoch seconds.
struct Interval {
  var start: Int64
  var end: Int64

  func overlaps(_ other: Interval) -> Bool { start < other.end && other.start < end }

  func overlap(_ other: Interval) -> Int64 { max(0, min(end, other.end) - max(start, other.start)) }
}

/// One night in bed, from the evening of its day to the next morning.
struct Night {
  var inBed: Int64
  var asleep: Int64
  var wake: Int64
  var outOfBed: Int64
}

/// A walk outside any workout (commute, errands): both the iPhone and the Watch count it.
struct Bout {
  var start: Int64
  var end: Int64
  var cadence: Double
  var stride: Double
}

/// One length of a pool swim.
struct SwimLength {
  var start: Double
  var duration: Double
  var strokes: Int
  var style: UInt8
  var set: Int

  var end: Double { start + duration }
  var swolf: Double { duration + Double(strokes) }
}

/// A workout as planned for a day; everything written about it derives from this and the seed.
struct PlannedWorkout {
  var kind: WorkoutKind
  var start: Int64
  var end: Int64
  /// The one pause, if any (`pause.start == pause.end` when none).
  var pause: Interval
  /// Seconds per km on foot, or m/s for swims and rides.
  var pace: Double
  var cadence: Double
  var stride: Double
  /// Fraction of a second the moving time falls short of the whole seconds (real durations are
  /// never whole).
  var fraction: Double
  /// The lengths of a pool swim, in order.
  var lengths: [SwimLength]

  var hasPause: Bool { pause.end > pause.start }

  /// Moving time in seconds, without the pause.
  var movingSeconds: Double { Double(end - start - (pause.end - pause.start)) - fraction }

  /// The stretches during which Alex is moving.
  var movingIntervals: [Interval] {
    hasPause
      ? [Interval(start: start, end: pause.start), Interval(start: pause.end, end: end)]
      : [Interval(start: start, end: end)]
  }

  var interval: Interval { Interval(start: start, end: end) }
}

/// What a stretch of a day looks like to the Watch.
struct DaySegment {
  enum Kind {
    case asleep, idle, bout, workout, offWrist
  }

  var start: Int64
  var end: Int64
  var kind: Kind
}

/// One day of Alex's life: when the day starts and ends locally, when they got up and went to
/// bed, when they walked, worked out and took the Watch off. Recomputed from the seed whenever a
/// record type needs it, so nothing per day has to be kept.
struct DayPlan {
  let index: Int
  let date: CivilDate
  let midnight: Int64
  let nextMidnight: Int64
  let lastNight: Night
  let tonight: Night
  let workout: PlannedWorkout?
  let offWrist: Interval?
  let bouts: [Bout]

  /// Out of bed this morning.
  var wake: Int64 { lastNight.outOfBed }
  /// In bed tonight.
  var bed: Int64 { tonight.inBed }

  /// The day from midnight to midnight as the Watch sees it, in order, without gaps.
  var segments: [DaySegment] {
    var busy: [DaySegment] = []
    if let workout { busy.append(DaySegment(start: workout.start, end: workout.end, kind: .workout)) }
    if let offWrist { busy.append(DaySegment(start: offWrist.start, end: offWrist.end, kind: .offWrist)) }
    for bout in bouts {
      // Bouts never meet the workout, but the Watch misses the part of a walk it was not worn for.
      var pieces = [Interval(start: bout.start, end: bout.end)]
      if let offWrist, offWrist.overlaps(pieces[0]) {
        pieces = [
          Interval(start: bout.start, end: min(bout.end, offWrist.start)),
          Interval(start: max(bout.start, offWrist.end), end: bout.end),
        ]
      }
      for piece in pieces where piece.end > piece.start {
        busy.append(DaySegment(start: piece.start, end: piece.end, kind: .bout))
      }
    }
    busy.sort { $0.start < $1.start }
    var result: [DaySegment] = [DaySegment(start: midnight, end: wake, kind: .asleep)]
    var cursor = wake
    for segment in busy {
      if segment.start > cursor { result.append(DaySegment(start: cursor, end: segment.start, kind: .idle)) }
      result.append(segment)
      cursor = segment.end
    }
    if bed > cursor { result.append(DaySegment(start: cursor, end: bed, kind: .idle)) }
    result.append(DaySegment(start: max(cursor, bed), end: nextMidnight, kind: .asleep))
    return result
  }

  /// Whether the Watch is on the wrist at `instant`.
  func watchWorn(at instant: Int64) -> Bool {
    guard let offWrist else { return true }
    return instant < offWrist.start || instant >= offWrist.end
  }
}
