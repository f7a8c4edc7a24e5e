/// The files HealthETL keeps in an output folder for itself. No pipeline output may take one of
/// these names: a table written over the delivery state or the lock would silently break the
/// next run (Pipelines/docs/outputs.md, "Output files").
public enum ToolFiles {
  /// `flock`ed by every run into the folder.
  public static let lock = ".healthetl.lock"
  /// What the folder has delivered: workout records emitted, exports processed.
  public static let state = ".healthetl-state.json"
  /// The workout record ids the folder has emitted in a final delta (binary, sorted).
  public static let emitted = ".healthetl-emitted"
  /// The run report.
  public static let runReport = "run.json"
  /// The workout records no earlier run into the folder emitted.
  public static let newRecords = "workout_records.new.json"
  /// What `healthetl deliver` did, one line per batch sent, acknowledged, rejected or retried.
  public static let deliveryLog = "delivery.log"
  /// Scratch files of a run, inside its staging folder; never committed.
  public static let scratch = ".scratch"
  /// The run's tables in one SQLite database, and its Datasette metadata.
  public static let database = "health.sqlite"
  public static let databaseMetadata = "metadata.json"

  /// Names reserved at the top of the output folder.
  public static let reserved = [
    lock, state, emitted, runReport, newRecords, deliveryLog, scratch, database, databaseMetadata,
  ]
}
