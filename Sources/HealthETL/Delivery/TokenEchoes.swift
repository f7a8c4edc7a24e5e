import Foundation

/// The bearer token as a server's answer may carry it back, and its removal from such an answer
/// (Pipelines/docs/nightly.md, "Delivering to a server").
///
/// A server that echoes the request's headers rarely echoes them byte for byte: PHP writes `/` as
/// `\/`, a JSON encoder may write any character as `\uXXXX`, a URL in the answer is
/// percent-encoded, a debug page lower-cases, upper-cases, base64- or hex-encodes, a long line is
/// folded, and the client keeps only the start of a long body. So the answer is read in three
/// views — as it came, with JSON escapes undone, and with JSON, percent and HTML character escapes
/// undone — each without white space or control characters and with letters lower-cased. Any
/// `window` characters in a row of a *form* of the token (the token, its hex digits, its base64
/// and base64url at each of the three alignments a longer encoded text can put it at) found in a
/// view is removed from the answer with everything it spans there, line breaks and escapes
/// included. So a token is caught down to any 8 of its characters; at the end of an answer the
/// client cut short, down to one.
struct TokenEchoes: Sendable {
  /// Characters in a row of a form that count as the token.
  static let window = 8
  /// What replaces each stretch of the answer that carried the token.
  static let marker = "[token]"

  /// `window`, or fewer for a token shorter than that.
  private let width: Int
  /// Every `width` characters in a row of every form, packed one byte each (`pack`).
  private let grams: Set<UInt64>
  /// The forms, lower-cased ASCII, for the end of an answer cut short.
  private let forms: [[UInt8]]

  /// - Parameter token: printable ASCII (`BearerToken` refuses anything else).
  init(token: String) {
    let bytes = Array(token.utf8)
    var forms = [bytes, bytes.flatMap { Array(String(format: "%02x", $0).utf8) }]
    for shift in 0..<3 {
      // Behind `shift` other bytes, the characters that depend on the token's bits alone.
      let encoded = Array((Data(count: shift) + Data(bytes)).base64EncodedString().utf8)
      let core = Array(encoded[(8 * shift + 5) / 6..<(8 * (shift + bytes.count)) / 6])
      guard !core.isEmpty else { continue }
      forms.append(core)
      let url: [UInt8: UInt8] = [UInt8(ascii: "+"): UInt8(ascii: "-"), UInt8(ascii: "/"): UInt8(ascii: "_")]
      forms.append(core.map { url[$0] ?? $0 })
    }
    self.forms = forms.map { $0.map(Self.lowercased) }
    width = min(Self.window, bytes.count)
    var grams = Set<UInt64>()
    for form in self.forms where form.count >= width {
      for start in 0...(form.count - width) { grams.insert(Self.pack(form[start..<start + width])) }
    }
    self.grams = grams
  }

  /// `text` with every stretch that carries the token replaced by `marker`. `cutShort`: the text
  /// is the start of a longer answer, so its last characters may be the start of the token.
  func redact(_ text: String, cutShort: Bool) -> String {
    let scalars = Array(text.unicodeScalars)
    var carries = [Bool](repeating: false, count: scalars.count)
    for decoding in [Decoding.none, .json, .all] {
      let view = View(scalars, decoding)
      if view.characters.count >= width {
        for start in 0...(view.characters.count - width) {
          let gram = view.characters[start..<start + width]
          guard !gram.contains(0), grams.contains(Self.pack(gram)) else { continue }
          for index in view.from[start]..<view.to[start + width - 1] { carries[index] = true }
        }
      }
      // The end of an answer cut short: a start of a form shorter than the window.
      guard cutShort else { continue }
      for length in stride(from: min(width - 1, view.characters.count), through: 1, by: -1) {
        let tail = view.characters.suffix(length)
        guard !tail.contains(0), forms.contains(where: { $0.starts(with: tail) }) else { continue }
        for index in view.from[view.characters.count - length]..<scalars.count { carries[index] = true }
        break
      }
    }
    guard carries.contains(true) else { return text }
    var result = String.UnicodeScalarView()
    for (index, scalar) in scalars.enumerated() {
      if !carries[index] {
        result.append(scalar)
      } else if index == 0 || !carries[index - 1] {
        result.append(contentsOf: Self.marker.unicodeScalars)
      }
    }
    return String(result)
  }

  /// White space, control and format characters (zero-width spaces, byte order marks): what a
  /// server may put between the characters of an echoed token, and what an excerpt of an answer
  /// shows as one space.
  static func isBlank(_ scalar: Unicode.Scalar) -> Bool {
    if scalar.value < 0x21 || scalar.value == 0x7F { return true }
    if scalar.isASCII { return false }
    let properties = scalar.properties
    return properties.isWhitespace || properties.generalCategory == .control || properties.generalCategory == .format
  }

  private static func lowercased(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }

  /// At most 8 ASCII characters as one number, for the set of grams.
  private static func pack(_ characters: some Collection<UInt8>) -> UInt64 {
    characters.reduce(0) { $0 << 8 | UInt64($1) }
  }

  /// Which escapes a view undoes.
  enum Decoding {
    case none
    /// `\/`, `\\`, `\"`, `\uXXXX`; `\n`, `\r`, `\t`, `\b`, `\f` are white space.
    case json
    /// JSON's, then `%XX` and `&#NN;` / `&#xHH;`.
    case all
  }

  /// An answer as the matching reads it: one lower-cased ASCII character (0 for any other) per
  /// character kept, each with the range of the answer's scalars it came from.
  struct View {
    var characters: [UInt8] = []
    var from: [Int] = []
    var to: [Int] = []

    init(_ scalars: [Unicode.Scalar], _ decoding: Decoding) {
      characters.reserveCapacity(scalars.count)
      from.reserveCapacity(scalars.count)
      to.reserveCapacity(scalars.count)
      var index = 0
      while index < scalars.count {
        let start = index
        var (value, next) = (scalars[index].value, index + 1)
        if decoding != .none, value == 0x5C, next < scalars.count {
          switch scalars[next] {
          case "/", "\\", "\"":
            (value, next) = (scalars[next].value, next + 1)
          case "n", "r", "t", "b", "f":
            (value, next) = (0x20, next + 1)
          case "u":
            if let code = Self.number(scalars, from: next + 1, digits: 4...4, radix: 16) {
              (value, next) = (code.value, code.end)
            }
          default: break
          }
        } else if decoding == .all, value == 0x25,
          let code = Self.number(scalars, from: next, digits: 2...2, radix: 16)
        {
          (value, next) = (code.value, code.end)
        } else if decoding == .all, value == 0x26, next + 1 < scalars.count, scalars[next] == "#" {
          let hex = scalars[next + 1] == "x" || scalars[next + 1] == "X"
          if let code = Self.number(scalars, from: next + (hex ? 2 : 1), digits: 1...7, radix: hex ? 16 : 10),
            code.end < scalars.count, scalars[code.end] == ";"
          {
            (value, next) = (code.value, code.end + 1)
          }
        }
        index = next
        guard let scalar = Unicode.Scalar(value), !TokenEchoes.isBlank(scalar) else { continue }
        characters.append(scalar.isASCII ? TokenEchoes.lowercased(UInt8(value)) : 0)
        from.append(start)
        to.append(next)
      }
    }

    /// The number written with `digits` digits of `radix` from `start` (as many as there are,
    /// up to the most), and the index after it.
    private static func number(_ scalars: [Unicode.Scalar], from start: Int, digits: ClosedRange<Int>, radix: UInt32)
      -> (value: UInt32, end: Int)?
    {
      var (value, end): (UInt32, Int) = (0, start)
      while end < scalars.count, end - start < digits.upperBound {
        let scalar = scalars[end].value
        let digit: UInt32
        switch scalar {
        case 0x30...0x39: digit = scalar - 0x30
        case 0x41...0x46 where radix == 16: digit = scalar - 0x41 + 10
        case 0x61...0x66 where radix == 16: digit = scalar - 0x61 + 10
        default: digit = radix
        }
        guard digit < radix else { break }
        value = value * radix + digit
        end += 1
      }
      return digits.contains(end - start) ? (value, end) : nil
    }
  }
}
