import HealthModel
import Testing

@Suite struct LocalTimeTextTests {
  /// The kept interval and date must never outlive their instant: walking forward minute by
  /// minute over a transition, jumping back across it, and wandering over centuries (pre-1900
  /// offsets with seconds, negative days) gives the formatter's bytes every time.
  @Test(arguments: ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "UTC"])
  func writesTheFormattersBytes(name: String) throws {
    let rules = try ZoneRules.load(name)
    var text = LocalTimeText(rules)
    var instants: [Int64] = []
    // Either side of Berlin's 2024 spring-forward and New York's 2024 fall-back, minute by minute.
    for base: Int64 in [1_711_846_800, 1_730_613_600] {
      instants += stride(from: base - 3 * 3600, to: base + 3 * 3600, by: 60)
      instants += [base, base - 1, base + 1, base - 86_400, base]
    }
    // A walk with steps of a few hours to a few years, backwards and forwards, from 1850 to 2090.
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    var t: Int64 = -3_786_825_600
    for _ in 0..<5_000 {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      let step = Int64(state >> 40) % 200_000_000 - 90_000_000
      t = min(max(t + step, -3_786_825_600), 3_786_825_600)
      instants.append(t)
    }
    Self.expectFormattersBytes(&text, rules: rules, at: instants, in: name)
  }

  /// Each instant in every form `LocalTimeText` writes, against `LocalTimeFormatter` at the
  /// zone's offset, and the offset it keeps.
  static func expectFormattersBytes(
    _ text: inout LocalTimeText, rules: ZoneRules, at instants: [Int64], in name: String
  ) {
    for seconds in instants {
      let instant = Instant(seconds: seconds)
      let offset = rules.offset(at: instant)
      var expected: [UInt8] = []
      var actual: [UInt8] = []
      LocalTimeFormatter.appendISO8601(instant, offsetSeconds: offset, to: &expected)
      LocalTimeFormatter.appendLocal(instant, offsetSeconds: offset, to: &expected)
      LocalTimeFormatter.appendLocal(instant, offsetSeconds: offset, seconds: false, to: &expected)
      LocalTimeFormatter.appendDate(rules.localDate(at: instant), to: &expected)
      text.appendISO8601(instant, to: &actual)
      text.appendLocal(instant, to: &actual)
      text.appendLocal(instant, seconds: false, to: &actual)
      text.appendDate(instant, to: &actual)
      #expect(actual == expected, "\(name) at \(seconds)")
      #expect(text.offset(at: instant) == offset)
    }
  }

  /// Years of five digits and before year 0 make the date longer than the usual ten bytes; the
  /// text is gathered in a fixed buffer, so these must come out whole too.
  @Test func yearsOutsideFourDigits() throws {
    let rules = try ZoneRules.load("Europe/Berlin")
    var text = LocalTimeText(rules)
    Self.expectFormattersBytes(
      &text, rules: rules,
      at: [-1_000_000_000_000, -62_135_596_801, -62_135_596_800, 253_402_300_800, 1_000_000_000_000],
      in: "Europe/Berlin")
    // 10000-01-01 and 0001-01-01 at 00:00 UTC: Berlin's winter time far ahead, its local mean
    // time (+00:53:28, written without its seconds) far back.
    var out: [UInt8] = []
    text.appendISO8601(Instant(seconds: 253_402_300_800), to: &out)
    out.append(UInt8(ascii: "|"))
    text.appendISO8601(Instant(seconds: -62_135_596_800), to: &out)
    #expect(String(decoding: out, as: UTF8.self) == "10000-01-01T01:00:00+01:00|0001-01-01T00:53:28+00:53")
  }

  /// Spot values worked out by hand: the last second of +01:00 and the first of +02:00 in Berlin.
  @Test func berlinAroundSpringForward() throws {
    var text = LocalTimeText(try ZoneRules.load("Europe/Berlin"))
    var out: [UInt8] = []
    text.appendISO8601(Instant(seconds: 1_711_846_799), to: &out)
    out.append(UInt8(ascii: "|"))
    text.appendISO8601(Instant(seconds: 1_711_846_800), to: &out)
    #expect(String(decoding: out, as: UTF8.self) == "2024-03-31T01:59:59+01:00|2024-03-31T03:00:00+02:00")
  }
}
