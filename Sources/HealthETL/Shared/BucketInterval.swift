public import HealthModel

/// The size of a statistics bucket, written `<n><unit>`: `1m`, `15m`, `1h`, `1d`, `1w`, `1mo`, `1y`
/// (Pipelines/docs/statistics.md, "Interval statistics").
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
