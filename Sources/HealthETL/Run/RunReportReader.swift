import Foundation

extension RunReport {
  /// The `run.json` an earlier commit left in the output folder, read strictly (`StrictJSON`), as
  /// the object a later step of the same folder adds its section to (the night's summary, a
  /// delivery): nil when there is none. One that is not a JSON object HealthETL could have
  /// written — a key twice, text that is not UTF-8, a top level that is not an object — is an
  /// error naming the file and line, rather than being replaced silently by a report holding only
  /// the new section.
  static func readForAmending(_ path: String) throws(OutputError) -> [String: Any]? {
    guard let data = FileManager.default.contents(atPath: path) else { return nil }
    let value: JSONValue
    do { value = try StrictJSON.parse(Array(data)) } catch {
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
