/// A JSON value of the report data (Pipelines/report/DATA.md), written compactly with keys in the
/// order given, so a rerun writes the same bytes.
public indirect enum ReportJSON: Equatable {
  case null
  case bool(Bool)
  case integer(Int64)
  /// A number's JSON text, already rounded (`ReportJSON.rounded`).
  case number(String)
  case string(String)
  case array([ReportJSON])
  case object([(String, ReportJSON)])
  /// A value written only when the page is: one whose parts (a column of every workout) are read
  /// from scratch as they are written, so that they are never all in memory.
  case streamed(Streamed)

  public struct Streamed {
    let write: (inout Writer) throws(OutputError) -> Void

    public init(_ write: @escaping (inout Writer) throws(OutputError) -> Void) { self.write = write }
  }

  /// Where the text goes: a buffer handed to `flush` whenever it holds `pieceBytes`, and at the end.
  public struct Writer {
    public private(set) var bytes: [UInt8] = []
    private let flush: (([UInt8]) throws(OutputError) -> Void)?
    static let pieceBytes = 256 * 1024

    /// `flush` nil: the whole text stays in `bytes`.
    public init(flush: (([UInt8]) throws(OutputError) -> Void)? = nil) { self.flush = flush }

    mutating func append(_ byte: UInt8) { bytes.append(byte) }
    mutating func append(_ text: String) { bytes += Array(text.utf8) }
    mutating func append(_ text: [UInt8]) { bytes += text }
    /// Empties the buffer, keeping its room.
    mutating func clear() { bytes.removeAll(keepingCapacity: true) }
    /// `value` as a JSON string.
    mutating func appendString(_ value: String) { JSONText.appendString(value, to: &bytes) }

    /// Hands the buffer on when it is full.
    mutating func flushIfFull() throws(OutputError) {
      if bytes.count >= Self.pieceBytes { try flushAll() }
    }

    /// Hands on what the buffer holds.
    public mutating func flushAll() throws(OutputError) {
      guard let flush, !bytes.isEmpty else { return }
      try flush(bytes)
      bytes.removeAll(keepingCapacity: true)
    }
  }

  public static func == (lhs: ReportJSON, rhs: ReportJSON) -> Bool { lhs.text == rhs.text }

  public static func string(_ value: String?) -> ReportJSON { value.map(ReportJSON.string) ?? .null }
  public static func integer(_ value: Int?) -> ReportJSON { value.map { .integer(Int64($0)) } ?? .null }

  /// `value` as the CSV writes it at `precision` (its column's), then rounded to `places`
  /// decimals, halves away from zero, on that decimal text (DATA.md, "Conventions"): binary
  /// noise cannot move a half (`1.005` → `1.01`). Null for a missing or non-finite value.
  public static func rounded(_ value: Double?, csv precision: NumberPrecision, places: Int) -> ReportJSON {
    guard let value, value.isFinite else { return .null }
    // `NumberText.rounded` rounds the same decimal text the same way, through the decimal only
    // near a half; its result's own text is that decimal whenever it is plain and has at most 15
    // significant digits. Building and rounding the text digit by digit was most of the report's
    // finish (two numbers per point of every route's outline).
    if places >= 0, places <= 15 {
      let written = NumberText.roundedAsWritten(value, precision: precision)
      let result = NumberText.rounded(written, decimals: places)
      let magnitude = Swift.abs(result)
      if result == result.rounded()
        ? magnitude < 1e15 : magnitude >= 1e-4 && magnitude < NumberText.powersOfTen[15 - places]
      {
        var text: [UInt8] = []
        CSVField.appendNumber(result == 0 ? 0 : result, to: &text)
        return .number(String(decoding: text, as: UTF8.self))
      }
    }
    return roundedByText(value, csv: precision, places: places)
  }

  /// `rounded(_:csv:places:)` on the decimal text, digit by digit: where the result's own text
  /// would not be its decimal, and what tests check the shorter way against.
  static func roundedByText(_ value: Double, csv precision: NumberPrecision, places: Int) -> ReportJSON {
    var text: [UInt8] = []
    NumberText.append(value, precision: precision, to: &text)
    if let decimal = roundDecimalText(text, places: places) { return .number(decimal) }
    // An exponent form (`1e-05`): rounding the double is exact enough at these magnitudes.
    var fallback: [UInt8] = []
    CSVField.appendNumber(
      NumberText.rounded(Double(String(decoding: text, as: UTF8.self)) ?? value, decimals: places), to: &fallback)
    return .number(String(decoding: fallback, as: UTF8.self))
  }

  /// Decimal text as written in the export (an `ActivitySummary` attribute), rounded the same
  /// way; null when it is not a plain decimal number.
  public static func rounded(text: String, places: Int) -> ReportJSON {
    guard Double(text)?.isFinite == true, let decimal = roundDecimalText(Array(text.utf8), places: places) else {
      return .null
    }
    return .number(decimal)
  }

  /// Half away from zero at `places` decimals on plain decimal text; nil for exponent forms.
  static func roundDecimalText(_ text: [UInt8], places: Int) -> String? {
    guard !text.contains(UInt8(ascii: "e")), !text.contains(UInt8(ascii: "E")) else { return nil }
    var negative = false
    var body = text[...]
    if body.first == UInt8(ascii: "-") {
      negative = true
      body = body.dropFirst()
    }
    let dot = body.firstIndex(of: UInt8(ascii: "."))
    let integerPart = Array(body[..<(dot ?? body.endIndex)])
    let fraction = dot.map { Array(body[body.index(after: $0)...]) } ?? []
    // Digits kept, as one integer string, then round on the first dropped digit.
    var digits = integerPart + fraction.prefix(places)
    digits += [UInt8](repeating: UInt8(ascii: "0"), count: max(0, places - fraction.count))
    if fraction.count > places, fraction[places] >= UInt8(ascii: "5") {
      var index = digits.count - 1
      while index >= 0 {
        if digits[index] == UInt8(ascii: "9") {
          digits[index] = UInt8(ascii: "0")
          index -= 1
        } else {
          digits[index] += 1
          break
        }
      }
      if index < 0 { digits.insert(UInt8(ascii: "1"), at: 0) }
    }
    var whole = Array(digits[..<(digits.count - places)])
    var decimals = Array(digits[(digits.count - places)...])
    while decimals.last == UInt8(ascii: "0") { decimals.removeLast() }
    while whole.count > 1 && whole.first == UInt8(ascii: "0") { whole.removeFirst() }
    if whole.isEmpty { whole = [UInt8(ascii: "0")] }
    let isZero = whole == [UInt8(ascii: "0")] && decimals.isEmpty
    var result = (negative && !isZero ? "-" : "") + String(decoding: whole, as: UTF8.self)
    if !decimals.isEmpty { result += "." + String(decoding: decimals, as: UTF8.self) }
    return result
  }

  /// The compact text.
  public var text: String { String(decoding: bytes, as: UTF8.self) }

  /// The compact text in memory; a streamed part that fails to read ends it short.
  public var bytes: [UInt8] {
    var writer = Writer()
    try? write(to: &writer)
    return writer.bytes
  }

  public func write(to out: inout Writer) throws(OutputError) {
    switch self {
    case .null: out.append("null")
    case .bool(let value): out.append(value ? "true" : "false")
    case .integer(let value): out.append(String(value))
    case .number(let text): out.append(text)
    case .string(let value):
      out.appendString(value)
    case .array(let items):
      out.append(UInt8(ascii: "["))
      for (index, item) in items.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        try item.write(to: &out)
      }
      out.append(UInt8(ascii: "]"))
    case .object(let members):
      out.append(UInt8(ascii: "{"))
      for (index, member) in members.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        try ReportJSON.string(member.0).write(to: &out)
        out.append(UInt8(ascii: ":"))
        try member.1.write(to: &out)
      }
      out.append(UInt8(ascii: "}"))
    case .streamed(let part): try part.write(&out)
    }
    try out.flushIfFull()
  }
}
