/// How a sorted run of `SpillRecord`s is stored in its scratch file: each record as the change
/// from the one before it, in 6–20 bytes instead of 40.
///
/// The scratch bytes are not free: on the bench file the statistics' and the workouts' spills
/// wrote 120 MB that were read once and deleted, and the kernel's copy into fresh page-cache
/// pages was a fifth of the main thread's CPU. In a sorted run the next start is a few seconds
/// after the last, the stream and group rarely change, an instant has no length, and a value is
/// mostly a short decimal (a heart rate, a step count, 0.57 km), so most records fit in 6–9
/// bytes. Every field comes back bit for bit (`SpillRunCodecTests`), so the merge, and every
/// sum taken over it, is the same as with raw records.
///
/// A record: one flag byte, then LEB128 varints — the stream (when it changed), the group (when it
/// changed), the start as a difference from the previous start, the length (unless an instant),
/// the creation as a difference from the end (unless missing) — then the value, as a zigzag
/// varint `m` with `m / 10^k` for the smallest `k` ≤ 6 that gives it back exactly, else its 8
/// bytes. Differences wrap, so any `Int64` comes back. A run starts from `State()`, so each run
/// decodes on its own.
enum SpillRunCodec {
  /// The most bytes one record takes: the flags, two 5-byte and three 10-byte varints, 10 for a
  /// value.
  static let maximumRecordBytes = 1 + 5 + 5 + 10 + 10 + 10 + 10

  /// What the next record is written against.
  struct State {
    var stream: Int32 = 0
    var group: Int32 = 0
    var start: Int64 = 0
  }

  private static let streamChanged: UInt8 = 0x01
  private static let groupChanged: UInt8 = 0x02
  private static let instant: UInt8 = 0x04
  private static let noCreation: UInt8 = 0x08
  /// Bits 4–6: 0 for the value's raw 8 bytes, `k + 1` for `m / 10^k`.
  private static let valueShift: UInt8 = 4

  /// The most decimal digits a value is stored with.
  private static let mostDigits = 6

  /// 10^`digits` for `digits` up to `mostDigits`, without an array lookup: the decoder calls it
  /// for every decimal value.
  @inline(__always) private static func tenToThe(_ digits: Int) -> Double {
    switch digits {
    case 0: 1
    case 1: 10
    case 2: 100
    case 3: 1000
    case 4: 10_000
    case 5: 100_000
    default: 1_000_000
    }
  }

  static func encode(_ record: SpillRecord, after state: inout State, to out: inout [UInt8]) {
    var flags: UInt8 = 0
    if record.stream != state.stream { flags |= streamChanged }
    if record.group != state.group { flags |= groupChanged }
    if record.end == record.start { flags |= instant }
    if record.created == SpillRecord.missingCreation { flags |= noCreation }
    let decimal = decimalForm(of: record.value)
    if let decimal { flags |= UInt8(decimal.digits + 1) << valueShift }
    out.append(flags)
    if flags & streamChanged != 0 { appendVarint(zigzag(Int64(record.stream)), to: &out) }
    if flags & groupChanged != 0 { appendVarint(zigzag(Int64(record.group)), to: &out) }
    appendVarint(zigzag(record.start &- state.start), to: &out)
    if flags & instant == 0 { appendVarint(zigzag(record.end &- record.start), to: &out) }
    if flags & noCreation == 0 { appendVarint(zigzag(record.created &- record.end), to: &out) }
    if let decimal {
      appendVarint(zigzag(decimal.scaled), to: &out)
    } else {
      withUnsafeBytes(of: record.value.bitPattern.littleEndian) { out.append(contentsOf: $0) }
    }
    state = State(stream: record.stream, group: record.group, start: record.start)
  }

  /// The record at `position`, which moves past it. The caller makes sure a whole record is there
  /// (`maximumRecordBytes`, or the end of the run).
  static func decode(_ bytes: UnsafeRawBufferPointer, at position: inout Int, after state: inout State) -> SpillRecord {
    let flags = bytes[position]
    position += 1
    var stream = state.stream
    var group = state.group
    if flags & streamChanged != 0 { stream = Int32(truncatingIfNeeded: unzigzag(readVarint(bytes, &position))) }
    if flags & groupChanged != 0 { group = Int32(truncatingIfNeeded: unzigzag(readVarint(bytes, &position))) }
    let start = state.start &+ unzigzag(readVarint(bytes, &position))
    let end = flags & instant != 0 ? start : start &+ unzigzag(readVarint(bytes, &position))
    let created =
      flags & noCreation != 0 ? SpillRecord.missingCreation : end &+ unzigzag(readVarint(bytes, &position))
    let form = (flags >> valueShift) & 0x07
    let value: Double
    switch form {
    case 0:
      value = Double(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self)))
      position += 8
    case 1:
      // A whole number, the most common value: no division.
      value = Double(unzigzag(readVarint(bytes, &position)))
    default:
      value = Double(unzigzag(readVarint(bytes, &position))) / tenToThe(Int(form) - 1)
    }
    state = State(stream: stream, group: group, start: start)
    return SpillRecord(start: start, end: end, value: value, created: created, stream: stream, group: group)
  }

  /// `value` as `scaled / 10^digits` with the fewest digits that give it back bit for bit; nil
  /// when none up to 6 does (or it is -0, not finite, or too large to scale exactly).
  @inline(__always) static func decimalForm(of value: Double) -> (scaled: Int64, digits: Int)? {
    guard value.isFinite, value.magnitude < 1e9, !(value == 0 && value.sign == .minus) else { return nil }
    for digits in 0...mostDigits {
      let scaled = (value * tenToThe(digits)).rounded()
      if Double(Int64(scaled)) / tenToThe(digits) == value { return (Int64(scaled), digits) }
    }
    return nil
  }

  @inline(__always) private static func zigzag(_ value: Int64) -> UInt64 {
    UInt64(bitPattern: (value << 1) ^ (value >> 63))
  }

  @inline(__always) private static func unzigzag(_ value: UInt64) -> Int64 {
    Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
  }

  @inline(__always) private static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
    var rest = value
    while rest >= 0x80 {
      out.append(UInt8(truncatingIfNeeded: rest) | 0x80)
      rest >>= 7
    }
    out.append(UInt8(rest))
  }

  @inline(__always) private static func readVarint(_ bytes: UnsafeRawBufferPointer, _ position: inout Int) -> UInt64 {
    let first = bytes[position]
    if first < 0x80 {
      position += 1
      return UInt64(first)
    }
    var result: UInt64 = 0
    var shift: UInt64 = 0
    while true {
      let byte = bytes[position]
      position += 1
      result |= UInt64(byte & 0x7F) << shift
      if byte < 0x80 { return result }
      shift += 7
    }
  }
}
