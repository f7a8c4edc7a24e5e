import Foundation
import Testing

@Suite struct PipelineCommandTests {
  /// The pipeline is checked before the input is even opened: a missing export would be exit 66,
  /// a bad pipeline is 64 with the file and key path.
  @Test func aTypoInAPipelineFailsBeforeReadingInput() throws {
    let directory = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("typo.json")
    try #"{"version": 1, "name": "t", "jobs": [{"name": "s", "kind": "samples", "tpyes": ["StepCount"]}]}"#.write(
      to: file, atomically: true, encoding: .utf8)
    let result = try CLI.run(["run", "--pipeline", file.path, "--out", directory.path + "/out", "/nonexistent.zip"])
    #expect(result.status == 64)
    #expect(
      result.stderr.contains("typo.json:1: jobs[0].tpyes: unknown key (did you mean 'types'?)"), "\(result.stderr)")
    #expect(!FileManager.default.fileExists(atPath: directory.path + "/out/run.json"))
  }

  /// `pipelines list` shows `sleep`; `--pipeline sleep` runs that shipped file, from any folder
  /// (Pipelines/ beside the binary), and a name no pipeline has is refused naming what was typed.
  @Test func aShippedPipelineByItsListedName() throws {
    let directory = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let list = try CLI.run(["pipelines", "list"], in: directory)
    #expect(list.stdout.contains("/Pipelines/sleep.json  sleep: "), "\(list.stdout)")
    let out = directory.appendingPathComponent("out")
    let result = try CLI.run(
      ["run", "--pipeline", "sleep", "--quiet", "--out", out.path, RunCommandTests.tiny], in: directory)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("sleep_daily.csv").path))
    #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("daily.csv").path))
    let check = try CLI.run(["pipelines", "check", "sleep"], in: directory)
    #expect(check.stdout == "sleep: ok (1 jobs)\n", "\(check.stdout)\(check.stderr)")
    let unknown = try CLI.run(
      ["run", "--pipeline", "slep", "--out", out.path, RunCommandTests.tiny], in: directory)
    #expect(unknown.status == 64)
    #expect(unknown.stderr.contains("slep"), "\(unknown.stderr)")
  }

  @Test func checkAndExplain() throws {
    // Checked one by one, then together as one run would plan them (the default pipeline and
    // sleep.json clash: both write sleep_daily.csv).
    let check = try CLI.run(["pipelines", "check", CLI.pipeline("default"), CLI.pipeline("samples")])
    #expect(check.status == 0, "\(check.stderr)")
    #expect(check.stdout.hasSuffix("together: ok (23 jobs)\n"))
    let explain = try CLI.run(["pipelines", "explain", CLI.pipeline("samples"), CLI.pipeline("sleep")])
    #expect(explain.status == 0)
    #expect(explain.stdout.contains("One parse of the export feeds 3 jobs"))
    #expect(explain.stdout.contains("→ sleep_daily.csv (daily, csv)"))
  }

  /// Two pipelines in one run read the input once and both write their files.
  @Test func twoPipelinesShareOneParse() throws {
    let directory = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let other = directory.appendingPathComponent("ndjson.json")
    try
      #"{"version": 1, "name": "nd", "jobs": [{"name": "hr", "kind": "samples", "types": ["HeartRate"], "outputs": [{"file": "heart.ndjson"}, {"file": "heart.json"}]}]}"#
      .write(to: other, atomically: true, encoding: .utf8)
    let out = directory.appendingPathComponent("out")
    let result = try CLI.run([
      "run", "--quiet", "--pipeline", CLI.samplesPipeline, "--pipeline", other.path, "--out", out.path,
      RunCommandTests.tiny,
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let report = try #require(
      try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("run.json"))) as? [String: Any]
    )
    #expect(report["parses"] as? Int == 1)
    // The bytes parsed are the file's size once: the input was read a single time for both pipelines.
    let fileSize = try #require(
      try FileManager.default.attributesOfItem(atPath: RunCommandTests.tiny)[.size] as? NSNumber)
    #expect((report["input"] as? [String: Any])?["xmlBytes"] as? Int == fileSize.intValue)
    #expect((report["pipelines"] as? [[String: String]])?.map { $0["name"] ?? "" } == ["samples", "nd"])
    let ndjson = try String(contentsOf: out.appendingPathComponent("heart.ndjson"), encoding: .utf8)
    #expect(ndjson.split(separator: "\n").count == 1)
    #expect(ndjson.contains(#""start": "2024-03-10T01:30:00-08:00""#))
    #expect(ndjson.contains(#""value": 62"#))
    let json = try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("heart.json")))
    let rows = try #require(json as? [[String: Any]])
    #expect(rows.count == 1)
    #expect(rows[0]["metadata"] as? [String: String] == ["HKMetadataKeyHeartRateMotionContext": "1"])
    #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("samples/StepCount.csv").path))
  }
}
