public import HealthModel

/// The size of a statistics bucket, written `<n><unit>` (SPEC §8): `1m`, `15m`, `1h`, `1d`, `1w`,
/// `1mo`, `1y`.
///
/// Units: `s` seconds, `m` or `min` minutes, `h` hours, `d` days, `w` weeks, `mo` months, `y`
/// years; `n` is a whole number from 1 to 1,000,000. Seconds, minutes and hours are fixed
/// lengths of time; days, weeks, months and years are calendar steps on local dates, so a DST
/// day lasts 23 or 25 hours and a month 28 to 31 days.
public struct BucketInterval: Sendable, Hashable, CustomStringConvertible {
  /// What `n` counts.
  public enum Unit: String, Sendable, Hashable, CaseIterable {
    case second, minute, hour, day, week, month, year

    /// The suffix written after the count.
    public var suffix: String {
      switch self {
      case .second: return "s"
      case .minute: return "m"
      case .hour: return "h"
      case .day: return "d"
      case .week: return "w"
      case .month: return "mo"
      case .year: return "y"
      }
    }

    /// Whether buckets of this unit are a fixed number of seconds long.
    public var isFixedLength: Bool { self == .second || self == .minute || self == .hour }
  }

  /// The largest `n` accepted.
  public static let maximumCount = 1_000_000

  /// How many units one bucket spans (1…1,000,000).
  public let count: Int
  public let unit: Unit

  /// nil when `count` is outside 1…1,000,000.
  public init?(count: Int, unit: Unit) {
    guard (1...Self.maximumCount).contains(count) else { return nil }
    self.count = count
    self.unit = unit
  }

  /// Parses `<n><unit>`; nil when malformed.
  public init?(_ text: String) {
    let digits = text.prefix { $0.isASCII && $0.isNumber }
    let suffix = text.dropFirst(digits.count)
    guard !digits.isEmpty, digits.count <= 7, let number = Int(digits) else { return nil }
    let unit: Unit
    switch suffix {
    case "s": unit = .second
    case "m", "min": unit = .minute
    case "h": unit = .hour
    case "d": unit = .day
    case "w": unit = .week
    case "mo": unit = .month
    case "y": unit = .year
    default: return nil
    }
    self.init(count: number, unit: unit)
  }

  /// `15m`, `1mo`.
  public var description: String { String(count) + unit.suffix }

  /// Seconds per bucket for fixed-length units.
  var fixedSeconds: Int64? {
    switch unit {
    case .second: return Int64(count)
    case .minute: return Int64(count) * 60
    case .hour: return Int64(count) * 3600
    case .day, .week, .month, .year: return nil
    }
  }
}

/// A local wall-clock time in the run's zone that one bucket starts at; every other bucket is a
/// whole number of intervals away from it, in both directions (HKStatisticsCollectionQuery's
/// `anchorDate`). Written `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM`.
public struct BucketAnchor: Sendable, Hashable, CustomStringConvertible {
  /// The local date of the anchor.
  public let date: CivilDate
  /// Minutes after local midnight, 0…1439.
  public let minuteOfDay: Int

  /// nil when `hour` or `minute` is out of range.
  public init?(date: CivilDate, hour: Int = 0, minute: Int = 0) {
    guard (0...23).contains(hour), (0...59).contains(minute) else { return nil }
    self.date = date
    minuteOfDay = hour * 60 + minute
  }

  /// Parses `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM`; nil when malformed.
  public init?(_ text: String) {
    guard let date = CivilDate(text.prefix(10)) else { return nil }
    let rest = Array(text.utf8.dropFirst(10))
    if rest.isEmpty {
      self.init(date: date)
      return
    }
    guard rest.count == 6, rest[0] == UInt8(ascii: "T"), rest[3] == UInt8(ascii: ":"),
      let hour = Self.twoDigits(rest[1], rest[2]), let minute = Self.twoDigits(rest[4], rest[5])
    else { return nil }
    self.init(date: date, hour: hour, minute: minute)
  }

  private static func twoDigits(_ a: UInt8, _ b: UInt8) -> Int? {
    guard (48...57).contains(a), (48...57).contains(b) else { return nil }
    return Int(a - 48) * 10 + Int(b - 48)
  }

  /// The anchor a job gets when it names none: local midnight on Monday 2000-01-03 (so weeks
  /// start on Mondays and multi-day buckets count from a fixed date), or on 2000-01-01 for months
  /// and years (so they start on the 1st of January, and multi-month buckets count from it).
  public static func defaultAnchor(for interval: BucketInterval) -> BucketAnchor {
    switch interval.unit {
    case .month, .year: return BucketAnchor(date: CivilDate(year: 2000, month: 1, day: 1))!
    default: return BucketAnchor(date: CivilDate(year: 2000, month: 1, day: 3))!
    }
  }

  /// `2000-01-03T00:00`.
  public var description: String {
    let hour = minuteOfDay / 60
    let minute = minuteOfDay % 60
    let two = { (value: Int) in value < 10 ? "0" + String(value) : String(value) }
    return date.description + "T" + two(hour) + ":" + two(minute)
  }
}

/// The buckets of one job in the run's zone: bucket `k` is `[start(k), start(k + 1))`, bucket 0
/// starting at the anchor.
///
/// Fixed-length intervals (seconds, minutes, hours) are aligned to the anchor's instant and step
/// in exact seconds, like `Calendar` adding minute or hour components: on a fall-back night the
/// hour 01:00–02:00 occurs twice and gives two buckets, never one of two hours. Calendar intervals
/// (days, weeks, months, years) step on local dates at the anchor's wall-clock time, each
/// boundary being the first instant the wall clock reaches it (`ZoneRules.firstInstant`), so a
/// DST day has 23 or 25 hours and a boundary inside a spring-forward gap moves to the end of the
/// gap.
struct CalendarBuckets {
  private enum Step {
    case fixed(Int64)
    case days(Int64)
    case months(Int)
  }

  let rules: ZoneRules
  private let step: Step
  private let anchorDate: CivilDate
  private let anchorDays: Int64
  private let anchorSecondOfDay: Int64
  private let anchorInstant: Int64
  /// The last bucket looked up: consecutive samples nearly always fall into it.
  private var cachedIndex = Int64.min
  private var cachedStart: Int64 = 0
  private var cachedEnd: Int64 = 0

  init(interval: BucketInterval, anchor: BucketAnchor, rules: ZoneRules) {
    self.rules = rules
    anchorDate = anchor.date
    anchorDays = anchor.date.daysSinceEpoch
    anchorSecondOfDay = Int64(anchor.minuteOfDay) * 60
    anchorInstant = rules.firstInstant(atOrAfterLocal: anchorDays * 86_400 + anchorSecondOfDay).seconds
    switch interval.unit {
    case .second, .minute, .hour: step = .fixed(interval.fixedSeconds!)
    case .day: step = .days(Int64(interval.count))
    case .week: step = .days(Int64(interval.count) * 7)
    case .month: step = .months(interval.count)
    case .year: step = .months(interval.count * 12)
    }
  }

  /// The instant bucket `k` starts at.
  func start(_ k: Int64) -> Int64 {
    switch step {
    case .fixed(let length):
      return anchorInstant + k * length
    case .days(let days):
      return rules.firstInstant(atOrAfterLocal: (anchorDays + k * days) * 86_400 + anchorSecondOfDay).seconds
    case .months(let months):
      let date = anchorDate.adding(months: Int(k) * months)
      return rules.firstInstant(atOrAfterLocal: date.daysSinceEpoch * 86_400 + anchorSecondOfDay).seconds
    }
  }

  /// The instant bucket `k` ends at (exclusive).
  mutating func end(_ k: Int64) -> Int64 {
    if k == cachedIndex { return cachedEnd }
    return start(k + 1)
  }

  /// The bucket holding instant `t` (half-open: an instant on a boundary opens the next bucket).
  mutating func index(containing t: Int64) -> Int64 {
    if cachedIndex != .min, t >= cachedStart, t < cachedEnd { return cachedIndex }
    var k: Int64
    switch step {
    case .fixed(let length):
      k = floorDiv(t - anchorInstant, length)
      cache(k, start: anchorInstant + k * length, end: anchorInstant + (k + 1) * length)
      return k
    case .days(let days):
      let localDays = floorDiv(rules.localSeconds(at: Instant(seconds: t)) - anchorSecondOfDay, 86_400)
      k = floorDiv(localDays - anchorDays, days)
    case .months(let months):
      let local = rules.localSeconds(at: Instant(seconds: t)) - anchorSecondOfDay
      let date = CivilDate(daysSinceEpoch: floorDiv(local, 86_400))
      let elapsed = (date.year * 12 + date.month - 1) - (anchorDate.year * 12 + anchorDate.month - 1)
      k = floorDiv(Int64(elapsed), Int64(months))
    }
    // The guess from local dates can be one off (anchor day 31 in a short month, a boundary
    // moved by a DST gap); the boundaries themselves decide.
    var lower = start(k)
    while lower > t {
      k -= 1
      lower = start(k)
    }
    var upper = start(k + 1)
    while upper <= t {
      k += 1
      lower = upper
      upper = start(k + 1)
    }
    cache(k, start: lower, end: upper)
    return k
  }

  private mutating func cache(_ k: Int64, start: Int64, end: Int64) {
    cachedIndex = k
    cachedStart = start
    cachedEnd = end
  }
}
