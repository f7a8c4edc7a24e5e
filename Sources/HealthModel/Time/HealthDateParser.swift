/// Parses Apple Health's date text, `yyyy-MM-dd HH:mm:ss ±hhmm`, straight from UTF-8 bytes.
///
/// `DateFormatter` costs tens of microseconds per call and a real export holds millions of dates;
/// this fixed-width parser costs tens of nanoseconds and allocates nothing.
public enum HealthDateParser {
  /// The length of every valid date text.
  public static let length = 25

  /// The instant and the UTC offset (seconds east) written in `bytes`, or nil when the text is not
  /// exactly a valid `yyyy-MM-dd HH:mm:ss ±hhmm` date.
  @inlinable
  public static func parse(_ bytes: UnsafeRawBufferPointer) -> (instant: Instant, offsetSeconds: Int32)? {
    guard bytes.count == length, let base = bytes.baseAddress else { return nil }
    let p = base.assumingMemoryBound(to: UInt8.self)
    @inline(__always) func digit(_ i: Int) -> Int {
      let d = Int(p[i]) &- 48
      return (d >= 0 && d <= 9) ? d : -1_000_000
    }
    guard p[4] == 0x2D, p[7] == 0x2D, p[10] == 0x20, p[13] == 0x3A, p[16] == 0x3A, p[19] == 0x20 else {
      return nil
    }
    let year = digit(0) * 1000 + digit(1) * 100 + digit(2) * 10 + digit(3)
    let month = digit(5) * 10 + digit(6)
    let day = digit(8) * 10 + digit(9)
    let hour = digit(11) * 10 + digit(12)
    let minute = digit(14) * 10 + digit(15)
    let second = digit(17) * 10 + digit(18)
    let sign = p[20]
    let offHours = digit(21) * 10 + digit(22)
    let offMinutes = digit(23) * 10 + digit(24)
    guard year >= 0, month >= 1, month <= 12, day >= 1, hour >= 0, hour <= 23, minute >= 0, minute <= 59,
      second >= 0, second <= 59, offHours >= 0, offHours <= 14, offMinutes >= 0, offMinutes <= 59,
      sign == 0x2B || sign == 0x2D,
      day <= CivilDate.daysInMonth(year: year, month: month)
    else { return nil }
    let offset = Int32((offHours * 3600 + offMinutes * 60) * (sign == 0x2D ? -1 : 1))
    let days = CivilDate(year: year, month: month, day: day).daysSinceEpoch
    let local = days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    return (Instant(seconds: local - Int64(offset)), offset)
  }

  /// Convenience for tests and cold paths.
  public static func parse(_ text: String) -> (instant: Instant, offsetSeconds: Int32)? {
    var copy = text
    return copy.withUTF8 { parse(UnsafeRawBufferPointer($0)) }
  }
}
