import Foundation
import HealthModel

/// Remembers the fingerprint of every distinct sample, grouped by type and start day, within a
/// fixed memory budget.
///
/// Exact de-duplication has to remember every distinct sample. Keeping all fingerprints in
/// memory would make memory grow with the export, so only recently used groups stay in memory;
/// when the budget is exceeded, the least recently used groups are written to a scratch file
/// (unlinked at once, so it never outlives the process) and read back whole the next time a
/// sample of theirs arrives. An export lists each type's records roughly in time order, so a
/// group is mostly filled in one go; a second source of the same type brings each day's group
/// back once. Memory is the budget; the scratch file holds 8 bytes per distinct record.
///
/// Grouping also keeps the set being filled hot in cache (one flat table would turn every record
/// into a cache miss). Two different samples share a 64-bit fingerprint with probability about
/// n²/2⁶⁵ (≈10⁻⁶ for 7 M records).
struct SampleDeduplicator {
  /// Fingerprints held in memory before groups are written out: 2 MB of them (about 3 MB in sets
  /// kept at most 85 % full). Larger budgets bought no speed on the 1 GB benchmark.
  static let defaultBudget = 1 << 18

  private let budget: Int
  private var groupIndex: [UInt64: Int] = [:]
  /// Per group: its set while in memory, nil while on disk (or never filled).
  private var sets: [FingerprintSet?] = []
  /// Per group: where its fingerprints were written, while it is on disk.
  private var chunks: [[(offset: Int64, count: Int)]] = []
  private var lastUse: [UInt64] = []
  private var clock: UInt64 = 0
  private var lastKey: UInt64 = .max
  private var lastGroup = -1
  private var inMemory = 0
  private var scratch: DeduplicationScratch?

  /// Number of distinct samples remembered.
  private(set) var count = 0
  /// Groups written out and read back.
  private(set) var evictions = 0
  private(set) var revivals = 0
  /// Set when the scratch file could not be read back: de-duplication is no longer exact, and the
  /// run must fail with an I/O error rather than write wrong numbers.
  private(set) var failure: DeduplicationFailure?

  init(budget: Int = Self.defaultBudget) {
    self.budget = max(budget, 16)
  }

  /// Inserts the sample; false when an identical one was seen before.
  mutating func insert(type: Int32, start: Instant, fingerprint: UInt64) -> Bool {
    let day = UInt64(bitPattern: floorDiv(start.seconds, 86_400))
    let key = UInt64(UInt32(bitPattern: type)) << 40 ^ day
    if key != lastKey {
      lastKey = key
      if let existing = groupIndex[key] {
        lastGroup = existing
      } else {
        lastGroup = sets.count
        groupIndex[key] = lastGroup
        sets.append(nil)
        chunks.append([])
        lastUse.append(0)
      }
      clock += 1
      lastUse[lastGroup] = clock
      if sets[lastGroup] == nil { revive(lastGroup) }
    }
    let inserted = sets[lastGroup]!.insert(fingerprint)
    if inserted {
      count += 1
      inMemory += 1
      if inMemory > budget { evict() }
    }
    return inserted
  }

  /// Brings a group back into memory (or starts it).
  private mutating func revive(_ group: Int) {
    let stored = chunks[group].reduce(0) { $0 + $1.count }
    var set = FingerprintSet(holding: max(stored * 2, 8))
    if stored > 0, let scratch {
      revivals += 1
      for chunk in chunks[group] {
        guard let fingerprints = scratch.read(offset: chunk.offset, count: chunk.count) else {
          failure = DeduplicationFailure(
            reason:
              "could not read back the de-duplication scratch file in \(NSTemporaryDirectory()): "
              + String(cString: strerror(scratch.lastFailure)),
            code: scratch.lastFailure)
          continue
        }
        for fingerprint in fingerprints { _ = set.insert(fingerprint) }
      }
      chunks[group] = []
      inMemory += stored
    }
    sets[group] = set
  }

  /// Writes the least recently used groups out until half the budget is free.
  private mutating func evict() {
    if scratch == nil { scratch = DeduplicationScratch() }
    guard let scratch else { return }  // no scratch file: keep everything in memory
    let candidates = sets.indices.filter { sets[$0] != nil && $0 != lastGroup }.sorted { lastUse[$0] < lastUse[$1] }
    for group in candidates where inMemory > budget / 2 {
      let members = sets[group]!.members
      guard let offset = scratch.append(members) else { return }
      chunks[group].append((offset, members.count))
      inMemory -= members.count
      sets[group] = nil
      evictions += 1
    }
  }
}

/// Why de-duplication stopped being exact: the reason, and the system's error number of the
/// read of its scratch file that failed.
public struct DeduplicationFailure: Sendable, Equatable {
  public let reason: String
  public let code: Int32
}

/// An anonymous scratch file of fingerprints: created in the temporary folder and unlinked at
/// once, so the kernel frees it when the process ends, however it ends.
final class DeduplicationScratch {
  private let descriptor: Int32
  private var end: Int64 = 0
  /// The system's error number of the last read that failed.
  private(set) var lastFailure: Int32 = 0

  /// Nil when no scratch file can be made (then nothing is evicted).
  init?() {
    var template = Array((NSTemporaryDirectory() + "/healthetl-dedup-XXXXXX").utf8CString)
    let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard descriptor >= 0 else { return nil }
    template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
    self.descriptor = descriptor
  }

  deinit { close(descriptor) }

  /// Appends `fingerprints`; returns where they start, or nil when the write failed.
  func append(_ fingerprints: [UInt64]) -> Int64? {
    let offset = end
    let size = fingerprints.count * 8
    guard fingerprints.withUnsafeBytes({ ScratchFileIO.write(descriptor, $0, at: offset) }) == 0 else { return nil }
    end += Int64(size)
    return offset
  }

  /// The `count` fingerprints at `offset`; nil on a read error.
  func read(offset: Int64, count: Int) -> [UInt64]? {
    var fingerprints = [UInt64](repeating: 0, count: count)
    let failed = fingerprints.withUnsafeMutableBytes { ScratchFileIO.read(descriptor, into: $0, at: offset) }
    guard failed == 0 else {
      lastFailure = failed
      return nil
    }
    return fingerprints
  }
}
