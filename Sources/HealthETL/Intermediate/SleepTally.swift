public import HealthModel

/// The measures of one session or one date, in whole seconds (Pipelines/README.md, "Sleep jobs",
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

  public init() {}

  /// The tally of one session from its pieces and in-bed seconds.
  public init(session pieces: [SleepPiece], inBed: Int64?) {
    sessions = 1
    self.inBed = inBed
    for piece in pieces { add(piece) }
  }

  /// Core + deep + REM + unspecified.
  public var asleep: Int64 { core + deep + rem + unspecified }

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
