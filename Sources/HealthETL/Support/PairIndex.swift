/// Numbers distinct pairs of ids (a type and a source, a stream and a source) 0, 1, 2, … in the
/// order they first appear, so per-pair tallies live in dense arrays that grow with the pairs
/// seen — never with the product of the two id ranges, which an export with many sources and
/// many types would make huge.
///
/// Open addressing over 64-bit keys, at most half full. Consecutive lookups mostly repeat a
/// pair, so the last one is remembered.
struct PairIndex {
  private var slots: [Int32]
  private var keys: [UInt64] = []
  private var lastKey = UInt64.max
  private var lastNumber: Int32 = -1

  /// `capacity` must be a power of two.
  init(capacity: Int = 64) {
    slots = [Int32](repeating: -1, count: capacity)
  }

  /// Distinct pairs seen.
  var count: Int { keys.count }

  /// The pair numbered `number`.
  func pair(_ number: Int) -> (first: Int32, second: Int32) {
    let key = keys[number]
    return (Int32(truncatingIfNeeded: key >> 32), Int32(truncatingIfNeeded: key))
  }

  /// The number of `(first, second)`, given the next one when new; `isNew` says which.
  @inline(__always) mutating func number(_ first: Int32, _ second: Int32) -> (number: Int, isNew: Bool) {
    let key = UInt64(UInt32(bitPattern: first)) << 32 | UInt64(UInt32(bitPattern: second))
    if key == lastKey { return (Int(lastNumber), false) }
    let found = lookupOrAdd(key)
    lastKey = key
    lastNumber = Int32(found.number)
    return found
  }

  private mutating func lookupOrAdd(_ key: UInt64) -> (number: Int, isNew: Bool) {
    let mask = slots.count - 1
    var slot = Int(truncatingIfNeeded: FastHash.mix(key ^ FastHash.k0, FastHash.k1)) & mask
    while true {
      let number = slots[slot]
      if number < 0 { break }
      if keys[Int(number)] == key { return (Int(number), false) }
      slot = (slot + 1) & mask
    }
    let number = keys.count
    slots[slot] = Int32(number)
    keys.append(key)
    if keys.count * 2 > slots.count { grow() }
    return (number, true)
  }

  private mutating func grow() {
    slots = [Int32](repeating: -1, count: slots.count * 2)
    let mask = slots.count - 1
    for (number, key) in keys.enumerated() {
      var slot = Int(truncatingIfNeeded: FastHash.mix(key ^ FastHash.k0, FastHash.k1)) & mask
      while slots[slot] >= 0 { slot = (slot + 1) & mask }
      slots[slot] = Int32(number)
    }
  }
}
