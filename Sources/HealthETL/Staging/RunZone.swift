public import HealthModel

/// The one time zone a run uses for local dates and buckets, and why it was chosen
/// (Pipelines/README.md, "Time zone").
public struct RunZone: Sendable {
  public let rules: ZoneRules
  /// A sentence for the report: `--tz Europe/Berlin`, `most frequent HKTimeZone (412 of 415 votes)`…
  public let reason: String

  public init(rules: ZoneRules, reason: String) {
    self.rules = rules
    self.reason = reason
  }

  /// What the user asked for: `auto` or an IANA name.
  public enum Request: Sendable, Equatable {
    case auto
    case named(String)

    public init(_ text: String) { self = text == "auto" ? .auto : .named(text) }
  }

  /// Validates a named request before any input is read.
  public static func validate(_ request: Request) throws(ZoneError) {
    if case .named(let name) = request { _ = try ZoneRules.load(name) }
  }

  /// Resolves `request` against what the export said about itself.
  public static func resolve(_ request: Request, facts: ExportFacts) throws(ZoneError) -> RunZone {
    if case .named(let name) = request {
      return RunZone(rules: try ZoneRules.load(name), reason: "--tz \(name)")
    }
    let total = facts.timeZoneVotes.reduce(0) { $0 + $1.votes }
    // Stable order: most votes first, ties keep the order of first appearance.
    let ranked = facts.timeZoneVotes.enumerated().sorted { a, b in
      a.element.votes != b.element.votes ? a.element.votes > b.element.votes : a.offset < b.offset
    }
    for (_, candidate) in ranked {
      do {
        return RunZone(
          rules: try ZoneRules.load(candidate.name),
          reason: "most frequent HKTimeZone metadata (\(candidate.votes) of \(total) votes)")
      } catch {
        // A name the database does not know is skipped; a database that is not there fails the
        // run rather than silently falling back to a fixed offset.
        if case .databaseMissing = error { throw error }
      }
    }
    if let offset = facts.exportDateOffset {
      return RunZone(rules: .fixed(offsetSeconds: offset), reason: "no usable HKTimeZone; fixed offset of ExportDate")
    }
    if let offset = facts.firstRecordOffset {
      return RunZone(
        rules: .fixed(offsetSeconds: offset), reason: "no HKTimeZone or ExportDate; fixed offset of the first record")
    }
    return RunZone(rules: .utc, reason: "no HKTimeZone, ExportDate or record: UTC")
  }
}
