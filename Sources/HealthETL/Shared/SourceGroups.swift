import HealthModel

/// The groups that source priority ranks (Pipelines/docs/samples.md, "Source priority"), numbered while
/// the export streams and ranked once it is read: the statistics' spill, the report's quality
/// spill and the workout splits' distance spill each tag every sample with its group, and order
/// the groups only at the end, because the run's priority settings and every group's device are
/// known only then.
///
/// A group is a source plus whether its samples were entered by hand (`HKWasUserEntered` = 1);
/// its device — which decides its class — is the first of its samples' devices that has a
/// model. Sources are interned by name, so a group is also a source name plus the flag.
///
/// The per-sample path (`group(of:catalog:)`) is two array lookups: groups are found through a
/// slot table indexed by `source id × 2 + entered by hand`, never a dictionary, and no string is
/// made until `rankPositions` and `sourceNames`.
struct SourceGroups {
  private struct Group {
    var source: Int32
    var userEntered: Bool
    /// The first device with a model among the group's samples, -1 while none.
    var device: Int32
  }

  /// Per (source id × 2 + entered by hand): the group, -1 when not yet seen.
  private var slots: [Int32] = []
  /// In the order first seen: a group's number is its index.
  private var groups: [Group] = []

  var count: Int { groups.count }

  /// The number of `sample`'s group, 0, 1, 2 … in the order the groups are first seen.
  @inline(__always) mutating func group(of sample: borrowing Sample, catalog: SampleCatalog) -> Int32 {
    let userEntered = sample.userEntered
    let slot = Int(sample.source) * 2 + (userEntered ? 1 : 0)
    if slot >= slots.count { slots.append(contentsOf: repeatElement(-1, count: slot + 1 - slots.count)) }
    var group = slots[slot]
    if group < 0 {
      group = Int32(groups.count)
      slots[slot] = group
      groups.append(Group(source: sample.source, userEntered: userEntered, device: -1))
    }
    // Looked up only until the group has a model: most samples of a group share its device.
    if groups[Int(group)].device < 0, sample.device >= 0, let model = catalog.device(sample.device)?.model,
      !model.isEmpty
    {
      groups[Int(group)].device = sample.device
    }
    return group
  }

  /// Per group number: its position when the groups are ordered by `priority` (0 = highest).
  /// Positions are unique, so a sweep compares two samples' groups by one integer. Two groups
  /// never rank equal: a rank ends with the source name and the flag, which tell groups apart.
  func rankPositions(_ priority: SourcePriority, catalog: SampleCatalog) -> [Int32] {
    let ranks = groups.map { group in
      priority.rank(
        sourceName: catalog.sourceName(group.source), deviceModel: catalog.device(group.device)?.model,
        userEntered: group.userEntered)
    }
    var positions = [Int32](repeating: 0, count: groups.count)
    for (position, index) in groups.indices.sorted(by: { ranks[$0] < ranks[$1] }).enumerated() {
      positions[index] = Int32(position)
    }
    return positions
  }

  /// Per group number: its source name (a name is two groups when some of its samples were
  /// entered by hand).
  func sourceNames(_ catalog: SampleCatalog) -> [String] {
    groups.map { catalog.sourceName($0.source) }
  }
}
