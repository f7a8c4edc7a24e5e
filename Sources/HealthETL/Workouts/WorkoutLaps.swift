import HealthModel

/// Swim lengths from Lap events first, and where a workout's totals came from
/// (Pipelines/docs/workouts.md, "Swimming").
extension WorkoutRowBuilder {
  /// The lengths of one swim, in start order, numbered from 1.
  ///
  /// Every Lap event is a length: its date and duration, its `HKSwimmingStrokeStyle` and
  /// `HKSWOLFScore`. Each stroke sample is joined to the Lap event its span overlaps longest (an
  /// event without a duration: the one whose date falls in the sample; ties to the earlier
  /// event); a length's strokes are those of its samples, its style and SWOLF the first sample's
  /// when it has them, else the event's. A stroke sample that no event matches is a length of its
  /// own — nothing read is dropped — and so is every stroke sample of a swim without Lap events.
  /// A length without stroke samples (kickboard lengths never have any) has no strokes. Distance:
  /// the pool length, as the Fitness app counts a pool swim (lengths × pool length); without one
  /// (open water), the overlapping distance samples.
  static func laps(
    events: [LapEvent], lengths: [WorkoutSampleIndex.StrokeSample], distances: [WorkoutSampleIndex.DistanceSample],
    poolLength: Double?
  ) -> [SwimLap] {
    var matched = [[WorkoutSampleIndex.StrokeSample]](repeating: [], count: events.count)
    var laps: [SwimLap] = []
    for length in lengths {
      if let index = lapEventIndex(matching: length, in: events) {
        matched[index].append(length)
        continue
      }
      laps.append(
        SwimLap(
          lap: 0, start: Instant(seconds: length.start), end: Instant(seconds: length.end), strokes: length.strokes,
          style: length.style.flatMap(SwimStrokeStyle.init(metadataValue:)) ?? .unknown, distanceMeters: nil,
          swolf: length.swolf, origin: .strokeSample))
    }
    for (event, samples) in zip(events, matched) {
      let start = Int64(event.start)
      let end = start + Int64((event.end - event.start).rounded())
      let first = samples.first
      laps.append(
        SwimLap(
          lap: 0, start: Instant(seconds: start), end: Instant(seconds: end),
          strokes: samples.isEmpty ? nil : samples.reduce(0) { $0 + $1.strokes },
          style: first?.style.flatMap(SwimStrokeStyle.init(metadataValue:)) ?? event.style ?? .unknown,
          distanceMeters: nil, swolf: first?.swolf ?? event.swolf, origin: .event))
    }
    // Start order; a stroke sample before the event at the same second, then by end.
    laps.sort { a, b in
      if a.start != b.start { return a.start < b.start }
      if a.origin != b.origin { return a.origin == .strokeSample }
      return a.end < b.end
    }
    for index in laps.indices {
      laps[index].lap = index + 1
      if let poolLength {
        laps[index].distanceMeters = poolLength
        laps[index].distanceFrom = "pool_length"
      } else if let meters = distance(from: laps[index].start.seconds, to: laps[index].end.seconds, distances) {
        laps[index].distanceMeters = meters
        laps[index].distanceFrom = "samples"
      }
    }
    return laps
  }

  /// The Lap event a stroke sample belongs to: the one whose span overlaps it longest; an event
  /// without a duration matches the sample its date falls in (`[start, end)`). Ties go to the
  /// earlier event in the document.
  static func lapEventIndex(matching length: WorkoutSampleIndex.StrokeSample, in events: [LapEvent]) -> Int? {
    let start = Double(length.start)
    let end = Double(length.end)
    var best: (index: Int, overlap: Double)?
    for (index, event) in events.enumerated() {
      let overlap: Double
      if event.end > event.start {
        overlap = min(end, event.end) - max(start, event.start)
        guard overlap > 0 else { continue }
      } else {
        guard event.start >= start, event.start < end else { continue }
        overlap = 0
      }
      if best == nil || overlap > best!.overlap { best = (index, overlap) }
    }
    return best?.index
  }

  /// Fills the workout's total strokes and says where `strokes`, `distance_m` and `hr_avg` came
  /// from: a total falls back on the workout's own statistic when no sample gives it.
  func addProvenance(
    _ row: inout WorkoutRow, _ workout: WorkoutElement, statistics: [String: WorkoutElement.Statistics],
    heartRateStatistic: WorkoutElement.Statistics?
  ) {
    if row.laps.contains(where: { $0.strokes != nil }) {
      row.strokes = row.laps.reduce(0) { $0 + ($1.strokes ?? 0) }
      row.strokesFrom = "samples"
    } else if let statistic = statistics[Self.typePrefix + "SwimmingStrokeCount"], let sum = statistic.sum,
      sum.isFinite, statistic.unit == nil || statistic.unit == "count"
    {
      row.strokes = sum
      row.strokesFrom = "statistics"
    }
    if row.distanceMeters != nil {
      row.distanceFrom = Self.distance(statistics) != nil ? "statistics" : "totalDistance"
    }
    if row.heartRateAverage != nil {
      row.heartRateFrom = Self.heartRate(heartRateStatistic, \.average) != nil ? "statistics" : "samples"
    }
  }
}
