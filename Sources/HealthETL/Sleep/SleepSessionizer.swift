public import HealthModel

/// One sleep session (Pipelines/docs/sleep.md, "Sleep jobs", step 2): a run of sleep samples of every
/// source and value with no gap longer than the session gap between them.
public struct SleepSession: Sendable, Hashable {
  /// The earliest start of its samples.
  public var start: Instant
  /// The latest end of its samples.
  public var end: Instant
  /// Its samples: a range of the sorted array the sessions were cut from.
  public var samples: Range<Int>

  public init(start: Instant, end: Instant, samples: Range<Int>) {
    self.start = start
    self.end = end
    self.samples = samples
  }
}

/// Splits sleep samples into sessions and gives each session its night's date (Pipelines/README.md,
/// "Sleep jobs", steps 2–3).
public enum SleepSessionizer {
  /// Sorts `intervals` by start and cuts them into sessions, in start order.
  ///
  /// A sample that starts more than `gapSeconds` after the latest end seen so far starts a new
  /// session; exactly `gapSeconds` keeps it in the current one. Zero-length and in-bed samples
  /// take part like any other. Sessions never overlap: every sample of a later session starts
  /// after the end of every earlier one.
  public static func sessions(_ intervals: inout [SleepInterval], gapSeconds: Int64) -> [SleepSession] {
    // Only the start order matters for the rule; the rest of the key makes the order (and so the
    // piece cutting that walks it) independent of document order.
    intervals.sort { a, b in
      if a.start != b.start { return a.start < b.start }
      if a.end != b.end { return a.end < b.end }
      if a.group != b.group { return a.group < b.group }
      let ca = a.created?.seconds ?? .min
      let cb = b.created?.seconds ?? .min
      if ca != cb { return ca < cb }
      return a.stage.rawValue < b.stage.rawValue
    }
    var sessions: [SleepSession] = []
    guard let first = intervals.first else { return sessions }
    var current = SleepSession(start: first.start, end: first.end, samples: 0..<1)
    for index in intervals.indices.dropFirst() {
      let sample = intervals[index]
      if sample.start - current.end > gapSeconds {
        sessions.append(current)
        current = SleepSession(start: sample.start, end: sample.end, samples: index..<index + 1)
      } else {
        current.end = max(current.end, sample.end)
        current.samples = current.samples.lowerBound..<index + 1
      }
    }
    sessions.append(current)
    return sessions
  }

  /// The date a session ending at `end` belongs to ("Sleep jobs", step 3): the local date of its
  /// end in `rules`, or the next date when the end is at or after `dayBoundaryMinutes` local time.
  ///
  /// The boundary is compared with the wall clock, so it stays at 18:00 on 23- and 25-hour days.
  /// A boundary of 0 (00:00) or of a whole day or more means "no boundary": the end's own date.
  public static func nightDate(endingAt end: Instant, rules: ZoneRules, dayBoundaryMinutes: Int) -> CivilDate {
    let local = rules.localSeconds(at: end)
    let day = floorDiv(local, 86_400)
    let secondOfDay = local - day * 86_400
    let boundary = Int64(dayBoundaryMinutes) * 60
    let shifted = boundary > 0 && boundary < 86_400 && secondOfDay >= boundary
    return CivilDate(daysSinceEpoch: shifted ? day + 1 : day)
  }
}
