import HealthModel

/// The lengths of a swimming workout, from its `SwimmingStrokeCount` samples (Pipelines/README.md,
/// "Swimming").
extension WorkoutRowBuilder {
  static let swimmingType = WorkoutActivityTypeTable.prefix + "Swimming"

  /// The lengths of a swimming workout (Pipelines/docs/workouts.md, "Swimming"): its Lap events, with
  /// the stroke samples joined to them by time, plus any stroke sample no Lap event matches;
  /// without Lap events, one length per stroke sample whose start lies in `[start, end)`. When
  /// the workout's own source wrote some stroke samples, only its samples count (a second device
  /// worn in the same pool writes its own lengths, which belong to its own workout); otherwise
  /// every source's. Distance samples are chosen the same way.
  func swimLaps(_ workout: WorkoutElement, id: String) -> [SwimLap] {
    guard workout.activityType == Self.swimmingType else { return [] }
    let lengths = preferringWorkoutSource(
      Array(samples.strokes(from: workout.start.seconds, before: workout.end.seconds)), workout, \.source)
    let distances = preferringWorkoutSource(
      samples.distances(overlapping: workout.start.seconds, workout.end.seconds), workout, \.source)
    let poolLength =
      Self.metadataQuantity(workout, "HKLapLength", .length)
      ?? Self.metadataQuantity(workout, "HKMetadataKeyLapLength", .length)
    return Self.laps(events: Self.lapEvents(workout), lengths: lengths, distances: distances, poolLength: poolLength)
  }

  private func preferringWorkoutSource<T>(_ items: [T], _ workout: WorkoutElement, _ source: KeyPath<T, Int32>) -> [T] {
    let own = items.filter { catalog.sourceName($0[keyPath: source]) == workout.sourceName }
    return own.isEmpty ? items : own
  }

  /// A `Lap` event of the workout: its span, stroke style and SWOLF score.
  struct LapEvent {
    var start: Double
    var end: Double
    var style: SwimStrokeStyle?
    var swolf: Double?
  }

  static func lapEvents(_ workout: WorkoutElement) -> [LapEvent] {
    workout.events.compactMap { event in
      guard event.type == lapEventType, let date = event.date else { return nil }
      let seconds = event.duration.flatMap { duration in
        ExactDecimal(duration.text).flatMap { WorkoutUnits.convert($0, unit: duration.unit, to: .time) }
      }
      let start = Double(date.seconds)
      return LapEvent(
        start: start, end: start + max(0, seconds ?? 0),
        style: event.metadata.first { $0.key == "HKSwimmingStrokeStyle" }.flatMap {
          SwimStrokeStyle(metadataValue: $0.value)
        },
        swolf: event.metadata.first { $0.key == "HKSWOLFScore" }.flatMap { DecimalParser.parse($0.value) })
    }
  }

  /// Metres of the distance samples overlapping `[start, end)`, each pro rata by time; an
  /// instantaneous sample counts whole in the length its instant falls in. Nil when none does.
  static func distance(from start: Int64, to end: Int64, _ samples: [WorkoutSampleIndex.DistanceSample]) -> Double? {
    var total = 0.0
    var found = false
    for sample in samples {
      if sample.end > sample.start {
        let overlap = min(end, sample.end) - max(start, sample.start)
        guard overlap > 0 else { continue }
        total += sample.meters * Double(overlap) / Double(sample.end - sample.start)
        found = true
      } else if sample.start >= start, sample.start < end {
        total += sample.meters
        found = true
      }
    }
    return found ? total : nil
  }
}
