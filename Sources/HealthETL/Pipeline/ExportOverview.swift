public import HealthModel

/// What the parse found about the export as a whole, for marts that show it (the report's header
/// and quality section): `ExportRun` fills it from the run's inventory once the parse is done.
public struct ExportOverview: Sendable {
  public var exportDate: Instant?
  public var exportVersion: Int?
  public var locale: String?
  /// Why the run's zone was chosen.
  public var timeZoneReason: String?
  public var first: Instant?
  public var last: Instant?
  /// The inventory's lists, as far as it lists them, and how many names each left out.
  public var sources: [String] = []
  public var sourcesOmitted = 0
  public var devices: [String] = []
  public var devicesOmitted = 0
  /// Per type short name: distinct samples, records read, duplicates.
  public var types: [String: (distinct: Int, read: Int, duplicates: Int)] = [:]
  public var workoutCopies = 0
  public var rejectedCounts: [String: Int] = [:]
  public var rejectedExamples: [String: [(line: Int, element: String, detail: String)]] = [:]
  /// `--recover` read past damage: what it read past and left out, in one line (`run.json`
  /// `recovery`); nil when it did not.
  public var recovered: String?

  public init() {}
}
