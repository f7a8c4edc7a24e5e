public import HealthModel

/// The measures of one session or one date, in whole seconds (Pipelines/docs/sleep.md, "Sleep jobs",
/// steps 5–7).
public struct SleepTally: Sendable, Hashable {
  public var core: Int64 = 0
  public var deep: Int64 = 0
  public var rem: Int64 = 0
  public var unspecified: Int64 = 0
  public var awake: Int64 = 0
  /// Length of the union of the in-bed samples; nil when there were none.
  public var inBed: Int64?
  /// Start of the first asleep piece; nil when nothing was asleep.
  public var sleepStart: Instant?
  /// End of the last asleep piece; nil when nothing was asleep.
  public var sleepEnd: Instant?
  public var sessions = 0
  /// Groups that won at least one piece, ascending, i.e. by priority.
  public var winningGroups: [Int32] = []
  /// The stages that won at least one piece, one bit per `SleepStage.rawValue`: what tells a
  /// real 0 from a measure nothing recorded (`recorded(_:)`).
  private var stagesWon: UInt8 = 0

  public init() {}

  /// The tally of one session from its pieces and in-bed seconds.
  public init(session pieces: [SleepPiece], inBed: Int64?) {
    sessions = 1
    self.inBed = inBed
    for piece in pieces { add(piece) }
  }

  /// Core + deep + REM + unspecified.
  public var asleep: Int64 { core + deep + rem + unspecified }

  /// A measure the tables write (Pipelines/docs/sleep.md, "Sleep jobs", step 7).
  public enum Measure: Sendable, CaseIterable {
    case asleep, core, deep, rem, unspecified, awake
  }

  /// `measure` as the tables write it: nil when the stretches that won say nothing about it, so
  /// that a 0 is a real zero. Core, deep and REM come together from a tracker that records
  /// stages, so any of them makes all three (and awake, which such a tracker also records)
  /// measured; awake is also measured by an awake stretch; asleep and unspecified by any stretch
  /// at all, an awake one included (a night awake throughout sleeps 0). A night of in-bed samples
  /// only, or of a tracker that writes plain "asleep", has no stage columns.
  public func recorded(_ measure: Measure) -> Int64? {
    let staged = won(.asleepCore) || won(.asleepDeep) || won(.asleepREM)
    switch measure {
    case .asleep: return stagesWon != 0 ? asleep : nil
    case .unspecified: return stagesWon != 0 ? unspecified : nil
    case .core: return staged ? core : nil
    case .deep: return staged ? deep : nil
    case .rem: return staged ? rem : nil
    case .awake: return staged || won(.awake) ? awake : nil
    }
  }

  private func won(_ stage: SleepStage) -> Bool { stagesWon & (1 << UInt8(stage.rawValue)) != 0 }

  /// Counts one piece.
  public mutating func add(_ piece: SleepPiece) {
    let length = piece.length
    switch piece.stage {
    case .asleepCore: core += length
    case .asleepDeep: deep += length
    case .asleepREM: rem += length
    case .asleepUnspecified: unspecified += length
    case .awake: awake += length
    case .inBed: return
    }
    stagesWon |= 1 << UInt8(piece.stage.rawValue)
    if piece.stage.isAsleep {
      sleepStart = sleepStart.map { min($0, piece.start) } ?? piece.start
      sleepEnd = sleepEnd.map { max($0, piece.end) } ?? piece.end
    }
    noteWinner(piece.group)
  }

  /// Adds another session's tally (a date sums its sessions).
  public mutating func merge(_ other: SleepTally) {
    core += other.core
    deep += other.deep
    rem += other.rem
    unspecified += other.unspecified
    awake += other.awake
    if let theirs = other.inBed { inBed = (inBed ?? 0) + theirs }
    if let start = other.sleepStart { sleepStart = sleepStart.map { min($0, start) } ?? start }
    if let end = other.sleepEnd { sleepEnd = sleepEnd.map { max($0, end) } ?? end }
    sessions += other.sessions
    stagesWon |= other.stagesWon
    for group in other.winningGroups { noteWinner(group) }
  }

  private mutating func noteWinner(_ group: Int32) {
    // A session has a handful of winning groups: a sorted array beats a set here.
    var index = winningGroups.endIndex
    while index > 0 && winningGroups[index - 1] > group { index -= 1 }
    if index > 0 && winningGroups[index - 1] == group { return }
    winningGroups.insert(group, at: index)
  }
}
