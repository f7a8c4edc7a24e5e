import HealthExtract
import HealthModel
import RunExecution

/// The part of the workouts job that reads routes and cuts splits (Pipelines/README.md,
/// "Routes", "Splits"): it keeps inline `Location`s and distance samples in scratch while the
/// export streams, reads every route file from when the export is opened, takes their points
/// after the parse, and hands each workout row its route totals and splits.
final class WorkoutRoutesAndSplits {
  private let transaction: OutputTransaction
  private let routePointOutputs: [WorkoutMart.Output]
  /// Whether any output needs the routes: `workouts` (route columns), `route_points`, `splits`.
  private let outputsWantRoutes: Bool
  private let wantsSplits: Bool
  /// Whether each workout's row gets the outline of its first route file (for the report).
  var wantsShapes: Bool
  private var wantsRoutes: Bool { outputsWantRoutes || wantsShapes }
  private let inline: RecordScratch<SpilledLocation>
  /// The route files, read since the export was opened (`exportOpened`); nil before, and after
  /// the finish took them.
  private var files: RouteFileReadAhead?
  private var distances: WorkoutDistanceSamples

  /// What reading the routes found (`run.json`'s `routes`); nil when no output needed them.
  private(set) var report: RouteReport?
  /// The route totals of the workouts that have route points, by index (most have none).
  private var summaries: [Int: RouteSummary] = [:]
  private var problems: [[String]] = []
  private var splits: [[WorkoutSplit]] = []
  /// Per workout, noted as it is read (`note`): whether it gets splits, its pauses and its
  /// own distance (those of a workout without splits are empty), and its Watch segments' heart-rate windows.
  private var eligible: [Bool] = []
  private var pauses: [PauseIntervals] = []
  private var workoutMeters: [Double?] = []
  private var watchWindows: [WorkoutSampleIndex.Window] = []
  private var shapes: [[RouteShape.Point]?] = []
  /// Per distance stream, the samples that took part in a workout's splits.
  private var distanceUsed = [0, 0]
  /// Per workout: why a series' splits were not taken (faster than the activity allows), empty
  /// when they were (Pipelines/docs/workouts.md, "Splits").
  private var notTaken: [[String]] = []

  /// Why a series' splits of workout `index` were not taken (faster than the activity allows), in
  /// words; nil when they were. Final once `complete` has run for it.
  func splitNote(_ index: Int) -> String? {
    guard index < notTaken.count, !notTaken[index].isEmpty else { return nil }
    let taken = splits[index].first { $0.from != "watch" }.map { "splits from \(Self.source(of: $0.from))" }
    return notTaken[index].joined(separator: "; ") + "; "
      + (taken ?? "no splits: its one row in workout_splits.csv says none")
  }

  /// `route_scaled` of a `from` that carries a reason.
  private static func source(of from: String) -> String {
    String(from.prefix { $0 != " " })
  }

  /// The distance samples the splits used, by type id.
  var distanceSamplesUsed: [(type: Int32, count: Int)] {
    zip(distances.streamTypes, distanceUsed).filter { $0.0 >= 0 && $0.1 > 0 }.map { ($0.0, $0.1) }
  }

  init(transaction: OutputTransaction, outputs: [WorkoutMart.Output], wantsShapes: Bool) {
    self.transaction = transaction
    self.wantsShapes = wantsShapes
    routePointOutputs = outputs.filter { $0.table == .routePoints }
    wantsSplits = outputs.contains { $0.table == .splits }
    outputsWantRoutes = wantsSplits || outputs.contains { $0.table == .routePoints || $0.table == .workouts }
    inline = RecordScratch(transaction: transaction, name: "route-locations")
    distances = WorkoutDistanceSamples(transaction: wantsSplits ? transaction : nil)
  }

  /// Starts reading the route files while the export streams, when an output needs them; a
  /// spool file that cannot be made now is tried again, and reported, in the finish.
  func exportOpened(_ export: OpenedExport) {
    guard wantsRoutes, files == nil, export.mayStart("routes") else { return }
    files = try? startReading(export.companions, executor: export.executor)
  }

  private func startReading(_ companions: ExportInput.Companions, executor: RunExecutor) throws(OutputError)
    -> RouteFileReadAhead
  {
    try RouteFileReadAhead.start(
      companions, folder: "workout-routes", scratchFolder: try transaction.scratchDirectory(), meter: transaction.meter,
      on: executor)
  }

  func add(_ sample: borrowing Sample, catalog: SampleCatalog) {
    distances.add(sample, catalog: catalog)
  }

  func add(location: RoutePoint, ordinal: Int) {
    guard wantsRoutes else { return }
    inline.append(SpilledLocation(location, ordinal: ordinal))
  }

  /// Notes what the splits need of the next workout read, the rest of which waits in scratch.
  func note(_ workout: WorkoutElement) {
    let isEligible = wantsSplits && SplitEligibility.distanceStream(workout.activityType) != nil
    eligible.append(isEligible)
    guard isEligible else {
      pauses.append(PauseIntervals())
      workoutMeters.append(nil)
      return
    }
    let paused = SplitEligibility.pauses(workout)
    pauses.append(paused)
    workoutMeters.append(
      WorkoutRowBuilder.distanceMeters(WorkoutRowBuilder.firstStatisticPerType(workout.statistics), workout))
    for split in WatchSplits.splits(workout, distanceMeters: nil, pauses: paused) {
      if let window = split.heartRateWindow { watchWindows.append(window) }
    }
  }

  /// Reads the routes and cuts the splits of `workouts` (each `note`d as it was read), writing the
  /// `route_points` outputs. Returns those outputs' summaries.
  func prepare(_ workouts: [WorkoutKey], context: MartContext) throws(OutputError) -> [OutputSummary] {
    summaries = [:]
    shapes = Array(repeating: nil, count: workouts.count)
    problems = Array(repeating: [], count: workouts.count)
    splits = Array(repeating: [], count: workouts.count)
    notTaken = Array(repeating: [], count: workouts.count)
    // The time this takes is part of the workouts stage's `stageSeconds`.
    guard wantsRoutes else { return [] }
    var writers: [RowWriter<RoutePointRow>] = []
    for output in routePointOutputs {
      writers.append(
        try context.writer(WorkoutTables.routePoints, file: output.file, format: output.format, encodeOnThread: true))
    }
    let firstFiles = wantsShapes ? workouts.map(WorkoutRouteReader.firstFile(of:)) : []
    let reader = WorkoutRouteReader(
      workouts: workouts, wantsSteps: eligible, writers: writers,
      shapeFiles: Set(firstFiles.compactMap { $0 }), transaction: transaction)
    try reader.readInline(inline)
    let companions = context.exportCompanions
    let files: RouteFileReadAhead
    if let started = self.files {
      files = started
    } else {
      files = try startReading(companions, executor: context.executor)
    }
    self.files = nil
    try reader.readFiles(files, of: companions)
    let written = try reader.close()
    report = reader.report
    for index in workouts.indices {
      if let summary = reader.summary(index) { summaries[index] = summary }
    }
    problems = reader.problems
    shapes = firstFiles.map { $0.flatMap { reader.shapes[$0] } }

    // The workout's own distance series first; its route where it has none.
    var requests: [WorkoutDistanceSamples.Request] = []
    for (index, workout) in workouts.enumerated() where eligible[index] && !distances.isEmpty {
      requests.append(
        .init(
          index: index, stream: SplitEligibility.distanceStream(workout.activityType)!, start: workout.start.seconds,
          end: workout.end.seconds, sourceName: workout.sourceName, distanceMeters: workoutMeters[index],
          pauses: pauses[index]))
    }
    for (index, fromSamples) in try distances.splits(
      for: requests, catalog: context.catalog, priority: context.settings.sourcePriority, used: &distanceUsed)
    {
      // A series that puts a split faster than the activity allows is not the workout's: the
      // route's splits stand in, or none.
      if let fast = ActivitySpeed.tooFast(fromSamples, activityType: workouts[index].activityType) {
        notTaken[index].append("the distance samples put \(fast), faster than \(Self.limit(workouts[index]))")
        continue
      }
      splits[index] = fromSamples
    }
    for (index, workout) in workouts.enumerated() where eligible[index] && !splits[index].isEmpty {
      splits[index] = try routeElevation(
        splits[index], reader.chunks[index], steps: reader.stepScratch, workout: workout)
    }
    for (index, workout) in workouts.enumerated() where eligible[index] && splits[index].isEmpty {
      let (fromRoute, cut) = try routeSplits(
        reader.chunks[index], steps: reader.stepScratch, workout: workout, pauses: pauses[index],
        routeMeters: summaries[index]?.distanceMeters, workoutMeters: workoutMeters[index])
      if cut {
        problems[index].append(Self.cutProblem)
        report?.problems.append(.init(file: "workout \(workout.id)", problem: Self.cutProblem))
      }
      if let fast = ActivitySpeed.tooFast(fromRoute, activityType: workout.activityType) {
        notTaken[index].append("the route puts \(fast), faster than \(Self.limit(workout))")
        continue
      }
      // The reason the distance samples gave way goes with the route's rows.
      let reason = notTaken[index].isEmpty ? "" : " (" + notTaken[index].joined(separator: "; ") + ")"
      splits[index] = fromRoute.map { split in
        var split = split
        split.from += reason
        return split
      }
    }
    return written
  }

  /// `2:00 /km`, the limit of the workout's activity.
  private static func limit(_ workout: WorkoutKey) -> String { limit(workout.activityType) }

  private static func limit(_ activityType: String) -> String {
    ActivitySpeed.fastest(activityType).map(ActivitySpeed.pace) ?? ""
  }

  /// The route problem of a workout whose route splits reached `SplitAccumulator.longestDistance`.
  static let cutProblem =
    "splits: stopped at \(Int(SplitAccumulator.longestDistance / 1000)) km, farther than any one workout goes"

  /// The splits cut from a workout's distance samples, with the elevation of its route
  /// (`SplitElevationProfile`); unchanged without route points.
  private func routeElevation(
    _ splits: [WorkoutSplit], _ chunks: [WorkoutRouteReader.Chunk], steps: RecordScratch<RouteStep>,
    workout: WorkoutKey
  ) throws(OutputError) -> [WorkoutSplit] {
    let ordered = chunks.filter { $0.count > 0 }.sorted { $0.firstTime < $1.firstTime }
    guard !ordered.isEmpty else { return splits }
    let start = Double(workout.start.seconds)
    let end = max(start, Double(workout.end.seconds))
    var profiles = SplitUnit.allCases.map { unit in SplitElevationProfile(splits.filter { $0.unit == unit.rawValue }) }
    try Self.forEachStep(of: ordered, in: steps) { step in
      guard !step.elevation.isNaN else { return }
      let time = min(max(step.time, start), end)
      for index in profiles.indices { profiles[index].add(time: time, elevation: step.elevation) }
    }
    return profiles.flatMap(\.splits) + splits.filter { $0.unit.flatMap(SplitUnit.init(rawValue:)) == nil }
  }

  /// Calls `body` with every kept point of the route's stretches `ordered`, read from `steps` a
  /// few thousand at a time so that a long route is never held whole.
  private static func forEachStep(
    of ordered: [WorkoutRouteReader.Chunk], in steps: RecordScratch<RouteStep>, _ body: (RouteStep) -> Void
  ) throws(OutputError) {
    var buffer: [RouteStep] = []
    for chunk in ordered {
      var next = chunk.first
      while next < chunk.first + chunk.count {
        let count = min(4096, chunk.first + chunk.count - next)
        try steps.read(first: next, count: count, into: &buffer)
        next += count
        for step in buffer { body(step) }
      }
    }
  }

  /// Share of the workout's time a route must span for its splits to be scaled to the workout's
  /// distance: a route of part of the workout is that part's, and scaled it would be wrong.
  static let spannedShare = 0.9

  /// Whether the route's stretches, from the first one's first point to the latest last point,
  /// span `spannedShare` of `[start, end]`.
  private static func spansWorkout(
    _ ordered: [WorkoutRouteReader.Chunk], steps: RecordScratch<RouteStep>, start: Double, end: Double
  ) throws(OutputError) -> Bool {
    guard end > start else { return true }
    var last = -Double.infinity
    var buffer: [RouteStep] = []
    for chunk in ordered {
      try steps.read(first: chunk.first + chunk.count - 1, count: 1, into: &buffer)
      last = max(last, buffer.first?.time ?? last)
    }
    return min(last, end) - max(ordered[0].firstTime, start) >= spannedShare * (end - start)
  }

  /// The route steps of one workout in time order (its stretches sorted by their first time),
  /// cut into kilometres and miles; whether they reached `SplitAccumulator.longestDistance`. A
  /// point kept within the margin before or after the workout counts at its start or end, so no
  /// split lies outside the workout. With the workout's distance, a route spanning the workout
  /// has every step scaled so it adds up to it (`route_scaled` when that changes it by more than
  /// `WorkoutDistanceSamples.scaledTolerance`).
  private func routeSplits(
    _ chunks: [WorkoutRouteReader.Chunk], steps: RecordScratch<RouteStep>, workout: WorkoutKey,
    pauses: PauseIntervals, routeMeters: Double?, workoutMeters: Double?
  ) throws(OutputError) -> (splits: [WorkoutSplit], cut: Bool) {
    let ordered = chunks.filter { $0.count > 0 }.sorted { $0.firstTime < $1.firstTime }
    guard !ordered.isEmpty else { return ([], false) }
    let start = Double(workout.start.seconds)
    let end = max(start, Double(workout.end.seconds))
    var factor = 1.0
    var from = "route"
    if let routeMeters, routeMeters > 0, let workoutMeters, workoutMeters > 0,
      try Self.spansWorkout(ordered, steps: steps, start: start, end: end)
    {
      factor = workoutMeters / routeMeters
      if abs(workoutMeters - routeMeters) > WorkoutDistanceSamples.scaledTolerance { from = "route_scaled" }
    }
    var accumulators = SplitUnit.allCases.map { SplitAccumulator(unit: $0.meters, pauses: pauses) }
    try Self.forEachStep(of: ordered, in: steps) { step in
      let elevation = step.elevation.isNaN ? nil : step.elevation
      let time = min(max(step.time, start), end)
      for index in accumulators.indices {
        accumulators[index].add(time: time, step: step.step * factor, elevation: elevation)
      }
    }
    var result: [WorkoutSplit] = []
    let cut = accumulators.contains { $0.reachedLongestDistance }
    for (unit, index) in zip(SplitUnit.allCases, accumulators.indices) {
      result += accumulators[index].finish().map { WorkoutSplit($0, from: from, unit: unit) }
    }
    return (result, cut)
  }

  /// Every split's heart-rate window, the Watch's segments included, for the one heart-rate sweep.
  func heartRateWindows() -> [WorkoutSampleIndex.Window] {
    var windows = watchWindows
    for index in splits.indices where eligible[index] {
      for split in splits[index] {
        if let window = split.heartRateWindow { windows.append(window) }
      }
    }
    return windows
  }

  /// Puts workout `index`'s route totals, route problems and splits (with their heart rate) on
  /// its row.
  func complete(_ row: inout WorkoutRow, _ workout: WorkoutElement, index: Int, heartRate: WorkoutSampleIndex) {
    guard index < problems.count else { return }
    row.routeSummary = summaries[index]
    if index < shapes.count { row.routeShape = shapes[index] }
    row.routeProblems = problems[index].isEmpty ? nil : problems[index].joined(separator: ";")
    guard eligible[index] else { return }
    var watch = WatchSplits.splits(workout, distanceMeters: row.distanceMeters, pauses: pauses[index])
    if let fast = ActivitySpeed.tooFast(watch, activityType: workout.activityType) {
      // The Watch's own segments, against a distance that makes them too fast: not written.
      notTaken[index].append("the Watch's segments put \(fast), faster than \(Self.limit(workout.activityType))")
      watch = []
    }
    var all = splits[index] + watch
    for position in all.indices {
      guard let window = all[position].heartRateWindow,
        let summary = heartRate.heartRate(from: window.start, through: window.end)
      else { continue }
      all[position].heartRateAverage = summary.average
      all[position].heartRateMaximum = summary.maximum
    }
    // Every series too fast: one row says why, so the table shows the workout was looked at.
    if all.isEmpty, !notTaken[index].isEmpty {
      all = [.none(why: notTaken[index], start: Double(workout.start.seconds), end: Double(workout.end.seconds))]
    }
    row.splits = all
  }
}
