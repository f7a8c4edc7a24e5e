import HealthModel

/// Remembers the fingerprint of every distinct sample, grouped by type and start day.
///
/// Exact de-duplication must remember every distinct sample: this is the one structure of a run
/// that grows with the export (≈15 bytes per distinct record). A single flat hash set turns every
/// record into a cache miss on a large export; grouping by (type, start day) keeps the group being
/// filled hot in cache, because an export lists each type's records roughly in time order. Two
/// different samples share a 64-bit fingerprint with probability about n²/2⁶⁵ (≈10⁻⁶ for 7 M).
struct SampleDeduplicator {
  private var groupIndex: [UInt64: Int] = [:]
  private var groups: [FingerprintSet] = []
  private var lastKey: UInt64 = .max
  private var lastGroup = -1

  /// Number of distinct samples remembered.
  private(set) var count = 0

  /// Inserts the sample; false when an identical one was seen before.
  mutating func insert(type: Int32, start: Instant, fingerprint: UInt64) -> Bool {
    let day = UInt64(bitPattern: floorDiv(start.seconds, 86_400))
    let key = UInt64(UInt32(bitPattern: type)) << 40 ^ day
    if key != lastKey {
      lastKey = key
      if let existing = groupIndex[key] {
        lastGroup = existing
      } else {
        lastGroup = groups.count
        groupIndex[key] = lastGroup
        groups.append(FingerprintSet(capacity: 16))
      }
    }
    let inserted = groups[lastGroup].insert(fingerprint)
    if inserted { count += 1 }
    return inserted
  }
}
