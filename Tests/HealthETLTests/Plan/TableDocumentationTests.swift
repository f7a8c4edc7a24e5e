import Foundation
import HealthETL
import Testing

/// The column tables and the unit table of `Pipelines/README.md` are the declarations rendered
/// (`make docs`).
@Suite struct TableDocumentationTests {
  static let readme = StageHarness.repository.appendingPathComponent("Pipelines/README.md")

  @Test(arguments: TableDocumentation.all.map(\.id))
  func theReadmeShowsTheDeclaredColumns(id: String) throws {
    let text = try String(contentsOf: Self.readme, encoding: .utf8)
    let schema = try #require(TableDocumentation.all.first { $0.id == id }?.schema)
    #expect(
      text.contains(TableDocumentation.markdown(id: id, schema: schema)),
      "Pipelines/README.md: the \(id) column table differs from its declaration; run `make docs`")
  }

  @Test func theReadmeShowsTheUnitTable() throws {
    let text = try String(contentsOf: Self.readme, encoding: .utf8)
    #expect(
      text.contains(TableDocumentation.unitsMarkdown), "Pipelines/README.md: the unit table differs; run `make docs`")
    #expect(TableDocumentation.unitsMarkdown.contains("| `degF` | `degC` | `degC` | − 32, × 5, ÷ 9 |"))
  }

  @Test func everyColumnHasAMeaningAndNumbersAUnitOrPrecision() {
    for (id, schema) in TableDocumentation.all {
      #expect(!schema.rows.isEmpty, "\(id)")
      for column in schema.columns { #expect(!column.meaning.isEmpty, "\(id).\(column.name)") }
      #expect(Set(schema.columnNames).count == schema.columns.count, "\(id) repeats a column name")
    }
  }
}
