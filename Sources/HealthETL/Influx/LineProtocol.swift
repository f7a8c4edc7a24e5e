/// InfluxDB line protocol as HealthETL writes it (Pipelines/influx/README.md, "Escaping"): one
/// point a line, `measurement[,key=value…] key=value[,…] seconds` and a line feed, read the same
/// by InfluxDB 1.x, 2.x and 3.x.
///
/// What comes from an export (type and source names, category values, text values) can never
/// break a line or add a point: control characters (line feeds included) become spaces; a
/// backslash in a name or tag value becomes `/`, because 1.x cannot escape one there (`a\\`
/// ends a tag value with an escaped separator) and 2.x reads `\\` as one backslash, so no
/// spelling means the same to both; spaces, commas and `=` are escaped where the grammar says;
/// a string value escapes `"` and `\`. Names are cut at `nameLimit` bytes and strings at
/// `stringLimit`, at a character boundary, so no line exceeds what a server takes. A number that
/// is not finite is no value; a point without a value, or with a time InfluxDB cannot store,
/// is not written.
public enum LineProtocol {
  /// Bytes of a measurement, tag key, tag value or field key, before escaping.
  public static let nameLimit = 256
  /// Bytes of a string field value, before escaping.
  public static let stringLimit = 4096
  /// Seconds InfluxDB can store: its nanoseconds are a 64-bit integer (1677-09-21 to 2262-04-11).
  public static let timeRange: ClosedRange<Int64> = -9_223_372_036...9_223_372_036

  /// Where a name goes: each has its own characters to escape.
  public enum NamePart: Sendable {
    /// Escapes comma and space; a leading `#` (a comment line) or `_` (names InfluxDB 2.x keeps
    /// for itself) gets an `x` before it.
    case measurement
    /// Tag keys, tag values, field keys: comma, `=` and space.
    case key
  }

  /// A field's value.
  public enum Value: Sendable, Equatable {
    case float(Double)
    case integer(Int64)
    case string(String)
  }

  static let space = UInt8(ascii: " ")
  static let comma = UInt8(ascii: ",")
  static let equals = UInt8(ascii: "=")
  static let backslash = UInt8(ascii: "\\")
  static let slash = UInt8(ascii: "/")
  static let quote = UInt8(ascii: "\"")
  static let newline = UInt8(ascii: "\n")

  /// Appends `name` as `part`; appends nothing and returns false when nothing is left of it (an
  /// empty name, which the grammar does not allow).
  @discardableResult
  public static func appendName(_ name: UnsafeRawBufferPointer, as part: NamePart, to out: inout [UInt8]) -> Bool {
    let length = cut(name, at: nameLimit)
    guard length > 0 else { return false }
    if part == .measurement, name[0] == UInt8(ascii: "#") || name[0] == UInt8(ascii: "_") {
      out.append(UInt8(ascii: "x"))
    }
    for index in 0..<length {
      var byte = name[index]
      if byte < 0x20 || byte == 0x7F { byte = space }
      if byte == backslash { byte = slash }
      if byte == space || byte == comma || (byte == equals && part == .key) { out.append(backslash) }
      out.append(byte)
    }
    return true
  }

  @discardableResult
  public static func appendName(_ name: String, as part: NamePart, to out: inout [UInt8]) -> Bool {
    var text = name
    return text.withUTF8 { appendName(UnsafeRawBufferPointer($0), as: part, to: &out) }
  }

  /// Appends `"text"`, its quotes and backslashes escaped, control characters as spaces.
  public static func appendString(_ text: UnsafeRawBufferPointer, to out: inout [UInt8]) {
    out.append(quote)
    for index in 0..<cut(text, at: stringLimit) {
      var byte = text[index]
      if byte < 0x20 || byte == 0x7F { byte = space }
      if byte == quote || byte == backslash { out.append(backslash) }
      out.append(byte)
    }
    out.append(quote)
  }

  public static func appendString(_ text: String, to out: inout [UInt8]) {
    var copy = text
    copy.withUTF8 { appendString(UnsafeRawBufferPointer($0), to: &out) }
  }

  /// Appends a float in the shortest form that reads back to it; false, and nothing appended,
  /// for NaN and infinities, which line protocol cannot carry.
  @discardableResult
  public static func appendFloat(_ value: Double, to out: inout [UInt8]) -> Bool {
    guard value.isFinite else { return false }
    CSVField.appendNumber(value, to: &out)
    return true
  }

  /// Appends `123i`.
  public static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
    CSVField.appendInteger(value, to: &out)
    out.append(UInt8(ascii: "i"))
  }

  /// Appends ` <seconds>` and the line feed.
  static func appendTime(_ seconds: Int64, to out: inout [UInt8]) {
    out.append(space)
    CSVField.appendInteger(seconds, to: &out)
    out.append(newline)
  }

  /// Whether `text` is a decimal number as the line-protocol grammar writes a float
  /// (`-12`, `0.97`, `1.5e-05`; never `+1`, ` 1`, `1,5`, `inf`, `nan`, hex), with few enough
  /// digits that it cannot overflow: a value as an export wrote it that can be passed through
  /// as it is. `exponentDigits`: 2 for what an export wrote; 3 reads back what `appendFloat`
  /// writes of the largest and smallest doubles (`1e+308`, `5e-324`).
  public static func isPlainFloat(_ text: UnsafeRawBufferPointer, exponentDigits: Int = 2) -> Bool {
    var index = 0
    let count = text.count
    guard count > 0, count <= 40 else { return false }
    func digits() -> Int {
      let start = index
      while index < count, text[index] >= 0x30, text[index] <= 0x39 { index += 1 }
      return index - start
    }
    if text[index] == UInt8(ascii: "-") { index += 1 }
    guard digits() > 0 else { return false }
    if index < count, text[index] == UInt8(ascii: ".") {
      index += 1
      guard digits() > 0 else { return false }
    }
    if index < count, text[index] == UInt8(ascii: "e") || text[index] == UInt8(ascii: "E") {
      index += 1
      if index < count, text[index] == UInt8(ascii: "+") || text[index] == UInt8(ascii: "-") { index += 1 }
      // At most two exponent digits by default: 40 digits and e99 stay far below Double's 1.8e308.
      let exponent = digits()
      guard exponent > 0, exponent <= exponentDigits else { return false }
    }
    return index == count
  }

  /// How many bytes of `text` fit in `limit` without cutting a UTF-8 character in two.
  static func cut(_ text: UnsafeRawBufferPointer, at limit: Int) -> Int {
    guard text.count > limit else { return text.count }
    var length = limit
    while length > 0, text[length] & 0xC0 == 0x80 { length -= 1 }
    return length
  }

  /// One point with its names and values as given; `append` writes it by the rules above.
  public struct Point: Sendable, Equatable {
    public var measurement: String
    public var tags: [Tag]
    public var fields: [Field]
    /// Unix seconds.
    public var time: Int64

    public struct Tag: Sendable, Equatable {
      public var key: String
      public var value: String

      public init(_ key: String, _ value: String) {
        self.key = key
        self.value = value
      }
    }

    public struct Field: Sendable, Equatable {
      public var key: String
      /// Nil: the field has no value here and is left out.
      public var value: Value?

      public init(_ key: String, _ value: Value?) {
        self.key = key
        self.value = value
      }
    }

    public init(measurement: String, tags: [Tag] = [], fields: [Field], time: Int64) {
      self.measurement = measurement
      self.tags = tags
      self.fields = fields
      self.time = time
    }

    /// Appends the line: tags sorted by their written key (as InfluxDB sorts them), a tag
    /// whose key or value is empty left out, as is a later tag or field whose written key an
    /// earlier one has, and a field without a value (a nil, a float that is not finite).
    /// Returns false, and appends nothing, when no field is left, the measurement is empty or
    /// the time is outside `timeRange`.
    @discardableResult
    public func append(to out: inout [UInt8]) -> Bool {
      guard timeRange.contains(time) else { return false }
      let start = out.count
      guard appendName(measurement, as: .measurement, to: &out) else { return false }
      var written: [(key: [UInt8], value: [UInt8])] = []
      for tag in tags {
        var key: [UInt8] = []
        var value: [UInt8] = []
        guard appendName(tag.key, as: .key, to: &key), appendName(tag.value, as: .key, to: &value),
          !written.contains(where: { $0.key == key })
        else { continue }
        written.append((key, value))
      }
      for tag in written.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
        out.append(comma)
        out.append(contentsOf: tag.key)
        out.append(equals)
        out.append(contentsOf: tag.value)
      }
      var keys: [[UInt8]] = []
      for field in fields {
        guard let value = field.value else { continue }
        var key: [UInt8] = []
        guard appendName(field.key, as: .key, to: &key), !keys.contains(key) else { continue }
        var text: [UInt8] = []
        switch value {
        case .float(let number): guard appendFloat(number, to: &text) else { continue }
        case .integer(let number): appendInteger(number, to: &text)
        case .string(let string): appendString(string, to: &text)
        }
        keys.append(key)
        out.append(keys.count == 1 ? space : comma)
        out.append(contentsOf: key)
        out.append(equals)
        out.append(contentsOf: text)
      }
      guard !keys.isEmpty else {
        out.removeSubrange(start...)
        return false
      }
      appendTime(time, to: &out)
      return true
    }
  }
}
