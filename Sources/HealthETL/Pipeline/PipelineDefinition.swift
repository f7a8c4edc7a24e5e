/// A pipeline file (`Pipelines/*.json`), decoded strictly: what a run computes and writes.
/// `Pipelines/README.md` documents every field.
public struct PipelineDefinition: Sendable {
  public static let supportedVersion = 1

  /// Where it was read from (for messages).
  public var path: String
  public var version: Int
  public var name: String
  public var description: String?
  /// `auto` or an IANA zone; `--tz` overrides.
  public var timezone: String?
  /// `sourcePriority`: case-insensitive substrings of source names ranked first, in order.
  public var sourcePriority: [String]?
  public var sleep: SleepParameters?
  public var jobs: [Job]

  public struct SleepParameters: Sendable, Equatable {
    public var sessionGapMinutes: Int?
    /// `HH:MM` local.
    public var dayBoundaryMinutes: Int?
  }

  public struct Job: Sendable {
    /// `jobs[3]`: where the job is in its file, and the line it starts on, for messages.
    public var keyPath = ""
    public var line: Int?
    public var name: String
    /// What the job is (`JobKinds`).
    public var kind: any JobKind
    public var outputs: [Output]
    /// `samples`: short type names to keep (all when nil).
    public var types: [String]?
    /// `elements`: element names to keep (all other top-level elements when nil).
    public var names: [String]?
    /// `workouts`: the code table, relative to the pipeline file's folder.
    public var codes: String?
    /// `report`: the page template and the chart library, a relative template path read from the
    /// pipeline file's folder.
    public var template: String?
    public var chartLibrary: String?
    /// `clinical-records`: copy each record's FHIR resource file into the output folder.
    public var copyResources: Bool?
    /// `statistics`.
    public var type: String?
    public var interval: String?
    public var anchor: String?
    public var options: [String]?
    public var separateBySource: Bool?
  }

  public struct Output: Sendable, Equatable {
    /// `jobs[3].outputs[1]` and its line, for messages (empty for a default output).
    public var keyPath = ""
    public var line: Int?
    /// Which of the job's tables (`daily`, `sessions`, `workouts`, `records`, `laps`, `buckets`, `samples`,
    /// `elements`).
    public var table: String
    /// Path relative to the output folder; in csv, `{type}` (samples) and `{name}` (elements) write
    /// one file per type or element name.
    public var file: String
    public var format: TableFormat
  }
}
