/// A JSON value of the report data (Pipelines/report/DATA.md), written compactly with keys in the
/// order given, so a rerun writes the same bytes.
public indirect enum ReportJSON: Sendable, Equatable {
  case null
  case bool(Bool)
  case integer(Int64)
  /// A number's JSON text, already rounded (`ReportJSON.rounded`).
  case number(String)
  case string(String)
  case array([ReportJSON])
  case object([(String, ReportJSON)])

  public static func == (lhs: ReportJSON, rhs: ReportJSON) -> Bool { lhs.text == rhs.text }

  public static func string(_ value: String?) -> ReportJSON { value.map(ReportJSON.string) ?? .null }
  public static func integer(_ value: Int?) -> ReportJSON { value.map { .integer(Int64($0)) } ?? .null }

  /// `value` as the CSV writes it at `precision` (its column's), then rounded to `places`
  /// decimals, halves away from zero, on that decimal text (DATA.md, "Conventions"): binary
  /// noise cannot move a half (`1.005` → `1.01`). Null for a missing or non-finite value.
  public static func rounded(_ value: Double?, csv precision: NumberPrecision, places: Int) -> ReportJSON {
    guard let value, value.isFinite else { return .null }
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

  public var bytes: [UInt8] {
    var out: [UInt8] = []
    append(to: &out)
    return out
  }

  public func append(to out: inout [UInt8]) {
    switch self {
    case .null: out += Array("null".utf8)
    case .bool(let value): out += Array((value ? "true" : "false").utf8)
    case .integer(let value): out += Array(String(value).utf8)
    case .number(let text): out += Array(text.utf8)
    case .string(let value):
      JSONText.appendString(value, to: &out)
    case .array(let items):
      out.append(UInt8(ascii: "["))
      for (index, item) in items.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        item.append(to: &out)
      }
      out.append(UInt8(ascii: "]"))
    case .object(let members):
      out.append(UInt8(ascii: "{"))
      for (index, member) in members.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        ReportJSON.string(member.0).append(to: &out)
        out.append(UInt8(ascii: ":"))
        member.1.append(to: &out)
      }
      out.append(UInt8(ascii: "}"))
    }
  }
}
