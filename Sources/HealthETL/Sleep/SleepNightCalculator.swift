public import HealthModel

/// One session with its date and measures.
public struct SleepSessionSummary: Sendable, Hashable {
  public var start: Instant
  public var end: Instant
  public var date: CivilDate
  public var tally: SleepTally

  public init(start: Instant, end: Instant, date: CivilDate, tally: SleepTally) {
    self.start = start
    self.end = end
    self.date = date
    self.tally = tally
  }
}

/// One date's measures, summed over its sessions.
public struct SleepNightSummary: Sendable, Hashable {
  public var date: CivilDate
  public var tally: SleepTally

  public init(date: CivilDate, tally: SleepTally) {
    self.date = date
    self.tally = tally
  }
}

/// Sleep per night (Pipelines/docs/sleep.md, "Sleep jobs") from ranked samples to sessions and nights,
/// with no I/O.
public enum SleepNightCalculator {
  /// What the sleep rules make of a run's sleep samples.
  public struct Result: Sendable, Hashable {
    /// In start order.
    public var sessions: [SleepSessionSummary]
    /// One per date that has a session, in date order.
    public var nights: [SleepNightSummary]
  }

  /// Sessions and nights of `intervals` (reordered in place by start).
  ///
  /// - Parameters:
  ///   - intervals: the distinct sleep samples, groups already numbered by priority.
  ///   - rules: the run's zone, for the dates.
  ///   - gapMinutes: the pipeline's `sleep.sessionGapMinutes`.
  ///   - dayBoundaryMinutes: the pipeline's `sleep.dayBoundary`, minutes after local midnight.
  public static func compute(
    _ intervals: inout [SleepInterval], rules: ZoneRules, gapMinutes: Int, dayBoundaryMinutes: Int
  ) -> Result {
    let sessions = SleepSessionizer.sessions(&intervals, gapSeconds: Int64(gapMinutes) * 60)
    var summaries: [SleepSessionSummary] = []
    summaries.reserveCapacity(sessions.count)
    var byDate: [CivilDate: SleepTally] = [:]
    for session in sessions {
      let samples = intervals[session.samples]
      let tally = SleepTally(
        session: SleepPieceResolver.pieces(of: samples), inBed: SleepPieceResolver.inBedSeconds(of: samples))
      let date = SleepSessionizer.nightDate(endingAt: session.end, rules: rules, dayBoundaryMinutes: dayBoundaryMinutes)
      summaries.append(SleepSessionSummary(start: session.start, end: session.end, date: date, tally: tally))
      byDate[date, default: SleepTally()].merge(tally)
    }
    // Dates usually come in session order, but not always (a zone that falls back across
    // midnight can give a later session an earlier date), so sort rather than assume.
    let nights = byDate.map { SleepNightSummary(date: $0.key, tally: $0.value) }.sorted { $0.date < $1.date }
    return Result(sessions: summaries, nights: nights)
  }
}
