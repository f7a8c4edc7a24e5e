/// Parses Apple Health's date text straight from UTF-8 bytes: `yyyy-MM-dd HH:mm:ss ±hhmm`, and
/// the compact `yyyyMMddHHmmss±hhmm` of iOS 8–9 exports.
///
/// `DateFormatter` costs tens of microseconds per call and a real export holds millions of dates;
/// this fixed-width parser costs tens of nanoseconds and allocates nothing.
public enum HealthDateParser {
  /// The length of every valid date text of the current format.
  public static let length = 25
  /// The length of the iOS 8–9 form, `20151107171924+0100`.
  public static let compactLength = 19

  /// The instant and the UTC offset (seconds east) written in `bytes`, or nil when the text is not
  /// exactly a valid `yyyy-MM-dd HH:mm:ss ±hhmm` or `yyyyMMddHHmmss±hhmm` date.
  @inlinable
  public static func parse(_ bytes: UnsafeRawBufferPointer) -> (instant: Instant, offsetSeconds: Int32)? {
    guard let base = bytes.baseAddress else { return nil }
    // The length tells the forms apart; the older one stays off the inlined path.
    guard bytes.count == length else { return bytes.count == compactLength ? parseCompact(bytes) : nil }
    let p = base.assumingMemoryBound(to: UInt8.self)
    guard p[4] == 0x2D, p[7] == 0x2D, p[10] == 0x20, p[13] == 0x3A, p[16] == 0x3A, p[19] == 0x20 else {
      return nil
    }
    return fields(p, year: 0, month: 5, day: 8, hour: 11, minute: 14, second: 17, sign: 20)
  }

  /// `yyyyMMddHHmmss±hhmm`, as iOS 8 and 9 wrote every date.
  @usableFromInline
  static func parseCompact(_ bytes: UnsafeRawBufferPointer) -> (instant: Instant, offsetSeconds: Int32)? {
    guard bytes.count == compactLength, let base = bytes.baseAddress else { return nil }
    return fields(
      base.assumingMemoryBound(to: UInt8.self), year: 0, month: 4, day: 6, hour: 8, minute: 10, second: 12, sign: 14)
  }

  /// The date whose two-digit fields (four for the year; the offset's sign then `hhmm`) start at
  /// the given positions, checked field by field.
  @inlinable @inline(__always)
  static func fields(
    _ p: UnsafePointer<UInt8>, year y: Int, month mo: Int, day d: Int, hour h: Int, minute mi: Int, second s: Int,
    sign si: Int
  ) -> (instant: Instant, offsetSeconds: Int32)? {
    @inline(__always) func digit(_ i: Int) -> Int {
      let value = Int(p[i]) &- 48
      return (value >= 0 && value <= 9) ? value : -1_000_000
    }
    let year = digit(y) * 1000 + digit(y + 1) * 100 + digit(y + 2) * 10 + digit(y + 3)
    let month = digit(mo) * 10 + digit(mo + 1)
    let day = digit(d) * 10 + digit(d + 1)
    let hour = digit(h) * 10 + digit(h + 1)
    let minute = digit(mi) * 10 + digit(mi + 1)
    let second = digit(s) * 10 + digit(s + 1)
    let sign = p[si]
    let offHours = digit(si + 1) * 10 + digit(si + 2)
    let offMinutes = digit(si + 3) * 10 + digit(si + 4)
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
