import HealthModel

/// The seconds behind `mindful_min`: per local date, the seconds of the date covered by at least
/// one `MindfulSession` sample of any source — overlapping sessions count once, a session across
/// midnight is split at it — the rule of a statistics job's `duration`. One (start, end) pair per
/// session is kept while the export streams (16 bytes a session).
struct MindfulDays {
  private var sessions: [(start: Int64, end: Int64)] = []
  /// Per type id: whether it is `MindfulSession`, grown as types are first seen.
  private var isMindful: [Bool] = []

  mutating func add(_ sample: borrowing Sample, catalog: SampleCatalog) {
    let type = Int(sample.type)
    guard type >= 0 else { return }
    while isMindful.count <= type {
      isMindful.append(catalog.typeInfo(Int32(isMindful.count)).shortName == "MindfulSession")
    }
    guard isMindful[type], sample.end > sample.start else { return }
    sessions.append((sample.start.seconds, sample.end.seconds))
  }

  /// Sessions that start on each local date of `rules`' zone.
  func sessionsPerDate(_ rules: ZoneRules) -> [CivilDate: Int] {
    var counts: [CivilDate: Int] = [:]
    for session in sessions { counts[rules.localDate(at: Instant(seconds: session.start)), default: 0] += 1 }
    return counts
  }

  /// Covered seconds per local date of `rules`' zone; dates without a session are absent.
  func secondsPerDate(_ rules: ZoneRules) -> [CivilDate: Int64] {
    var seconds: [CivilDate: Int64] = [:]
    var covered: (start: Int64, end: Int64)?
    for session in sessions.sorted(by: { $0.start < $1.start }) {
      if let current = covered, session.start <= current.end {
        covered = (current.start, max(current.end, session.end))
        continue
      }
      if let current = covered { Self.add(current, rules: rules, to: &seconds) }
      covered = session
    }
    if let current = covered { Self.add(current, rules: rules, to: &seconds) }
    return seconds
  }

  /// Adds the stretch's seconds to the dates it covers, split at each local midnight.
  private static func add(_ stretch: (start: Int64, end: Int64), rules: ZoneRules, to seconds: inout [CivilDate: Int64])
  {
    var start = stretch.start
    while start < stretch.end {
      let date = rules.localDate(at: Instant(seconds: start))
      let midnight = rules.firstInstant(atOrAfterLocal: (date.daysSinceEpoch + 1) * 86_400).seconds
      let end = min(stretch.end, max(midnight, start + 1))
      seconds[date, default: 0] += end - start
      start = end
    }
  }
}
