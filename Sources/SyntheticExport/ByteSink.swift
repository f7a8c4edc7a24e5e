internal import Glibc
internal import HealthModel

/// The one output buffer of the generator: bytes are formatted by hand straight into it and it is
/// written out about every megabyte, so that a gigabyte export costs no per-record allocation.
///
/// Noncopyable because it owns raw memory; errors from `write(2)` are kept and reported by
/// `finish()` rather than thrown from every append, which keeps the hot path free of `try`.
struct ByteSink: ~Copyable {
  enum Target {
    /// Written to this descriptor (not owned: the caller closes it).
    case file(Int32)
    /// Only counted (sizing runs).
    case discard
    /// Kept in memory and grown as needed (GPX files headed for the zip).
    case memory
  }

  private let target: Target
  private var base: UnsafeMutablePointer<UInt8>
  private var capacity: Int
  /// Bytes waiting in `base`.
  private var count = 0
  /// Bytes already handed to `write(2)` (or dropped, for `.discard`).
  private var flushed: Int64 = 0
  /// The first `errno` a write failed with; nothing more is written after it.
  private(set) var failure: Int32 = 0

  /// Offset applied to every export date (`+0200` → 7200); with `zone`, the last date's.
  private var offsetSeconds: Int64
  /// When set, each date carries this zone's offset at its own instant, as iOS 8–9 wrote them
  /// (`+0100` in winter, `+0200` in summer), instead of one offset for all.
  private let zone: ZoneRules?
  /// 16 bytes: `yyyy-MM-dd` of the last local day formatted (consecutive dates mostly share it),
  /// then the offset text ` +0200`.
  private let scratch: UnsafeMutablePointer<UInt8>
  private var cachedDay = Int64.min

  static let flushThreshold = 1 << 20

  /// Whether dates are written as iOS 8–9 did, `20240319071209+0200`.
  private let compactDates: Bool

  init(target: Target, offsetSeconds: Int32 = 0, compactDates: Bool = false, zone: ZoneRules? = nil) {
    self.target = target
    self.compactDates = compactDates
    self.zone = zone
    // Room for one flush threshold plus the largest single append (a few KB) without checks failing.
    capacity = ByteSink.flushThreshold + 64 * 1024
    base = .allocate(capacity: capacity)
    self.offsetSeconds = Int64(offsetSeconds)
    scratch = .allocate(capacity: 16)
    scratch[10] = 0x20
    ByteSink.writeOffset(Int64(offsetSeconds), to: scratch)
  }

  /// The offset text `±hhmm` at `scratch[11...15]`.
  private static func writeOffset(_ offsetSeconds: Int64, to scratch: UnsafeMutablePointer<UInt8>) {
    let magnitude = Int(offsetSeconds.magnitude)
    scratch[11] = offsetSeconds < 0 ? 0x2D : 0x2B
    scratch[12] = UInt8(48 + magnitude / 36_000)
    scratch[13] = UInt8(48 + magnitude / 3600 % 10)
    scratch[14] = UInt8(48 + magnitude / 600 % 6)
    scratch[15] = UInt8(48 + magnitude / 60 % 10)
  }

  deinit {
    base.deallocate()
    scratch.deallocate()
  }

  /// Bytes appended so far.
  var totalBytes: Int64 { flushed + Int64(count) }

  /// The bytes held in memory (only meaningful for `.memory`).
  func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
    try body(UnsafeRawBufferPointer(start: base, count: count))
  }

  /// Makes room for `n` more bytes.
  @inline(__always) mutating func reserve(_ n: Int) {
    if count + n > capacity { makeRoom(n) }
  }

  private mutating func makeRoom(_ n: Int) {
    switch target {
    case .memory:
      let newCapacity = max(capacity * 2, count + n)
      let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
      grown.update(from: base, count: count)
      base.deallocate()
      base = grown
      capacity = newCapacity
    case .file, .discard:
      flush()
      if n > capacity {
        base.deallocate()
        capacity = n
        base = .allocate(capacity: capacity)
      }
    }
  }

  /// Hands the buffer to the file once it passes the threshold; call between records.
  @inline(__always) mutating func flushIfFull() {
    if count >= ByteSink.flushThreshold { flush() }
  }

  /// Writes everything buffered (a no-op in memory).
  mutating func flush() {
    switch target {
    case .memory:
      return
    case .discard:
      break
    case .file(let fd):
      var offset = 0
      while failure == 0 && offset < count {
        let written = Glibc.write(fd, base + offset, count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          failure = errno
        } else {
          offset += written
        }
      }
    }
    flushed += Int64(count)
    count = 0
  }

  // MARK: - Appending

  @inline(__always) mutating func byte(_ value: UInt8) {
    reserve(1)
    base[count] = value
    count += 1
  }

  /// A literal: tag and attribute names, fixed values.
  @inline(__always) mutating func put(_ text: StaticString) {
    let n = text.utf8CodeUnitCount
    reserve(n)
    (base + count).update(from: text.utf8Start, count: n)
    count += n
  }

  mutating func put(_ bytes: UnsafeRawBufferPointer) {
    reserve(bytes.count)
    if let source = bytes.baseAddress {
      UnsafeMutableRawPointer(base + count).copyMemory(from: source, byteCount: bytes.count)
    }
    count += bytes.count
  }

  mutating func put(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { put($0) }
  }

  /// A decimal integer.
  @inline(__always) mutating func int(_ value: Int64) {
    reserve(21)
    var magnitude = value.magnitude
    if value < 0 {
      base[count] = 0x2D
      count += 1
    }
    var digits = 1
    var probe = magnitude
    while probe >= 10 {
      probe /= 10
      digits += 1
    }
    var index = count + digits - 1
    repeat {
      base[index] = UInt8(truncatingIfNeeded: 48 + magnitude % 10)
      magnitude /= 10
      index -= 1
    } while magnitude > 0
    count += digits
  }

  @inline(__always) mutating func int(_ value: Int) { int(Int64(value)) }

  /// `value` zero-padded to `width` digits (non-negative values only).
  @inline(__always) mutating func padded(_ value: Int64, width: Int) {
    reserve(width)
    var rest = value
    var index = count + width - 1
    while index >= count {
      base[index] = UInt8(truncatingIfNeeded: 48 + rest % 10)
      rest /= 10
      index -= 1
    }
    count += width
  }

  static let powersOfTen: [Int64] = [
    1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000,
    10_000_000_000, 100_000_000_000, 1_000_000_000_000, 10_000_000_000_000,
  ]

  /// `value` rounded to `digits` decimals with trailing zeros dropped (`4.5`, `12`, `0.523`), as
  /// HealthKit prints quantities.
  @inline(__always) mutating func decimal(_ value: Double, digits: Int) {
    let scale = ByteSink.powersOfTen[digits]
    var scaled = Int64((value * Double(scale)).rounded())
    if scaled < 0 {
      byte(0x2D)
      scaled = -scaled
    }
    int(scaled / scale)
    var fraction = scaled % scale
    if fraction == 0 { return }
    var width = digits
    while fraction % 10 == 0 {
      fraction /= 10
      width -= 1
    }
    byte(0x2E)
    padded(fraction, width: width)
  }

  /// `value` with exactly `digits` decimals (`52.514500`), as GPX files print coordinates.
  @inline(__always) mutating func fixed(_ value: Double, digits: Int) {
    let scale = ByteSink.powersOfTen[digits]
    var scaled = Int64((value * Double(scale)).rounded())
    if scaled < 0 {
      byte(0x2D)
      scaled = -scaled
    }
    int(scaled / scale)
    byte(0x2E)
    padded(scaled % scale, width: digits)
  }

  /// Upper- or lower-case hex, zero-padded to `width` digits.
  @inline(__always) mutating func hex(_ value: UInt64, width: Int, upper: Bool) {
    reserve(width)
    let letters: UInt8 = upper ? 55 : 87
    var rest = value
    var index = count + width - 1
    while index >= count {
      let nibble = UInt8(truncatingIfNeeded: rest & 0xF)
      base[index] = nibble < 10 ? 48 + nibble : letters + nibble
      rest >>= 4
      index -= 1
    }
    count += width
  }

  // MARK: - Dates

  /// An export date, `2024-03-19 07:12:09 +0200`: the instant's wall clock at the export's single
  /// offset, or with `zone` at the zone's offset at that instant.
  @inline(__always) mutating func date(_ instant: Int64) {
    if compactDates { compactDate(instant) } else { fullDate(instant) }
  }

  @inline(__always) private mutating func fullDate(_ instant: Int64) {
    reserve(25)
    if let zone {
      let offset = Int64(zone.offset(at: Instant(seconds: instant)))
      if offset != offsetSeconds {
        offsetSeconds = offset
        ByteSink.writeOffset(offset, to: scratch)
      }
    }
    let local = instant + offsetSeconds
    var day = local / 86_400
    if local % 86_400 < 0 { day -= 1 }
    if day != cachedDay {
      ByteSink.writeCivilDate(daysSinceEpoch: day, to: scratch)
      cachedDay = day
    }
    let second = Int(local - day * 86_400)
    let p = base + count
    p.update(from: scratch, count: 10)
    p[10] = 0x20
    ByteSink.writeClock(second, to: p + 11)
    (p + 19).update(from: scratch + 10, count: 6)
    count += 25
  }

  /// The same date as iOS 8–9 wrote it: `20240319071209+0200`.
  private mutating func compactDate(_ instant: Int64) {
    // Room first: a flush inside `fullDate` would move the date to the buffer's start.
    reserve(25)
    let start = count
    fullDate(instant)
    let p = base + start
    // yyyy-MM-dd HH:mm:ss ±hhmm → yyyyMMddHHmmss±hhmm, in place, left to right.
    for (to, from) in ByteSink.compactPositions.enumerated() { p[to] = p[from] }
    count = start + ByteSink.compactPositions.count
  }

  /// Where each byte of a compact date lies in the full one.
  static let compactPositions = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22, 23, 24]

  /// `2024-03-19T06:12:00Z`, as GPX files write times.
  mutating func utc(_ instant: Int64) {
    reserve(20)
    var day = instant / 86_400
    if instant % 86_400 < 0 { day -= 1 }
    let p = base + count
    ByteSink.writeCivilDate(daysSinceEpoch: day, to: p)
    p[10] = 0x54
    ByteSink.writeClock(Int(instant - day * 86_400), to: p + 11)
    p[19] = 0x5A
    count += 20
  }

  /// `HH:mm:ss` (8 bytes) for a second of the day.
  @inline(__always) static func writeClock(_ second: Int, to p: UnsafeMutablePointer<UInt8>) {
    let hour = second / 3600
    let minute = second / 60 % 60
    let sec = second % 60
    p[0] = UInt8(48 + hour / 10)
    p[1] = UInt8(48 + hour % 10)
    p[2] = 0x3A
    p[3] = UInt8(48 + minute / 10)
    p[4] = UInt8(48 + minute % 10)
    p[5] = 0x3A
    p[6] = UInt8(48 + sec / 10)
    p[7] = UInt8(48 + sec % 10)
  }

  /// `yyyy-MM-dd` (10 bytes; years 0…9999).
  static func writeCivilDate(daysSinceEpoch day: Int64, to p: UnsafeMutablePointer<UInt8>) {
    let date = CivilDate(daysSinceEpoch: day)
    let year = date.year
    p[0] = UInt8(48 + year / 1000 % 10)
    p[1] = UInt8(48 + year / 100 % 10)
    p[2] = UInt8(48 + year / 10 % 10)
    p[3] = UInt8(48 + year % 10)
    p[4] = 0x2D
    p[5] = UInt8(48 + date.month / 10)
    p[6] = UInt8(48 + date.month % 10)
    p[7] = 0x2D
    p[8] = UInt8(48 + date.day / 10)
    p[9] = UInt8(48 + date.day % 10)
  }
}
