/// An exact point in time, in whole seconds since 1970-01-01T00:00:00Z.
///
/// Apple Health writes every date with whole seconds, so an integer is exact and cheap to compare,
/// hash and subtract. Fractions only ever appear in durations, which are `Double` seconds.
public struct Instant: Hashable, Comparable, Sendable, CustomStringConvertible {
  public var seconds: Int64

  @inlinable public init(seconds: Int64) { self.seconds = seconds }

  @inlinable public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.seconds < rhs.seconds }

  @inlinable public static func + (lhs: Instant, rhs: Int64) -> Instant { Instant(seconds: lhs.seconds + rhs) }

  @inlinable public static func - (lhs: Instant, rhs: Instant) -> Int64 { lhs.seconds - rhs.seconds }

  public var description: String { LocalTimeFormatter.iso8601(self, offsetSeconds: 0) }
}
