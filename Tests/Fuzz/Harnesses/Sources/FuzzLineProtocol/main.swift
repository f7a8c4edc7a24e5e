import Foundation
import FuzzSupport
import HealthETL

// The line-protocol writer (`LineProtocol.Point.append`, Pipelines/influx/README.md, "Escaping")
// with names, values and a time from the input. Input: a byte of flags (bits 0–1: tags, bit 7: a
// time of 8 bytes rather than 4), a byte of field kinds (2 bits per field, up to 4: float,
// integer, string, none), the time, then the measurement, tag keys and values, field keys and
// values separated by 0xFF (a byte UTF-8 never has). Besides never trapping, a point written must
// be one line, without control characters, that `LineProtocolReader` reads back to exactly the
// point the rules make of the input (names and strings as this file's own model of the rules
// leaves them), and `deliver`'s quick read of it must agree on the measurement and the time.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let input = FuzzDriver.bytes(data, size)
  guard input.count >= 2 else { return 0 }
  let flags = input[0]
  let kinds = input[1]
  let timeWidth = flags & 0x80 != 0 ? 8 : 4
  guard input.count >= 2 + timeWidth else { return 0 }
  let timeBytes = Array(input[2..<2 + timeWidth])
  let time =
    timeWidth == 8 ? Int64(bitPattern: integer(timeBytes)) : Int64(Int32(truncatingIfNeeded: integer(timeBytes)))
  var segments = input[(2 + timeWidth)...].split(separator: 0xFF, omittingEmptySubsequences: false).map { Array($0) }
  func next() -> [UInt8] { segments.isEmpty ? [] : segments.removeFirst() }
  func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

  let measurement = text(next())
  var tags: [LineProtocol.Point.Tag] = []
  for _ in 0..<Int(flags & 3) { tags.append(.init(text(next()), text(next()))) }
  var fields: [LineProtocol.Point.Field] = []
  for index in 0..<4 {
    guard !segments.isEmpty else { break }
    let key = text(next())
    let bytes = next()
    let value: LineProtocol.Value?
    switch (kinds >> (2 * index)) & 3 {
    case 0:
      value = .float(bytes.count >= 8 ? Double(bitPattern: integer(bytes)) : Double(text(bytes)) ?? Double(bytes.count))
    case 1: value = .integer(Int64(bitPattern: integer(bytes)))
    case 2: value = .string(text(bytes))
    default: value = nil
    }
    fields.append(.init(key, value))
  }
  let point = LineProtocol.Point(measurement: measurement, tags: tags, fields: fields, time: time)

  // What the rules make of the point.
  var expectedTags: [LineProtocol.Point.Tag] = []
  for tag in tags {
    let key = name(tag.key, measurement: false)
    let value = name(tag.value, measurement: false)
    guard !key.isEmpty, !value.isEmpty, !expectedTags.contains(where: { sameBytes($0.key, key) }) else { continue }
    expectedTags.append(.init(key, value))
  }
  var expectedFields: [LineProtocol.Point.Field] = []
  for field in fields {
    let key = name(field.key, measurement: false)
    guard let value = field.value, !key.isEmpty, !expectedFields.contains(where: { sameBytes($0.key, key) })
    else { continue }
    switch value {
    case .float(let number):
      guard number.isFinite else { continue }
      expectedFields.append(.init(key, .float(number)))
    case .integer: expectedFields.append(.init(key, value))
    case .string(let string):
      expectedFields.append(.init(key, .string(cleaned(string, limit: LineProtocol.stringLimit))))
    }
  }
  let expectedMeasurement = name(measurement, measurement: true)
  let written = LineProtocol.timeRange.contains(time) && !expectedMeasurement.isEmpty && !expectedFields.isEmpty

  var line: [UInt8] = Array("before\n".utf8)
  let appended = point.append(to: &line)
  guard appended == written else { fatalError("append said \(appended), the rules say \(written): \(point)") }
  guard appended else {
    guard line == Array("before\n".utf8) else { fatalError("a point not written appended \(line.count - 7) bytes") }
    return 0
  }
  let bytes = Array(line.dropFirst(7))
  guard bytes.last == 0x0A else { fatalError("the line does not end in a line feed") }
  let body = Array(bytes.dropLast())
  if let control = body.first(where: { $0 < 0x20 || $0 == 0x7F }) {
    fatalError("the line holds the control character \(control): \(text(body))")
  }
  guard let read = body.withUnsafeBytes({ LineProtocolReader.parse($0) }) else {
    fatalError("the line does not read back: \(text(body))")
  }
  let sortedTags = expectedTags.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
  guard sameBytes(read.measurement, expectedMeasurement), read.time == time,
    read.fields.map(fieldBytes) == expectedFields.map(fieldBytes),
    read.tags.map(tagBytes).sorted(by: byBytes) == sortedTags.map(tagBytes).sorted(by: byBytes)  // order: speed only
  else {
    fatalError("read back \(read), the rules make \(expectedMeasurement) \(sortedTags) \(expectedFields) \(time)")
  }
  guard let (end, quickTime) = body.withUnsafeBytes({ LineProtocolReader.measurementAndTime($0) }), quickTime == time,
    body.withUnsafeBytes({ LineProtocolReader.unescapedMeasurement(UnsafeRawBufferPointer(rebasing: $0[..<end])) })
      == expectedMeasurement
  else {
    fatalError("deliver's read of \(text(body)) does not find the measurement and the time")
  }
  return 0
}

/// Whether two names are the same bytes. InfluxDB tells keys apart by their bytes, so "é" as one
/// code point and as `e` with a combining accent are two keys, though Swift's `==` calls them equal.
func sameBytes(_ left: String, _ right: String) -> Bool { left.utf8.elementsEqual(right.utf8) }

/// A field as bytes, so that canonically equivalent but different strings do not compare equal.
func fieldBytes(_ field: LineProtocol.Point.Field) -> [[UInt8]] {
  let value: [UInt8]
  switch field.value {
  case .float(let number)?: value = Array("f\(number == 0 ? 0 : number)".utf8)  // -0 reads as 0
  case .integer(let number)?: value = Array("i\(number)".utf8)
  case .string(let string)?: value = [0x73] + Array(string.utf8)
  case nil: value = []
  }
  return [Array(field.key.utf8), value]
}

/// Orders tags by their key's bytes (keys are unique), whatever order they were written in.
func byBytes(_ left: [[UInt8]], _ right: [[UInt8]]) -> Bool { left[0].lexicographicallyPrecedes(right[0]) }

/// A tag as bytes.
func tagBytes(_ tag: LineProtocol.Point.Tag) -> [[UInt8]] { [Array(tag.key.utf8), Array(tag.value.utf8)] }

/// Up to 8 bytes, little-endian.
func integer(_ bytes: [UInt8]) -> UInt64 {
  var value: UInt64 = 0
  for (index, byte) in bytes.prefix(8).enumerated() { value |= UInt64(byte) << (8 * index) }
  return value
}

/// `text` cut at `limit` bytes without splitting a character, control characters as spaces.
func cleaned(_ text: String, limit: Int, backslash: UInt8 = 0x5C) -> String {
  var bytes = Array(text.utf8)
  if bytes.count > limit {
    var length = limit
    while length > 0, bytes[length] & 0xC0 == 0x80 { length -= 1 }
    bytes.removeSubrange(length...)
  }
  return String(decoding: bytes.map { $0 < 0x20 || $0 == 0x7F ? 0x20 : $0 == 0x5C ? backslash : $0 }, as: UTF8.self)
}

/// A measurement, tag key, tag value or field key as the rules leave it: cut, control
/// characters as spaces, a backslash as `/`; a measurement starting `#` or `_` gets an `x`.
func name(_ text: String, measurement: Bool) -> String {
  let cut = cleaned(text, limit: LineProtocol.nameLimit, backslash: UInt8(ascii: "/"))
  guard measurement, let first = cut.utf8.first, first == UInt8(ascii: "#") || first == UInt8(ascii: "_") else {
    return cut
  }
  return "x" + cut
}

FuzzDriver.run(testOneInput)
