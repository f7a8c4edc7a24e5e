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
    appendText(
      local: instant.seconds + Int64(offset), separator: UInt8(ascii: "T"), seconds: true, offset: offset, to: &out)
  }

  /// `LocalTimeFormatter.appendLocal` at the zone's offset.
  public mutating func appendLocal(_ instant: Instant, seconds: Bool = true, to out: inout [UInt8]) {
    let offset = offset(at: instant)
    appendText(
      local: instant.seconds + Int64(offset), separator: UInt8(ascii: " "), seconds: seconds, offset: nil, to: &out)
  }

  /// The local date at `instant`, `YYYY-MM-DD`.
  public mutating func appendDate(_ instant: Instant, to out: inout [UInt8]) {
    appendDate(day: floorDiv(instant.seconds + Int64(offset(at: instant)), 86_400), to: &out)
  }

  /// The date, `separator`, `HH:MM[:SS]` and, when given, the offset (`+05:45`), gathered on the
  /// stack and appended at once: a row of heart rate per minute has three such texts, and
  /// appended a byte at a time (each append checking the array's room and uniqueness) they were
  /// a tenth of the database thread's instructions.
  private mutating func appendText(
    local: Int64, separator: UInt8, seconds: Bool, offset: Int32?, to out: inout [UInt8]
  ) {
    let days = floorDiv(local, 86_400)
    if days != day { setDay(days) }
    let secondOfDay = Int(local - days * 86_400)
    // The date (10 bytes for the years in use, at most 19 for an Int64 second), then at most 15:
    // the separator, the clock and the offset. A constant capacity keeps the buffer on the stack
    // without a check per call; a longer date, which no instant can have, goes the slow way.
    guard dateText.count <= 25 else {
      out.append(contentsOf: dateText)
      LocalTimeFormatter.appendClock(secondOfDay: secondOfDay, separator: separator, seconds: seconds, to: &out)
      if let offset { LocalTimeFormatter.appendOffset(offset, to: &out) }
      return
    }
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 40) { buffer in
      let date = dateText.withUnsafeBufferPointer { buffer.initialize(fromContentsOf: $0) }
      @inline(__always) func two(_ value: Int, at position: Int) {
        let tens = value / 10
        buffer[position] = UInt8(truncatingIfNeeded: 48 + tens % 10)
        buffer[position + 1] = UInt8(truncatingIfNeeded: 48 + value - tens * 10)
      }
      buffer[date] = separator
      two(secondOfDay / 3600, at: date + 1)
      buffer[date + 3] = UInt8(ascii: ":")
      two(secondOfDay / 60 % 60, at: date + 4)
      var end = date + 6
      if seconds {
        buffer[end] = UInt8(ascii: ":")
        two(secondOfDay % 60, at: end + 1)
        end += 3
      }
      if let offset {
        // As `LocalTimeFormatter.appendOffset`: seconds of an offset are dropped.
        let magnitude = Int(offset.magnitude)
        buffer[end] = offset < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+")
        two(magnitude / 3600, at: end + 1)
        buffer[end + 3] = UInt8(ascii: ":")
        two(magnitude / 60 % 60, at: end + 4)
        end += 6
      }
      out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[0..<end]))
    }
  }

  private mutating func appendDate(day: Int64, to out: inout [UInt8]) {
    if day != self.day { setDay(day) }
    out.append(contentsOf: dateText)
  }

  private mutating func setDay(_ day: Int64) {
    self.day = day
    dateText.removeAll(keepingCapacity: true)
    LocalTimeFormatter.appendDate(CivilDate(daysSinceEpoch: day), to: &dateText)
  }
}
