public import HealthModel

/// One `SleepAnalysis` sample reduced to what the night computation needs (Pipelines/README.md,
/// "Sleep jobs").
///
/// Instants are whole seconds (Apple Health writes no fractions), so every length derived from
/// these intervals is an exact `Int64` of seconds: there is no rounding anywhere in sleep.
public struct SleepInterval: Sendable, Hashable {
  public var start: Instant
  public var end: Instant
  /// The record's `creationDate`; nil when it had none (it then counts as the earliest).
  public var created: Instant?
  public var stage: SleepStage
  /// The position of the sample's group (Pipelines/docs/samples.md, "Source priority") in the run's
  /// ranking: 0 is the highest-ranked group. Two samples with the same `group` belong to the same
  /// group.
  public var group: Int32

  public init(start: Instant, end: Instant, created: Instant? = nil, stage: SleepStage, group: Int32) {
    self.start = start
    self.end = end
    self.created = created
    self.stage = stage
    self.group = group
  }

  /// Seconds from start to end.
  public var length: Int64 { end - start }

  /// Whether the sample can decide the stage of a piece (Pipelines/docs/sleep.md, "Sleep jobs", step 4):
  /// in-bed samples only say where the person lay, and a zero-length sample covers no time.
  public var canWinPiece: Bool { stage != .inBed && end > start }

  /// Whether `self` beats `other` for a piece both cover ("Sleep jobs", step 4): the higher-priority
  /// group (smaller `group`), then within one group the later `creationDate` (missing = earliest),
  /// then the higher raw value.
  public func beats(_ other: SleepInterval) -> Bool {
    if group != other.group { return group < other.group }
    let mine = created?.seconds ?? .min
    let theirs = other.created?.seconds ?? .min
    if mine != theirs { return mine > theirs }
    return stage.rawValue > other.stage.rawValue
  }
}
