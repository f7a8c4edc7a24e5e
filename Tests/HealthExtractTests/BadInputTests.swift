import Foundation
import HealthExtract
import Testing

@Suite struct BadInputTests {
  static let body = """
    <HealthData locale="en_US">
     <ExportDate value="2024-01-02 09:00:00 +0100"/>
     <Record type="HKQuantityTypeIdentifierStepCount" sourceName="A &amp; B" value="12" startDate="2024-01-01 10:00:00 +0100" endDate="2024-01-01 10:05:00 +0100"/>
     <Record type="HKQuantityTypeIdentifierStepCount" sourceName="A" value="13" startDate="2024-01-01 10:05:00 +0100" endDate="2024-01-01 10:10:00 +0100"/>
    </HealthData>

    """

  @Test func blanksTheDTDWithoutMovingLines() throws {
    let (handler, summary) = try Fixtures.read(Fixtures.minimalHeader + Self.body)
    #expect(handler.counts[.record] == 2)
    // The header is 9 lines; HealthData is line 10, ExportDate 11, the Records 12 and 13.
    #expect(handler.recordLines == [12, 13])
    #expect(summary.exportVersion == 14)
    #expect(handler.sourceNames == ["A & B", "A"])
  }

  @Test func aMalformedInternalSubsetIsIgnored() throws {
    // The iOS 16.0/16.1 shape: an unterminated ATTLIST, declarations nested inside it, a stray '>'.
    let header = """
      <?xml version="1.0" encoding="UTF-8"?>
      <!DOCTYPE HealthData [
      <!ATTLIST VisionPrescription
        type CDATA #REQUIRED
      <!ELEMENT RightEye EMPTY>
      <!ATTLIST RightEye sphere CDATA #IMPLIED>
        device CDATA #IMPLIED
      >
      ]>

      """
    let (handler, _) = try Fixtures.read(header + Self.body)
    #expect(handler.counts[.record] == 2)
  }

  @Test func truncatedInputNamesTheLineWhereItEnded() {
    let text = Fixtures.minimalHeader + Self.body
    let cut = String(text[..<text.range(of: "value=\"13\"")!.upperBound])
    #expect {
      _ = try Fixtures.read(cut)
    } throws: { error in
      guard case ExtractError.truncated(_, let line, _) = error else { return false }
      return line == 13
    }
  }

  @Test func allowTruncatedKeepsWhatCameBeforeTheCut() throws {
    let text = Fixtures.minimalHeader + Self.body
    let cut = String(text[..<text.range(of: "value=\"13\"")!.upperBound])
    let (handler, summary) = try Fixtures.read(cut, allowTruncated: true)
    #expect(summary.truncated)
    #expect(summary.truncatedAtLine == 13)
    #expect(handler.counts[.record] == 1)
  }

  @Test func aMissingRootEndIsTruncation() {
    let text = Fixtures.minimalHeader + Self.body.replacingOccurrences(of: "</HealthData>", with: "")
    #expect(throws: ExtractError.self) { try Fixtures.read(text) }
    do {
      _ = try Fixtures.read(text)
    } catch let error as ExtractError {
      guard case .truncated = error else {
        Issue.record("expected truncation, got \(error)")
        return
      }
    } catch {
      Issue.record("unexpected \(error)")
    }
  }

  @Test(arguments: [
    ("", "it is empty"),
    ("PNG\u{1}\u{2}binary stuff", "it is not XML"),
    ("<?xml version=\"1.0\"?>\n<Workout workoutActivityType=\"x\"/>\n", "its root element is <Workout>"),
    ("date,steps\n2024-01-01,100\n", "it is not XML"),
  ])
  func notAnExportGetsOneClearSentence(text: String, reason: String) {
    #expect {
      _ = try Fixtures.read(text)
    } throws: { error in
      guard case ExtractError.notAnExport(_, let message) = error else { return false }
      return message.hasPrefix(reason)
    }
  }

  @Test func malformedXMLInTheMiddleNamesLineAndColumn() {
    let text =
      Fixtures.minimalHeader + Self.body.replacingOccurrences(of: "value=\"13\"", with: "value=\"13\" value=\"14\"")
    #expect {
      _ = try Fixtures.read(text)
    } throws: { error in
      guard case ExtractError.malformed(_, let line, _, let message) = error else { return false }
      return line == 13 && message == "the attribute value is written twice in one tag"
    }
  }

  /// An XXE attempt: the DTD is blanked, so the entity is never declared, never fetched, and the
  /// reference is an error instead of the file's contents.
  @Test func externalEntitiesAreNeverLoaded() throws {
    let directory = try Fixtures.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let secret = directory.appendingPathComponent("secret.txt")
    try "TOP-SECRET-CONTENT".write(to: secret, atomically: true, encoding: .utf8)
    let text = """
      <?xml version="1.0"?>
      <!DOCTYPE HealthData [<!ENTITY xxe SYSTEM "file://\(secret.path)">]>
      <HealthData locale="en"><Record type="HKQuantityTypeIdentifierStepCount" sourceName="&xxe;" value="1" startDate="2024-01-01 10:00:00 +0100" endDate="2024-01-01 10:00:00 +0100"/></HealthData>
      """
    let handler = CountingHandler()
    #expect(throws: ExtractError.self) {
      _ = try ExportXMLReader(handler: handler).read(ExportInput.memory(Array(text.utf8)))
    }
    #expect(!handler.sourceNames.contains { $0.contains("TOP-SECRET") })
  }

  @Test func anEntityExpansionBombFailsFast() {
    var entities = "<!ENTITY lol0 \"lollollollollollollollollollol\">\n"
    for level in 1...9 {
      let previous = String(repeating: "&lol\(level - 1);", count: 10)
      entities += "<!ENTITY lol\(level) \"\(previous)\">\n"
    }
    let text = """
      <?xml version="1.0"?>
      <!DOCTYPE HealthData [
      \(entities)]>
      <HealthData locale="en"><Record type="T" sourceName="&lol9;" value="1" startDate="2024-01-01 10:00:00 +0100" endDate="2024-01-01 10:00:00 +0100"/></HealthData>
      """
    let started = ContinuousClock.now
    let handler = CountingHandler()
    #expect(throws: ExtractError.self) {
      _ = try ExportXMLReader(handler: handler).read(ExportInput.memory(Array(text.utf8)))
    }
    #expect(handler.sourceNames.isEmpty)
    #expect(ContinuousClock.now - started < .seconds(5))
  }

  @Test func forbiddenControlCharactersAreReplacedAndCounted() throws {
    let body = Self.body.replacingOccurrences(of: "sourceName=\"A\"", with: "sourceName=\"A\u{0B}B\u{0C}\"")
    let (handler, summary) = try Fixtures.read(Fixtures.minimalHeader + body)
    #expect(summary.replacedControlCharacters == 2)
    #expect(handler.sourceNames[1] == "A B ")
  }
}
