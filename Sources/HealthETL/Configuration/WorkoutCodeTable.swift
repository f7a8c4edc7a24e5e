import Foundation
import HealthModel

/// The server code of every workout activity type (`Pipelines/workout-codes.json`, SPEC §7),
/// read strictly: the user edits this file, and a misspelt name must fail the run loudly
/// rather than silently send `SERVER999`.
///
/// File format (every key documented in `Pipelines/README-workouts.md`):
/// ```json
/// {
///   "version": 1,
///   "description": "optional free text",
///   "default": "SERVER999",
///   "codes": { "Walking": "SERVER01", "Running": "SERVER02" }
/// }
/// ```
/// `codes` keys are `HKWorkoutActivityType` case names without the prefix (`Running`, not
/// `HKWorkoutActivityTypeRunning`), deprecated cases included; a type not listed gets `default`
/// (itself `SERVER999` when absent).
public struct WorkoutCodeTable: Sendable, Equatable {
  /// Where the shipped table lives, relative to the package (and to the working directory of
  /// `make` targets).
  public static let defaultPath = "Pipelines/workout-codes.json"
  /// The only format version so far.
  public static let formatVersion = 1

  /// Code of an activity type name not in `codes`.
  public let defaultCode: String
  /// Activity type name (`Running`) → server code.
  public let codes: [String: String]

  /// A table from its parts (the shipped file's defaults: `shipped`).
  public init(defaultCode: String = "SERVER999", codes: [String: String]) {
    self.defaultCode = defaultCode
    self.codes = codes
  }

  /// The mapping SPEC §7 ships: Walking `SERVER01`, Running `SERVER02`, Cycling `SERVER03`,
  /// Hiking `SERVER04`, Swimming `SERVER05`, Gymnastics `SERVER06`, Volleyball `SERVER30`,
  /// everything else `SERVER999`.
  public static let shipped: WorkoutCodeTable = {
    let special = [
      "Walking": "SERVER01", "Running": "SERVER02", "Cycling": "SERVER03", "Hiking": "SERVER04",
      "Swimming": "SERVER05", "Gymnastics": "SERVER06", "Volleyball": "SERVER30",
    ]
    var codes: [String: String] = [:]
    for name in WorkoutActivityTypeTable.names { codes[name] = special[name] ?? "SERVER999" }
    return WorkoutCodeTable(defaultCode: "SERVER999", codes: codes)
  }()

  /// The server code of an activity type name (`Running`), or of an export string
  /// (`HKWorkoutActivityTypeRunning`).
  public func code(forActivity name: String) -> String {
    codes[WorkoutActivityTypeTable.name(fromExportString: name)] ?? defaultCode
  }

  /// Reads and validates a code table file.
  public static func load(path: String) throws(WorkoutCodeTableError) -> WorkoutCodeTable {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw WorkoutCodeTableError(file: path, keyPath: nil, line: nil, reason: "cannot read the file")
    }
    return try parse(Array(data), file: path)
  }

  /// Validates the text of a code table; `file` names it in errors.
  public static func parse(_ bytes: [UInt8], file: String) throws(WorkoutCodeTableError) -> WorkoutCodeTable {
    var reader = CodeFileReader(bytes: bytes, file: file)
    let root = try reader.document()
    guard case .object(let members) = root.value else {
      throw WorkoutCodeTableError(
        file: file, keyPath: nil, line: root.line, reason: "the file must hold one JSON object")
    }
    var version: Int?
    var defaultCode = "SERVER999"
    var codes: [String: String]?
    for member in members {
      switch member.key {
      case "version":
        guard case .number(let text) = member.value.value, let number = Int(text) else {
          throw member.error(file, "must be the integer \(formatVersion)")
        }
        guard number == formatVersion else {
          throw member.error(file, "version \(number) is not supported; this HealthETL reads version \(formatVersion)")
        }
        version = number
      case "description":
        guard case .string = member.value.value else { throw member.error(file, "must be a string") }
      case "default":
        defaultCode = try serverCode(member, file: file)
      case "codes":
        guard case .object(let entries) = member.value.value else {
          throw member.error(file, "must be an object of activity type name → server code")
        }
        var table: [String: String] = [:]
        for entry in entries {
          let path = "codes." + entry.key
          guard WorkoutActivityTypeTable.rawValue(for: entry.key) != nil else {
            let hint =
              entry.key.hasPrefix(WorkoutActivityTypeTable.prefix)
              ? "write it without the \(WorkoutActivityTypeTable.prefix) prefix"
              : "names are HKWorkoutActivityType cases such as Running or TraditionalStrengthTraining"
            throw WorkoutCodeTableError(
              file: file, keyPath: path, line: entry.line,
              reason: "unknown activity type '\(entry.key)': \(hint)")
          }
          table[entry.key] = try serverCode(entry, file: file, path: path)
        }
        codes = table
      default:
        throw WorkoutCodeTableError(
          file: file, keyPath: member.key, line: member.line,
          reason: "unknown key '\(member.key)': the keys are version, description, default and codes")
      }
    }
    guard version != nil else {
      throw WorkoutCodeTableError(file: file, keyPath: "version", line: nil, reason: "missing key 'version'")
    }
    guard let codes else {
      throw WorkoutCodeTableError(file: file, keyPath: "codes", line: nil, reason: "missing key 'codes'")
    }
    return WorkoutCodeTable(defaultCode: defaultCode, codes: codes)
  }

  private static func serverCode(_ member: CodeFileMember, file: String, path: String? = nil)
    throws(WorkoutCodeTableError) -> String
  {
    guard case .string(let code) = member.value.value,
      !code.isEmpty, code.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0 != " " })
    else {
      throw member.error(file, "must be a non-empty server code string without spaces", path: path)
    }
    return code
  }
}

/// A code table file that cannot be used, naming the file, the key path and the line.
public struct WorkoutCodeTableError: Error, Equatable, CustomStringConvertible {
  /// The file as given.
  public let file: String
  /// `codes.Runing`, `version`; nil for errors of the file as a whole.
  public let keyPath: String?
  /// The line of the key or of the JSON error, when known.
  public let line: Int?
  /// What is wrong, in a sentence.
  public let reason: String

  /// An error of `file` at `keyPath`.
  public init(file: String, keyPath: String?, line: Int?, reason: String) {
    self.file = file
    self.keyPath = keyPath
    self.line = line
    self.reason = reason
  }

  /// The reason with its line (`line 4: unknown key …`), for messages that name the file and
  /// key path themselves (`PipelineError`).
  public var detail: String { line.map { "line \($0): \(reason)" } ?? reason }

  public var description: String {
    var text = file
    if let line { text += ":\(line)" }
    text += ": "
    if let keyPath { text += "\(keyPath): " }
    return text + reason
  }
}

// MARK: - A strict JSON reader

/// A JSON value with the line it starts on.
private struct CodeFileValue {
  enum Kind {
    case object([CodeFileMember])
    case array([CodeFileValue])
    case string(String)
    /// The number's text as written.
    case number(String)
    case bool(Bool)
    case null
  }

  var value: Kind
  var line: Int
}

private struct CodeFileMember {
  var key: String
  var value: CodeFileValue
  /// The line of the key.
  var line: Int

  func error(_ file: String, _ reason: String, path: String? = nil) -> WorkoutCodeTableError {
    WorkoutCodeTableError(file: file, keyPath: path ?? key, line: line, reason: reason)
  }
}

/// RFC 8259 JSON, plus the one check `JSONSerialization` does not make: a key repeated in an
/// object is an error (a copied line whose second copy silently wins is the likeliest edit
/// mistake in this file).
private struct CodeFileReader {
  let bytes: [UInt8]
  let file: String
  var index = 0
  var line = 1
  var depth = 0

  init(bytes: [UInt8], file: String) {
    // A UTF-8 byte-order mark, as some editors write, is not an error.
    self.bytes = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
    self.file = file
  }

  mutating func document() throws(WorkoutCodeTableError) -> CodeFileValue {
    skipSpace()
    let value = try parseValue()
    skipSpace()
    guard index == bytes.count else { throw fail("unexpected text after the JSON object") }
    return value
  }

  private func fail(_ reason: String) -> WorkoutCodeTableError {
    WorkoutCodeTableError(file: file, keyPath: nil, line: line, reason: "not valid JSON: \(reason)")
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

  private mutating func parseValue() throws(WorkoutCodeTableError) -> CodeFileValue {
    guard index < bytes.count else { throw fail("the file ends too early") }
    let startLine = line
    switch bytes[index] {
    case UInt8(ascii: "{"): return CodeFileValue(value: .object(try parseObject()), line: startLine)
    case UInt8(ascii: "["): return CodeFileValue(value: .array(try parseArray()), line: startLine)
    case UInt8(ascii: "\""): return CodeFileValue(value: .string(try parseString()), line: startLine)
    case UInt8(ascii: "t"):
      try literal("true")
      return CodeFileValue(value: .bool(true), line: startLine)
    case UInt8(ascii: "f"):
      try literal("false")
      return CodeFileValue(value: .bool(false), line: startLine)
    case UInt8(ascii: "n"):
      try literal("null")
      return CodeFileValue(value: .null, line: startLine)
    default: return CodeFileValue(value: .number(try parseNumber()), line: startLine)
    }
  }

  private mutating func literal(_ word: String) throws(WorkoutCodeTableError) {
    let expected = Array(word.utf8)
    guard index + expected.count <= bytes.count, Array(bytes[index..<index + expected.count]) == expected else {
      throw fail("unexpected character")
    }
    index += expected.count
  }

  private mutating func enter() throws(WorkoutCodeTableError) {
    depth += 1
    guard depth <= 64 else { throw fail("nested too deeply") }
  }

  private mutating func parseObject() throws(WorkoutCodeTableError) -> [CodeFileMember] {
    try enter()
    defer { depth -= 1 }
    index += 1
    var members: [CodeFileMember] = []
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
      guard seen.insert(key).inserted else {
        throw WorkoutCodeTableError(file: file, keyPath: key, line: keyLine, reason: "key '\(key)' appears twice")
      }
      skipSpace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':' after a key") }
      index += 1
      skipSpace()
      members.append(CodeFileMember(key: key, value: try parseValue(), line: keyLine))
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

  private mutating func parseArray() throws(WorkoutCodeTableError) -> [CodeFileValue] {
    try enter()
    defer { depth -= 1 }
    index += 1
    var values: [CodeFileValue] = []
    skipSpace()
    if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
      index += 1
      return values
    }
    while true {
      skipSpace()
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

  private mutating func parseString() throws(WorkoutCodeTableError) -> String {
    index += 1
    var out: [UInt8] = []
    while index < bytes.count {
      let byte = bytes[index]
      index += 1
      switch byte {
      case UInt8(ascii: "\""):
        guard let text = String(validating: out, as: UTF8.self) else { throw fail("a string is not valid UTF-8") }
        return text
      case UInt8(ascii: "\\"):
        guard index < bytes.count else { break }
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
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
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
      case 0x00..<0x20: throw fail("a control character inside a string")
      default: out.append(byte)
      }
    }
    throw fail("the file ends inside a string")
  }

  private mutating func hex4() throws(WorkoutCodeTableError) -> UInt32 {
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

  private mutating func parseNumber() throws(WorkoutCodeTableError) -> String {
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
}
