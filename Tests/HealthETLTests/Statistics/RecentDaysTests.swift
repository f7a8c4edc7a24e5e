import HealthModel
import Testing

@testable import HealthETL

/// The last days of a statistic, as the report reads them: buckets grouped by their local date in
/// the run's zone, worked out by hand across Berlin's spring-forward night (2024-03-31, 02:00 CET
/// became 03:00 CEST at 01:00 UTC).
@Suite struct RecentDaysTests {
  @Test func bucketsAreGroupedByLocalDateAcrossAnOffsetChange() throws {
    let berlin = try ZoneRules.load("Europe/Berlin")
    let collector = RecentDays.Collector(limit: 2, rules: berlin)
    // 23:59 CET on the 30th; midnight CET, the 31st; 23:59 CEST, the 31st; midnight CEST, 1 April.
    collector.add(start: 1_711_839_540, value: 50)
    collector.add(start: 1_711_839_600, value: 51)
    collector.add(start: 1_711_922_340, value: 52)
    collector.add(start: 1_711_922_400, value: 53)
    let days = collector.days
    // Two days kept: the 30th was dropped when 1 April came.
    #expect(days.map(\.day) == [19_813, 19_814])
    #expect(days.map(\.starts) == [[1_711_839_600, 1_711_922_340], [1_711_922_400]])
    #expect(days.map(\.values) == [[51, 52], [53]])
  }

  /// A bucket before the last one's offset interval (time order is what the sweeps hand out, but
  /// the collector must not trust its kept interval for an instant outside it).
  @Test func anInstantOutsideTheKeptIntervalIsLookedUpAgain() throws {
    let berlin = try ZoneRules.load("Europe/Berlin")
    let collector = RecentDays.Collector(limit: 3, rules: berlin)
    // 00:30 CEST on 1 April (22:30 UTC on the 31st), then 23:30 CET on the 30th (22:30 UTC).
    collector.add(start: 1_711_924_200, value: 1)
    collector.add(start: 1_711_837_800, value: 2)
    #expect(collector.days.map(\.day) == [19_814, 19_812])
  }
}
