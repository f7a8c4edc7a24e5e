/// `LocalTimeFormatter`'s text for instants in one zone, for a writer whose rows mostly follow
/// each other in time: the offset interval and the date of the last instant are kept, so an
/// instant in the same interval costs a comparison instead of a search of the zone's transitions,
/// and one on the same day copies its date instead of converting it. Writes the same bytes as
/// `LocalTimeFormatter` with `rules.offset(at:)` (a test compares them across transitions).
public struct LocalTimeText: Sendable {
  public let rules: ZoneRules
  /// The interval `[offsetFrom, offsetUntil)` of the last lookup and its offset; empty at first.
  private var offsetFrom = Int64.max
  private var offsetUntil = Int64.min
  private var offset: Int32 = 0
  /// The local day (days since 1970-01-01) of the last date written, and its `YYYY-MM-DD`.
  private var day = Int64.min
  private var dateText: [UInt8] = []

  public init(_ rules: ZoneRules) { self.rules = rules }

  /// Seconds east of UTC in force at `instant`: `rules.offset(at:)`.
  public mutating func offset(at instant: Instant) -> Int32 {
    let seconds = instant.seconds
    if seconds >= offsetFrom && seconds < offsetUntil { return offset }
    let index = rules.indexOfInterval(containing: seconds)
    offsetFrom = index == 0 ? .min : rules.transitions[index - 1]
    offsetUntil = index == rules.transitions.count ? .max : rules.transitions[index]
    offset = rules.offsets[index]
    return offset
  }

  /// `LocalTimeFormatter.appendISO8601` at the zone's offset.
  public mutating func appendISO8601(_ instant: Instant, to out: inout [UInt8]) {
    let offset = offset(at: instant)
    appendClock(local: instant.seconds + Int64(offset), separator: UInt8(ascii: "T"), seconds: true, to: &out)
    LocalTimeFormatter.appendOffset(offset, to: &out)
  }

  /// `LocalTimeFormatter.appendLocal` at the zone's offset.
  public mutating func appendLocal(_ instant: Instant, seconds: Bool = true, to out: inout [UInt8]) {
    let offset = offset(at: instant)
    appendClock(local: instant.seconds + Int64(offset), separator: UInt8(ascii: " "), seconds: seconds, to: &out)
  }

  /// The local date at `instant`, `YYYY-MM-DD`.
  public mutating func appendDate(_ instant: Instant, to out: inout [UInt8]) {
    appendDate(day: floorDiv(instant.seconds + Int64(offset(at: instant)), 86_400), to: &out)
  }

  private mutating func appendClock(local: Int64, separator: UInt8, seconds: Bool, to out: inout [UInt8]) {
    let days = floorDiv(local, 86_400)
    appendDate(day: days, to: &out)
    LocalTimeFormatter.appendClock(
      secondOfDay: Int(local - days * 86_400), separator: separator, seconds: seconds, to: &out)
  }

  private mutating func appendDate(day: Int64, to out: inout [UInt8]) {
    if day != self.day {
      self.day = day
      dateText.removeAll(keepingCapacity: true)
      LocalTimeFormatter.appendDate(CivilDate(daysSinceEpoch: day), to: &dateText)
    }
    out.append(contentsOf: dateText)
  }
}
