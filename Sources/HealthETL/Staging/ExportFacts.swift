public import HealthModel

/// What the export says about itself, collected while it streams.
public struct ExportFacts: Sendable {
  public var locale: String?
  public var exportDate: Instant?
  public var exportDateOffset: Int32?
  public var exportVersion: Int?
  /// The UTC offset written on the first valid record's `startDate`.
  public var firstRecordOffset: Int32?
  /// Earliest start and latest end over valid records and workouts.
  public var first: Instant?
  public var last: Instant?
  /// `HKTimeZone` values with their votes (one per distinct Record, Workout or Correlation), in
  /// order of first appearance.
  public var timeZoneVotes: [(name: String, votes: Int)] = []
  /// The offsets written on the dates of valid-dated Records and Workouts, one vote per distinct
  /// (offset, date) pair: what chooses the zone of an export without `HKTimeZone`.
  public var writtenOffsets = WrittenOffsets()

  public init() {}

  mutating func include(start: Instant, end: Instant) {
    if first.map({ start < $0 }) ?? true { first = start }
    if last.map({ end > $0 }) ?? true { last = end }
  }
}
