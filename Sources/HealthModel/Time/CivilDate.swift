/// A proleptic Gregorian calendar date with no time zone, and the integer arithmetic that maps it
/// to and from a day count. Used instead of `Calendar` in every per-record path.
public struct CivilDate: Hashable, Comparable, Sendable, CustomStringConvertible {
  public var year: Int
  public var month: Int
  public var day: Int

  @inlinable public init(year: Int, month: Int, day: Int) {
    self.year = year
    self.month = month
    self.day = day
  }

  /// The date `days` days after 1970-01-01 (negative before it).
  public init(daysSinceEpoch days: Int64) {
    // Howard Hinnant's civil_from_days, valid for the whole Int64 day range we can meet.
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    self.year = Int(yoe + era * 400 + (m <= 2 ? 1 : 0))
    self.month = Int(m)
    self.day = Int(d)
  }

  /// Days since 1970-01-01 (Howard Hinnant's days_from_civil).
  @inlinable public var daysSinceEpoch: Int64 {
    let y = Int64(month <= 2 ? year - 1 : year)
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let mp = Int64(month > 2 ? month - 3 : month + 9)
    let doy = (153 * mp + 2) / 5 + Int64(day) - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146_097 + doe - 719_468
  }

  /// 0 = Monday … 6 = Sunday (ISO 8601 order).
  public var isoWeekdayIndex: Int {
    Int(((daysSinceEpoch % 7) + 7 + 3) % 7)
  }

  @inlinable public static func isLeapYear(_ year: Int) -> Bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
  }

  @inlinable public static func daysInMonth(year: Int, month: Int) -> Int {
    switch month {
    case 2: return isLeapYear(year) ? 29 : 28
    case 4, 6, 9, 11: return 30
    default: return 31
    }
  }

  public func adding(days: Int64) -> CivilDate { CivilDate(daysSinceEpoch: daysSinceEpoch + days) }

  public func adding(months: Int) -> CivilDate {
    let total = year * 12 + (month - 1) + months
    let y = total >= 0 ? total / 12 : (total - 11) / 12
    let m = total - y * 12 + 1
    return CivilDate(year: y, month: m, day: min(day, CivilDate.daysInMonth(year: y, month: m)))
  }

  public static func < (lhs: CivilDate, rhs: CivilDate) -> Bool {
    (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
  }

  /// `YYYY-MM-DD`.
  public var description: String {
    var bytes = [UInt8]()
    bytes.reserveCapacity(10)
    LocalTimeFormatter.appendDate(self, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Parses `YYYY-MM-DD`; nil when malformed or out of range.
  public init?(_ text: some StringProtocol) {
    let utf8 = Array(text.utf8)
    guard utf8.count == 10, utf8[4] == UInt8(ascii: "-"), utf8[7] == UInt8(ascii: "-") else { return nil }
    func number(_ range: Range<Int>) -> Int? {
      var value = 0
      for index in range {
        let digit = Int(utf8[index]) - 48
        guard (0...9).contains(digit) else { return nil }
        value = value * 10 + digit
      }
      return value
    }
    guard let y = number(0..<4), let m = number(5..<7), let d = number(8..<10), (1...12).contains(m),
      (1...CivilDate.daysInMonth(year: y, month: m)).contains(d)
    else { return nil }
    self.init(year: y, month: m, day: d)
  }
}
