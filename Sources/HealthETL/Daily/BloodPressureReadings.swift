import HealthModel

/// The readings behind `daily.csv`'s `bp_readings` (Pipelines/docs/daily.md, "Daily"): per local date,
/// the blood-pressure readings that start on it. A reading is one source's systolic and diastolic
/// samples with the same start and end: a `BloodPressure` correlation's pair (its members count
/// once, see "Duplicates"), or the same pair written at top level only. A systolic without its
/// diastolic (some Japanese apps write one) is a reading too, and enters only the systolic mean;
/// so does a lone diastolic. One (source, start, end) per distinct reading is kept while the
/// export streams: a few a day at most.
struct BloodPressureReadings {
  private struct Reading: Hashable {
    var source: Int32
    var start: Int64
    var end: Int64
  }
  private var readings: Set<Reading> = []
  /// Per type id: whether it is `BloodPressureSystolic` or `…Diastolic`, grown as types are first seen.
  private var isBloodPressure: [Bool] = []

  mutating func add(_ sample: borrowing Sample, catalog: SampleCatalog) {
    let type = Int(sample.type)
    guard type >= 0, sample.kind == .quantity, sample.value.isFinite else { return }
    while isBloodPressure.count <= type {
      let name = catalog.typeInfo(Int32(isBloodPressure.count)).shortName
      isBloodPressure.append(name == "BloodPressureSystolic" || name == "BloodPressureDiastolic")
    }
    guard isBloodPressure[type] else { return }
    readings.insert(Reading(source: sample.source, start: sample.start.seconds, end: sample.end.seconds))
  }

  /// Readings per local date of their start in `rules`' zone; dates without one are absent.
  func perDate(_ rules: ZoneRules) -> [CivilDate: Int] {
    var counts: [CivilDate: Int] = [:]
    for reading in readings { counts[rules.localDate(at: Instant(seconds: reading.start)), default: 0] += 1 }
    return counts
  }
}
