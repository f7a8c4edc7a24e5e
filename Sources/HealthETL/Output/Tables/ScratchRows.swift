import HealthModel

/// Rows of fields as bytes, for rows that wait in a scratch stream (`ScratchStreams`) until the
/// run's time zone is known and are then handed to a table writer as fields again.
///
/// A row is its byte length (4 bytes), then per field a tag and its payload: text as a length and
/// its UTF-8 bytes, numbers, instants and dates as 8 bytes. Native byte order: the bytes never
/// leave the run.
enum ScratchRows {
  private enum Tag: UInt8 {
    case missing, text, integer, number, boolean, instant, date
  }

  /// Appends one row.
  static func append(_ fields: [Field], to out: inout [UInt8]) {
    let start = out.count
    out.append(contentsOf: [0, 0, 0, 0])
    for field in fields {
      switch field {
      case .missing: out.append(Tag.missing.rawValue)
      case .text(let text):
        out.append(Tag.text.rawValue)
        appendWord(UInt32(text.utf8.count), to: &out)
        out.append(contentsOf: text.utf8)
      case .integer(let value): appendLong(.integer, UInt64(bitPattern: value), to: &out)
      case .number(let value): appendLong(.number, value.bitPattern, to: &out)
      case .boolean(let value): out.append(contentsOf: [Tag.boolean.rawValue, value ? 1 : 0])
      case .instant(let instant): appendLong(.instant, UInt64(bitPattern: instant.seconds), to: &out)
      case .date(let date): appendLong(.date, UInt64(bitPattern: date.daysSinceEpoch), to: &out)
      }
    }
    let length = UInt32(out.count - start - 4)
    withUnsafeBytes(of: length) { bytes in for (index, byte) in bytes.enumerated() { out[start + index] = byte } }
  }

  private static func appendWord(_ value: UInt32, to out: inout [UInt8]) {
    withUnsafeBytes(of: value) { out.append(contentsOf: $0) }
  }

  private static func appendLong(_ tag: Tag, _ value: UInt64, to out: inout [UInt8]) {
    out.append(tag.rawValue)
    withUnsafeBytes(of: value) { out.append(contentsOf: $0) }
  }

  /// Reads rows back from the pieces a stream is read in; a row may span pieces.
  struct Reader {
    private var pending: [UInt8] = []
    private var fields: [Field] = []

    /// Calls `body` with each row complete after `piece`.
    mutating func rows(
      in piece: UnsafeRawBufferPointer, _ body: ([Field]) throws(OutputError) -> Void
    ) throws(OutputError) {
      pending.append(contentsOf: piece)
      var offset = 0
      while pending.count - offset >= 4 {
        let length = Int(Self.load(UInt32.self, pending, offset))
        guard pending.count - offset - 4 >= length else { break }
        fields.removeAll(keepingCapacity: true)
        var at = offset + 4
        let end = at + length
        while at < end {
          let tag = Tag(rawValue: pending[at])!
          at += 1
          switch tag {
          case .missing: fields.append(.missing)
          case .text:
            let count = Int(Self.load(UInt32.self, pending, at))
            fields.append(.text(String(decoding: pending[(at + 4)..<(at + 4 + count)], as: UTF8.self)))
            at += 4 + count
          case .boolean:
            fields.append(.boolean(pending[at] != 0))
            at += 1
          case .integer, .number, .instant, .date:
            let bits = Self.load(UInt64.self, pending, at)
            at += 8
            switch tag {
            case .integer: fields.append(.integer(Int64(bitPattern: bits)))
            case .number: fields.append(.number(Double(bitPattern: bits)))
            case .instant: fields.append(.instant(Instant(seconds: Int64(bitPattern: bits))))
            default: fields.append(.date(CivilDate(daysSinceEpoch: Int64(bitPattern: bits))))
            }
          }
        }
        try body(fields)
        offset = end
      }
      pending.removeFirst(offset)
    }

    private static func load<Value: FixedWidthInteger>(_: Value.Type, _ bytes: [UInt8], _ offset: Int) -> Value {
      bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: Value.self) }
    }
  }
}
