import HealthModel

/// The buckets of one job in the run's zone: bucket `k` is `[start(k), start(k + 1))`, bucket 0
/// starting at the anchor.
///
/// Fixed-length intervals (seconds, minutes, hours) are aligned to the anchor's instant and step
/// in exact seconds, like `Calendar` adding minute or hour components: on a fall-back night the
/// hour 01:00–02:00 occurs twice and gives two buckets, never one of two hours. Calendar intervals
/// (days, weeks, months, years) step on local dates at the anchor's wall-clock time, each
/// boundary being the first instant the wall clock reaches it (`ZoneRules.firstInstant`), so a
/// DST day has 23 or 25 hours and a boundary inside a spring-forward gap moves to the end of the
/// gap.
struct CalendarBuckets {
  private enum Step {
    case fixed(Int64)
    case days(Int64)
    case months(Int)
  }

  let rules: ZoneRules
  private let step: Step
  private let anchorDate: CivilDate
  private let anchorDays: Int64
  private let anchorSecondOfDay: Int64
  private let anchorInstant: Int64
  /// The last bucket looked up: consecutive samples nearly always fall into it.
  private var cachedIndex = Int64.min
  private var cachedStart: Int64 = 0
  private var cachedEnd: Int64 = 0

  init(interval: BucketInterval, anchor: BucketAnchor, rules: ZoneRules) {
    self.rules = rules
    anchorDate = anchor.date
    anchorDays = anchor.date.daysSinceEpoch
    anchorSecondOfDay = Int64(anchor.minuteOfDay) * 60
    anchorInstant = rules.firstInstant(atOrAfterLocal: anchorDays * 86_400 + anchorSecondOfDay).seconds
    switch interval.unit {
    case .second, .minute, .hour: step = .fixed(interval.fixedSeconds!)
    case .day: step = .days(Int64(interval.count))
    case .week: step = .days(Int64(interval.count) * 7)
    case .month: step = .months(interval.count)
    case .year: step = .months(interval.count * 12)
    }
  }

  /// The instant bucket `k` starts at.
  func start(_ k: Int64) -> Int64 {
    switch step {
    case .fixed(let length):
      return anchorInstant + k * length
    case .days(let days):
      return rules.firstInstant(atOrAfterLocal: (anchorDays + k * days) * 86_400 + anchorSecondOfDay).seconds
    case .months(let months):
      let date = anchorDate.adding(months: Int(k) * months)
      return rules.firstInstant(atOrAfterLocal: date.daysSinceEpoch * 86_400 + anchorSecondOfDay).seconds
    }
  }

  /// The instant bucket `k` ends at (exclusive).
  mutating func end(_ k: Int64) -> Int64 {
    if k == cachedIndex { return cachedEnd }
    return start(k + 1)
  }

  /// The bucket holding instant `t` (half-open: an instant on a boundary opens the next bucket).
  mutating func index(containing t: Int64) -> Int64 {
    if cachedIndex != .min, t >= cachedStart, t < cachedEnd { return cachedIndex }
    var k: Int64
    switch step {
    case .fixed(let length):
      k = floorDiv(t - anchorInstant, length)
      cache(k, start: anchorInstant + k * length, end: anchorInstant + (k + 1) * length)
      return k
    case .days(let days):
      let localDays = floorDiv(rules.localSeconds(at: Instant(seconds: t)) - anchorSecondOfDay, 86_400)
      k = floorDiv(localDays - anchorDays, days)
    case .months(let months):
      let local = rules.localSeconds(at: Instant(seconds: t)) - anchorSecondOfDay
      let date = CivilDate(daysSinceEpoch: floorDiv(local, 86_400))
      let elapsed = (date.year * 12 + date.month - 1) - (anchorDate.year * 12 + anchorDate.month - 1)
      k = floorDiv(Int64(elapsed), Int64(months))
    }
    // The guess from local dates can be one off (anchor day 31 in a short month, a boundary
    // moved by a DST gap); the boundaries themselves decide.
    var lower = start(k)
    while lower > t {
      k -= 1
      lower = start(k)
    }
    var upper = start(k + 1)
    while upper <= t {
      k += 1
      lower = upper
      upper = start(k + 1)
    }
    cache(k, start: lower, end: upper)
    return k
  }

  private mutating func cache(_ k: Int64, start: Int64, end: Int64) {
    cachedIndex = k
    cachedStart = start
    cachedEnd = end
  }
}
