import Foundation

/// Maps byte strings to small integer ids, creating each `String` once. Types, sources, units,
/// metadata keys and devices repeat millions of times in an export; interning them means the
/// per-record path hashes a few bytes instead of allocating strings.
final class ByteInterner {
  private var slots: [Int32]
  private var hashes: [UInt64] = []
  private var offsets: [Int] = [0]
  private var storage: [UInt8] = []
  private(set) var strings: [String] = []

  init(capacity: Int = 256) {
    slots = [Int32](repeating: -1, count: capacity)
  }

  var count: Int { strings.count }

  subscript(id: Int32) -> String { strings[Int(id)] }

  /// The id returned last: consecutive records nearly always repeat their type, source, unit and
  /// device, so one comparison usually saves the hash and the probe.
  private var lastID: Int32 = -1

  /// The id of `bytes`, adding it when new.
  func intern(_ bytes: UnsafeRawBufferPointer) -> Int32 {
    if lastID >= 0 && equal(Int(lastID), bytes) { return lastID }
    let id = lookupOrAdd(bytes)
    lastID = id
    return id
  }

  private func lookupOrAdd(_ bytes: UnsafeRawBufferPointer) -> Int32 {
    let hash = FastHash.hash(bytes)
    var slot = Int(hash & UInt64(slots.count - 1))
    while true {
      let id = slots[slot]
      if id < 0 { break }
      if hashes[Int(id)] == hash && equal(Int(id), bytes) { return id }
      slot = (slot + 1) & (slots.count - 1)
    }
    let id = Int32(strings.count)
    slots[slot] = id
    hashes.append(hash)
    storage.append(contentsOf: bytes)
    offsets.append(storage.count)
    strings.append(String(decoding: bytes, as: UTF8.self))
    if strings.count * 2 > slots.count { grow() }
    return id
  }

  func intern(_ string: String) -> Int32 {
    var copy = string
    return copy.withUTF8 { intern(UnsafeRawBufferPointer($0)) }
  }

  private func equal(_ id: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
    let start = offsets[id]
    let end = offsets[id + 1]
    guard end - start == bytes.count else { return false }
    return storage.withUnsafeBytes { stored in
      bytes.count == 0 || memcmp(stored.baseAddress! + start, bytes.baseAddress!, bytes.count) == 0
    }
  }

  private func grow() {
    slots = [Int32](repeating: -1, count: slots.count * 2)
    for id in 0..<strings.count {
      var slot = Int(hashes[id] & UInt64(slots.count - 1))
      while slots[slot] >= 0 { slot = (slot + 1) & (slots.count - 1) }
      slots[slot] = Int32(id)
    }
  }
}
