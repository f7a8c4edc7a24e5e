/// Settings of a run that stages read (from the command line now; from pipeline files later).
public struct RunSettings: Sendable {
  /// The pipeline's `sourcePriority` (Pipelines/docs/samples.md, "Source priority").
  public var sourcePriority = SourcePriority()
  /// `sessionGapMinutes`: a sleep sample starting more than this after the latest end starts a new
  /// session (Pipelines/docs/sleep.md, "Sleep jobs").
  public var sessionGapMinutes = 60
  /// `dayBoundary`: sessions ending at or after this local time (minutes after midnight) belong to
  /// the next date.
  public var dayBoundaryMinutes = 18 * 60
  /// Prefix CSV files with a UTF-8 byte-order mark (`--csv-bom`).
  public var csvByteOrderMark = false

  public init() {}
}
