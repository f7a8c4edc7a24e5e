import Foundation
import HealthETL
import HealthExtract
import HealthModel
import Testing

/// Runs `StatisticsMart` over small hand-written exports the way `healthetl run` does.
enum StatsFixture {
  /// The queries the default pipeline runs: heart rate per minute (max, min, avg, count);
  /// steps, walking+running distance, active energy and flights per day (sum); resting heart rate
  /// and HRV per day (avg); swimming distance and stroke count per day (sum). Named as in
  /// `Pipelines/stats.json` (a test checks the file against this list).
  static let defaultQueries: [StatisticsQuery] = {
    let definitions: [(String, String, String, [StatisticsOption])] = [
      ("heart-rate-per-minute", "HeartRate", "1m", [.max, .min, .avg, .count]),
      ("steps-per-day", "StepCount", "1d", [.sum]),
      ("walking-running-distance-per-day", "DistanceWalkingRunning", "1d", [.sum]),
      ("active-energy-per-day", "ActiveEnergyBurned", "1d", [.sum]),
      ("flights-per-day", "FlightsClimbed", "1d", [.sum]),
      ("resting-heart-rate-per-day", "RestingHeartRate", "1d", [.avg]),
      ("hrv-per-day", "HeartRateVariabilitySDNN", "1d", [.avg]),
      ("swimming-distance-per-day", "DistanceSwimming", "1d", [.sum]),
      ("swimming-strokes-per-day", "SwimmingStrokeCount", "1d", [.sum]),
    ]
    return definitions.map { name, type, interval, options in
      do throws(StatisticsQueryError) {
        return try StatisticsQuery(name: name, type: type, interval: BucketInterval(interval)!, options: options)
      } catch {
        // Constant definitions, checked by the tests: this cannot happen in a shipped build.
        preconditionFailure(error.description)
      }
    }
  }()

  struct Output {
    var result: StageHarness.Result
    var stage: StatisticsMart

    /// The rows of a job's CSV, keyed by column.
    func rows(_ job: String) throws -> [[String: String]] { try result.csvRows("stats/" + job + ".csv") }
    func text(_ job: String) throws -> String { try result.text("stats/" + job + ".csv") }
  }

  static func run(
    _ source: InputSource, jobs: [StatisticsQuery], zone: RunZone.Request = .named("UTC"),
    settings: RunSettings = RunSettings(), bufferCapacity: Int = StatisticsMart.defaultBufferCapacity
  ) throws -> Output {
    var made: StatisticsMart?
    var failure: StatisticsQueryError?
    let result = try StageHarness.run(source, zone: zone, settings: settings) { transaction in
      do throws(StatisticsQueryError) {
        let stage = try StatisticsMart(jobs: jobs, transaction: transaction, bufferCapacity: bufferCapacity)
        made = stage
        return [stage]
      } catch {
        failure = error
        return []
      }
    }
    if let failure { throw failure }
    return Output(result: result, stage: made!)
  }

  static func run(
    _ body: String, jobs: [StatisticsQuery], zone: RunZone.Request = .named("UTC"),
    settings: RunSettings = RunSettings(), bufferCapacity: Int = StatisticsMart.defaultBufferCapacity
  ) throws -> Output {
    try run(StageHarness.export(body), jobs: jobs, zone: zone, settings: settings, bufferCapacity: bufferCapacity)
  }

  /// A job from text, as a pipeline spells it.
  static func job(
    _ name: String, _ type: String, _ interval: String, _ options: [String], anchor: String? = nil,
    separate: Bool = false
  ) throws -> StatisticsQuery {
    try StatisticsQuery(
      name: name, type: type, interval: interval, anchor: anchor, options: options, separateBySource: separate)
  }

  /// A quantity record; times are `YYYY-MM-DD HH:MM:SS` in `offset`.
  static func record(
    _ type: String, _ value: Double, _ start: String, _ end: String? = nil, source: String,
    unit: String = "count", created: String? = nil, userEntered: Bool = false, model: String? = nil,
    offset: String = "+0000"
  ) -> String {
    var text = "<Record type=\"HKQuantityTypeIdentifier\(type)\" sourceName=\"\(source)\""
    if let model {
      text +=
        " device=\"&lt;&lt;HKDevice: 0x1&gt;, name:\(model), manufacturer:Apple Inc., model:\(model), "
        + "hardware:X1, software:1&gt;\""
    }
    text += " unit=\"\(unit)\""
    if let created { text += " creationDate=\"\(created) \(offset)\"" }
    text += " startDate=\"\(start) \(offset)\" endDate=\"\(end ?? start) \(offset)\" value=\"\(value)\""
    guard userEntered else { return text + "/>" }
    return text + "><MetadataEntry key=\"HKWasUserEntered\" value=\"1\"/></Record>"
  }

  static func steps(_ value: Double, _ start: String, _ end: String? = nil, source: String, userEntered: Bool = false)
    -> String
  {
    record("StepCount", value, start, end, source: source, userEntered: userEntered)
  }

  static func heartRate(_ value: Double, _ at: String, source: String = "Alex’s Apple Watch", created: String? = nil)
    -> String
  {
    record("HeartRate", value, at, source: source, unit: "count/min", created: created)
  }

  /// A CSV number as a Double (nil for an empty field).
  static func number(_ field: String?) -> Double? { field.flatMap { $0.isEmpty ? nil : Double($0) } }
}
