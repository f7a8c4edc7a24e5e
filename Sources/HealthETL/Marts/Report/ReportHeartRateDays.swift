import HealthModel

/// The heart rate per minute of the last few local dates that have one, as the statistics mart
/// closes its buckets (a tap): what the report's `heart_rate` section draws. Made before both
/// marts, so that neither needs the other to exist first.
final class ReportHeartRateDays {
  struct Day {
    /// Days since 1970-01-01 of the local date.
    var day: Int64
    /// Each minute's first instant (Unix seconds) and its value, in time order.
    var starts: [Int64] = []
    var values: [Double] = []
  }

  /// The last `limit` dates, ascending.
  private(set) var days: [Day] = []
  let limit: Int

  init(limit: Int) { self.limit = limit }

  /// One minute's value; `offset` is the zone's UTC offset at `start`, in seconds. Minutes arrive
  /// in time order, so a new date drops the oldest once `limit` are kept.
  func add(start: Int64, offset: Int32, value: Double) {
    let day = floorDiv(start + Int64(offset), 86_400)
    if days.last?.day != day {
      days.append(Day(day: day))
      if days.count > limit { days.removeFirst() }
    }
    days[days.count - 1].starts.append(start)
    days[days.count - 1].values.append(value)
  }
}
