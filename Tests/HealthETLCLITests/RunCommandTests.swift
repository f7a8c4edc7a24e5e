import Foundation
import Testing

@Suite struct RunCommandTests {
  static let tiny = CLI.fixtures.appendingPathComponent("tiny-export.xml").path

  /// Golden files written by hand: values converted by hand (0.5 mi = 804.672 m, 150 lb =
  /// 68.0388555 kg), instants in America/Los_Angeles across the 2024-03-10 spring-forward, ids
  /// from Python's uuid.uuid5 over the name of Pipelines/docs/samples.md, "Sample id".
  @Test func samplesMatchTheGoldenFiles() throws {
    let out = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: out) }
    let result = try CLI.run(["run", "--pipeline", CLI.samplesPipeline, "--quiet", "--out", out.path, Self.tiny])
    #expect(result.status == 0, "\(result.stderr)")
    let expected = CLI.fixtures.appendingPathComponent("expected-samples")
    let names = try FileManager.default.contentsOfDirectory(atPath: expected.path).sorted()
    let written = try FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent("samples").path)
      .sorted()
    #expect(written == names)
    for name in names {
      let want = try String(contentsOf: expected.appendingPathComponent(name), encoding: .utf8)
      let got = try String(contentsOf: out.appendingPathComponent("samples/" + name), encoding: .utf8)
      #expect(got == want, "\(name)")
    }
  }

  @Test func runReportSaysWhatHappened() throws {
    let out = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: out) }
    _ = try CLI.run(["run", "--pipeline", CLI.samplesPipeline, "--quiet", "--out", out.path, Self.tiny])
    let data = try Data(contentsOf: out.appendingPathComponent("run.json"))
    let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    #expect(report["timeZone"] as? String == "America/Los_Angeles")
    #expect(report["exportVersion"] as? Int == 14)
    #expect(report["locale"] as? String == "en_US")
    #expect((report["rejected"] as? [String: Int])?["non-numeric value"] == 1)
    #expect((report["duplicates"] as? [String: Int])?["StepCount"] == 1)
    #expect((report["types"] as? [String: Int])?["StepCount"] == 1)
    #expect((report["elements"] as? [String: Int])?["Record"] == 7)
    let input = try #require(report["input"] as? [String: Any])
    let sha = try #require(input["sha256"] as? String)
    #expect(sha.count == 64)
    let outputs = try #require(report["outputs"] as? [[String: Any]])
    let files = outputs.filter { $0["path"] as? String != "health.sqlite" }
    #expect(files.map { $0["rows"] as? Int ?? 0 }.reduce(0, +) == 5)
    // The database holds the same five rows, one table per sample file.
    #expect(outputs.first { $0["path"] as? String == "health.sqlite" }?["rows"] as? Int == 5)
  }

  @Test func rerunsAreByteIdentical() throws {
    let (a, b) = try CLI.runTwice(["--pipeline", CLI.samplesPipeline, CLI.sampleExport])
    #expect(a.keys.sorted() == b.keys.sorted())
    #expect(a == b)
    #expect(a.count > 10)
  }

  @Test func standardInputWorksForXMLAndZip() throws {
    for path in [Self.tiny, CLI.sampleExport] {
      let out = try CLI.temporaryDirectory()
      defer { try? FileManager.default.removeItem(at: out) }
      let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
      let result = try CLI.run(
        ["run", "--pipeline", CLI.samplesPipeline, "--quiet", "--out", out.path, "-"], stdin: bytes)
      #expect(result.status == 0, "\(path): \(result.stderr)")
      #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("run.json").path))
    }
  }

  @Test func aFailedRunLeavesThePreviousOutputsUntouched() throws {
    let out = try CLI.temporaryDirectory()
    let scratch = try CLI.temporaryDirectory()
    defer {
      try? FileManager.default.removeItem(at: out)
      try? FileManager.default.removeItem(at: scratch)
    }
    #expect(
      try CLI.run(["run", "--pipeline", CLI.samplesPipeline, "--quiet", "--out", out.path, Self.tiny]).status == 0)
    let before = try CLI.snapshot(out)
    let text = try String(contentsOfFile: Self.tiny, encoding: .utf8)
    let truncated = scratch.appendingPathComponent("cut.xml")
    try String(text.prefix(text.count * 2 / 3)).write(to: truncated, atomically: true, encoding: .utf8)
    let result = try CLI.run(["run", "--pipeline", CLI.samplesPipeline, "--quiet", "--out", out.path, truncated.path])
    #expect(result.status == 65)
    #expect(result.stderr.contains("ends too early"))
    #expect(try CLI.snapshot(out) == before)
  }

  @Test func allowTruncatedKeepsWhatWasRead() throws {
    let out = try CLI.temporaryDirectory()
    let scratch = try CLI.temporaryDirectory()
    defer {
      try? FileManager.default.removeItem(at: out)
      try? FileManager.default.removeItem(at: scratch)
    }
    let text = try String(contentsOfFile: Self.tiny, encoding: .utf8)
    let truncated = scratch.appendingPathComponent("cut.xml")
    let cut = text.range(of: "<Record type=\"HKQuantityTypeIdentifierHeartRate\"")!.upperBound
    try String(text[..<cut]).write(to: truncated, atomically: true, encoding: .utf8)
    let result = try CLI.run([
      "run", "--pipeline", CLI.samplesPipeline, "--quiet", "--allow-truncated", "--out", out.path, truncated.path,
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let report =
      try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("run.json")))
      as? [String: Any]
    #expect(report?["truncated"] as? Bool == true)
    #expect(report?["truncatedAtLine"] as? Int == 11)
    #expect((report?["types"] as? [String: Int])?["DistanceWalkingRunning"] == 1)
  }

  @Test func strictMakesARejectionFatal() throws {
    let out = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: out) }
    let result = try CLI.run([
      "run", "--pipeline", CLI.samplesPipeline, "--quiet", "--strict", "--out", out.path, Self.tiny,
    ])
    #expect(result.status == 65)
    #expect(result.stderr.contains("line 18"))
    #expect(result.stderr.contains("non-numeric value"))
    #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("run.json").path))
  }
}
