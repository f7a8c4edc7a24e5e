/// The elevation of splits cut from distance samples, from the workout's route (Pipelines/README.md,
/// "Splits"): the route's elevation is a line through its points in time order; a split's
/// `elevation_gain_m` and `elevation_loss_m` are the rises and falls of that line inside the split,
/// and `elevation_change_m` their difference (the line at the end minus at the start). A split the
/// line does not reach (before the first point with an elevation, after the last) has none.
struct SplitElevationProfile {
  /// One unit's splits, in time order, not overlapping.
  private(set) var splits: [WorkoutSplit]
  private var last: (time: Double, elevation: Double)?
  /// The first split that may still take part of the line.
  private var next = 0

  init(_ splits: [WorkoutSplit]) {
    self.splits = splits
    for index in self.splits.indices {
      self.splits[index].elevationChangeMeters = nil
      self.splits[index].elevationGainMeters = nil
      self.splits[index].elevationLossMeters = nil
    }
  }

  /// Adds a route point; points earlier than the last one are left out (time never runs back).
  mutating func add(time: Double, elevation: Double) {
    guard time.isFinite, elevation.isFinite else { return }
    guard let last else {
      self.last = (time, elevation)
      return
    }
    guard time > last.time else { return }
    func height(_ at: Double) -> Double {
      last.elevation + (elevation - last.elevation) * (at - last.time) / (time - last.time)
    }
    var index = next
    while index < splits.count, splits[index].start < time {
      if splits[index].end > last.time {
        let delta = height(min(splits[index].end, time)) - height(max(splits[index].start, last.time))
        splits[index].elevationGainMeters = (splits[index].elevationGainMeters ?? 0) + max(0, delta)
        splits[index].elevationLossMeters = (splits[index].elevationLossMeters ?? 0) + max(0, -delta)
        splits[index].elevationChangeMeters = (splits[index].elevationChangeMeters ?? 0) + delta
      }
      index += 1
    }
    while next < splits.count, splits[next].end <= time { next += 1 }
    self.last = (time, elevation)
  }
}
