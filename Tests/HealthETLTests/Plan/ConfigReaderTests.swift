import Foundation
import HealthETL
import Testing

/// One strict reader for every configuration file: each shipped pipeline and the code table with
/// every key set to null, to each wrong JSON type, and deleted, must be refused at exactly that
/// key (or accepted, for an optional key that is deleted) — never trapped, never taken as absent.
@Suite struct ConfigReaderTests {
  static let pipelines = StageHarness.repository.appendingPathComponent("Pipelines")

  static var shippedFiles: [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: pipelines.path)) ?? []).filter { $0.hasSuffix(".json") }
      .sorted()
  }

  /// Decodes a pipeline and plans it, or reads a code table: what `pipelines check` does.
  static func check(_ text: String, file: String) throws(ConfigFileError) {
    let path = pipelines.appendingPathComponent(file).path
    if file == "workout-codes.json" {
      _ = try WorkoutCodeTable.parse(Array(text.utf8), file: path)
    } else {
      _ = try RunPlanner.plan([PipelineDecoder.decode(Array(text.utf8), path: path)])
    }
  }

  /// Every key path of a document (`jobs[2].options[1]`), parents first.
  static func paths(_ value: JSONValue, _ prefix: String = "") -> [(String, JSONValue)] {
    var result: [(String, JSONValue)] = []
    switch value.kind {
    case .object(let members):
      for member in members {
        let path = prefix.isEmpty ? member.key : prefix + "." + member.key
        result.append((path, member.value))
        result += paths(member.value, path)
      }
    case .array(let items):
      for (index, item) in items.enumerated() {
        let path = prefix + "[\(index)]"
        result.append((path, item))
        result += paths(item, path)
      }
    default: break
    }
    return result
  }

  enum Edit { case replace(String), delete }

  /// The document's text with the value at `target` replaced or its key deleted.
  static func render(_ value: JSONValue, _ path: String = "", target: String, edit: Edit) -> String {
    if path == target, case .replace(let text) = edit { return text }
    switch value.kind {
    case .object(let members):
      var parts: [String] = []
      for member in members {
        let child = path.isEmpty ? member.key : path + "." + member.key
        if child == target, case .delete = edit { continue }
        parts.append(quoted(member.key) + ": " + render(member.value, child, target: target, edit: edit))
      }
      return "{" + parts.joined(separator: ", ") + "}"
    case .array(let items):
      var parts: [String] = []
      for (index, item) in items.enumerated() {
        let child = path + "[\(index)]"
        if child == target, case .delete = edit { continue }
        parts.append(render(item, child, target: target, edit: edit))
      }
      return "[" + parts.joined(separator: ", ") + "]"
    case .string(let text): return quoted(text)
    case .number(let text): return text
    case .bool(let flag): return flag ? "true" : "false"
    case .null: return "null"
    }
  }

  static func quoted(_ text: String) -> String {
    String(decoding: try! JSONSerialization.data(withJSONObject: [text]), as: UTF8.self).dropFirst().dropLast()
      .description
  }

  static func wrongTypes(for value: JSONValue) -> [String] {
    let all: [(String, (JSONValue.Kind) -> Bool)] = [
      ("null", { if case .null = $0 { return true } else { return false } }),
      ("\"text\"", { if case .string = $0 { return true } else { return false } }),
      ("7", { if case .number = $0 { return true } else { return false } }),
      ("true", { if case .bool = $0 { return true } else { return false } }),
      ("[]", { if case .array = $0 { return true } else { return false } }),
      ("{}", { if case .object = $0 { return true } else { return false } }),
    ]
    return all.filter { !$0.1(value.kind) }.map(\.0)
  }

  @Test(arguments: shippedFiles)
  func everyKeyNullWrongTypedOrDeletedIsRefusedAtThatKey(file: String) throws {
    let text = try String(contentsOf: Self.pipelines.appendingPathComponent(file), encoding: .utf8)
    try Self.check(text, file: file)
    let root = try StrictJSON.parse(Array(text.utf8))
    var cases = 0
    for (path, value) in Self.paths(root) {
      for replacement in Self.wrongTypes(for: value) {
        let mutated = Self.render(root, target: path, edit: .replace(replacement))
        cases += 1
        // A list of strings given an empty array is a legal (if useless) value.
        if replacement == "[]", case .array = value.kind { continue }
        do {
          try Self.check(mutated, file: file)
          Issue.record("\(file): \(path) = \(replacement) was accepted")
        } catch {
          #expect(error.keyPath == path, "\(file): \(path) = \(replacement): \(error)")
        }
      }
      let deleted = Self.render(root, target: path, edit: .delete)
      cases += 1
      do { try Self.check(deleted, file: file) } catch {
        #expect(error.keyPath.hasPrefix(path.split(separator: "[").first.map(String.init) ?? path), "\(error)")
        #expect(!error.message.isEmpty)
      }
    }
    #expect(cases > 20)
  }

  static func failure(_ text: String) -> ConfigFileError? {
    do {
      try check(text, file: "test.json")
      return nil
    } catch { return error }
  }

  static let minimal = #"{"version": 1, "name": "x", "jobs": [{"name": "s", "kind": "sleep"}]}"#

  @Test func duplicateAndUnknownKeysAreRefused() throws {
    let duplicate = try #require(Self.failure(#"{"version": 1, "version": 1, "name": "x", "jobs": []}"#))
    #expect(duplicate.keyPath == "version")
    #expect(duplicate.message.contains("appears twice"))
    let unknown = try #require(Self.failure(#"{"version": 1, "name": "x", "jobs": [], "nmae": 1}"#))
    #expect(unknown.keyPath == "nmae")
    #expect(unknown.message.contains("did you mean 'name'?"))
  }

  @Test func bytesThatAreNotUTF8AreRefusedWithTheirLine() throws {
    var bytes = Array("{\"version\": 1,\n\"name\": \"".utf8) + [0xC3, 0x28] + Array("\",\n\"jobs\": []}".utf8)
    do {
      _ = try PipelineDecoder.decode(bytes, path: "bad.json")
      Issue.record("accepted invalid UTF-8")
    } catch {
      #expect(error.line == 2)
      #expect(error.message.contains("not UTF-8"))
    }
    bytes = [0xFF]
    #expect(throws: ConfigFileError.self) { _ = try PipelineDecoder.decode(bytes, path: "bad.json") }
  }

  @Test func deepNestingIsRefusedWithoutExhaustingTheStack() throws {
    let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    let error = try #require(Self.failure(deep))
    #expect(error.message.contains("nested more than 64 levels"))
  }

  @Test(arguments: [
    ("9223372036854775807", "9223372036854775807 is out of range: use 0 to 1440"),
    ("99999999999999999999999", "99999999999999999999999 is out of range: use 0 to 1440"),
    ("1e18", "must be a whole number from 0 to 1440, not 1e18"),
    ("1e300", "must be a whole number from 0 to 1440, not 1e300"),
    ("1.5", "must be a whole number from 0 to 1440, not 1.5"),
    ("-1", "-1 is out of range: use 0 to 1440"),
  ])
  func hugeNumbersAreRefusedAsWritten(number: String, message: String) throws {
    let text =
      #"{"version": 1, "name": "x", "sleep": {"sessionGapMinutes": "# + number
      + #"}, "jobs": [{"name": "s", "kind": "sleep"}]}"#
    let error = try #require(Self.failure(text))
    #expect(error.keyPath == "sleep.sessionGapMinutes")
    #expect(error.message == message)
  }

  @Test func aLongUnknownKeyIsNotEchoedWhole() throws {
    let key = String(repeating: "k", count: 10_000_000)
    let error = try #require(Self.failure(#"{"version": 1, "name": "x", "jobs": [], ""# + key + #"": 1}"#))
    #expect(error.description.utf8.count < 400)
  }

  @Test func anEmptySourcePrioritySubstringIsRefused() throws {
    let error = try #require(
      Self.failure(#"{"version": 1, "name": "x", "sourcePriority": [""], "jobs": [{"name": "s", "kind": "sleep"}]}"#))
    #expect(error.keyPath == "sourcePriority[0]")
  }

  @Test func theMinimalPipelineIsAccepted() throws {
    try Self.check(Self.minimal, file: "test.json")
  }
}
