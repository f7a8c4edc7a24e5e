import Foundation
import HealthModel

/// The levels behind `daily.csv`'s `headphone_audio_dba` and `environmental_audio_dba`
/// (Pipelines/docs/daily.md, "Daily"): HealthKit aggregates sound exposure as an equivalent continuous
/// level (`discreteEquivalentContinuousLevel`), the level of a steady sound carrying the same
/// energy over the same time — 10·log10(Σ tᵢ·10^(Lᵢ/10) ÷ Σ tᵢ), tᵢ the seconds of sample i —
/// not the arithmetic mean of the decibels: 60 dB for an hour and 90 dB for an hour is 87 dB, not
/// 75. A sample across local midnight gives each date its seconds there; a sample with start =
/// end weighs as one second. All sources count (discrete types are never merged).
///
/// While the export streams the zone is not known yet, so the energy goes to 15-minute slots of
/// UTC (every zone's offset is a multiple of 15 minutes, so a slot never straddles a local
/// midnight): memory grows with the hours that have sound, not with the samples.
struct SoundLevelDays {
  static let slotSeconds: Int64 = 900
  /// Per slot start: Σ t·10^(L/10) and Σ t.
  private var slots: [Int64: (energy: Double, seconds: Double)] = [:]
  let typeName: String
  /// Per type id: whether it is `typeName`, grown as types are first seen.
  private var isWanted: [Bool] = []

  init(typeName: String) { self.typeName = typeName }

  /// Whether the sample was taken in (one of `typeName` with a level).
  @discardableResult mutating func add(_ sample: borrowing Sample, catalog: SampleCatalog) -> Bool {
    let type = Int(sample.type)
    guard type >= 0, sample.kind == .quantity, sample.value.isFinite else { return false }
    while isWanted.count <= type { isWanted.append(catalog.typeInfo(Int32(isWanted.count)).shortName == typeName) }
    guard isWanted[type] else { return false }
    add(level: sample.value, start: sample.start.seconds, end: sample.end.seconds)
    return true
  }

  mutating func add(level: Double, start: Int64, end: Int64) {
    let intensity = pow(10, level / 10)
    guard end > start else {
      slots[floorDiv(start, Self.slotSeconds) * Self.slotSeconds, default: (0, 0)].energy += intensity
      slots[floorDiv(start, Self.slotSeconds) * Self.slotSeconds, default: (0, 0)].seconds += 1
      return
    }
    var from = start
    while from < end {
      let slot = floorDiv(from, Self.slotSeconds) * Self.slotSeconds
      let to = min(end, slot + Self.slotSeconds)
      let seconds = Double(to - from)
      slots[slot, default: (0, 0)].energy += intensity * seconds
      slots[slot, default: (0, 0)].seconds += seconds
      from = to
    }
  }

  /// The equivalent continuous level per local date of `rules`' zone, in dBASPL; dates without
  /// sound are absent.
  func levels(_ rules: ZoneRules) -> [CivilDate: Double] {
    var totals: [CivilDate: (energy: Double, seconds: Double)] = [:]
    // Summed in time order, so the same export always gives the same last digit.
    for slot in slots.keys.sorted() {
      let value = slots[slot]!
      let date = rules.localDate(at: Instant(seconds: slot))
      totals[date, default: (0, 0)].energy += value.energy
      totals[date, default: (0, 0)].seconds += value.seconds
    }
    return totals.compactMapValues { $0.seconds > 0 ? 10 * log10($0.energy / $0.seconds) : nil }
  }
}
