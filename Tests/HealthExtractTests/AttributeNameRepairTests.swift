import Foundation
import Testing

@testable import HealthExtract

/// Some iOS 8 exports wrote metadata as attributes whose names hold spaces
/// (`Health Mate App Version="2.6.2"`); in a document without a DOCTYPE the byte filter turns
/// those spaces into `_` (Pipelines/docs/input.md, "Bad input").
@Suite struct AttributeNameRepairTests {
  static let spaced = """
    <?xml version="1.0" encoding="UTF-8"?>
    <!-- a comment: <Record a b="1"/> -->
    <HealthData locale="en_GB">
     <ExportDate value="20151107171924+0100"/>
     <Record type="T" source="Health Mate" value="72.4" Health Mate App Version="2.6.2" Withings  User Identifier = "4711"/>
     <Record type="T" source="A B" value="1"><![CDATA[ <x a b c="1"> ]]></Record>
    </HealthData>

    """
  static let repaired = """
    <?xml version="1.0" encoding="UTF-8"?>
    <!-- a comment: <Record a b="1"/> -->
    <HealthData locale="en_GB">
     <ExportDate value="20151107171924+0100"/>
     <Record type="T" source="Health Mate" value="72.4" Health_Mate_App_Version="2.6.2" Withings__User_Identifier = "4711"/>
     <Record type="T" source="A B" value="1"><![CDATA[ <x a b c="1"> ]]></Record>
    </HealthData>

    """

  /// Feeds `text` cut at `cuts` and returns what the filter emits.
  static func filtered(_ text: String, cuts: [Int]) -> (bytes: [UInt8], repaired: Int) {
    var filter = XMLByteFilter()
    var out: [UInt8] = []
    let bytes = Array(text.utf8)
    var from = 0
    for cut in cuts + [bytes.count] where cut >= from {
      var piece = Array(bytes[from..<cut])
      piece.withUnsafeMutableBytes { chunk in
        try? filter.filter(chunk, refuse: { _ in CancellationError() }) {
          (bytes: UnsafeRawBufferPointer) throws(CancellationError) in out.append(contentsOf: bytes)
        }
      }
      from = cut
    }
    try? filter.finish(refuse: { _ in CancellationError() }) {
      (bytes: UnsafeRawBufferPointer) throws(CancellationError) in out.append(contentsOf: bytes)
    }
    return (out, filter.repairedAttributeNames)
  }

  @Test func spacesInsideNamesBecomeUnderscoresAndNothingElseChanges() {
    let (bytes, repaired) = Self.filtered(Self.spaced, cuts: [])
    #expect(String(decoding: bytes, as: UTF8.self) == Self.repaired)
    // `Health Mate App Version` and `Withings  User Identifier`; the comment, the values, the
    // CDATA section and the space before ` = "4711"` are left as they are.
    #expect(repaired == 2)
  }

  /// Streaming: however the input is cut into chunks, the same bytes come out.
  @Test func everyCutGivesTheSameBytes() {
    let whole = Self.filtered(Self.spaced, cuts: []).bytes
    let count = Self.spaced.utf8.count
    for cut in 1..<count {
      #expect(Self.filtered(Self.spaced, cuts: [cut]).bytes == whole, "cut at \(cut)")
    }
    for cut in stride(from: 1, to: count - 3, by: 7) {
      #expect(Self.filtered(Self.spaced, cuts: [cut, cut + 1, cut + 2, cut + 3]).bytes == whole, "cuts at \(cut)…")
    }
  }

  /// A document with a DOCTYPE (every export since iOS 10) is never walked, even where a name
  /// with spaces would be rewritten in one without.
  @Test func aDocumentWithADoctypeIsLeftAlone() {
    let text = Self.spaced.replacingOccurrences(
      of: "<HealthData locale", with: "<!DOCTYPE HealthData [\n]>\n<HealthData locale")
    let (bytes, repaired) = Self.filtered(text, cuts: [])
    #expect(repaired == 0)
    #expect(String(decoding: bytes, as: UTF8.self).contains("Health Mate App Version=\"2.6.2\""))
  }

  /// A run of spaces longer than the filter holds back across chunks is left as it is (the
  /// document then fails as malformed XML), and the outcome does not depend on where it is cut.
  @Test func aLongRunOfSpacesIsNotHeldWithoutBound() {
    let long = String(repeating: " ", count: AttributeNameRepair.longestHeldRun + 1)
    let text = "<HealthData><Record a\(long)b=\"1\"/></HealthData>"
    let whole = Self.filtered(text, cuts: [])
    #expect(whole.repaired == 0)
    #expect(whole.bytes == Array(text.utf8))
    #expect(Self.filtered(text, cuts: [30, 100, 200]).bytes == Array(text.utf8))
  }

  /// End to end: the records of such a file are read, with the repaired names.
  @Test func theRecordsOfARepairedFileAreRead() throws {
    let (handler, summary) = try Fixtures.read(Self.spaced)
    #expect(handler.counts[.record] == 2)
    #expect(summary.repairedAttributeNames == 2)
  }

  /// Random documents — well-formed ones from a small grammar of what the repair looks at
  /// (attributes with spaces around `=`, values holding spaces and `>`, comments, CDATA, text),
  /// half of them with one random piece inserted somewhere: the output is as long as the input
  /// and differs only where a space became `_`; it does not depend on where the input is cut;
  /// and a document libxml2 accepts as it is (checked with a DOCTYPE in front, which turns the
  /// repair off) comes out unchanged.
  @Test func randomDocumentsKeepEveryPromise() throws {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next(_ bound: Int) -> Int {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int((state >> 33) % UInt64(bound))
    }
    func pick(_ options: [String]) -> String { options[next(options.count)] }
    func element(_ depth: Int) -> String {
      var tag = "<" + pick(["R", "Record", "x:y", "é"])
      for index in 0..<next(4) {
        tag += pick([" ", "  ", "\n"]) + pick(["a", "Health", "x.y", "é"]) + "\(index)" + pick(["=", " = ", "\t="])
        tag += pick(["\"v w\"", "'a > b'", "\"\"", "\"Health Mate App\""])
      }
      guard depth < 3, next(2) == 0 else { return tag + pick(["/>", " />"]) }
      var content = ""
      for _ in 0..<next(4) {
        content += pick(["t u", "<!-- a b=\"1\" -->", "<![CDATA[ <x a b=\"1\"> ]]>", "<?pi a b?>", element(depth + 1)])
      }
      return tag + ">" + content + "</" + tag.dropFirst().prefix { $0 != " " && $0 != "\n" } + ">"
    }
    let pieces = [" ", "  Mate", "<", ">", "\"", "=", "<!--", "]]>", "?>", "/", "a b"]
    var wellFormed = 0
    var changed = 0
    for round in 0..<300 {
      var text = "<HealthData>" + element(0) + element(1) + "</HealthData>"
      if round % 2 == 1 {
        var bytes = Array(text.utf8)
        bytes.insert(contentsOf: Array(pick(pieces).utf8), at: 1 + next(bytes.count - 1))
        text = String(decoding: bytes, as: UTF8.self)
      }
      let input = Array(text.utf8)
      let whole = Self.filtered(text, cuts: []).bytes
      #expect(whole.count == input.count, "\(text)")
      #expect(zip(input, whole).allSatisfy { $0 == $1 || ($0 == 0x20 && $1 == 0x5F) }, "\(text)")
      if whole != input { changed += 1 }
      let cut = 1 + next(max(input.count - 1, 1))
      #expect(Self.filtered(text, cuts: [cut, min(cut + 1 + next(8), input.count)]).bytes == whole, "\(text)")
      if (try? Fixtures.read("<!DOCTYPE HealthData>" + text)) != nil {
        wellFormed += 1
        #expect(whole == input, "\(text)")
      }
    }
    // Both sides must occur for the promises to be tested at all.
    #expect(wellFormed > 50)
    #expect(changed >= 1)
  }
}
