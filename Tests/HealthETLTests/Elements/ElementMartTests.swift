import Foundation
import HealthETL
import Testing

@Suite struct GenericElementWriterTests {
  static let body = """
     <Me HKCharacteristicTypeIdentifierDateOfBirth="1990-05-20" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale"/>
     <ActivitySummary dateComponents="2024-01-01" activeEnergyBurned="512.5" activeEnergyBurnedUnit="Cal" appleStandHours="10"/>
     <ActivitySummary dateComponents="2024-01-02" activeEnergyBurned="300" activeEnergyBurnedUnit="Cal" appleMoveTime="31"/>
     <Audiogram type="HKDataTypeIdentifierAudiogram" sourceName="Mimi, &quot;Pro&quot;" startDate="2024-01-01 10:00:00 +0000" endDate="2024-01-01 10:00:00 +0000"><SensitivityPoint frequencyValue="500" frequencyUnit="Hz"/><SensitivityPoint frequencyValue="1000" frequencyUnit="Hz"/></Audiogram>
     <FutureElement answer="42"/>
    """

  @Test func everyOtherElementIsPassedThroughAsWritten() throws {
    let result = try StageHarness.run(StageHarness.export(Self.body)) { transaction in
      [
        ElementMart(
          transaction: transaction,
          destinations: [
            .init(table: "elements", file: "elements/{name}.csv", format: .csv),
            .init(table: "elements", file: "elements.ndjson", format: .ndjson),
          ])
      ]
    }
    defer { result.remove() }
    // Columns: the attributes in the order they first appear (appleMoveTime only on the second row).
    #expect(
      try result.text("elements/ActivitySummary.csv")
        == """
        element,dateComponents,activeEnergyBurned,activeEnergyBurnedUnit,appleStandHours,appleMoveTime,child_elements
        ActivitySummary,2024-01-01,512.5,Cal,10,,0
        ActivitySummary,2024-01-02,300,Cal,,31,0

        """)
    #expect(
      try result.text("elements/Audiogram.csv").contains(#"Audiogram,HKDataTypeIdentifierAudiogram,"Mimi, ""Pro""","#))
    #expect(try result.text("elements/Audiogram.csv").hasSuffix(",2\n"))
    #expect(try result.text("elements/FutureElement.csv") == "element,answer,child_elements\nFutureElement,42,0\n")
    #expect(try result.text("elements/Me.csv").contains("1990-05-20,HKBiologicalSexFemale,0"))
    let lines = try result.text("elements.ndjson").split(separator: "\n")
    #expect(lines.count == 5)
    #expect(
      lines[1]
        == #"{"element": "ActivitySummary", "dateComponents": "2024-01-01", "activeEnergyBurned": "512.5", "#
        + #""activeEnergyBurnedUnit": "Cal", "appleStandHours": "10", "child_elements": 0}"#)
  }

  @Test func aNamesFilterKeepsOnlyThoseElements() throws {
    let result = try StageHarness.run(StageHarness.export(Self.body)) { transaction in
      [
        ElementMart(
          transaction: transaction,
          destinations: [.init(table: "elements", file: "summaries.csv", format: .csv)],
          names: ["ActivitySummary"])
      ]
    }
    defer { result.remove() }
    #expect(try result.text("summaries.csv").split(separator: "\n").count == 3)
  }
}

/// Elements with more attributes between them than a table should have columns (issue 31,
/// item 5; Pipelines/docs/samples.md, "Other elements").
@Suite struct ElementLongTableTests {
  /// `count` `Odd` elements, the i-th with one attribute `a{i}` of its own.
  static func oddElements(_ count: Int) -> String {
    (0..<count).map { "<Odd a\($0)=\"v\($0)\"/>" }.joined(separator: "\n")
  }

  static func run(_ body: String) throws -> StageHarness.Result {
    try StageHarness.run(StageHarness.export(body)) { transaction in
      [
        ElementMart(
          transaction: transaction, destinations: [.init(table: "elements", file: "elements/{name}.csv", format: .csv)])
      ]
    }
  }

  /// 100 attributes stay columns; 101 make the file long: one row per attribute, the element's
  /// number beside it, an element without attributes on a row of its own.
  @Test func pastOneHundredAttributesTheFileIsLong() throws {
    let wide = try Self.run(Self.oddElements(100))
    defer { wide.remove() }
    let wideLines = try wide.text("elements/Odd.csv").split(separator: "\n")
    #expect(wideLines.count == 101)
    #expect(wideLines[0].hasPrefix("element,a0,a1,") && wideLines[0].hasSuffix(",a99,child_elements"))
    let long = try Self.run(Self.oddElements(101) + "\n<Odd/>\n<Odd x=\"1\" y=\"2\"><Child/></Odd>")
    defer { long.remove() }
    let lines = try long.text("elements/Odd.csv").split(separator: "\n", omittingEmptySubsequences: false)
    #expect(lines.count == 1 + 101 + 1 + 2 + 1)
    #expect(lines[0] == "element,number,attribute,value,child_elements")
    #expect(lines[1] == "Odd,1,a0,v0,0")
    #expect(lines[101] == "Odd,101,a100,v100,0")
    #expect(lines[102] == "Odd,102,,,0")
    #expect(lines[103] == "Odd,103,x,1,1")
    #expect(lines[104] == "Odd,103,y,2,1")
  }

  /// N elements, each with an attribute of its own, at N = 500 … 4,000: each doubling of the
  /// elements at most doubles the file's bytes, give or take a quarter (the numbers grow a digit).
  /// A wide table has N × N cells: each doubling ×4 (N = 500: 0.6 MB; 4,000: 32 MB).
  @Test func theFileFollowsTheElementsNotTheirSquare() throws {
    let sizes = [500, 1_000, 2_000, 4_000]
    let bytes = try sizes.map { size in
      let result = try Self.run(Self.oddElements(size))
      defer { result.remove() }
      return try result.text("elements/Odd.csv").utf8.count
    }
    for (small, large) in zip(bytes, bytes.dropFirst()) {
      #expect(Double(large) <= 2 * 1.25 * Double(small), "bytes \(bytes) for \(sizes) elements")
    }
  }
}
