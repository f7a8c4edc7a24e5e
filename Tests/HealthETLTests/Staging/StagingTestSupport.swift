import HealthETL
import HealthExtract
import HealthModel

/// Collects what the staging layer hands to stages, copied out of the borrowed samples.
final class CollectingStage: SampleStage {
  struct Row: Equatable {
    var type: String
    var value: Double
    var category: String?
    var source: String
    var start: Int64
    var end: Int64
    var created: Int64?
    var metadata: [String: String]
    var inCorrelation: Bool
    var userEntered = false
  }

  var rows: [Row] = []
  var workouts: [WorkoutElement] = []
  var generic: [GenericElement] = []

  func consume(_ sample: borrowing Sample, catalog: SampleCatalog) {
    var metadata: [String: String] = [:]
    for index in 0..<sample.metadata.count {
      metadata[catalog.metadataKey(sample.metadata.key(at: index))] = String(
        decoding: sample.metadata.value(at: index), as: UTF8.self)
    }
    rows.append(
      Row(
        type: catalog.typeInfo(sample.type).shortName, value: sample.value,
        category: sample.kind == .category
          ? catalog.categoryShortName(value: sample.categoryValue, type: sample.type) : nil,
        source: catalog.sourceName(sample.source), start: sample.start.seconds, end: sample.end.seconds,
        created: sample.created?.seconds, metadata: metadata, inCorrelation: sample.inCorrelation,
        userEntered: sample.userEntered))
  }

  func consume(_ workout: WorkoutElement) { workouts.append(workout) }
  func consume(_ element: GenericElement) { generic.append(element) }
}

enum Staging {
  /// Normalizes `body` (the children of `HealthData`) and returns the normalizer and what reached stages.
  static func run(_ body: String) throws -> (RecordNormalizer, CollectingStage) {
    let stage = CollectingStage()
    let normalizer = RecordNormalizer(stages: [stage])
    let text =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<HealthData locale=\"en_US\">\n" + body + "\n</HealthData>\n"
    _ = try ExportXMLReader(handler: normalizer).read(ExportInput.memory(Array(text.utf8)))
    return (normalizer, stage)
  }

  static func record(
    _ type: String, source: String = "Watch", value: String? = "1", unit: String? = "count",
    start: String = "2024-01-01 10:00:00 +0000", end: String = "2024-01-01 10:05:00 +0000",
    created: String? = nil, device: String? = nil, metadata: [(String, String)] = []
  ) -> String {
    var text = "<Record type=\"\(type)\" sourceName=\"\(source)\""
    if let device { text += " device=\"\(device)\"" }
    if let unit { text += " unit=\"\(unit)\"" }
    if let created { text += " creationDate=\"\(created)\"" }
    text += " startDate=\"\(start)\" endDate=\"\(end)\""
    if let value { text += " value=\"\(value)\"" }
    if metadata.isEmpty { return text + "/>" }
    text += ">"
    for (key, value) in metadata { text += "<MetadataEntry key=\"\(key)\" value=\"\(value)\"/>" }
    return text + "</Record>"
  }
}
