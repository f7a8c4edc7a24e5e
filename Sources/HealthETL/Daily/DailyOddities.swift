import Foundation
import HealthModel

/// The days worth a look (Pipelines/docs/nightly.md, "Worth a look"): one source's overlapping samples
/// of a summed type, and walking and running distance far beyond what the day's steps allow.
/// `daily.csv` keeps the values; the report lists the days and leaves a day whose steps one
/// source's overlaps made out of its step average.
enum DailyOddities {
  static let sourceOverlaps = Oddities.Rule(
    key: "oneSourceOverlaps", title: "Days one source's samples overlap each other",
    why:
      "One source wrote samples of a summed type (steps, distance, energy) that overlap each other, as an app "
      + "does that saves one run several times. HealthKit adds every overlapping sample of the source that "
      + "counts for a stretch, so the Health app shows the same large total, and so do daily.csv and the "
      + "statistics. The report leaves a day whose steps overlap out of its step average.")
  static let distanceBeyondSteps = Oddities.Rule(
    key: "distanceBeyondSteps", title: "Days of more distance than the steps allow",
    why:
      "More walking and running distance than 2.5 m for each step counted that day, plus 1 km: no stride is "
      + "that long, so the distance comes from entries without steps (a treadmill app, one app's overlapping "
      + "samples, a manual entry). Kept as written in daily.csv.")

  /// The longest stride counted, m a step, and the distance allowed beyond the steps, m.
  static let longestStride = 2.5
  static let slackMeters = 1000.0

  /// Flags the days whose distance exceeds their steps (`distanceBeyondSteps`), and the days of
  /// `overlaps`; returns the dates whose steps overlapped.
  static func flag(
    statistics: DayStatistics?, overlaps: OverlapWatch, rules: ZoneRules, into oddities: inout Oddities
  ) -> Set<CivilDate> {
    let steps = DailyMeasure.steps.statistic!
    let distance = DailyMeasure.distanceKm.statistic!
    let days = overlaps.days(rules)
    for (date, meters) in (statistics?.all[distance] ?? [:]).sorted(by: { $0.key < $1.key }) {
      let counted = statistics?.value(steps, on: date) ?? 0
      let allowed = counted * longestStride + slackMeters
      guard meters > allowed else { continue }
      var detail =
        "\(kilometres(meters)) walked or run, \(whole(counted)) steps (\(kilometres(counted * longestStride)) at "
        + "\(longestStride) m a step)"
      if let overlap = days.first(where: { $0.date == date && $0.type == distance.type }) {
        detail += "; " + overlap.detail
      }
      oddities.flag(distanceBeyondSteps, .init(date: date, detail: detail))
    }
    var stepDates = Set<CivilDate>()
    for day in days {
      oddities.flag(sourceOverlaps, .init(date: day.date, detail: "\(day.type): " + day.detail))
      if day.type == steps.type { stepDates.insert(day.date) }
    }
    return stepDates
  }

  static func kilometres(_ meters: Double) -> String { String(format: "%.1f km", meters / 1000) }

  static func whole(_ value: Double) -> String {
    let formatter = NumberFormatter()
    formatter.numberStyle = .decimal
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.groupingSeparator = ","
    formatter.usesGroupingSeparator = true
    formatter.maximumFractionDigits = 0
    return formatter.string(from: NSNumber(value: value.rounded())) ?? String(Int(value.rounded()))
  }
}

/// Watches the statistics' merged streams of summed types for one source's samples that overlap
/// each other: per stream and source group, a chain of samples each starting before the latest end
/// so far, where one overlaps the sample reaching that end by more than half the shorter of the
/// two. What it keeps is a few numbers per (stream, group) that occurs and per (stream, local date)
/// with an overlap — never the samples.
final class OverlapWatch: StatisticsStreamObserver {
  private struct Chain {
    var start: Int64
    /// The sample reaching furthest so far.
    var latestStart: Int64
    var latestEnd: Int64
    var samples = 1
    var total: Double
    var overlapping = false
  }

  /// Per (stream, date of the chain's start): the chains that overlapped, summed.
  private struct Day {
    var chains = 0
    var samples = 0
    var total = 0.0
    /// The first such chain's source and span.
    var source: String
    var start: Int64
    var end: Int64
  }

  private var types: [String] = []
  private var summed: [Bool] = []
  private var groupSources: [String] = []
  /// The stream whose chains `chains` holds: the merge hands out one stream after another.
  private var chainStream: Int32 = -1
  /// Per group: its open chain in `chainStream`.
  private var chains: [Chain?] = []
  private var overlapDays: [Int64: Day] = [:]
  private var rules: ZoneRules?

  func willObserve(types: [String]) {}

  func willBegin(zone: ZoneRules) { rules = zone }

  func begin(types: [String], groupSources: [String], groupRanks: [Int32]) {
    self.types = types
    self.groupSources = groupSources
    summed = types.map { SampleTypeInfo.aggregation(ofShortName: $0)?.isCumulative ?? false }
    chains = [Chain?](repeating: nil, count: groupSources.count)
  }

  func observe(stream: Int32, start: Int64, end: Int64, value: Double, group: Int32) {
    guard summed[Int(stream)], end > start else { return }
    if stream != chainStream {
      closeChains()
      chainStream = stream
    }
    let slot = Int(group)
    guard var chain = chains[slot], start < chain.latestEnd else {
      if let done = chains[slot] { close(done, stream: stream, group: group) }
      chains[slot] = Chain(start: start, latestStart: start, latestEnd: end, total: value)
      return
    }
    let overlap = min(end, chain.latestEnd) - start
    let shorter = min(end - start, chain.latestEnd - chain.latestStart)
    if overlap * 2 > shorter { chain.overlapping = true }
    chain.samples += 1
    chain.total += value
    if end > chain.latestEnd {
      chain.latestStart = start
      chain.latestEnd = end
    }
    chains[slot] = chain
  }

  func end() {
    closeChains()
    chains = []
  }

  /// Closes the open chains of `chainStream` in group order, so that which chain a day names first
  /// and the order its totals are summed in are the same on every run.
  private func closeChains() {
    for group in chains.indices {
      guard let chain = chains[group] else { continue }
      close(chain, stream: chainStream, group: Int32(group))
      chains[group] = nil
    }
  }

  private func close(_ chain: Chain, stream: Int32, group: Int32) {
    guard chain.overlapping, let rules else { return }
    let day = rules.localDate(at: Instant(seconds: chain.start)).daysSinceEpoch
    let key = Int64(stream) << 32 | day
    var entry =
      overlapDays[key]
      ?? Day(source: groupSources[Int(group)], start: chain.start, end: chain.latestEnd)
    entry.chains += 1
    entry.samples += chain.samples
    entry.total += chain.total
    overlapDays[key] = entry
  }

  /// Per (date, type) with an overlap, in date then type order: what it was, in words.
  func days(_ rules: ZoneRules) -> [(date: CivilDate, type: String, detail: String)] {
    overlapDays.map { key, day in
      let type = types[Int(key >> 32)]
      let date = CivilDate(daysSinceEpoch: key & 0xFFFF_FFFF)
      var detail =
        "\(day.source) wrote \(day.samples) samples that overlap each other (\(Self.amount(day.total, type: type)) "
        + "together), from \(SleepOddities.minute(Instant(seconds: day.start), rules).suffix(5)) to "
        + "\(SleepOddities.minute(Instant(seconds: day.end), rules).suffix(5))"
      if day.chains > 1 { detail += " and \(day.chains - 1) more times that day" }
      detail += "; HealthKit adds them too"
      return (date, type, detail)
    }.sorted { ($0.date, $0.type) < ($1.date, $1.type) }
  }

  /// `12.0 km`, `3,412 steps`, `410 kcal`.
  static func amount(_ value: Double, type: String) -> String {
    switch SampleTypeInfo.canonicalUnit(ofShortName: type) {
    case "m": return DailyOddities.kilometres(value)
    case "count": return DailyOddities.whole(value) + (type == "StepCount" ? " steps" : "")
    case let unit?: return DailyOddities.whole(value) + " " + unit
    case nil: return DailyOddities.whole(value)
    }
  }
}
