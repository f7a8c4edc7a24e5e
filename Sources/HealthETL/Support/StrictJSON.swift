/// A JSON value as written, with the line it starts on, so errors can point into the file.
public struct JSONValue: Sendable {
  public enum Kind: Sendable {
    case object([JSONMember])
    case array([JSONValue])
    case string(String)
    /// The number's text as written: the reader decides what range and precision it accepts.
    case number(String)
    case bool(Bool)
    case null
  }

  public var kind: Kind
  public var line: Int

  /// `an object`, `a string`, `null`: for messages that say what was found.
  public var typeDescription: String {
    switch kind {
    case .object: return "an object"
    case .array: return "an array"
    case .string: return "a string"
    case .number: return "a number"
    case .bool: return "true/false"
    case .null: return "null"
    }
  }
}

/// One `"key": value` of an object, in file order.
public struct JSONMember: Sendable {
  public var key: String
  public var value: JSONValue
  /// The line of the key.
  public var line: Int
}

/// Text that is not the JSON a configuration file must be.
public struct JSONSyntaxError: Error, Sendable, Equatable {
  public var line: Int
  /// Where in the document, as far as it was read (`codes.Running`, `jobs[2]`).
  public var keyPath: String
  public var reason: String
}

/// RFC 8259 JSON, read strictly for the files people and programs edit by hand (pipelines, the
/// workout code table, the nightly state). Beyond what `JSONSerialization` checks, it refuses a
/// key written twice in one object (the second copy of a copied line would silently win), bytes
/// that are not UTF-8, and nesting deeper than a configuration ever needs (a 100,000-deep array
/// cannot exhaust the stack), and it keeps each value's line for messages. Numbers stay text, so
/// a reader never sees a value the file does not hold (`1e300` is not "−9223372036854775808").
public enum StrictJSON {
  /// Configuration files nest a few levels; this bounds recursion.
  public static let maximumDepth = 64

  /// Parses one JSON document; a UTF-8 byte-order mark, as some editors write, is allowed.
  public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
    var reader = Reader(bytes: bytes)
    return try reader.document()
  }

  private struct Reader {
    let bytes: [UInt8]
    var index = 0
    var line = 1
    var depth = 0
    /// The key path of the value being read, for messages.
    var path: [String] = []

    init(bytes: [UInt8]) {
      self.bytes = bytes
      if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    mutating func document() throws(JSONSyntaxError) -> JSONValue {
      guard String(validating: bytes, as: UTF8.self) != nil else {
        throw JSONSyntaxError(line: firstInvalidUTF8Line(), keyPath: "", reason: "the file is not UTF-8 text")
      }
      skipSpace()
      guard index < bytes.count else { throw fail("the file is empty") }
      let value = try parseValue()
      skipSpace()
      guard index == bytes.count else { throw fail("unexpected text after the JSON value") }
      return value
    }

    private func fail(_ reason: String) -> JSONSyntaxError {
      JSONSyntaxError(line: line, keyPath: keyPath(), reason: reason)
    }

    private func keyPath() -> String {
      var text = ""
      for part in path {
        if part.hasPrefix("[") || text.isEmpty { text += part } else { text += "." + part }
      }
      return text
    }

    private func firstInvalidUTF8Line() -> Int {
      var line = 1
      var start = 0
      while start < bytes.count {
        var end = start
        while end < bytes.count && bytes[end] != 0x0A { end += 1 }
        if String(validating: bytes[start..<end], as: UTF8.self) == nil { return line }
        line += 1
        start = end + 1
      }
      return line
    }

    private mutating func skipSpace() {
      while index < bytes.count {
        switch bytes[index] {
        case 0x0A: line += 1
        case 0x20, 0x09, 0x0D: break
        default: return
        }
        index += 1
      }
    }

    private mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
      guard index < bytes.count else { throw fail("the file ends where a value should be") }
      let startLine = line
      switch bytes[index] {
      case UInt8(ascii: "{"): return JSONValue(kind: .object(try parseObject()), line: startLine)
      case UInt8(ascii: "["): return JSONValue(kind: .array(try parseArray()), line: startLine)
      case UInt8(ascii: "\""): return JSONValue(kind: .string(try parseString()), line: startLine)
      case UInt8(ascii: "t"):
        try literal("true")
        return JSONValue(kind: .bool(true), line: startLine)
      case UInt8(ascii: "f"):
        try literal("false")
        return JSONValue(kind: .bool(false), line: startLine)
      case UInt8(ascii: "n"):
        try literal("null")
        return JSONValue(kind: .null, line: startLine)
      default: return JSONValue(kind: .number(try parseNumber()), line: startLine)
      }
    }

    private mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
      let count = word.utf8CodeUnitCount
      let matches = word.withUTF8Buffer { expected in
        index + count <= bytes.count && bytes[index..<index + count].elementsEqual(expected)
      }
      guard matches else { throw fail("unexpected character") }
      index += count
    }

    private mutating func enter() throws(JSONSyntaxError) {
      depth += 1
      guard depth <= StrictJSON.maximumDepth else {
        throw fail("nested more than \(StrictJSON.maximumDepth) levels deep")
      }
    }

    private mutating func parseObject() throws(JSONSyntaxError) -> [JSONMember] {
      try enter()
      defer { depth -= 1 }
      index += 1
      var members: [JSONMember] = []
      var seen = Set<String>()
      skipSpace()
      if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
        index += 1
        return members
      }
      while true {
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a \"key\"") }
        let keyLine = line
        let key = try parseString()
        path.append(Self.excerpt(key))
        defer { path.removeLast() }
        guard seen.insert(key).inserted else {
          throw JSONSyntaxError(line: keyLine, keyPath: keyPath(), reason: "the key appears twice in one object")
        }
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':' after a key") }
        index += 1
        skipSpace()
        members.append(JSONMember(key: key, value: try parseValue(), line: keyLine))
        skipSpace()
        guard index < bytes.count else { throw fail("the file ends inside an object") }
        if bytes[index] == UInt8(ascii: ",") {
          index += 1
          continue
        }
        guard bytes[index] == UInt8(ascii: "}") else { throw fail("expected ',' or '}'") }
        index += 1
        return members
      }
    }

    private mutating func parseArray() throws(JSONSyntaxError) -> [JSONValue] {
      try enter()
      defer { depth -= 1 }
      index += 1
      var values: [JSONValue] = []
      skipSpace()
      if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
        index += 1
        return values
      }
      while true {
        skipSpace()
        path.append("[\(values.count)]")
        defer { path.removeLast() }
        values.append(try parseValue())
        skipSpace()
        guard index < bytes.count else { throw fail("the file ends inside an array") }
        if bytes[index] == UInt8(ascii: ",") {
          index += 1
          continue
        }
        guard bytes[index] == UInt8(ascii: "]") else { throw fail("expected ',' or ']'") }
        index += 1
        return values
      }
    }

    private mutating func parseString() throws(JSONSyntaxError) -> String {
      index += 1
      var out: [UInt8] = []
      while index < bytes.count {
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""):
          // The whole document was checked to be UTF-8, and escapes only add whole scalars.
          return String(decoding: out, as: UTF8.self)
        case UInt8(ascii: "\\"):
          guard index < bytes.count else { throw fail("the file ends inside a string") }
          let escape = bytes[index]
          index += 1
          switch escape {
          case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
          case UInt8(ascii: "b"): out.append(0x08)
          case UInt8(ascii: "f"): out.append(0x0C)
          case UInt8(ascii: "n"): out.append(0x0A)
          case UInt8(ascii: "r"): out.append(0x0D)
          case UInt8(ascii: "t"): out.append(0x09)
          case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800..<0xDC00).contains(scalar) {
              guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                bytes[index + 1] == UInt8(ascii: "u")
              else { throw fail("a lone surrogate escape") }
              index += 2
              let low = try hex4()
              guard (0xDC00..<0xE000).contains(low) else { throw fail("a lone surrogate escape") }
              scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw fail("a lone surrogate escape") }
            out.append(contentsOf: Array(String(Character(unicode)).utf8))
          default: throw fail("unknown escape in a string")
          }
        case 0x0A: throw fail("a line break inside a string")
        case 0x00..<0x20: throw fail("a control character inside a string")
        default: out.append(byte)
        }
      }
      throw fail("the file ends inside a string")
    }

    private mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
      guard index + 4 <= bytes.count else { throw fail("a short \\u escape") }
      var value: UInt32 = 0
      for byte in bytes[index..<index + 4] {
        let digit: UInt32
        switch byte {
        case 0x30...0x39: digit = UInt32(byte - 0x30)
        case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
        case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
        default: throw fail("a bad \\u escape")
        }
        value = value << 4 | digit
      }
      index += 4
      return value
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> String {
      let start = index
      if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
      let integerStart = index
      while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
      let integerDigits = index - integerStart
      guard integerDigits > 0 else { throw fail("unexpected character") }
      guard integerDigits == 1 || bytes[integerStart] != 0x30 else { throw fail("a number with a leading zero") }
      if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
        index += 1
        let fractionStart = index
        while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
        guard index > fractionStart else { throw fail("a number without digits after '.'") }
      }
      if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
        index += 1
        if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
        let exponentStart = index
        while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
        guard index > exponentStart else { throw fail("a number without exponent digits") }
      }
      return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// At most 80 characters of a text from the file, so a 10 MB key is not echoed whole.
    static func excerpt(_ text: String) -> String {
      text.count <= 80 ? text : String(text.prefix(77)) + "…"
    }
  }
}
