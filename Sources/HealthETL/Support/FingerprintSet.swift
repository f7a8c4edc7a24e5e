/// An open-addressing set of 64-bit fingerprints: 8 bytes per member, at most 85 % full (the
/// sets are small and hot in cache, so the longer probes of a full table cost little).
struct FingerprintSet {
  private var slots: [UInt64]
  private(set) var count = 0

  /// `capacity` must be a power of two.
  init(capacity: Int = 1 << 16) {
    slots = [UInt64](repeating: 0, count: capacity)
  }

  /// A set sized to hold `count` members without growing.
  init(holding count: Int) {
    var capacity = 16
    while count * 20 > capacity * 17 { capacity <<= 1 }
    self.init(capacity: capacity)
  }

  /// The members as stored (a fingerprint of 0 is stored as 1), in slot order.
  var members: [UInt64] { slots.filter { $0 != 0 } }

  /// Inserts `fingerprint`; false when it was already present.
  mutating func insert(_ fingerprint: UInt64) -> Bool {
    let key = fingerprint == 0 ? 1 : fingerprint
    if (count + 1) * 20 > slots.count * 17 { grow() }
    let mask = slots.count - 1
    var slot = Int(truncatingIfNeeded: key) & mask
    while true {
      let existing = slots[slot]
      if existing == 0 {
        slots[slot] = key
        count += 1
        return true
      }
      if existing == key { return false }
      slot = (slot + 1) & mask
    }
  }

  private mutating func grow() {
    let old = slots
    slots = [UInt64](repeating: 0, count: old.count * 2)
    let mask = slots.count - 1
    for key in old where key != 0 {
      var slot = Int(truncatingIfNeeded: key) & mask
      while slots[slot] != 0 { slot = (slot + 1) & mask }
      slots[slot] = key
    }
  }
}
