import Foundation
import HealthETL
import Testing

/// The column tables and the unit table of the reference (`Pipelines/README.md` and
/// `Pipelines/docs/*.md`) are the declarations rendered (`make docs`).
@Suite struct TableDocumentationTests {
  /// Every file of the reference, read as one text: a table's block may sit in any of them.
  static func reference() throws -> String {
    let pipelines = StageHarness.repository.appendingPathComponent("Pipelines")
    let docs = pipelines.appendingPathComponent("docs")
    let names = (try? FileManager.default.contentsOfDirectory(atPath: docs.path)) ?? []
    let files =
      [pipelines.appendingPathComponent("README.md")]
      + names.filter { $0.hasSuffix(".md") }.sorted().map { docs.appendingPathComponent($0) }
    return try files.map { try String(contentsOf: $0, encoding: .utf8) }.joined(separator: "\n")
  }

  @Test(arguments: TableDocumentation.all.map(\.id))
  func theReadmeShowsTheDeclaredColumns(id: String) throws {
    let text = try Self.reference()
    let schema = try #require(TableDocumentation.all.first { $0.id == id }?.schema)
    #expect(
      text.contains(TableDocumentation.markdown(id: id, schema: schema)),
      "the \(id) column table of Pipelines/ differs from its declaration; run `make docs`")
  }

  @Test func theReadmeShowsTheUnitTable() throws {
    let text = try Self.reference()
    #expect(
      text.contains(TableDocumentation.unitsMarkdown), "the unit table of Pipelines/ differs; run `make docs`")
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
