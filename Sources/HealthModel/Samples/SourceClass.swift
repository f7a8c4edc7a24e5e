/// The default rank classes of Pipelines/README.md, "Source priority": what kind of device a
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
    if sourceName.contains("Watch") { return .appleWatch }
    if sourceName.contains("iPhone") { return .iPhone }
    return .other
  }

  public static func < (lhs: SourceClass, rhs: SourceClass) -> Bool { lhs.rawValue < rhs.rawValue }
}
