import HealthModel

/// Checks a statistics job of a pipeline file before any input is read (SPEC §8).
enum StatisticsJobValidation {
  static let options = ["sum", "avg", "twavg", "min", "max", "count", "mostRecent", "mostRecentTime", "duration"]
  static let cumulativeOnly: Set<String> = ["sum"]
  static let discreteOnly: Set<String> = ["avg", "twavg", "min", "max"]

  static func validate(_ job: PipelineDefinition.Job, path: String, keyPath: String) throws(PipelineError) {
    let type = job.type ?? ""
    guard let style = SampleTypeInfo.aggregation(ofShortName: type) else {
      throw PipelineError(
        path: path, keyPath: keyPath + ".type",
        message: "unknown quantity type '\(type)' (use short names such as StepCount or HeartRate)")
    }
    guard let interval = job.interval, StatisticsInterval(interval) != nil else {
      throw PipelineError(
        path: path, keyPath: keyPath + ".interval",
        message: "'\(job.interval ?? "")' is not an interval; use <n><unit> with unit m, h, d, w or mo (1m, 15m, 1h, 1d, 1w, 1mo)")
    }
    let asked = job.options ?? []
    guard !asked.isEmpty else {
      throw PipelineError(path: path, keyPath: keyPath + ".options", message: "must list at least one option")
    }
    for (index, option) in asked.enumerated() {
      guard options.contains(option) else {
        throw PipelineError(
          path: path, keyPath: "\(keyPath).options[\(index)]",
          message: "unknown option '\(option)'; known: \(options.joined(separator: ", "))")
      }
      if style.isCumulative && discreteOnly.contains(option) {
        throw PipelineError(
          path: path, keyPath: "\(keyPath).options[\(index)]",
          message: "'\(option)' is for discrete types; \(type) is cumulative (use sum)")
      }
      if !style.isCumulative && cumulativeOnly.contains(option) {
        throw PipelineError(
          path: path, keyPath: "\(keyPath).options[\(index)]",
          message: "'sum' is for cumulative types; \(type) is discrete (use avg, min, max, twavg or count)")
      }
    }
  }
}

/// `<n><unit>`: minutes (`m`), hours (`h`), days (`d`), weeks (`w`), months (`mo`).
struct StatisticsInterval: Equatable {
  enum Unit: String { case minute = "m", hour = "h", day = "d", week = "w", month = "mo" }
  var count: Int
  var unit: Unit

  init?(_ text: String) {
    let digits = text.prefix { $0.isNumber }
    guard let count = Int(digits), count > 0, let unit = Unit(rawValue: String(text.dropFirst(digits.count))) else {
      return nil
    }
    self.count = count
    self.unit = unit
  }
}
