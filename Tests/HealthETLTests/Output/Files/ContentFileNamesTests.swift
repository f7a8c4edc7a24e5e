import Foundation
import Testing

@testable import HealthETL

/// File names made from type and element names (Pipelines/docs/outputs.md, "Where files go"). The eight
/// hex digits are the start of `printf %s NAME | sha256sum`, worked out outside HealthETL.
@Suite struct ContentFileNamesTests {
  static func samplePaths(_ names: [String]) -> [String: String] {
    ContentFileNames.paths(for: names, in: "samples/{type}.csv", placeholder: "{type}")
  }

  @Test func ordinaryNamesStayAsTheyAre() {
    #expect(
      Self.samplePaths(["StepCount", "HeartRate", "SleepAnalysis", "Audio-Exposure_2"]) == [
        "StepCount": "samples/StepCount.csv", "HeartRate": "samples/HeartRate.csv",
        "SleepAnalysis": "samples/SleepAnalysis.csv", "Audio-Exposure_2": "samples/Audio-Exposure_2.csv",
      ])
  }

  @Test func namesThatSanitizeAlikeGetFilesOfTheirOwn() {
    // `Foo.Bar` made `Foo_Bar` would have been the file of `Foo_Bar` (exit 74 before).
    #expect(
      Self.samplePaths(["Foo.Bar", "Foo_Bar"]) == [
        "Foo.Bar": "samples/Foo_Bar.845addd9.csv", "Foo_Bar": "samples/Foo_Bar.csv",
      ])
  }

  @Test func namesThatDifferOnlyInCaseBothGetDigits() {
    // On a case-insensitive file system StepCount.csv and stepcount.csv are one file.
    #expect(
      Self.samplePaths(["StepCount", "stepcount", "HeartRate"]) == [
        "StepCount": "samples/StepCount.61a0dfef.csv", "stepcount": "samples/stepcount.0452774c.csv",
        "HeartRate": "samples/HeartRate.csv",
      ])
  }

  @Test func longNamesAreCutAtSixtyFourBytes() throws {
    let long = String(repeating: "T", count: 300)
    let path = try #require(Self.samplePaths([long])[long])
    #expect(path == "samples/" + String(repeating: "T", count: 64) + ".001f6eb6.csv")
    // Non-ASCII characters become one `_` each, so the cut falls between characters.
    #expect(Self.samplePaths(["Größe"]) == ["Größe": "samples/Gr__e.aedc3f80.csv"])
  }

  @Test func reservedAndHiddenNamesAreAvoided() {
    #expect(
      Self.samplePaths(["CON", "nul", "", "..", ".hidden"]) == [
        "CON": "samples/CON_.a3dbc4b6.csv", "nul": "samples/nul_.99e62427.csv", "": "samples/_.e3b0c442.csv",
        "..": "samples/__.5ec1f7e7.csv", ".hidden": "samples/_hidden.16924190.csv",
      ])
    // `run` in `{type}.json` would be run.json, the run report; in a folder it is harmless.
    #expect(
      ContentFileNames.paths(for: ["run", "RUN"], in: "{type}.json", placeholder: "{type}") == [
        "run": "run.acba2551.json", "RUN": "RUN.ddeaded8.json",
      ])
    #expect(ContentFileNames.paths(for: ["run"], in: "t/{type}.json", placeholder: "{type}") == ["run": "t/run.json"])
  }

  @Test func namesWhoseDigitsMeetAreNumberedInByteOrder() {
    // Found by search: both are `a____` with digits c448c877.
    #expect(
      Self.samplePaths(["a$%`>", "a#^**"]) == [
        "a#^**": "samples/a____.c448c877.csv", "a$%`>": "samples/a____.c448c877.2.csv",
      ])
  }

  @Test func namesDoNotDependOnTheOrderNamesCameIn() {
    let names = [
      "StepCount", "stepcount", "Foo.Bar", "Foo_Bar", "a#^**", "a$%`>", "CON", String(repeating: "x", count: 90),
    ]
    let first = Self.samplePaths(names)
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<20 { #expect(Self.samplePaths(names.shuffled(using: &generator)) == first) }
  }

  @Test func aPipelineNameLeavesRoomForTheLongestFileName() {
    // 94 bytes: 64 readable, `_`, `.` and 8 digits, `.` and a 19-digit number.
    #expect(ContentFileNames.longestName == 94)
    let fits = "samples/" + String(repeating: "a", count: 161) + "{type}"
    #expect(throws: Never.self) { try OutputPaths.normalize(fits).get() }
    guard case .failure(let problem) = OutputPaths.normalize("samples/" + String(repeating: "a", count: 162) + "{type}")
    else {
      Issue.record("a name that can grow past 255 bytes was accepted")
      return
    }
    #expect(
      problem.message
        == "has a name that can grow to 256 bytes, over 255, once {type} or {name} is replaced by a file name of up to 94 bytes; shorten it"
    )
  }

  @Test func everyFileIsDistinctIgnoringCaseAndShort() {
    var names: [String] = []
    for base in ["Step.Count", "Step_Count", "step_count", "STEP-COUNT", "step count", "Step/Count"] {
      names += [base, base.uppercased(), base.lowercased(), base + ".", "." + base]
    }
    names += (0..<50).map { String(repeating: "é", count: $0 * 7) }
    let paths = Self.samplePaths(names)
    #expect(paths.count == Set(names).count)
    #expect(Set(paths.values.map { $0.lowercased() }).count == paths.count)
    for path in paths.values {
      let file = String(path.dropFirst("samples/".count))
      #expect(file.utf8.count <= ContentFileNames.longestName + ".csv".utf8.count)
      #expect(!file.hasPrefix(".") && !file.contains("/"))
    }
  }
}

/// Samples and elements of hostile names, through the marts: each name its own file, the name
/// itself in the file's `type` or `element` column and in the stage's summary (run.json).
@Suite struct ContentNamedOutputTests {
  static let long = String(repeating: "T", count: 300)

  static func record(_ type: String, value: Int) -> String {
    #"<Record type="\#(type)" sourceName="Phone" unit="count" startDate="2024-03-18 07:00:00 +0100" endDate="2024-03-18 07:10:00 +0100" value="\#(value)"/>"#
  }

  @Test func everyTypeAndElementNameGetsAFileOfItsOwn() throws {
    let types = ["Foo.Bar", "Foo_Bar", "StepCount", "stepcount", "HKQuantityTypeIdentifierStepCount", Self.long]
    let body =
      types.enumerated().map { Self.record($1, value: $0) }
      + [#"<CON b="2"/>"#, "<" + String(repeating: "E", count: 300) + #" a="1"/>"#]
    let result = try StageHarness.run(StageHarness.export(body.joined(separator: "\n"))) { transaction in
      [
        SampleMart(transaction: transaction),
        ElementMart(
          transaction: transaction,
          destinations: [.init(table: "elements", file: "elements/{name}.csv", format: .csv)],
          names: ["CON", String(repeating: "E", count: 300)]),
      ]
    }
    defer { result.remove() }
    let longFile = "samples/" + String(repeating: "T", count: 64) + ".001f6eb6.csv"
    let longElement = "elements/" + String(repeating: "E", count: 64) + ".76251503.csv"
    // `StepCount` and `HKQuantityTypeIdentifierStepCount` are one `type`: one file, two rows.
    #expect(
      result.outputs == [
        OutputSummary(path: "samples/Foo_Bar.845addd9.csv", rows: 1, name: "Foo.Bar"),
        OutputSummary(path: "samples/Foo_Bar.csv", rows: 1, name: "Foo_Bar"),
        OutputSummary(path: "samples/StepCount.61a0dfef.csv", rows: 2, name: "StepCount"),
        OutputSummary(path: longFile, rows: 1, name: Self.long),
        OutputSummary(path: "samples/stepcount.0452774c.csv", rows: 1, name: "stepcount"),
        OutputSummary(path: "elements/CON_.a3dbc4b6.csv", rows: 1, name: "CON"),
        OutputSummary(path: longElement, rows: 1, name: String(repeating: "E", count: 300)),
      ])
    #expect(try result.csvRows("samples/Foo_Bar.845addd9.csv").map { $0["type"] } == ["Foo.Bar"])
    #expect(try result.csvRows("samples/Foo_Bar.csv").map { $0["value"] } == ["1"])
    #expect(try result.csvRows("samples/StepCount.61a0dfef.csv").map { $0["value"] } == ["2", "4"])
    #expect(try result.csvRows(longFile).map { $0["type"] } == [Self.long])
    #expect(try result.text("elements/CON_.a3dbc4b6.csv") == "element,b,child_elements\nCON,2,0\n")
    #expect(try result.csvRows(longElement).map { $0["element"] } == [String(repeating: "E", count: 300)])
  }
}
