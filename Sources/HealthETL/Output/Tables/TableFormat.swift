/// Table output formats.
public enum TableFormat: String, Sendable, CaseIterable {
  case csv, json, ndjson
}
