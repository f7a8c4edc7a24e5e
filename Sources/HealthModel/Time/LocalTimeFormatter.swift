/// Writes instants and dates as the fixed-width text every output uses, without `DateFormatter`.
public enum LocalTimeFormatter {
  /// `2024-03-10T07:15:03-07:00`: the wall-clock time at `offsetSeconds`, with that offset
  /// (`+00:00`, never `Z`).
  public static func iso8601(_ instant: Instant, offsetSeconds: Int32) -> String {
    var bytes = [UInt8]()
    bytes.reserveCapacity(25)
    appendISO8601(instant, offsetSeconds: offsetSeconds, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  public static func appendISO8601(_ instant: Instant, offsetSeconds: Int32, to out: inout [UInt8]) {
    let local = instant.seconds + Int64(offsetSeconds)
    let days = floorDiv(local, 86_400)
    appendDate(CivilDate(daysSinceEpoch: days), to: &out)
    appendClock(secondOfDay: Int(local - days * 86_400), separator: UInt8(ascii: "T"), seconds: true, to: &out)
    appendOffset(offsetSeconds, to: &out)
  }

  /// `2024-03-10 07:15:03` (or `2024-03-10 07:15` without `seconds`): the wall-clock time at
  /// `offsetSeconds`, without the offset — the form spreadsheet programs read as a date-time.
  public static func appendLocal(
    _ instant: Instant, offsetSeconds: Int32, seconds: Bool = true, to out: inout [UInt8]
  ) {
    let local = instant.seconds + Int64(offsetSeconds)
    let days = floorDiv(local, 86_400)
    appendDate(CivilDate(daysSinceEpoch: days), to: &out)
    appendClock(secondOfDay: Int(local - days * 86_400), separator: UInt8(ascii: " "), seconds: seconds, to: &out)
  }

  /// `separator` then `HH:MM[:SS]`: the time part of `appendISO8601` (`T`) and `appendLocal`
  /// (a space).
  static func appendClock(secondOfDay: Int, separator: UInt8, seconds: Bool, to out: inout [UInt8]) {
    out.append(separator)
    appendTwo(secondOfDay / 3600, to: &out)
    out.append(UInt8(ascii: ":"))
    appendTwo(secondOfDay / 60 % 60, to: &out)
    guard seconds else { return }
    out.append(UInt8(ascii: ":"))
    appendTwo(secondOfDay % 60, to: &out)
  }

  /// `+05:45`, `-09:30`, `+00:00`. Offsets with seconds (pre-1900 LMT) are rounded down to the
  /// minute, as ISO 8601 has no seconds field for offsets.
  public static func appendOffset(_ offsetSeconds: Int32, to out: inout [UInt8]) {
    let magnitude = Int(offsetSeconds.magnitude)
    out.append(offsetSeconds < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
    appendTwo(magnitude / 3600, to: &out)
    out.append(UInt8(ascii: ":"))
    appendTwo(magnitude / 60 % 60, to: &out)
  }

  /// `YYYY-MM-DD` (years outside 0…9999 are written with as many digits as they need).
  public static func appendDate(_ date: CivilDate, to out: inout [UInt8]) {
    if date.year >= 0 && date.year <= 9999 {
      appendTwo(date.year / 100, to: &out)
      appendTwo(date.year % 100, to: &out)
    } else {
      out.append(contentsOf: String(date.year).utf8)
    }
    out.append(UInt8(ascii: "-"))
    appendTwo(date.month, to: &out)
    out.append(UInt8(ascii: "-"))
    appendTwo(date.day, to: &out)
  }

  /// `yyyyMMdd` or `yyyyMMddHHmmss` in the wall clock of `offsetSeconds` (server record fields).
  public static func compact(_ instant: Instant, offsetSeconds: Int32, withTime: Bool) -> String {
    let local = instant.seconds + Int64(offsetSeconds)
    let days = floorDiv(local, 86_400)
    let secondOfDay = Int(local - days * 86_400)
    let date = CivilDate(daysSinceEpoch: days)
    var out = [UInt8]()
    appendTwo(date.year / 100, to: &out)
    appendTwo(date.year % 100, to: &out)
    appendTwo(date.month, to: &out)
    appendTwo(date.day, to: &out)
    if withTime {
      appendTwo(secondOfDay / 3600, to: &out)
      appendTwo(secondOfDay / 60 % 60, to: &out)
      appendTwo(secondOfDay % 60, to: &out)
    }
    return String(decoding: out, as: UTF8.self)
  }

  @inline(__always) static func appendTwo(_ value: Int, to out: inout [UInt8]) {
    out.append(UInt8(48 + value / 10 % 10))
    out.append(UInt8(48 + value % 10))
  }
}

@inlinable public func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
  let q = a / b
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
}
