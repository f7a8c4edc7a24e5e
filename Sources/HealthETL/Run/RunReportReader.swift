import Foundation

extension RunReport {
  /// The `run.json` an earlier commit left in the output folder, read strictly (`StrictJSON`), as
  /// the object a later step of the same folder adds its section to (the night's summary, a
  /// delivery): nil when there is none. One that is not a JSON object HealthETL could have
  /// written — a key twice, text that is not UTF-8, a top level that is not an object — is an
  /// error naming the file and line, rather than being replaced silently by a report holding only
  /// the new section. Only a file that is not there (ENOENT) is none: one that cannot be read —
  /// out of descriptors, a folder, no permission — is an error with its errno, never replaced.
  static func readForAmending(_ path: String) throws(OutputError) -> [String: Any]? {
    guard let data = try readWhole(path) else { return nil }
    let value: JSONValue
    do { value = try StrictJSON.parse(data) } catch {
      throw .ioError(
        path: path,
        reason:
          "line \(error.line): \(error.keyPath.isEmpty ? "" : error.keyPath + ": ")\(error.reason); it is not a run.json HealthETL wrote: move it away and run again"
      )
    }
    guard let object = foundationObject(value) as? [String: Any] else {
      throw .ioError(
        path: path,
        reason: "line \(value.line): is \(value.typeDescription), not an object; move it away and run again")
    }
    return object
  }

  /// The bytes of the file at `path`; nil when there is no such file.
  private static func readWhole(_ path: String) throws(OutputError) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else {
      let code = errno
      if code == ENOENT { return nil }
      throw .reading(path, code: code)
    }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if got < 0 {
        if errno == EINTR { continue }
        throw .reading(path, code: errno)
      }
      if got == 0 { return bytes }
      bytes += chunk[..<got]
    }
  }

  /// What `JSONSerialization` would have read, so the amended file keeps every other value's text.
  private static func foundationObject(_ value: JSONValue) -> Any {
    switch value.kind {
    case .object(let members):
      return Dictionary(members.map { ($0.key, foundationObject($0.value)) }, uniquingKeysWith: { $1 })
    case .array(let items): return items.map(foundationObject)
    case .string(let text): return text
    case .number(let text):
      if !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), let integer = Int(text) { return integer }
      return Double(text) ?? 0
    case .bool(let flag): return flag
    case .null: return NSNull()
    }
  }
}
