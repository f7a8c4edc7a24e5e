import Foundation
import Testing

@testable import HealthETL

/// `SortedJSON` writes what `JSONSerialization` with `.prettyPrinted, .sortedKeys` writes, byte
/// for byte: `run.json` and `metadata.json` did not change when it replaced Foundation's writer.
@Suite struct SortedJSONTests {
  private func foundation(_ object: Any) -> [UInt8]? {
    (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])).map(Array.init)
  }

  private func text(_ object: Any) -> String? { SortedJSON.data(object).map { String(decoding: $0, as: UTF8.self) } }

  @Test func smallDocumentWorkedOutByHand() {
    let object: [String: Any] = [
      "b": [1, 2.5, true, NSNull()], "a10": "x/y", "a9": [:] as [String: Any], "A": [] as [Any], "é": -0.0,
    ]
    // Keys in Foundation's order: numbers within keys by value, case ignored.
    let expected = """
      {
        "A" : [

        ],
        "a9" : {

        },
        "a10" : "x\\/y",
        "b" : [
          1,
          2.5,
          true,
          null
        ],
        "é" : -0
      }
      """
    #expect(text(object) == expected)
    #expect(SortedJSON.data(object) == foundation(object))
  }

  @Test func textIsEscapedAsFoundationEscapesIt() {
    let object: [String: Any] = ["t": "q\"b\\s/\u{8}\u{c}\n\r\t\u{0}\u{1}\u{b}\u{1f}\u{7f}ü😀"]
    #expect(text(object) == "{\n  \"t\" : \"q\\\"b\\\\s\\/\\b\\f\\n\\r\\t\\u0000\\u0001\\u000b\\u001f\u{7f}ü😀\"\n}")
    #expect(SortedJSON.data(object) == foundation(object))
  }

  @Test func whatFoundationRefusesIsRefused() {
    #expect(SortedJSON.data(["nan": Double.nan]) == nil)
    #expect(SortedJSON.data([1: "key is not text"] as [AnyHashable: Any]) == nil)
    #expect(SortedJSON.data("not an array or an object") == nil)
  }

  /// A `Float` read as a `Double` would be written 0.10000000149011612; Foundation writes 0.1.
  @Test func valuesLeftToFoundationComeOutTheSame() {
    let object: [String: Any] = [
      "number": NSNumber(value: 3.5), "decimal": Decimal(string: "1.25")!, "float": Float(0.1),
    ]
    #expect(SortedJSON.data(object) == foundation(object))
    #expect(text(["float": Float(0.1)]) == "{\n  \"float\" : 0.1\n}")
  }

  /// The shortcut `SortedJSON.isPlain` allows: keys of ASCII letters and `_` are in Foundation's
  /// order when their bytes are, upper case read as lower (`plainOrder`), unless they differ
  /// only in case. Every such key up to three characters against every other.
  @Test func plainKeysOrderAsTheirFoldedBytes() {
    let alphabet = ["a", "b", "m", "z", "A", "B", "Z", "_"]
    var keys = [""]
    var previous = [""]
    for _ in 0..<3 {
      previous = previous.flatMap { prefix in alphabet.map { prefix + $0 } }
      keys += previous
    }
    #expect(keys.allSatisfy(SortedJSON.isPlain))
    var disagreements: [String] = []
    for a in keys {
      for b in keys where a != b {
        let foundation =
          a.compare(
            b, options: [.numeric, .caseInsensitive, .forcedOrdering], range: a.startIndex..<a.endIndex,
            locale: Locale(identifier: "")) == .orderedAscending
        guard let plain = SortedJSON.plainOrder(a, b) else {
          #expect(a.lowercased() == b.lowercased())
          continue
        }
        if foundation != plain { disagreements.append("\(a) \(b)") }
      }
    }
    #expect(disagreements.isEmpty, "\(disagreements.prefix(10))")
    #expect(!SortedJSON.isPlain("a1") && !SortedJSON.isPlain("a b") && !SortedJSON.isPlain("é"))
    #expect(SortedJSON.plainOrder("Ab", "ab") == nil && SortedJSON.plainOrder("B", "a") == false)
  }

  /// Random documents with keys that order differently by bytes and by Foundation's comparison
  /// (digits, case, `_`, spaces, accents) and every kind of value the run's documents hold.
  @Test func randomDocumentsMatchFoundation() {
    var random = SystemRandomNumberGenerator()
    let pieces = ["a", "B", "b", "z", "Z", "_", " ", "-", "0", "1", "9", "10", "é", "É", "ß", "ø", "日", "😀", ".", "/"]
    func key() -> String { (0..<Int.random(in: 0...4, using: &random)).map { _ in pieces.randomElement()! }.joined() }
    func value(_ depth: Int) -> Any {
      switch Int.random(in: 0..<(depth > 2 ? 6 : 8), using: &random) {
      case 0: return key() + "\"\\\n\u{2}"
      case 1: return Int.random(in: -1_000_000...1_000_000, using: &random)
      case 2:
        return [0.1, 1e16, 1e-7, 123.0, -0.5, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude]
          .randomElement()!
      case 3: return Bool.random(using: &random)
      case 4: return NSNull()
      case 5: return Int64.random(in: .min ... .max, using: &random)
      case 6: return (0..<Int.random(in: 0...4, using: &random)).map { _ in value(depth + 1) }
      default:
        var object: [String: Any] = [:]
        for _ in 0..<Int.random(in: 0...8, using: &random) { object[key()] = value(depth + 1) }
        return object
      }
    }
    for _ in 0..<300 {
      var object: [String: Any] = [:]
      for _ in 0..<Int.random(in: 0...12, using: &random) { object[key()] = value(0) }
      let ours = SortedJSON.data(object)
      let theirs = foundation(object)
      #expect(ours == theirs, "\(String(decoding: theirs ?? [], as: UTF8.self))")
      if ours != theirs { break }
    }
  }
}
