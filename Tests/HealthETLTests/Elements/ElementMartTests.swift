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
