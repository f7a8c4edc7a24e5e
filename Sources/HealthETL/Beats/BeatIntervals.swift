/// The beat-to-beat (RR) intervals of one HRV reading and their RMSSD and SDNN
/// (Pipelines/docs/beats.md, "Beat-to-beat heart rate"), fed one listed beat at a time, so a reading
/// of any length needs no memory.
///
/// Each listed beat stands for the interval that ends at it: its `bpm` is 60 000 ms divided by
/// that interval (in the real exports the gap to the previous listed beat agrees with the beat's
/// own bpm 11,942 times and with the previous beat's 2,547 times). The interval is the gap to the
/// previous listed beat when that gap agrees with the beat's bpm — within the 10 ms the times are
/// written to plus half a beat per minute — and 60 000 / bpm otherwise: for the first beat, after
/// beats the Watch left out, and when the times cannot be used.
struct BeatIntervals {
  /// One listed beat: its time on the timeline in epoch milliseconds, and its bpm; nil for what
  /// could not be read.
  struct Beat: Equatable {
    var milliseconds: Int64?
    var bpm: Double?
  }

  /// Where an interval's length came from.
  enum Source: String {
    /// The gap between the beat's time and the previous listed beat's.
    case times
    /// 60 000 / bpm.
    case bpm
  }

  struct Interval: Equatable {
    var milliseconds: Double
    var from: Source
  }

  /// The resolution of the listed times (hundredths of a second).
  static let timeResolution = 10.0

  /// Intervals counted (one per beat with a usable bpm that repeats no earlier entry).
  private(set) var count = 0
  /// Of those, the ones measured from the times.
  private(set) var fromTimes = 0
  /// Entries identical to the one before them (time and bpm): left out.
  private(set) var repeated = 0
  /// Pairs of back-to-back intervals, for RMSSD.
  private(set) var successivePairs = 0

  private var previous: Beat?
  private var previousInterval: Double?
  // Welford's running mean and sum of squared deviations, for SDNN.
  private var mean = 0.0
  private var squaredDeviations = 0.0
  private var squaredDifferences = 0.0

  /// The interval ending at `beat`, after the beats added before it; nil when it has none (no
  /// usable bpm, or a repeat of the previous entry).
  mutating func add(_ beat: Beat) -> Interval? {
    if let previous, previous == beat, beat.milliseconds != nil {
      repeated += 1
      return nil
    }
    defer { previous = beat }
    guard let bpm = beat.bpm else {
      previousInterval = nil
      return nil
    }
    let fromRate = 60_000 / bpm
    var interval = Interval(milliseconds: fromRate, from: .bpm)
    var backToBack = false
    if let time = beat.milliseconds, let earlier = previous?.milliseconds {
      let gap = Double(time - earlier)
      // Half a beat per minute, in ms: d(60 000 / bpm) / d(bpm) × 0.5.
      let tolerance = Self.timeResolution + 30_000 / (bpm * bpm)
      if abs(gap - fromRate) <= tolerance {
        interval = Interval(milliseconds: gap, from: .times)
        backToBack = true
      }
    }
    count += 1
    if interval.from == .times { fromTimes += 1 }
    let delta = interval.milliseconds - mean
    mean += delta / Double(count)
    squaredDeviations += delta * (interval.milliseconds - mean)
    if backToBack, let earlier = previousInterval {
      let difference = interval.milliseconds - earlier
      squaredDifferences += difference * difference
      successivePairs += 1
    }
    previousInterval = interval.milliseconds
    return interval
  }

  /// Standard deviation of the intervals (n − 1 in the denominator), ms; nil below two.
  var sdnn: Double? { count >= 2 ? (squaredDeviations / Double(count - 1)).squareRoot() : nil }

  /// Root mean square of the differences between back-to-back intervals, ms; nil without a pair.
  var rmssd: Double? { successivePairs >= 1 ? (squaredDifferences / Double(successivePairs)).squareRoot() : nil }
}
