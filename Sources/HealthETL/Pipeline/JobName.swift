/// The one rule for job names: they name output files (`stats/<name>.csv`), so they are 1 to 100
/// ASCII letters, digits, `-`, `_` and `.`, not starting with `.` (no hidden files, no `..`).
public enum JobName {
  public static let maximumLength = 100

  public static func isValid(_ name: String) -> Bool {
    guard !name.isEmpty, name.utf8.count <= maximumLength, name.first != "." else { return false }
    return name.utf8.allSatisfy { byte in
      (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
        || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }
  }

  /// What the rule says, for messages.
  public static let rule = "1 to 100 letters, digits, '-', '_' or '.' (not first), as it names output files"
}
