/// Reads back the line protocol `LineProtocol` writes: `deliver` takes each line's measurement
/// and time from it, the tests and the fuzz harness check the writer with it. Strict: a line is
/// read only when it is exactly one point as HealthETL writes them (escapes only where the writer
/// puts them, no control characters, one space between the parts, a time in whole seconds).
public enum LineProtocolReader {
  /// The point of `line` (without its line feed); nil when it is not one point as written.
  public static func parse(_ line: UnsafeRawBufferPointer) -> LineProtocol.Point? {
    var scanner = Scanner(line)
    guard let measurement = scanner.name(as: .measurement) else { return nil }
    var tags: [LineProtocol.Point.Tag] = []
    while scanner.take(LineProtocol.comma) {
      guard let key = scanner.name(as: .key), scanner.take(LineProtocol.equals),
        let value = scanner.name(as: .key)
      else { return nil }
      tags.append(.init(key, value))
    }
    guard scanner.take(LineProtocol.space) else { return nil }
    var fields: [LineProtocol.Point.Field] = []
    repeat {
      guard let key = scanner.name(as: .key), scanner.take(LineProtocol.equals), let value = scanner.value() else {
        return nil
      }
      fields.append(.init(key, value))
    } while scanner.take(LineProtocol.comma)
    guard scanner.take(LineProtocol.space), let time = scanner.integer(), scanner.atEnd else { return nil }
    return LineProtocol.Point(measurement: measurement, tags: tags, fields: fields, time: time)
  }

  public static func parse(_ line: String) -> LineProtocol.Point? {
    var text = line
    return text.withUTF8 { parse(UnsafeRawBufferPointer($0)) }
  }

  /// Where a line's measurement ends (the bytes before it are the measurement as written) and
  /// its time: all `deliver` needs of a line, found without reading the fields. Nil when the
  /// line does not end in ` <seconds>` or has nothing before.
  public static func measurementAndTime(_ line: UnsafeRawBufferPointer) -> (measurementEnd: Int, time: Int64)? {
    var end = 0
    while end < line.count {
      let byte = line[end]
      if byte == LineProtocol.backslash {
        end += 2
        continue
      }
      if byte == LineProtocol.comma || byte == LineProtocol.space { break }
      end += 1
    }
    guard end > 0, end < line.count, let space = line.lastIndex(of: LineProtocol.space), space > end else {
      return nil
    }
    var scanner = Scanner(UnsafeRawBufferPointer(rebasing: line[(space + 1)...]))
    guard let time = scanner.integer(), scanner.atEnd else { return nil }
    return (end, time)
  }

  /// The name `bytes` stands for as `LineProtocol` writes a measurement: its escapes undone.
  public static func unescapedMeasurement(_ bytes: UnsafeRawBufferPointer) -> String? {
    var scanner = Scanner(bytes)
    guard let name = scanner.name(as: .measurement), scanner.atEnd else { return nil }
    return name
  }

  private struct Scanner {
    let bytes: UnsafeRawBufferPointer
    var index = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }

    mutating func take(_ byte: UInt8) -> Bool {
      guard index < bytes.count, bytes[index] == byte else { return false }
      index += 1
      return true
    }

    /// A measurement or key: up to an unescaped separator; nil when empty or when it holds a
    /// control character or a backslash that escapes nothing the writer escapes.
    mutating func name(as part: LineProtocol.NamePart) -> String? {
      var name: [UInt8] = []
      while index < bytes.count {
        let byte = bytes[index]
        if byte == LineProtocol.backslash {
          guard index + 1 < bytes.count else { return nil }
          let next = bytes[index + 1]
          guard
            next == LineProtocol.space || next == LineProtocol.comma || (next == LineProtocol.equals && part == .key)
          else { return nil }
          name.append(next)
          index += 2
          continue
        }
        if byte == LineProtocol.space || byte == LineProtocol.comma || (byte == LineProtocol.equals && part == .key) {
          break
        }
        guard byte >= 0x20, byte != 0x7F else { return nil }
        name.append(byte)
        index += 1
      }
      guard !name.isEmpty, part == .key || name[0] != UInt8(ascii: "#") else { return nil }
      return String(validating: name, as: UTF8.self)
    }

    /// A field value: a quoted string, an integer (`12i`) or a float.
    mutating func value() -> LineProtocol.Value? {
      if take(LineProtocol.quote) {
        var text: [UInt8] = []
        while index < bytes.count {
          let byte = bytes[index]
          index += 1
          if byte == LineProtocol.quote { return String(validating: text, as: UTF8.self).map { .string($0) } }
          guard byte >= 0x20, byte != 0x7F else { return nil }
          if byte == LineProtocol.backslash {
            guard index < bytes.count, bytes[index] == LineProtocol.quote || bytes[index] == LineProtocol.backslash
            else { return nil }
            text.append(bytes[index])
            index += 1
            continue
          }
          text.append(byte)
        }
        return nil
      }
      let start = index
      while index < bytes.count, bytes[index] != LineProtocol.comma, bytes[index] != LineProtocol.space { index += 1 }
      let text = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
      if text.last == UInt8(ascii: "i") {
        var digits = Scanner(UnsafeRawBufferPointer(rebasing: text.dropLast()))
        guard let number = digits.integer(), digits.atEnd else { return nil }
        return .integer(number)
      }
      guard LineProtocol.isPlainFloat(text, exponentDigits: 3),
        let number = Double(String(decoding: text, as: UTF8.self)),
        number.isFinite
      else { return nil }
      return .float(number)
    }

    /// `-?[0-9]+` that fits an Int64.
    mutating func integer() -> Int64? {
      let negative = take(UInt8(ascii: "-"))
      var magnitude: UInt64 = 0
      let start = index
      while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
        let (times, overflowTimes) = magnitude.multipliedReportingOverflow(by: 10)
        let (sum, overflowSum) = times.addingReportingOverflow(UInt64(bytes[index] - 0x30))
        guard !overflowTimes, !overflowSum else { return nil }
        magnitude = sum
        index += 1
      }
      guard index > start else { return nil }
      if negative { return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil }
      return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }
  }
}
