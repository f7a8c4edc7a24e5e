import Foundation
import Testing

@Suite struct InspectCommandTests {
  static func inspectJSON(_ path: String, _ extra: [String] = []) throws -> [String: Any] {
    let result = try CLI.run(["inspect", "--json"] + extra + [path])
    #expect(result.status == 0, "\(result.stderr)")
    return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
  }

  /// The keys Pipelines/docs/nightly.md, "`run.json` and `inspect --json`", promises, with real values.
  @Test func reportsTheExportsFactsSourcesAndDataRange() throws {
    let report = try Self.inspectJSON(RunCommandTests.tiny)
    for key in [
      "exportVersion", "locale", "exportDate", "timeZone", "elements", "types", "rejected", "sources", "first", "last",
    ] {
      #expect(report[key] != nil, "\(key)")
    }
    #expect(report["exportDate"] as? String == "2024-03-11T09:00:00-07:00")
    #expect(report["first"] as? String == "2024-03-10T01:30:00-08:00")
    #expect(report["last"] as? String == "2024-03-10T08:15:00-07:00")
    #expect(report["sources"] as? [String] == ["Ana’s Apple Watch", "Ana’s iPhone", "Scale, \"Pro\""])
  }

  @Test func anExplicitZoneWins() throws {
    let report = try Self.inspectJSON(RunCommandTests.tiny, ["--tz", "Asia/Tokyo"])
    #expect(report["timeZone"] as? String == "Asia/Tokyo")
    #expect(report["first"] as? String == "2024-03-10T18:30:00+09:00")
  }

  /// The bundled sample against an independent count of its XML (Python's zipfile + a regex).
  @Test func sampleDataCountsMatchAByteScan() throws {
    let script = """
      import re, sys, zipfile
      z = zipfile.ZipFile(sys.argv[1])
      data = z.read('apple_health_export/export.xml')
      for name in ['Record', 'Workout', 'Correlation', 'ActivitySummary', 'WorkoutActivity']:
          print(name, len(re.findall(rb'<' + name.encode() + rb'[\\s/>]', data)))
      """
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", script, CLI.sampleExport]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let text = String(decoding: pipe.fileHandleForReading.readToEndRetryingInterrupts(), as: UTF8.self)
    process.waitUntilExit()
    let report = try Self.inspectJSON(CLI.sampleExport)
    let elements = try #require(report["elements"] as? [String: Int])
    var checked = 0
    for line in text.split(separator: "\n") {
      let parts = line.split(separator: " ")
      #expect(elements[String(parts[0]), default: 0] == Int(parts[1])!, "\(parts[0])")
      checked += 1
    }
    #expect(checked == 5)
    #expect(report["timeZone"] as? String == "Europe/Berlin")
  }
}
