import Foundation
import Testing

@testable import HealthExtract

/// The byte filter finds the DOCTYPE it blanks, and decides whether a document needs the iOS 8
/// attribute repair, by walking the prolog as a parser does: what a comment or a processing
/// instruction holds is text, even when it reads `<!DOCTYPE` (Pipelines/docs/input.md, "Bad input").
@Suite struct PrologMarkupTests {
  static let body = BadInputTests.body

  /// What the filter emits for `text` fed in one piece, and how many names it repaired.
  static func filtered(_ text: String) -> (text: String, repaired: Int) {
    let (bytes, repaired) = AttributeNameRepairTests.filtered(text, cuts: [])
    return (String(decoding: bytes, as: UTF8.self), repaired)
  }

  /// `<!-- notes: <!DOCTYPE [ -->` before the real DOCTYPE: the comment's `[` opened an internal
  /// subset that ran past the comment's end, whose `-->` was blanked with everything up to the
  /// root element, and the document was refused as malformed (exit 65).
  @Test func aCommentMentioningAnOpenDoctypeStaysAComment() throws {
    let comment = "<!-- notes: <!DOCTYPE [ -->\n"
    let text =
      Fixtures.minimalHeader.replacingOccurrences(of: "<!DOCTYPE HealthData", with: comment + "<!DOCTYPE HealthData")
      + Self.body
    let (handler, summary) = try Fixtures.read(text)
    #expect(handler.counts[.record] == 2)
    // One line more than `BadInputTests.blanksTheDTDWithoutMovingLines`: the comment's.
    #expect(handler.recordLines == [13, 14])
    #expect(summary.exportVersion == 14)
    let (filtered, repaired) = Self.filtered(text)
    #expect(filtered.contains(comment), "the comment is passed on as it is")
    #expect(!filtered.contains("<!DOCTYPE HealthData"), "the real DOCTYPE is blanked")
    #expect(filtered.utf8.count == text.utf8.count)
    #expect(repaired == 0)
  }

  /// An iOS 8 document (no DOCTYPE) whose comment mentions `<!DOCTYPE x>`: the mention turned
  /// the attribute-name repair off, so the names with spaces were refused as malformed.
  @Test func aDoctypeInACommentLeavesTheIOS8RepairOn() throws {
    let text = AttributeNameRepairTests.spaced.replacingOccurrences(
      of: "<HealthData locale", with: "<!-- written before iOS 10, which adds a <!DOCTYPE x> -->\n<HealthData locale")
    let (handler, summary) = try Fixtures.read(text)
    #expect(handler.counts[.record] == 2)
    #expect(summary.repairedAttributeNames == 2)
    let (filtered, _) = Self.filtered(text)
    #expect(filtered.contains("<!-- written before iOS 10, which adds a <!DOCTYPE x> -->"))
    #expect(filtered.contains("Health_Mate_App_Version=\"2.6.2\""))
  }

  /// The same words in a processing instruction of the prolog.
  @Test func aDoctypeInAProcessingInstructionIsText() throws {
    let instruction = "<?notes <!DOCTYPE [ ?>\n"
    let text =
      Fixtures.minimalHeader.replacingOccurrences(
        of: "<!DOCTYPE HealthData", with: instruction + "<!DOCTYPE HealthData") + Self.body
    let (handler, _) = try Fixtures.read(text)
    #expect(handler.counts[.record] == 2)
    #expect(Self.filtered(text).text.contains(instruction))
    let ios8 = AttributeNameRepairTests.spaced.replacingOccurrences(
      of: "<HealthData locale", with: instruction + "<HealthData locale")
    let (_, summary) = try Fixtures.read(ios8)
    #expect(summary.repairedAttributeNames == 2)
  }

  /// A processing instruction inside the internal subset may hold `]>` (or a quote): neither ends
  /// the DOCTYPE, which is blanked whole.
  @Test func anInstructionInsideTheSubsetDoesNotEndIt() throws {
    let text = """
      <?xml version="1.0" encoding="UTF-8"?>
      <!DOCTYPE HealthData [
      <?notes not the end: ]> ?>
      <!ELEMENT HealthData ANY>
      ]>

      """ + Self.body
    let (handler, _) = try Fixtures.read(text)
    #expect(handler.counts[.record] == 2)
    let filtered = Self.filtered(text).text
    #expect(!filtered.contains("ELEMENT") && !filtered.contains("notes"))
  }

  /// The walk itself: only declarations met as markup are DOCTYPEs; the root's `<` is found
  /// after each kind of markup.
  @Test func theWalkSkipsWhatCommentsInstructionsAndSectionsHold() {
    func walk(_ text: String) -> (root: Int?, doctypes: [String]) {
      let bytes = Array(text.utf8)
      var doctypes: [String] = []
      let root = XMLByteFilter.walkProlog(bytes) { doctypes.append(String(decoding: bytes[$0], as: UTF8.self)) }
      return (root, doctypes)
    }
    #expect(walk("<!-- <!DOCTYPE [ --><!DOCTYPE a [ <!-- ]> --> ]><a/>") == (48, ["<!DOCTYPE a [ <!-- ]> --> ]>"]))
    #expect(walk("<?p <!DOCTYPE [ ?><!DOCTYPE a><a/>") == (30, ["<!DOCTYPE a>"]))
    #expect(walk("<![CDATA[ <!DOCTYPE [ ]]><a/>") == (25, []))
    #expect(walk("<!-- <!DOCTYPE x> --><a/>") == (21, []))
    // Unfinished: no root yet; an unfinished DOCTYPE runs to the end.
    #expect(walk("<!-- <!DOCTYPE x>") == (nil, []))
    #expect(walk("<!DOCTYPE a [ <!ENTITY") == (nil, ["<!DOCTYPE a [ <!ENTITY"]))
  }

  /// Streaming: wherever the input is cut, the same bytes come out.
  @Test func everyCutGivesTheSameBytes() {
    let text =
      "<?xml version=\"1.0\"?>\n<!-- notes: <!DOCTYPE [ -->\n<?p <!DOCTYPE x> ?>\n"
      + "<!DOCTYPE HealthData [ <?p ']> ?> ]>\n" + Self.body
    let whole = AttributeNameRepairTests.filtered(text, cuts: []).bytes
    #expect(String(decoding: whole, as: UTF8.self).contains("<!-- notes: <!DOCTYPE [ -->\n<?p <!DOCTYPE x> ?>\n"))
    for cut in 1..<(text.utf8.count - 1) {
      #expect(AttributeNameRepairTests.filtered(text, cuts: [cut]).bytes == whole, "cut at \(cut)")
    }
  }
}
