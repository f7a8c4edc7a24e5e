/// Settings of a run that stages read (from the command line now; from pipeline files later).
public struct RunSettings: Sendable {
  /// SPEC §5 `sourcePriority`.
  public var sourcePriority = SourcePriority()
  /// SPEC §6: a sleep sample starting more than this after the latest end starts a new session.
  public var sessionGapMinutes = 60
  /// SPEC §6: sessions ending at or after this local time (minutes after midnight) belong to the next date.
  public var dayBoundaryMinutes = 18 * 60
  /// Prefix CSV files with a UTF-8 byte-order mark (`--csv-bom`).
  public var csvByteOrderMark = false

  public init() {}
}
