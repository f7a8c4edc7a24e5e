/// Text from an export quoted in a one-line message: at most `limit` characters, the last one `…`
/// when cut, control characters (a newline in a value) as `?`, so the message stays one line.
enum PrintableExcerpt {
  static func of(_ text: String, limit: Int = 40) -> String {
    let scalars = text.unicodeScalars
    var shown = String.UnicodeScalarView()
    for scalar in scalars.prefix(limit) {
      shown.append(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) ? "?" : scalar)
    }
    return String(shown) + (scalars.count > limit ? "…" : "")
  }
}
