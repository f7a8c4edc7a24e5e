import Foundation
import HealthETL
import HealthExtract
import HealthModel

/// Runs `WorkoutMart` over small hand-written exports.
enum WorkoutFixture {
  struct Run {
    var mapper: WorkoutMart
    var result: StageHarness.Result

    var rows: [WorkoutRow] { mapper.rows }
    /// The mart's `WorkoutServerRecords`, read back from its scratch before the commit.
    var records: [WorkoutServerRecord]

    func text(_ file: String) throws -> String { try result.text(file) }
  }

  /// Every table to its default file, plus `workouts.json`.
  static let allOutputs =
    [WorkoutMart.defaultOutputs[0], WorkoutMart.Output(table: .workouts, file: "workouts.json", format: .json)]
    + WorkoutMart.defaultOutputs.dropFirst()

  /// Runs the stage over `body` (children of HealthData); the caller removes `result`.
  static func run(
    _ body: String, zone: RunZone.Request = .named("UTC"), codes: WorkoutCodeTable = .shipped,
    outputs: [WorkoutMart.Output] = WorkoutFixture.allOutputs
  ) throws -> Run {
    try run(StageHarness.export(body), zone: zone, codes: codes, outputs: outputs)
  }

  static func run(
    _ source: InputSource, zone: RunZone.Request = .auto, codes: WorkoutCodeTable = .shipped,
    outputs: [WorkoutMart.Output] = WorkoutFixture.allOutputs
  ) throws -> Run {
    var mapper: WorkoutMart?
    var records: [WorkoutServerRecord] = []
    let result = try StageHarness.run(
      source, zone: zone,
      finished: { context in
        for product in context.products.all(WorkoutServerRecords.self) { try product.forEach { records.append($0) } }
      }
    ) { transaction in
      let stage = WorkoutMart(transaction: transaction, codes: codes, outputs: outputs, keepsRows: true)
      mapper = stage
      return [stage]
    }
    return Run(mapper: mapper!, result: result, records: records)
  }

  static let watch =
    "&lt;&lt;HKDevice: 0x1&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, "
    + "software:9.1&gt;"
  static let phone =
    "&lt;&lt;HKDevice: 0x2&gt;, name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone14,3, "
    + "software:17.2&gt;"

  /// A `Workout` element; `children` go inside it.
  static func workout(
    _ type: String, source: String = "Apple Watch", device: String? = watch, duration: String? = nil,
    durationUnit: String = "min", start: String, end: String, extra: String = "", children: [String] = []
  ) -> String {
    var text = "<Workout workoutActivityType=\"HKWorkoutActivityType\(type)\""
    if let duration { text += " duration=\"\(duration)\" durationUnit=\"\(durationUnit)\"" }
    text += " \(extra) sourceName=\"\(source)\""
    if let device { text += " device=\"\(device)\"" }
    text += " startDate=\"\(start)\" endDate=\"\(end)\">\n"
    for child in children { text += "  " + child + "\n" }
    return text + "</Workout>"
  }

  static func meta(_ key: String, _ value: String) -> String { "<MetadataEntry key=\"\(key)\" value=\"\(value)\"/>" }

  static func event(_ type: String, _ date: String, minutes: String? = nil, metadata: [(String, String)] = []) -> String
  {
    var text = "<WorkoutEvent type=\"HKWorkoutEventType\(type)\" date=\"\(date)\""
    if let minutes { text += " duration=\"\(minutes)\" durationUnit=\"min\"" }
    if metadata.isEmpty { return text + "/>" }
    return text + ">" + metadata.map { meta($0.0, $0.1) }.joined() + "</WorkoutEvent>"
  }

  static func statistic(
    _ type: String, start: String, end: String, sum: String? = nil, average: String? = nil, minimum: String? = nil,
    maximum: String? = nil, unit: String
  ) -> String {
    var text = "<WorkoutStatistics type=\"HKQuantityTypeIdentifier\(type)\" startDate=\"\(start)\" endDate=\"\(end)\""
    if let sum { text += " sum=\"\(sum)\"" }
    if let average { text += " average=\"\(average)\"" }
    if let minimum { text += " minimum=\"\(minimum)\"" }
    if let maximum { text += " maximum=\"\(maximum)\"" }
    return text + " unit=\"\(unit)\"/>"
  }

  static func heartRate(_ value: String, at date: String, source: String = "Apple Watch") -> String {
    Staging.record(
      "HKQuantityTypeIdentifierHeartRate", source: source, value: value, unit: "count/min", start: date, end: date)
  }
}
