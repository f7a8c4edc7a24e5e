import Foundation
import FuzzSupport
import HealthETL

// A server's answer to a delivery (`WorkoutDelivery.excerpt`): the token removed in every form
// it knows, then one line of at most 200 bytes. Input: a flags byte (bit 0: the body was cut
// short), then the token up to the first line feed, then the body; without a line feed, or with
// a token a header cannot carry, a fixed token and the rest as the body. Besides never trapping,
// the excerpt must fit its bound and hold no 8 characters in a row of the token (any case, ASCII
// white space and control characters between them ignored) outside a `[token]`.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let input = FuzzDriver.bytes(data, size)
  guard let flags = input.first else { return 0 }
  var rest = input.dropFirst()
  var tokenText = "s3cret/Tok~en?42"
  if let newline = rest.firstIndex(of: 0x0A), newline - rest.startIndex <= 64 {
    tokenText = String(decoding: rest[..<newline], as: UTF8.self)
    rest = rest[(newline + 1)...]
  }
  guard let token = try? BearerToken.fromEnvironment(["T": tokenText], variable: "T") else { return 0 }
  let excerpt = WorkoutDelivery.excerpt(Array(rest), cutShort: flags & 1 == 1, token: token)
  guard excerpt.utf8.count <= WorkoutDelivery.excerptLimit else {
    fatalError("an excerpt of \(excerpt.utf8.count) bytes")
  }
  // ASCII characters as the match reads them; anything else, and each marker (compared as
  // bytes: a combining mark after it makes "]" part of another Character), ends a run.
  let bytes = Array(excerpt.utf8)
  let marker = Array("[token]".utf8)
  var characters: [UInt8?] = []
  var index = 0
  while index < bytes.count {
    if bytes[index...].starts(with: marker) {
      characters.append(nil)
      index += marker.count
      continue
    }
    let byte = bytes[index]
    index += 1
    guard byte > 0x20, byte != 0x7F else { continue }
    characters.append(byte < 0x80 ? (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) : nil)
  }
  let lowered = Array(tokenText.trimmingCharacters(in: .whitespacesAndNewlines).lowercased().utf8)
  let width = min(8, lowered.count)
  guard characters.count >= width else { return 0 }
  var grams = Set<ArraySlice<UInt8>>()
  for start in 0...(lowered.count - width) { grams.insert(lowered[start..<start + width]) }
  for start in 0...(characters.count - width) {
    let window = characters[start..<start + width]
    guard !window.contains(nil) else { continue }
    if grams.contains(ArraySlice(window.map { $0! })) {
      fatalError("the excerpt carries the token: \(excerpt)")
    }
  }
  return 0
}

FuzzDriver.run(testOneInput)
