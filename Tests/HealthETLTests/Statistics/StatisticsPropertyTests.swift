import Foundation
import HealthETL
import HealthExtract
import HealthModel
import SyntheticExport
import Testing

/// Collects one type's samples as plain values, to check the statistics against sums computed
/// here independently (no bucket or merge code of the stage is used).
final class QuantityCollector: Mart {
  struct Item {
    var source: String
    var userEntered: Bool
    var model: String?
    var start: Int64
    var end: Int64
    var value: Double
  }

  let type: String
  var items: [Item] = []

  init(type: String) { self.type = type }

  func consume(_ sample: borrowing Sample, catalog: SampleCatalog) {
    guard catalog.typeInfo(sample.type).shortName == type else { return }
    var userEntered = false
    for index in 0..<sample.metadata.count
    where catalog.metadataKey(sample.metadata.key(at: index)) == "HKWasUserEntered" {
      userEntered = String(decoding: sample.metadata.value(at: index), as: UTF8.self) == "1"
    }
    items.append(
      Item(
        source: catalog.sourceName(sample.source), userEntered: userEntered,
        model: catalog.device(sample.device)?.model,
        start: sample.start.seconds, end: sample.end.seconds, value: sample.value))
  }

  func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary] { [] }
}

/// Local days of a zone through Foundation's `Calendar` (not the stage's own bucket code).
struct FoundationDays {
  let calendar: Calendar

  init(zone: String) {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: zone)!
    self.calendar = calendar
  }

  /// `[start, end)` of the local day holding `instant`.
  func day(containing instant: Int64) -> (start: Int64, end: Int64) {
    let start = calendar.startOfDay(for: Date(timeIntervalSince1970: TimeInterval(instant)))
    let end = calendar.date(byAdding: .day, value: 1, to: start)!
    return (Int64(start.timeIntervalSince1970), Int64(end.timeIntervalSince1970))
  }
}

/// Independent arithmetic on collected samples.
enum IndependentSums {
  /// Seconds of `[a, b)` that lie inside `[c, d)`.
  static func overlap(_ a: Int64, _ b: Int64, _ c: Int64, _ d: Int64) -> Int64 { max(0, min(b, d) - max(a, c)) }

  /// Sorted, merged union of intervals.
  static func union(_ intervals: [(Int64, Int64)]) -> [(Int64, Int64)] {
    var merged: [(Int64, Int64)] = []
    for (a, b) in intervals.sorted(by: { $0.0 < $1.0 }) where b > a {
      if let last = merged.last, a <= last.1 {
        merged[merged.count - 1].1 = max(last.1, b)
      } else {
        merged.append((a, b))
      }
    }
    return merged
  }

  /// Seconds of `[a, b)` covered by the (merged) union.
  static func covered(_ a: Int64, _ b: Int64, by union: [(Int64, Int64)]) -> Int64 {
    union.reduce(0) { $0 + overlap(a, b, $1.0, $1.1) }
  }

  /// The part of `item` inside `[dayStart, dayEnd)`, pro rata; an instant counts whole in its day.
  static func share(_ item: QuantityCollector.Item, _ dayStart: Int64, _ dayEnd: Int64) -> Double {
    if item.end == item.start { return item.start >= dayStart && item.start < dayEnd ? item.value : 0 }
    return item.value * Double(overlap(item.start, item.end, dayStart, dayEnd)) / Double(item.end - item.start)
  }
}

/// Properties on generated exports (SampleData/export.zip and `healthetl sample`-style exports of
/// 30 days): conservation with separateBySource, bounds on the merged sums, ordered disjoint buckets.
@Suite(.serialized) struct StatisticsPropertyTests {
  static let zone = "Europe/Berlin"

  struct Run {
    var output: StatsFixture.Output
    var steps: [QuantityCollector.Item]
  }

  static func run(_ source: InputSource) throws -> Run {
    let jobs =
      StatsFixture.defaultQueries + [
        try StatsFixture.job("steps_by_source_daily", "StepCount", "1d", ["sum"], separate: true),
        try StatsFixture.job("steps_by_source_hourly", "StepCount", "1h", ["sum", "count"], separate: true),
        try StatsFixture.job("energy_by_source_daily", "ActiveEnergyBurned", "1d", ["sum"], separate: true),
        try StatsFixture.job("steps_weekly", "StepCount", "1w", ["sum", "duration"]),
        try StatsFixture.job("hr_hourly", "HeartRate", "1h", ["twavg", "mostRecent", "duration"], separate: true),
      ]
    let collector = QuantityCollector(type: "StepCount")
    var made: StatisticsMart?
    let result = try StageHarness.run(source, zone: .named(zone)) { transaction in
      made = try? StatisticsMart(jobs: jobs, transaction: transaction)
      return [made!, collector]
    }
    return Run(output: StatsFixture.Output(result: result, stage: made!), steps: collector.items)
  }

  static func generated(seed: UInt64) throws -> (InputSource, URL) {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stats-gen-\(UUID().uuidString)")
    let path = folder.appendingPathComponent("export.xml").path
    _ = try SyntheticExportGenerator.write(SyntheticExportOptions(days: 30, seed: seed), to: path)
    return (.path(path), folder)
  }

  static func exports() throws -> [(String, InputSource, URL?)] {
    var list: [(String, InputSource, URL?)] = [("SampleData/export.zip", .path(StageHarness.sampleExport), nil)]
    for seed: UInt64 in [3, 11] {
      let (source, folder) = try generated(seed: seed)
      list.append(("seed \(seed)", source, folder))
    }
    return list
  }

  static func epoch(_ text: String?) -> Int64 {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    return Int64(formatter.date(from: text ?? "")!.timeIntervalSince1970)
  }

  @Test func statisticsHoldTheirPropertiesOnGeneratedExports() throws {
    for (name, source, folder) in try Self.exports() {
      defer { if let folder { try? FileManager.default.removeItem(at: folder) } }
      let run = try Self.run(source)
      defer { run.output.result.remove() }
      #expect(run.steps.count > 100, "\(name): steps collected")
      try conservation(run, name)
      try mergedBounds(run, name)
      try bucketsAreOrderedAndDisjoint(run, name)
    }
  }

  /// The bundled sample's first week (Europe/Berlin), merged against naive: the Watch and the
  /// iPhone both count every walk, so naive double counts; merged keeps each stretch once.
  @Test func theSampleExportsFirstWeekCountsEveryStepOnce() throws {
    let out = try StatsFixture.run(
      .path(StageHarness.sampleExport),
      jobs: [
        try StatsFixture.job("merged", "StepCount", "1d", ["sum"]),
        try StatsFixture.job("by_source", "StepCount", "1d", ["sum"], separate: true),
      ], zone: .named(Self.zone))
    defer { out.result.remove() }
    var bySource: [String: [String: Double]] = [:]
    for row in try out.rows("by_source") {
      bySource[String(row["bucket_start"]!.prefix(10)), default: [:]][row["source"]!] = Double(row["sum"]!)!
    }
    let watch = "Alex’s Apple Watch"
    let phone = "Alex’s iPhone"
    var table = ["date        merged    naive    Watch   iPhone"]
    var doubleCounted = 0
    for row in try out.rows("merged").prefix(7) {
      let date = String(row["bucket_start"]!.prefix(10))
      let merged = Double(row["sum"]!)!
      let naive = bySource[date]!.values.reduce(0, +)
      if merged < naive - 1 { doubleCounted += 1 }
      table.append(
        [date, Self.pad(merged), Self.pad(naive), Self.pad(bySource[date]![watch]), Self.pad(bySource[date]![phone])]
          .joined(separator: " "))
    }
    print(table.joined(separator: "\n"))
    #expect(doubleCounted == 7)
  }

  static func pad(_ value: Double?) -> String {
    let text = value.map { String(Int($0.rounded())) } ?? "-"
    return String(repeating: " ", count: max(0, 8 - text.count)) + text
  }

  /// separateBySource: one source's bucket sums add up to the sum of that source's samples.
  func conservation(_ run: Run, _ name: String) throws {
    var perSource: [String: Double] = [:]
    for item in run.steps { perSource[item.source, default: 0] += item.value }
    #expect(perSource.count >= 2, "\(name): several step sources")
    for job in ["steps_by_source_daily", "steps_by_source_hourly"] {
      var fromBuckets: [String: Double] = [:]
      for row in try run.output.rows(job) { fromBuckets[row["source"]!, default: 0] += Double(row["sum"]!)! }
      #expect(Set(fromBuckets.keys) == Set(perSource.keys), "\(name) \(job)")
      for (source, total) in perSource {
        let bucketTotal = fromBuckets[source] ?? .nan
        #expect(
          abs(bucketTotal - total) <= 1e-6 * max(1, total), "\(name) \(job) \(source): \(bucketTotal) vs \(total)")
      }
    }
    // Counting: every sample starts in exactly one hour bucket.
    let counted = try run.output.rows("steps_by_source_hourly").reduce(0) { $0 + Int($1["count"]!)! }
    #expect(counted == run.steps.count, "\(name)")
  }

  /// Per day, with W the source of the largest single-source sum:
  ///   merged ≤ S_W + R, where R ("the uncovered remainder") is what other sources recorded in
  ///   time W's samples do not cover, pro rata — plus, in time W does cover, what sources
  ///   ranking above one of W's groups recorded (they can win there). When W outranks every other
  ///   source that second part is zero and the bound reads exactly "largest single source plus
  ///   the uncovered remainder". Also merged ≤ naive (every source added), and merged ≥ the
  ///   share of the best-ranked group present that day (it wins wherever it has samples).
  func mergedBounds(_ run: Run, _ name: String) throws {
    let days = FoundationDays(zone: Self.zone)
    let priority = SourcePriority()
    func rank(_ item: QuantityCollector.Item) -> SourcePriority.Rank {
      priority.rank(sourceName: item.source, deviceModel: item.model, userEntered: item.userEntered)
    }
    // Group by the local days every sample touches.
    var byDay: [Int64: (end: Int64, items: [QuantityCollector.Item])] = [:]
    for item in run.steps {
      var day = days.day(containing: item.start)
      while true {
        byDay[day.start, default: (day.end, [])].items.append(item)
        if item.end <= day.end { break }
        day = days.day(containing: day.end)
      }
    }
    let merged = Dictionary(
      uniqueKeysWithValues: try run.output.rows("steps-per-day").map {
        (Self.epoch($0["bucket_start"]), Double($0["sum"]!)!)
      })
    var plainBoundDays = 0
    for (dayStart, entry) in byDay {
      let dayEnd = entry.end
      let items = entry.items
      var bySource: [String: Double] = [:]
      for item in items { bySource[item.source, default: 0] += IndependentSums.share(item, dayStart, dayEnd) }
      let naive = bySource.values.reduce(0, +)
      guard let value = merged[dayStart] else {
        Issue.record("\(name): day \(dayStart) has steps but no row")
        continue
      }
      let (w, sW) = bySource.max { $0.value < $1.value || ($0.value == $1.value && $0.key < $1.key) }!
      let wItems = items.filter { $0.source == w }
      let worstW = wItems.map(rank).max()!
      let coverW = IndependentSums.union(wItems.filter { $0.end > $0.start }.map { ($0.start, $0.end) })
      var remainder = 0.0
      var outranked = 0.0
      for item in items where item.source != w {
        if item.end == item.start {
          remainder += IndependentSums.share(item, dayStart, dayEnd)
          continue
        }
        let a = max(item.start, dayStart)
        let b = min(item.end, dayEnd)
        guard b > a else { continue }
        let inside = IndependentSums.covered(a, b, by: coverW)
        let length = Double(item.end - item.start)
        remainder += item.value * Double((b - a) - inside) / length
        if rank(item) < worstW { outranked += item.value * Double(inside) / length }
      }
      let tolerance = 1e-6 * max(1, naive)
      #expect(
        value <= sW + remainder + outranked + tolerance,
        "\(name) day \(dayStart): \(value) > \(sW) + \(remainder) + \(outranked)")
      if outranked == 0 { plainBoundDays += 1 }
      #expect(value <= naive + tolerance, "\(name) day \(dayStart): merged \(value) > naive \(naive)")
      let best = items.map(rank).min()!
      let bestShare = items.filter { rank($0) == best }.reduce(0) { $0 + IndependentSums.share($1, dayStart, dayEnd) }
      #expect(value >= bestShare - tolerance, "\(name) day \(dayStart): merged \(value) < best group \(bestShare)")
    }
    #expect(plainBoundDays > 0, "\(name): some days check the bound in its plain form")
  }

  /// Every CSV: bucket_start < bucket_end; rows in (bucket, source) order; different buckets
  /// never overlap; one bucket has one end.
  func bucketsAreOrderedAndDisjoint(_ run: Run, _ name: String) throws {
    for output in run.output.result.outputs {
      let rows = try run.output.result.csvRows(output.path)
      #expect(rows.count == output.rows, "\(name) \(output.path)")
      var previous: (start: Int64, end: Int64, source: String)?
      for row in rows {
        let start = Self.epoch(row["bucket_start"])
        let end = Self.epoch(row["bucket_end"])
        let source = row["source"] ?? ""
        #expect(start < end, "\(name) \(output.path)")
        if let previous {
          if start == previous.start {
            #expect(
              end == previous.end && Array(previous.source.utf8).lexicographicallyPrecedes(Array(source.utf8)),
              "\(name) \(output.path) \(row)")
          } else {
            #expect(start >= previous.end, "\(name) \(output.path): \(row) overlaps or precedes the row before")
          }
        }
        previous = (start, end, source)
      }
      if output.path.hasSuffix("daily.csv") || output.path.hasSuffix("per-day.csv") {
        #expect(rows.allSatisfy { $0["bucket_start"]!.contains("T00:00:00") }, "\(name) \(output.path)")
      }
    }
  }
}
