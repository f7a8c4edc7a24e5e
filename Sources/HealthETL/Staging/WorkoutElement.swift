public import HealthModel

/// One `Workout` element with all its children, as written (values parsed, units untouched).
/// Workouts are few, so this is an ordinary value type with strings and arrays.
public struct WorkoutElement: Sendable {
  public struct Quantity: Sendable, Equatable {
    public var text: String
    public var value: Double?
    public var unit: String?
  }

  public struct Event: Sendable {
    public var type: String
    public var date: Instant?
    public var duration: Quantity?
    public var metadata: [(key: String, value: String)]
  }

  public struct Statistics: Sendable {
    public var type: String
    public var start: Instant?
    public var end: Instant?
    public var average: Double?
    public var minimum: Double?
    public var maximum: Double?
    public var sum: Double?
    public var unit: String?
  }

  public struct Activity: Sendable {
    public var uuid: String?
    /// `workoutActivityType` of the activity itself (a discipline of a multi-sport workout), when
    /// written.
    public var activityType: String? = nil
    public var start: Instant?
    public var end: Instant?
    public var duration: Quantity?
    public var metadata: [(key: String, value: String)] = []
    public var events: [Event] = []
    public var statistics: [Statistics] = []
  }

  public struct Route: Sendable {
    public var sourceName: String?
    public var start: Instant?
    public var end: Instant?
    public var filePath: String?
    public var locationCount = 0
    public var metadata: [(key: String, value: String)] = []
  }

  public var activityType: String = ""
  public var duration: Quantity?
  public var totalDistance: Quantity?
  public var totalEnergyBurned: Quantity?
  public var sourceName: String = ""
  public var sourceVersion: String?
  public var device: DeviceDescription?
  public var created: Instant?
  public var start = Instant(seconds: 0)
  public var end = Instant(seconds: 0)
  public var metadata: [(key: String, value: String)] = []
  public var events: [Event] = []
  public var statistics: [Statistics] = []
  public var activities: [Activity] = []
  public var routes: [Route] = []
  public var line = 0
  /// 0-based position among the export's `Workout` elements, copies and rejected ones included:
  /// what inline route `Location`s name their workout by.
  public var ordinal = 0

  public init() {}

  /// The first value stored under `key`.
  public func metadataValue(_ key: String) -> String? { metadata.first { $0.key == key }?.value }
}

/// Any other top-level element (`ActivitySummary`, `ClinicalRecord`, `Audiogram`,
/// `VisionPrescription`, `Me`, unknown ones), kept generically: its attributes and how many
/// children it had.
public struct GenericElement: Sendable {
  public var name: String
  public var attributes: [(name: String, value: String)]
  public var childCount = 0
  public var line: Int
}
