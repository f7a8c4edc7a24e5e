import Foundation
import Testing

@testable import HealthETL

/// What is kept of a server's answer that echoes the token (`TokenEchoes`, `WorkoutDelivery.excerpt`).
/// Every encoded form below was worked out with Python's `base64`, `bytes.hex` and
/// `urllib.parse.quote`; where the token sits behind other bytes in a base64 text, the characters
/// kept are those that also encode bits of those other bytes or of the padding.
@Suite struct TokenEchoesTests {
  /// A slash (PHP's `\/`), both letter cases, and `~` and `?`, which base64 behind one byte turns
  /// into `+` and `/`, and base64url into `-` and `_`.
  static let token = "s3cret/Tok~en?42"

  static func redact(_ text: String, cutShort: Bool = false, token: String = token) throws -> String {
    try BearerToken(token, source: "test").redact(text, cutShort: cutShort)
  }

  @Test(arguments: [
    ("as sent: Bearer s3cret/Tok~en?42.", "as sent: Bearer [token]."),
    (#"{"auth": "Bearer s3cret\/Tok~en?42"}"#, #"{"auth": "Bearer [token]"}"#),
    (#"{"t": "\u0073\u0033cret\u002fTok~en?42"}"#, #"{"t": "[token]"}"#),
    (#"{"t": "s3cret/T\nok~en?42"}"#, #"{"t": "[token]"}"#),
    ("S3CRET/TOK~EN?42!", "[token]!"),
    ("s3cret/tok~en?42", "[token]"),
    ("split s3cret/T\r\nok~en?42 here", "split [token] here"),
    ("folded s3cre\n t/Tok\n ~en?4\n 2 (end)", "folded [token] (end)"),
    ("with\u{200B}in s3cret\u{200B}/Tok~en?42", "with\u{200B}in [token]"),
    ("url /r?t=s3cret%2FTok~en%3F42&x=1", "url /r?t=[token]&x=1"),
    ("html s3cret&#47;Tok&#x7E;en?42", "html [token]"),
    ("hex 7333637265742f546f6b7e656e3f3432", "hex [token]"),
    ("hex 7333637265742F546F6B7E656E3F3432", "hex [token]"),
    // base64 of the token: its last 2 bits are in "g", then padding.
    ("basic czNjcmV0L1Rva35lbj80Mg==", "basic [token]g=="),
    // Behind one byte ("x"): "eH" encodes it, "I=" the token's last 4 bits and padding.
    ("b64 eHMzY3JldC9Ub2t+ZW4/NDI=", "b64 eH[token]I="),
    ("b64url eHMzY3JldC9Ub2t-ZW4_NDI", "b64url eH[token]I"),
    // Behind two bytes ("xy"): "eHl" encodes them, and the token ends on a character boundary.
    ("b64 eHlzM2NyZXQvVG9rfmVuPzQy", "b64 eHl[token]"),
    // Any 8 characters in a row of the token are caught; 7 are not.
    ("middle cret/Tok~ only", "middle [token] only"),
    ("seven ret/Tok only", "seven ret/Tok only"),
    ("twice s3cret/Tok~en?42s3cret/Tok~en?42.", "twice [token]."),
    (
      "nothing: record 8EBAA60B-7356-5A7D-8D41-4E356E4843A0 too long",
      "nothing: record 8EBAA60B-7356-5A7D-8D41-4E356E4843A0 too long"
    ),
    (
      #"escapes that are not: \u12 \uZZZZ %G1 % &#; &#x; &#99999999; \ud83d \"#,
      #"escapes that are not: \u12 \uZZZZ %G1 % &#; &#x; &#99999999; \ud83d \"#
    ),
  ])
  func everyFormOfTheTokenIsReplaced(text: String, expected: String) throws {
    #expect(try Self.redact(text) == expected)
  }

  @Test func theEndOfAnAnswerCutShortLosesAnyStartOfTheToken() throws {
    // Cut after "s3c": too short to be told from text, unless the answer went on.
    #expect(try Self.redact("error: s3c", cutShort: true) == "error: [token]")
    #expect(try Self.redact("error: s3c", cutShort: false) == "error: s3c")
    #expect(try Self.redact("error: s3c  \n", cutShort: true) == "error: [token]")
    // Cut after 9 characters: caught as any 8 in a row are.
    #expect(try Self.redact("error: s3cret/To", cutShort: false) == "error: [token]")
    #expect(try Self.redact("error: nothing", cutShort: true) == "error: nothing")
  }

  @Test func aTokenShorterThanTheWindowIsMatchedWhole() throws {
    #expect(try Self.redact("xab1y AB1 ab", token: "ab1") == "x[token]y [token] ab")
  }

  @Test func theExcerptIsOneLineOfAtMost200Bytes() throws {
    let token = try BearerToken(Self.token, source: "test")
    func excerpt(_ text: String, cutShort: Bool = false) -> String {
      WorkoutDelivery.excerpt(Array(text.utf8), cutShort: cutShort, token: token)
    }
    #expect(excerpt("  line one\r\n\t line two  \n") == "line one line two")
    #expect(excerpt("\u{0}\u{7}") == "")
    let exactly200 = String(repeating: "a", count: 200)
    #expect(excerpt(exactly200) == exactly200)
    // 201 bytes: 197 of them, then "…" (3 bytes).
    #expect(excerpt(exactly200 + "b") == String(repeating: "a", count: 197) + "…")
    // Two bytes each: 98 (196 bytes) and the ellipsis; a character is never cut.
    #expect(excerpt(String(repeating: "é", count: 150)) == String(repeating: "é", count: 98) + "…")
    // The token is removed from the whole body before the excerpt is cut from it.
    let far = String(repeating: " ", count: 60_000) + "s3cret/Tok~en?42 " + String(repeating: "z", count: 300)
    #expect(excerpt(far) == "[token] " + String(repeating: "z", count: 189) + "…")
    #expect(excerpt(String(repeating: "\n", count: 65_533) + "s3c", cutShort: true) == "[token]")
    // A cut that would split a marker goes before it: 194 bytes, then "[token]" across byte 197.
    let before = String(repeating: "b", count: 194)
    #expect(excerpt(before + " s3cret/Tok~en?42 and more") == before + "…")
    #expect(excerpt(before + "[token] and more") == before + "…")
  }

  @Test func libcurlsMessagesAreExcerptsToo() throws {
    let token = try BearerToken(Self.token, source: "test")
    let outcome = Swift.Result<HTTPClient.Response, HTTPClient.Failure>.failure(
      .untrusted("certificate subject name 's3cret/Tok~en?42' does not match target host name"))
    #expect(
      WorkoutDelivery.verdict(outcome, token: token)
        == .refused(
          "TLS: certificate subject name '[token]' does not match target host name (a server with a private CA needs --ca-file)"
        ))
  }
}
