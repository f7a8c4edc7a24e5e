/// The UTC offsets an export wrote on its dates, one vote per distinct (offset, local date as
/// written) pair, each with the first instant seen for it (Pipelines/docs/samples.md, "Time zone").
///
/// iOS 8–9 exports wrote every date with the offset of its own instant (`+0100` in winter,
/// `+0200` in summer): which zones of the locale's country give those offsets at those instants
/// says where the phone was. One vote per pair, not per date, so that a day of 5,000 heart-rate
/// samples counts as much as a day with one step record.
public struct WrittenOffsets: Sendable {
  /// Pairs kept: some 270 years of days with two offsets each. Past it, pairs are counted in
  /// `overflow` but not kept, so an export with a new offset on every record keeps its memory.
  public static let mostPairs = 200_000

  /// Key (`day × 4096 + offset minutes + 2048`) → the first instant written with it.
  private var firstInstants: [Int64: Int64] = [:]
  /// The key noted last: consecutive records nearly always repeat it.
  @usableFromInline var lastKey = Int64.min
  /// Pairs not kept because `mostPairs` were.
  public private(set) var overflow = 0

  public init() {}

  /// One date as written: the instant and the offset its text carried.
  @inlinable public mutating func note(_ instant: Instant, offsetSeconds: Int32) {
    let day = floorDiv(instant.seconds + Int64(offsetSeconds), 86_400)
    // Offsets are whole minutes within ±14:59 (the date parser's bounds), so 12 bits hold them.
    let key = day &* 4096 &+ Int64(offsetSeconds / 60 + 2048)
    if key != lastKey { add(key, instant) }
  }

  @usableFromInline mutating func add(_ key: Int64, _ instant: Instant) {
    lastKey = key
    guard firstInstants[key] == nil else { return }
    guard firstInstants.count < Self.mostPairs else { return overflow += 1 }
    firstInstants[key] = instant.seconds
  }

  /// Distinct (offset, date) pairs kept.
  public var count: Int { firstInstants.count }

  /// The votes: each pair's first instant and its offset, in time order.
  public var votes: [(instant: Instant, offsetSeconds: Int32)] {
    firstInstants.map { key, seconds in (Instant(seconds: seconds), Self.offset(ofKey: key)) }.sorted {
      $0.instant < $1.instant
    }
  }

  /// The distinct offsets written, ascending.
  public var distinctOffsets: [Int32] { Array(Set(firstInstants.keys.map(Self.offset(ofKey:)))).sorted() }

  private static func offset(ofKey key: Int64) -> Int32 { Int32(key - floorDiv(key, 4096) * 4096 - 2048) * 60 }
}
