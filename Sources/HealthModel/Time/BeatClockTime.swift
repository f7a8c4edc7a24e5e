/// The `time` of an `InstantaneousBeatsPerMinute` entry: a clock time without a date, written as
/// the phone's locale writes one (Pipelines/docs/beats.md, "Beat-to-beat heart rate") — `7:47:41.86 PM`
/// (12-hour, en_US, also with a narrow or non-breaking space before `PM`), `19:47:41.86` or
/// `19:47:41,86` (24-hour, decimal point or comma).
public enum BeatClockTime {
  public static let millisecondsPerDay: Int32 = 86_400_000

  /// Milliseconds since midnight, or nil for text of any other shape (out-of-range fields, a
  /// missing second, letters, a 12-hour hour of 0 or 13). Fractions past the millisecond are cut.
  public static func millisecondsOfDay(_ bytes: UnsafeRawBufferPointer) -> Int32? {
    var reader = Reader(bytes: bytes)
    reader.skipSpaces()
    guard let hour = reader.digits(1...2), reader.take(UInt8(ascii: ":")),
      let minute = reader.digits(2...2), reader.take(UInt8(ascii: ":")),
      let second = reader.digits(2...2), minute < 60, second < 60
    else { return nil }
    var milliseconds = 0
    if reader.take(UInt8(ascii: ".")) || reader.take(UInt8(ascii: ",")) {
      var scale = 100
      var count = 0
      while let digit = reader.digit() {
        milliseconds += digit * scale
        scale /= 10
        count += 1
      }
      guard count > 0 else { return nil }
    }
    reader.skipSpaces()
    var hourOfDay = hour
    if let afternoon = reader.meridiem() {
      guard (1...12).contains(hour) else { return nil }
      hourOfDay = hour % 12 + (afternoon ? 12 : 0)
      reader.skipSpaces()
    } else if hour > 23 {
      return nil
    }
    guard reader.atEnd else { return nil }
    return Int32(((hourOfDay * 60 + minute) * 60 + second) * 1000 + milliseconds)
  }

  private struct Reader {
    let bytes: UnsafeRawBufferPointer
    var index = 0

    var atEnd: Bool { index == bytes.count }

    mutating func take(_ byte: UInt8) -> Bool {
      guard index < bytes.count, bytes[index] == byte else { return false }
      index += 1
      return true
    }

    mutating func digit() -> Int? {
      guard index < bytes.count, (48...57).contains(bytes[index]) else { return nil }
      index += 1
      return Int(bytes[index - 1] - 48)
    }

    mutating func digits(_ allowed: ClosedRange<Int>) -> Int? {
      var value = 0
      var count = 0
      while count < allowed.upperBound, let digit = digit() {
        value = value * 10 + digit
        count += 1
      }
      return allowed.contains(count) ? value : nil
    }

    /// ASCII spaces, U+00A0 (no-break space) and U+202F (narrow no-break space, which recent iOS
    /// writes before AM/PM).
    mutating func skipSpaces() {
      while index < bytes.count {
        if bytes[index] == 0x20 {
          index += 1
        } else if index + 1 < bytes.count, bytes[index] == 0xC2, bytes[index + 1] == 0xA0 {
          index += 2
        } else if index + 2 < bytes.count, bytes[index] == 0xE2, bytes[index + 1] == 0x80, bytes[index + 2] == 0xAF {
          index += 3
        } else {
          return
        }
      }
    }

    /// `AM` / `PM` in either case: false for the morning, true for the afternoon.
    mutating func meridiem() -> Bool? {
      guard index + 1 < bytes.count, bytes[index + 1] | 0x20 == UInt8(ascii: "m") else { return nil }
      switch bytes[index] | 0x20 {
      case UInt8(ascii: "a"):
        index += 2
        return false
      case UInt8(ascii: "p"):
        index += 2
        return true
      default:
        return nil
      }
    }
  }
}
