import Foundation
import HealthETL
import Testing

@Suite struct PipelineDecoderTests {
  static func decode(_ text: String) throws(ConfigFileError) -> PipelineDefinition {
    try PipelineDecoder.decode(Data(text.utf8), path: "Pipelines/test.json")
  }

  static func failure(_ text: String) -> ConfigFileError? {
    do {
      let pipeline = try decode(text)
      _ = try RunPlanner.plan([pipeline])
      return nil
    } catch {
      return error
    }
  }

  @Test func aTypoedKeyNamesTheFileTheKeyPathAndTheLikelyKey() throws {
    let error = try #require(
      Self.failure(
        """
        {"version": 1, "name": "x", "jobs": [{"name": "hr", "kind": "statistics", "type": "HeartRate",
          "interval": "1m", "optoins": ["avg"]}]}
        """))
    #expect(error.file == "Pipelines/test.json")
    #expect(error.keyPath == "jobs[0].optoins")
    #expect(error.description.contains("did you mean 'options'?"))
  }

  @Test(arguments: [
    (#"{"version": 2, "name": "x", "jobs": []}"#, "version"),
    (#"{"name": "x", "jobs": []}"#, "version"),
    (#"{"version": 1, "name": "x", "jobs": [{"name": "a", "kind": "magic"}]}"#, "jobs[0].kind"),
    (
      #"{"version": 1, "name": "x", "jobs": [{"name": "a", "kind": "statistics", "type": "HeartRate", "interval": "1m", "options": ["avg", "median"]}]}"#,
      "jobs[0].options[1]"
    ),
    (
      #"{"version": 1, "name": "x", "jobs": [{"name": "a", "kind": "statistics", "type": "HeartRate", "interval": "1m", "options": ["sum"]}]}"#,
      "jobs[0].options[0]"
    ),
    (
      #"{"version": 1, "name": "x", "jobs": [{"name": "a", "kind": "statistics", "type": "StepCount", "interval": "1d", "options": ["avg"]}]}"#,
      "jobs[0].options[0]"
    ),
    (
      #"{"version": 1, "name": "x", "jobs": [{"name": "a", "kind": "statistics", "type": "Steps", "interval": "1d", "options": ["sum"]}]}"#,
      "jobs[0].type"
    ),
    (
      #"{"version": 1, "name": "x", "jobs": [{"name": "a", "kind": "statistics", "type": "StepCount", "interval": "1fortnight", "options": ["sum"]}]}"#,
      "jobs[0].interval"
    ),
    (
      #"{"version": 1, "name": "x", "jobs": [{"name": "a", "kind": "samples", "types": ["StepCount", "Stepz"]}]}"#,
      "jobs[0].types[1]"
    ),
    (
      #"{"version": 1, "name": "x", "jobs": [{"name": "a", "kind": "sleep", "outputs": [{"table": "weekly", "file": "a.csv"}]}]}"#,
      "jobs[0].outputs[0].table"
    ),
    (
      #"{"version": 1, "name": "x", "jobs": [{"name": "a", "kind": "sleep", "outputs": [{"file": "a.xlsx", "format": "xlsx"}]}]}"#,
      "jobs[0].outputs[0].format"
    ),
    (
      #"{"version": 1, "name": "x", "jobs": [{"name": "a", "kind": "sleep", "outputs": [{"file": "../escape.csv"}]}]}"#,
      "jobs[0].outputs[0].file"
    ),
    (
      #"{"version": 1, "name": "x", "sleep": {"dayBoundary": "6pm"}, "jobs": [{"name": "a", "kind": "sleep"}]}"#,
      "sleep.dayBoundary"
    ),
    (#"{"version": 1, "name": "x", "timezone": "Mars/Olympus", "jobs": [{"name": "a", "kind": "sleep"}]}"#, "timezone"),
    (
      #"{"version": 1, "name": "x", "jobs": [{"name": "a", "kind": "sleep"}, {"name": "a", "kind": "workouts"}]}"#,
      "jobs[1].name"
    ),
    (
      #"{"version": 1, "name": "x", "jobs": [{"name": "a", "kind": "samples", "outputs": [{"file": "s.csv"}]}, {"name": "b", "kind": "samples", "outputs": [{"file": "s.csv"}]}]}"#,
      "jobs[1].outputs"
    ),
    (#"{"version": "1", "name": "x", "jobs": []}"#, "version"),
    (
      #"{"version": 1, "name": "x", "jobs": [{"name": "a", "kind": "statistics", "type": "HeartRate", "interval": "1m", "options": ["avg"], "separateBySource": 1}]}"#,
      "jobs[0].separateBySource"
    ),
  ])
  func strictErrorsNameTheKeyPath(text: String, keyPath: String) throws {
    let error = try #require(Self.failure(text), "accepted: \(text)")
    #expect(error.keyPath == keyPath, "\(error)")
  }

  @Test func defaultsAndFormatsAreFilledIn() throws {
    let pipeline = try Self.decode(
      """
      {"version": 1, "name": "x", "sourcePriority": ["AutoSleep"], "sleep": {"sessionGapMinutes": 90, "dayBoundary": "17:30"},
       "jobs": [{"name": "s", "kind": "sleep"},
                {"name": "all", "kind": "samples", "outputs": [{"file": "samples.ndjson"}, {"file": "samples.json"}]},
                {"name": "steps", "kind": "statistics", "type": "StepCount", "interval": "1w", "options": ["sum", "duration"], "separateBySource": true}]}
      """)
    let plan = try RunPlanner.plan([pipeline])
    #expect(plan.settings.sessionGapMinutes == 90)
    #expect(plan.settings.dayBoundaryMinutes == 17 * 60 + 30)
    #expect(plan.settings.sourcePriority.overrides == ["AutoSleep"])
    #expect(plan.jobs[0].outputs.map(\.file) == ["sleep_daily.csv", "sleep_sessions.csv"])
    #expect(plan.jobs[1].outputs.map(\.format) == [.ndjson, .json])
    #expect(plan.jobs[2].outputs.map(\.file) == ["stats/steps.csv"])
  }

  /// Every shipped pipeline decodes and plans on its own.
  @Test func shippedPipelinesAreValid() throws {
    let folder = StageHarness.repository.appendingPathComponent("Pipelines")
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
      $0.hasSuffix(".json") && $0 != "workout-codes.json"
    }
    #expect(files.count >= 6)
    for file in files {
      let pipeline = try PipelineDecoder.load(folder.appendingPathComponent(file).path)
      _ = try RunPlanner.plan([pipeline])
    }
  }
}
