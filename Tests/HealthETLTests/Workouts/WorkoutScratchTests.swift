import Foundation
import HealthModel
import Testing

@testable import HealthETL

/// The parsed workouts wait in scratch until their rows are built (Pipelines/docs/workouts.md,
/// "Memory"): every value comes back as it went in, whichever order they are read in.
@Suite struct WorkoutScratchTests {
  /// A workout with every kind of value set, and with optionals left out where `full` is false.
  static func workout(_ number: Int, full: Bool) -> WorkoutElement {
    var workout = WorkoutElement()
    workout.activityType = "HKWorkoutActivityTypeSwimming"
    workout.sourceName = "Watch \(number)"
    workout.start = Instant(seconds: 1_700_000_000 + Int64(number) * 60)
    workout.end = Instant(seconds: 1_700_000_600 + Int64(number) * 60)
    workout.line = 10 + number
    workout.ordinal = number
    guard full else { return workout }
    workout.duration = .init(text: "10.5", value: 10.5, unit: "min")
    workout.totalDistance = .init(text: "", value: nil, unit: nil)
    workout.sourceVersion = ""
    workout.device = DeviceDescription(name: "Apple Watch", model: "Watch", software: "10.1")
    workout.created = Instant(seconds: -5)
    workout.metadata = [(key: "HKTimeZone", value: "Europe/Paris"), (key: "é", value: "✓ \(number)")]
    workout.events = [
      .init(
        type: "HKWorkoutEventTypeLap", date: Instant(seconds: 3), duration: .init(text: "1", value: 1, unit: "s"),
        metadata: [(key: "HKSwimmingStrokeStyle", value: "2")]),
      .init(type: "HKWorkoutEventTypePause", date: nil, duration: nil, metadata: []),
    ]
    workout.statistics = [
      .init(
        type: "HKQuantityTypeIdentifierHeartRate", start: nil, end: Instant(seconds: 9), average: 120.25,
        minimum: -0.0, maximum: .nan, sum: nil, unit: "count/min")
    ]
    workout.activities = [
      .init(
        uuid: "A", activityType: nil, start: Instant(seconds: 1), end: nil, duration: nil,
        metadata: [(key: "k", value: "")], events: workout.events, statistics: workout.statistics),
      .init(uuid: nil, start: nil, end: nil, duration: nil),
    ]
    workout.routes = [
      .init(
        sourceName: "Watch", start: Instant(seconds: 2), end: Instant(seconds: 4), filePath: "/workout-routes/r.gpx",
        locationCount: 7, metadata: [(key: "HKMetadataKeySyncVersion", value: "2")]),
      .init(),
    ]
    return workout
  }

  static func fields(_ workout: WorkoutElement) -> [Field] {
    var fields: [Field] = []
    WorkoutFields.encode(workout, into: &fields)
    return fields
  }

  @Test func everyValueComesBackAsWritten() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("workout-scratch-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder.path)
    let scratch = WorkoutScratch(transaction: transaction)
    // About 1 KB each: 600 of them pass the scratch's 256 KB buffer, so most are read from the file.
    let workouts = (0..<600).map { Self.workout($0, full: $0 % 3 != 1) }
    let places = workouts.map(scratch.append)
    for index in workouts.indices.reversed() {
      let back = try scratch.read(places[index])
      // The fields are equal where the values are (a NaN maximum is compared by its bits).
      #expect(Self.fields(back).description == Self.fields(workouts[index]).description)
      #expect(back.ordinal == index)
    }
    let full = try scratch.read(places[0])
    #expect(full.metadataValue("é") == "✓ 0")
    #expect(full.device?.model == "Watch" && full.device?.manufacturer == nil)
    #expect(full.totalDistance == .init(text: "", value: nil, unit: nil))
    #expect(full.sourceVersion == "" && full.created == Instant(seconds: -5))
    #expect(full.events[0].metadata.map(\.value) == ["2"] && full.events[1].date == nil)
    #expect(full.statistics[0].average == 120.25 && full.statistics[0].maximum!.isNaN)
    #expect(full.statistics[0].minimum!.sign == .minus && full.statistics[0].sum == nil)
    #expect(full.activities.map(\.uuid) == ["A", nil] && full.activities[0].statistics.count == 1)
    #expect(full.routes.map(\.filePath) == ["/workout-routes/r.gpx", nil] && full.routes[0].locationCount == 7)
    let bare = try scratch.read(places[1])
    #expect(bare.duration == nil && bare.device == nil && bare.sourceVersion == nil && bare.events.isEmpty)
    #expect(bare.sourceName == "Watch 1" && bare.line == 11 && bare.end == Instant(seconds: 1_700_000_660))
  }
}

/// What other marts read of each workout waits in scratch too (Pipelines/docs/workouts.md,
/// "Memory"): read back in order, a piece at a time, every value as it was.
@Suite struct WorkoutSummariesTests {
  static func summary(_ number: Int) -> WorkoutSummary {
    var row = WorkoutSummary(fields: [])
    row.id = String(repeating: "0123456789abcdef", count: 3) + String(number)
    row.activityType = number % 2 == 0 ? "Swimming" : "Running"
    row.source = "Watch é"
    row.start = Instant(seconds: -86_400 + Int64(number))
    row.end = Instant(seconds: Int64(number) * 60)
    row.durationSeconds = number % 3 == 0 ? nil : Double(number) + 0.25
    row.distanceMeters = number % 5 == 0 ? -0.0 : 1e-9 * Double(number)
    row.heartRateMaximum = 171
    if number % 2 == 0 {
      row.laps = [
        SwimLap(
          lap: 1, start: Instant(seconds: 5), end: Instant(seconds: 50), strokes: 18, style: .freestyle,
          distanceMeters: 25, swolf: nil, origin: .event, distanceFrom: "pool_length"),
        SwimLap(lap: 2, start: Instant(seconds: 60), end: Instant(seconds: 99), style: .kickboard),
      ]
    }
    if number % 4 == 1 {
      row.routeShape = (0..<300).map { RouteShape.Point(latitude: 48 + Double($0) / 1e4, longitude: -2.5) }
    }
    if number == 3 { row.routeShape = [] }
    return row
  }

  @Test func summariesComeBackInOrderWithEveryValue() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("summaries-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder.path)
    let summaries = WorkoutSummaries(transaction: transaction)
    // With 300-point route shapes (about 5 KB) every fourth: 400 of them fill several pieces of
    // 256 KB, so rows are cut between pieces.
    let written = (0..<400).map(Self.summary)
    for summary in written { summaries.append(summary) }
    #expect(summaries.count == 400)
    for _ in 0..<2 {
      var read: [WorkoutSummary] = []
      try summaries.forEach { read.append($0) }
      #expect(read == written)
    }
    #expect(written[0].laps[0].distanceFrom == "pool_length" && written[0].laps[1].strokes == nil)
    #expect(written[5].distanceMeters?.sign == .minus && written[3].routeShape == [])
    var none = 0
    try WorkoutSummaries().forEach { _ in none += 1 }
    #expect(none == 0 && WorkoutSummaries().count == 0)
  }
}
