import HealthModel

/// The ranking of Pipelines/docs/samples.md, "Source priority": which group of samples wins a stretch
/// of time when several sources recorded it. A group is a source name plus whether its samples
/// were entered by hand.
///
/// Default order: entered by hand (`HKWasUserEntered` = 1), then Apple Watch, then iPhone, then
/// every other source; within one rank by source name (UTF-8 byte order). A pipeline's
/// `sourcePriority` list (case-insensitive substrings) puts matching sources ahead of all others,
/// manual entries included, in list order; sources matching the same entry keep the default order.
public struct SourcePriority: Sendable {
  public let overrides: [String]
  private let loweredOverrides: [String]

  public init(overrides: [String] = []) {
    self.overrides = overrides
    loweredOverrides = overrides.map { $0.lowercased() }
  }

  /// A comparable rank: smaller wins.
  public struct Rank: Comparable, Hashable, Sendable {
    let overrideIndex: Int
    let defaultRank: Int
    let name: [UInt8]
    let userEntered: Bool

    public static func < (a: Rank, b: Rank) -> Bool {
      if a.overrideIndex != b.overrideIndex { return a.overrideIndex < b.overrideIndex }
      if a.defaultRank != b.defaultRank { return a.defaultRank < b.defaultRank }
      if a.name != b.name { return a.name.lexicographicallyPrecedes(b.name) }
      return a.userEntered && !b.userEntered
    }
  }

  /// The rank of a sample's group.
  public func rank(sourceName: String, deviceModel: String?, userEntered: Bool) -> Rank {
    var overrideIndex = Int.max
    if !loweredOverrides.isEmpty {
      let lowered = sourceName.lowercased()
      overrideIndex = loweredOverrides.firstIndex { !$0.isEmpty && lowered.contains($0) } ?? Int.max
    }
    let defaultRank =
      userEntered ? 0 : 1 + SourceClass.classify(deviceModel: deviceModel, sourceName: sourceName).rawValue
    return Rank(
      overrideIndex: overrideIndex, defaultRank: defaultRank, name: Array(sourceName.utf8), userEntered: userEntered)
  }
}
