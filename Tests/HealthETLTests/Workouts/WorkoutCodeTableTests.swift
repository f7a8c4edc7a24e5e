import Foundation
import HealthETL
import HealthModel
import Testing

/// `Pipelines/workout-codes.json` and its strict loader (Pipelines/README.md,
/// "`workout-codes.json`").
@Suite struct WorkoutCodeTableTests {
  static let shippedPath = StageHarness.repository.appendingPathComponent(WorkoutCodeTable.defaultPath).path

  static func parse(_ text: String) throws(ConfigFileError) -> WorkoutCodeTable {
    try WorkoutCodeTable.parse(Array(text.utf8), file: "codes.json")
  }

  static func error(_ text: String) -> ConfigFileError? {
    do {
      _ = try parse(text)
      return nil
    } catch {
      return error
    }
  }

  @Test func shippedFileHasEveryActivityTypeAndTheShippedCodes() throws {
    let table = try WorkoutCodeTable.load(path: Self.shippedPath)
    #expect(table == WorkoutCodeTable.shipped)
    #expect(Set(table.codes.keys) == Set(WorkoutActivityTypeTable.names))
    #expect(table.defaultCode == "SERVER999")
    let special = [
      "Walking": "SERVER01", "Running": "SERVER02", "Cycling": "SERVER03", "Hiking": "SERVER04",
      "Swimming": "SERVER05", "Gymnastics": "SERVER06", "Volleyball": "SERVER30",
    ]
    for name in WorkoutActivityTypeTable.names {
      #expect(table.code(forActivity: name) == (special[name] ?? "SERVER999"), "\(name)")
    }
    #expect(table.code(forActivity: "HKWorkoutActivityTypeVolleyball") == "SERVER30")
    #expect(table.code(forActivity: "HKWorkoutActivityTypeSomethingNew") == "SERVER999")
  }

  @Test func defaultAppliesToUnlistedTypes() throws {
    let table = try Self.parse(#"{"version": 1, "default": "OTHER", "codes": {"Yoga": "Y1"}}"#)
    #expect(table.code(forActivity: "Yoga") == "Y1")
    #expect(table.code(forActivity: "Running") == "OTHER")
    let implicit = try Self.parse(#"{"version": 1, "description": "mine", "codes": {}}"#)
    #expect(implicit.code(forActivity: "Running") == "SERVER999")
  }

  @Test func unknownTopLevelKeyIsNamed() throws {
    let error = try #require(Self.error("{\n  \"version\": 1,\n  \"codes\": {},\n  \"defualt\": \"X\"\n}"))
    #expect(error.keyPath == "defualt")
    #expect(error.line == 4)
    #expect(error.description.hasPrefix("codes.json:4: defualt: unknown key (did you mean 'default'?)"))
  }

  @Test func unknownActivityNameIsNamed() throws {
    let error = try #require(Self.error(#"{"version": 1, "codes": {"Walking": "SERVER01", "Runing": "SERVER02"}}"#))
    #expect(error.file == "codes.json")
    #expect(error.keyPath == "codes.Runing")
    #expect(error.description.contains("unknown activity type 'Runing'"))
    let prefixed = try #require(Self.error(#"{"version": 1, "codes": {"HKWorkoutActivityTypeRunning": "S"}}"#))
    #expect(prefixed.keyPath == "codes.HKWorkoutActivityTypeRunning")
    #expect(prefixed.message.contains("without the HKWorkoutActivityType prefix"))
    // Names are case-sensitive, like the export's.
    #expect(Self.error(#"{"version": 1, "codes": {"running": "S"}}"#)?.keyPath == "codes.running")
  }

  @Test func repeatedKeyIsAnError() throws {
    let error = try #require(
      Self.error("{\"version\": 1, \"codes\": {\n\"Running\": \"A\",\n\"Running\": \"B\"}}"))
    #expect(error.keyPath == "codes.Running")
    #expect(error.line == 3)
    #expect(error.message.contains("appears twice"))
  }

  @Test func versionAndTypesAreChecked() {
    #expect(Self.error(#"{"codes": {}}"#)?.keyPath == "version")
    #expect(Self.error(#"{"version": 2, "codes": {}}"#)?.message.contains("not supported") == true)
    #expect(Self.error(#"{"version": "1", "codes": {}}"#)?.keyPath == "version")
    #expect(Self.error(#"{"version": 1}"#)?.keyPath == "codes")
    #expect(Self.error(#"{"version": 1, "codes": []}"#)?.keyPath == "codes")
    #expect(Self.error(#"{"version": 1, "codes": {"Yoga": 7}}"#)?.keyPath == "codes.Yoga")
    #expect(Self.error(#"{"version": 1, "codes": {"Yoga": ""}}"#)?.keyPath == "codes.Yoga")
    #expect(Self.error(#"{"version": 1, "default": null, "codes": {}}"#)?.keyPath == "default")
    #expect(Self.error(#"[1, 2]"#)?.message == "must be an object, not an array")
  }

  @Test func malformedJSONGivesTheLine() throws {
    let error = try #require(Self.error("{\n\"version\": 1,\n\"codes\": {\"Yoga\": \"Y\",}\n}"))
    #expect(error.line == 3)
    #expect(error.keyPath == "codes")
    #expect(error.message.hasPrefix("not valid JSON"))
    #expect(Self.error("{\"version\": 1, \"codes\": {}} trailing")?.message.hasPrefix("not valid JSON") == true)
    #expect(Self.error("{\"version\": 01, \"codes\": {}}")?.message.hasPrefix("not valid JSON") == true)
  }

  @Test func escapesAndByteOrderMarkAreAccepted() throws {
    // "\u0059oga" is "Yoga"; the BOM some editors write is skipped.
    let text = "\u{FEFF}" + #"{"version": 1, "codes": {"\u0059oga": "S\u00e9"}}"#
    let table = try WorkoutCodeTable.parse(Array(text.utf8), file: "codes.json")
    #expect(table.code(forActivity: "Yoga") == "Sé")
  }

  @Test func missingFileIsNamed() {
    do {
      _ = try WorkoutCodeTable.load(path: "/nonexistent/workout-codes.json")
      Issue.record("expected an error")
    } catch {
      #expect(error.file == "/nonexistent/workout-codes.json")
      #expect(error.description == "/nonexistent/workout-codes.json: cannot be read: No such file or directory")
    }
  }

  @Test func editedCodeReachesTheServerRecord() throws {
    let codes = try Self.parse(#"{"version": 1, "codes": {"Running": "RUN-7"}}"#)
    let body = WorkoutFixture.workout("Running", start: "2024-01-02 06:00:00 +0000", end: "2024-01-02 06:10:00 +0000")
    let run = try WorkoutFixture.run(body, codes: codes)
    defer { run.result.remove() }
    #expect(run.records.first?.execTypeCode == "RUN-7")
  }
}
