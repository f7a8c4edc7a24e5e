/// The default rank classes of Pipelines/docs/samples.md, "Source priority": what kind of device a
/// source is.
public enum SourceClass: Int, Sendable, Comparable {
  case appleWatch = 0
  case iPhone = 1
  case other = 2

  /// From the device's `model:` field; only without one does the source name decide
  /// (contains `Watch` / `iPhone`, case-sensitive).
  public static func classify(deviceModel: String?, sourceName: String) -> SourceClass {
    if let model = deviceModel, !model.isEmpty {
      if model == "Watch" { return .appleWatch }
      if model == "iPhone" { return .iPhone }
      return .other
    }
    if contains(sourceName, "Watch") { return .appleWatch }
    if contains(sourceName, "iPhone") { return .iPhone }
    return .other
  }

  /// `name.contains(word)` for `Watch` or `iPhone`, which compares Characters (a combining mark
  /// after the word's last letter makes another Character). No other Character equals one of
  /// their letters (the only non-ASCII canonical equivalents of ASCII are of `K`, `;` and `` ` ``),
  /// so a name without the word's bytes cannot contain it: that byte scan answers for nearly every
  /// name, and only the rest pay for the Character search.
  private static func contains(_ name: String, _ word: StaticString) -> Bool {
    let needle = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
    var bytes = name
    let hasBytes = bytes.withUTF8 { haystack -> Bool in
      guard haystack.count >= needle.count else { return false }
      for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
        if (1..<needle.count).allSatisfy({ haystack[start + $0] == needle[$0] }) { return true }
      }
      return false
    }
    return hasBytes && name.contains(String(decoding: needle, as: UTF8.self))
  }

  public static func < (lhs: SourceClass, rhs: SourceClass) -> Bool { lhs.rawValue < rhs.rawValue }
}
