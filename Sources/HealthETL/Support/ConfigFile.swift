import Foundation

/// A configuration or state file that cannot be used: the file, the line when known, the key path
/// (`jobs[2].options[1]`; empty for the file as a whole) and what was expected, in one line.
public struct ConfigFileError: Error, Sendable, Equatable, CustomStringConvertible {
  public var file: String
  public var line: Int?
  public var keyPath: String
  public var message: String
  /// The system's error number when the file could not be read (`errno`), nil for a file read
  /// and found wanting: a run tells the machine's fault (no descriptor left) by it.
  public var systemCode: Int32?

  public init(file: String, line: Int? = nil, keyPath: String = "", message: String, systemCode: Int32? = nil) {
    self.file = file
    self.line = line
    self.keyPath = keyPath
    self.message = message
    self.systemCode = systemCode
  }

  /// `file` could not be read: the system's words for `code`, and for want of a descriptor what
  /// to do about it.
  public static func unreadable(_ file: String, code: Int32) -> ConfigFileError {
    var message = "cannot be read: \(String(cString: strerror(code)))"
    if code == EMFILE || code == ENFILE {
      var limit = rlimit()
      if code == EMFILE, getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 {
        message += " (this process may open \(limit.rlim_cur))"
      }
      message += "; the machine's limit, not the file's fault. Raise the limit (ulimit -n) and run again"
    }
    return ConfigFileError(file: file, message: message, systemCode: code)
  }

  /// Whether the file could not be read for want of a file descriptor (EMFILE, ENFILE).
  public var isOutOfDescriptors: Bool { systemCode == EMFILE || systemCode == ENFILE }

  /// `Pipelines/x.json:7: jobs[2].optoins: unknown key (did you mean 'options'?)`.
  public var description: String {
    var text = file
    if let line { text += ":\(line)" }
    text += ": "
    if !keyPath.isEmpty { text += keyPath + ": " }
    return text + message
  }
}

/// Reading configuration files: bounded in size, strictly parsed, every value checked for its
/// type and range by the reader that knows what the key means.
public enum ConfigFile {
  /// Pipelines and the workout code table are a few KB; anything this large is not one.
  public static let defaultSizeLimit = 4 << 20

  /// The file's bytes; an error when it cannot be read, is not a regular file, or exceeds `limit`.
  public static func read(_ path: String, limit: Int = defaultSizeLimit) throws(ConfigFileError) -> [UInt8] {
    var info = stat()
    guard stat(path, &info) == 0 else { throw .unreadable(path, code: errno) }
    guard (info.st_mode & S_IFMT) == S_IFREG else {
      throw ConfigFileError(file: path, message: "is not a regular file")
    }
    guard info.st_size <= limit else {
      throw ConfigFileError(
        file: path, message: "is \(info.st_size) bytes; a file of this kind is at most \(limit) bytes")
    }
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw .unreadable(path, code: errno) }
    defer { close(descriptor) }
    // Read to its end, not to the size `stat` saw: a file grown past the limit since is refused.
    var bytes: [UInt8] = []
    bytes.reserveCapacity(Int(info.st_size))
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while bytes.count <= limit {
      let got = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
      if got < 0 && errno == EINTR { continue }
      guard got >= 0 else { throw .unreadable(path, code: errno) }
      if got == 0 { return bytes }
      bytes.append(contentsOf: chunk[..<got])
    }
    throw ConfigFileError(file: path, message: "is over \(limit) bytes; a file of this kind is at most \(limit) bytes")
  }

  /// The root of a file's JSON text.
  public static func parse(_ bytes: [UInt8], file: String) throws(ConfigFileError) -> ConfigNode {
    do {
      return ConfigNode(value: try StrictJSON.parse(bytes), keyPath: "", file: file)
    } catch {
      throw ConfigFileError(
        file: file, line: error.line, keyPath: error.keyPath, message: "not valid JSON: \(error.reason)")
    }
  }
}

/// One value of a configuration file at its key path, with typed accessors whose errors name the
/// file, the line, the key path and what was expected. `null` is never taken for "absent": a key
/// that is present must hold a value of its type.
public struct ConfigNode: Sendable {
  public let value: JSONValue
  public let keyPath: String
  public let file: String

  public var line: Int { value.line }

  public func error(_ message: String) -> ConfigFileError {
    ConfigFileError(file: file, line: value.line, keyPath: keyPath, message: message)
  }

  private func expected(_ what: String) -> ConfigFileError {
    error("must be \(what), not \(value.typeDescription)")
  }

  public func string() throws(ConfigFileError) -> String {
    guard case .string(let text) = value.kind else { throw expected("a string") }
    return text
  }

  public func nonEmptyString() throws(ConfigFileError) -> String {
    let text = try string()
    guard !text.isEmpty else { throw error("must not be empty") }
    return text
  }

  public func bool() throws(ConfigFileError) -> Bool {
    guard case .bool(let flag) = value.kind else { throw expected("true or false") }
    return flag
  }

  /// A whole number within `range`, written without fraction or exponent; the message quotes the
  /// number as written, so `1e300` is reported as `1e300`.
  public func integer(in range: ClosedRange<Int>) throws(ConfigFileError) -> Int {
    guard case .number(let text) = value.kind else { throw expected("a whole number") }
    guard let number = Int(text) else {
      if text.contains(".") || text.lowercased().contains("e") {
        throw error("must be a whole number from \(range.lowerBound) to \(range.upperBound), not \(Self.excerpt(text))")
      }
      throw error("\(Self.excerpt(text)) is out of range: use \(range.lowerBound) to \(range.upperBound)")
    }
    guard range.contains(number) else {
      throw error("\(number) is out of range: use \(range.lowerBound) to \(range.upperBound)")
    }
    return number
  }

  /// A number within `range`, fraction allowed (a duration in seconds, say).
  public func number(in range: ClosedRange<Double>) throws(ConfigFileError) -> Double {
    guard case .number(let text) = value.kind else { throw expected("a number") }
    guard let number = Double(text), number.isFinite, range.contains(number) else {
      func plain(_ bound: Double) -> String { bound == bound.rounded() ? String(Int(bound)) : String(bound) }
      throw error("\(Self.excerpt(text)) is out of range: use \(plain(range.lowerBound)) to \(plain(range.upperBound))")
    }
    return number
  }

  public func array() throws(ConfigFileError) -> [ConfigNode] {
    guard case .array(let items) = value.kind else { throw expected("an array") }
    return items.enumerated().map { ConfigNode(value: $1, keyPath: keyPath + "[\($0)]", file: file) }
  }

  public func strings() throws(ConfigFileError) -> [String] {
    var result: [String] = []
    for item in try array() { result.append(try item.string()) }
    return result
  }

  /// The object's members, checked against the keys the format knows and needs.
  ///
  /// - Parameters:
  ///   - allowed: every key the format defines; another is an error with a did-you-mean hint.
  ///   - required: keys that must be present.
  public func object(allowed: [String], required: [String] = []) throws(ConfigFileError) -> ConfigObject {
    guard case .object(let members) = value.kind else { throw expected("an object") }
    for member in members where !allowed.contains(member.key) {
      let nearest = allowed.min { Self.distance($0, member.key) < Self.distance($1, member.key) }
      let hint = nearest.map { Self.distance($0, member.key) <= 3 ? " (did you mean '\($0)'?)" : "" } ?? ""
      throw ConfigFileError(
        file: file, line: member.line, keyPath: join(Self.excerpt(member.key)),
        message: "unknown key\(hint); allowed: \(allowed.joined(separator: ", "))")
    }
    for key in required where !members.contains(where: { $0.key == key }) {
      throw ConfigFileError(file: file, line: value.line, keyPath: join(key), message: "is required")
    }
    return ConfigObject(members: members, node: self)
  }

  /// The value of `key` in this object before its keys are checked (a key that decides which
  /// others are allowed); nil when absent.
  public func peek(_ key: String) throws(ConfigFileError) -> ConfigNode? {
    guard case .object(let members) = value.kind else { throw expected("an object") }
    return members.first { $0.key == key }.map { ConfigNode(value: $0.value, keyPath: join(key), file: file) }
  }

  /// The members of an object whose keys are data (a name → value table), in file order.
  public func entries() throws(ConfigFileError) -> [(key: String, value: ConfigNode)] {
    guard case .object(let members) = value.kind else { throw expected("an object") }
    return members.map { ($0.key, ConfigNode(value: $0.value, keyPath: join($0.key), file: file)) }
  }

  func join(_ key: String) -> String { keyPath.isEmpty ? key : keyPath + "." + key }

  /// At most `limit` characters of a text from the file, so a 10 MB value is not echoed whole.
  public static func excerpt(_ text: String, limit: Int = 80) -> String {
    text.count <= limit ? text : String(text.prefix(limit - 3)) + "…"
  }

  /// Edit distance, for "did you mean" hints (bounded: keys are short, unknown ones may not be).
  static func distance(_ a: String, _ b: String) -> Int {
    let a = Array(a.lowercased().prefix(64))
    let b = Array(b.lowercased().prefix(64))
    guard !a.isEmpty else { return b.count }
    var row = Array(0...b.count)
    for i in 1...a.count {
      var previous = row[0]
      row[0] = i
      for j in stride(from: 1, through: b.count, by: 1) {
        let current = row[j]
        row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
        previous = current
      }
    }
    return row[b.count]
  }
}

/// An object of a configuration file whose keys were checked.
public struct ConfigObject: Sendable {
  let members: [JSONMember]
  let node: ConfigNode

  /// The value of `key`, nil when the key is absent (present and `null` is a value: its typed
  /// accessor reports it).
  public subscript(key: String) -> ConfigNode? {
    guard let member = members.first(where: { $0.key == key }) else { return nil }
    return ConfigNode(value: member.value, keyPath: node.join(key), file: node.file)
  }

  /// The value of a key that must be present.
  public func required(_ key: String) throws(ConfigFileError) -> ConfigNode {
    guard let value = self[key] else {
      throw ConfigFileError(file: node.file, line: node.line, keyPath: node.join(key), message: "is required")
    }
    return value
  }
}
