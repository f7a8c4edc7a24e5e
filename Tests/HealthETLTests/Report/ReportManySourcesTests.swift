import Foundation
import Testing

@testable import HealthETL

/// Many sources (Pipelines/report/DATA.md, "quality"): the report lists the sources with the most
/// samples and sums the rest into one row, and its overlap and priority measures cost the same per
/// sample whatever the number of sources. Values worked out by hand, or by the definition itself.
@Suite struct ReportManySourcesTests {
  static let day = "2024-03-11"

  /// `HH:MM` of `minutes` after midnight.
  static func clock(_ minutes: Int) -> String {
    String(format: "%@ %02d:%02d:00 +0000", day, minutes / 60, minutes % 60)
  }

  @Test func theTopSourcesAreListedAndTheRestSummedInOneRow() throws {
    // 25 sources "App 01" … "App 25", all of class "other" without a device, so they rank by name:
    // App 01 first. Slot j (j = 0…24) starts at j × 40 min; App k has a sample in slots 0…25−k
    // (26 − k samples), lasting 10 + k minutes with 10 + k steps (one a minute). Slot j holds
    // Apps 1…25−j, all starting together: App 01 wins its 11 minutes, and App k ≥ 2 wins only
    // minute 10 + k − 1 … 10 + k, where the shorter, better-ranked samples have ended.
    var records: [String] = []
    for k in 1...25 {
      for j in 0...(25 - k) {
        records.append(
          Staging.record(
            "HKQuantityTypeIdentifierStepCount", source: String(format: "App %02d", k), value: String(10 + k),
            unit: "count", start: Self.clock(j * 40), end: Self.clock(j * 40 + 10 + k)))
      }
    }
    #expect(records.count == 325)
    let data = try ReportMartTests.report(records, zone: "UTC")

    // Counted: App 01 25 × 11 = 275; App k ≥ 2 one step in each of its 26 − k slots:
    // 24 + 23 + … + 1 = 300. 575 in all.
    let days = try #require(data["days"] as? [String: Any])
    #expect(days["steps"] as? [Int] == [575])

    let quality = try #require(data["quality"] as? [String: Any])
    let types = try #require(quality["types"] as? [[String: Any]])
    #expect(types.count == 1)
    #expect(types[0]["samples"] as? Int == 325)
    // Every sample shares its slot with another source except App 01's in slot 24, alone there.
    #expect(types[0]["overlapping"] as? Int == 324)
    let rows = try #require(types[0]["sources"] as? [[String: Any]])
    #expect(rows.count == ReportMart.sourcesPerType + 1)
    #expect(rows.prefix(20).map { $0["name"] as? String } == (1...20).map { String(format: "App %02d", $0) })
    #expect(rows.prefix(20).map { $0["samples"] as? Int } == Array((6...25).reversed()))
    #expect(rows.prefix(20).allSatisfy { $0["others"] == nil })
    // App 01 counts whole; App 02 1/12 = 0.0833; App 20 1/30 = 0.0333.
    #expect(rows[0]["counted_share"] as? Double == 1)
    #expect(rows[1]["counted_share"] as? Double == 0.083)
    #expect(rows[19]["counted_share"] as? Double == 0.033)
    // The other five, Apps 21–25: 5 + 4 + 3 + 2 + 1 = 15 samples; counted 15 steps of
    // 5 × 31 + 4 × 32 + 3 × 33 + 2 × 34 + 1 × 35 = 485: 0.0309.
    #expect(rows[20]["name"] as? String == "5 other sources")
    #expect(rows[20]["others"] as? Int == 5)
    #expect(rows[20]["samples"] as? Int == 15)
    #expect(rows[20]["counted_share"] as? Double == 0.031)
    #expect(rows.reduce(0) { $0 + ($1["samples"] as? Int ?? 0) } == 325)
  }

  @Test func aTypeWithFewSourcesHasNoOthersRow() throws {
    let records = (1...20).map { k in
      Staging.record(
        "HKQuantityTypeIdentifierHeartRate", source: "Band \(k)", value: "60", unit: "count/min",
        start: Self.clock(k), end: Self.clock(k))
    }
    let data = try ReportMartTests.report(records, zone: "UTC")
    let quality = try #require(data["quality"] as? [String: Any])
    let types = try #require(quality["types"] as? [[String: Any]])
    let rows = try #require(types.first?["sources"] as? [[String: Any]])
    #expect(rows.count == 20)
    #expect(rows.allSatisfy { $0["others"] == nil && $0["counted_share"] is NSNull })
  }

  /// A seeded generator, so a failure can be replayed.
  struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
  }

  struct Sample {
    var start: Int64
    var end: Int64
    var value: Double
    var source: Int
  }

  @Test(arguments: [1, 2, 3, 4])
  func overlapsAndCountedSumsMatchTheirDefinitions(seed: UInt64) {
    // Many sources with few samples each, in a short stretch so that most of them overlap; some
    // instants. Checked against the definitions taken literally, pair by pair and piece by piece.
    var random = SplitMix(state: seed)
    let sources = 150
    var samples: [Sample] = (0..<400).map { _ in
      let start = Int64.random(in: 0..<6_000, using: &random)
      let length =
        Bool.random(using: &random) && Bool.random(using: &random) ? 0 : Int64.random(in: 1...400, using: &random)
      return Sample(
        start: start, end: start + length, value: Double(Int.random(in: 1...100, using: &random)),
        source: Int.random(in: 0..<sources, using: &random))
    }
    samples.sort { $0.start < $1.start }
    // Rank positions: a permutation, so the best group is not simply the first source.
    let ranks = (0..<sources).map { Int32(($0 * 7 + 3) % sources) }

    let quality = ReportQuality()
    quality.begin(types: ["StepCount"], groupSources: (0..<sources).map { "S\($0)" }, groupRanks: ranks)
    for sample in samples {
      quality.observe(stream: 0, start: sample.start, end: sample.end, value: sample.value, group: Int32(sample.source))
    }
    quality.end()

    let timed = samples.filter { $0.end > $0.start }
    let overlapping = timed.filter { a in
      timed.contains { b in b.source != a.source && max(a.start, b.start) < min(a.end, b.end) }
    }.count
    #expect(quality.overlapping["StepCount"] == overlapping)

    var counted = [Double](repeating: 0, count: sources)
    var totals = [Double](repeating: 0, count: sources)
    for sample in samples {
      totals[sample.source] += sample.value
      if sample.end == sample.start { counted[sample.source] += sample.value }
    }
    let cuts = Set(timed.flatMap { [$0.start, $0.end] }).sorted()
    for (from, to) in zip(cuts, cuts.dropFirst()) {
      let covering = timed.filter { $0.start <= from && $0.end >= to }
      guard let best = covering.map({ ranks[$0.source] }).min() else { continue }
      for sample in covering where ranks[sample.source] == best {
        counted[sample.source] += sample.value * Double(to - from) / Double(sample.end - sample.start)
      }
    }
    let shares = Dictionary(uniqueKeysWithValues: (quality.shares["StepCount"] ?? []).map { ($0.source, $0) })
    for source in 0..<sources where totals[source] != 0 {
      let share = shares["S\(source)"]
      #expect(share?.total == totals[source])
      #expect(abs((share?.counted ?? -1) - counted[source]) < 1e-9 * max(1, counted[source]))
    }
    #expect(shares.count == totals.filter { $0 != 0 }.count)
  }

  @Test func theLatestEndOfAnotherSourceNeedsOnlyTwoEnds() {
    var ends = ReportQuality.LatestEnds()
    #expect(ends.latest(otherThan: 0) == .min)
    ends.record(100, of: 0)
    #expect(ends.latest(otherThan: 0) == .min)
    #expect(ends.latest(otherThan: 1) == 100)
    ends.record(80, of: 1)
    #expect(ends.latest(otherThan: 0) == 80)
    ends.record(150, of: 1)
    // Source 1 leads now; source 0's 100 is the latest of the others.
    #expect(ends.latest(otherThan: 1) == 100)
    #expect(ends.latest(otherThan: 0) == 150)
    ends.record(120, of: 2)
    #expect(ends.latest(otherThan: 1) == 120)
    #expect(ends.latest(otherThan: 2) == 150)
    ends.record(120, of: 1)
    #expect(ends.latest(otherThan: 2) == 150)
  }

  @Test func sortedPrefixIsTheStartOfTheSortedOrder() {
    let values = [5, 3, 9, 1, 7, 2, 8]
    #expect(values.sortedPrefix(3, by: <) == [1, 2, 3])
    #expect(values.sortedPrefix(3, by: >) == [9, 8, 7])
    #expect(values.sortedPrefix(0, by: <) == [])
    #expect(values.sortedPrefix(20, by: <) == [1, 2, 3, 5, 7, 8, 9])
    // UTF-8 byte order: "B" (0x42) < "a" (0x61) < "é" (0xC3 0xA9).
    let names = ["é", "a", "B", "ab"]
    #expect(names.sortedPrefix(3) { $0.utf8.lexicographicallyPrecedes($1.utf8) } == ["B", "a", "ab"])
    let many = (0..<10_000).map { ($0 * 7_919) % 10_000 }
    #expect(many.sortedPrefix(5, by: <) == [0, 1, 2, 3, 4])
  }

  @Test func pairIndexNumbersPairsInTheOrderTheyAppear() {
    var index = PairIndex()
    #expect(index.number(1, 2) == (0, true))
    #expect(index.number(2, 1) == (1, true))
    #expect(index.number(1, 2) == (0, false))
    #expect(index.number(-1, 5) == (2, true))
    #expect(index.pair(2) == (-1, 5))
    // Past many growths of its table, every pair keeps its number.
    for first in 0..<100 {
      for second in 0..<100 { _ = index.number(Int32(first) + 10, Int32(second)) }
    }
    #expect(index.count == 3 + 10_000)
    #expect(index.number(10, 0) == (3, false))
    #expect(index.number(109, 99) == (10_002, false))
    #expect(index.pair(10_002) == (109, 99))
    #expect(index.number(1, 2) == (0, false))
  }
}
