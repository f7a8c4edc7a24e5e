public import HealthModel

/// The one time zone a run uses for local dates and buckets, and why it was chosen
/// (Pipelines/docs/samples.md, "Time zone").
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
          reason: total == 1
            ? "the only HKTimeZone metadata (1 vote)"
            : "most frequent HKTimeZone metadata (\(candidate.votes) of \(total) votes)")
      } catch {
        // A name the database does not know is skipped; a database that is not there fails the
        // run rather than silently falling back to a fixed offset.
        if case .databaseMissing = error { throw error }
      }
    }
    var mismatch = ""
    switch try fromLocaleAndOffsets(facts) {
    case .chosen(let zone): return zone
    case .none: break
    case .noMatch(let why): mismatch = "; " + why
    }
    if let offset = facts.exportDateOffset {
      return RunZone(
        rules: .fixed(offsetSeconds: offset), reason: "no usable HKTimeZone\(mismatch); fixed offset of ExportDate")
    }
    if let offset = facts.firstRecordOffset {
      return RunZone(
        rules: .fixed(offsetSeconds: offset),
        reason: "no HKTimeZone or ExportDate\(mismatch); fixed offset of the first record")
    }
    return RunZone(rules: .utc, reason: "no HKTimeZone, ExportDate or record: UTC")
  }

  /// What the locale's country and the offsets written say (Pipelines/docs/samples.md, "Time zone").
  enum LocaleAnswer {
    /// Nothing to go by: no locale with a country, no dates, or no zone table.
    case none
    case chosen(RunZone)
    /// Why no zone of the country was taken, for the reason of the fallback.
    case noMatch(String)
  }

  /// The zone of the locale's country whose offsets match those written on at least
  /// `leastMatchingShare` of the distinct (offset, date) pairs; the most matches win, a tie
  /// the zone the tz database lists first for the country. Else, for dates all written at the
  /// `ExportDate`'s offset, the guess of `exportDayGuess`.
  static func fromLocaleAndOffsets(_ facts: ExportFacts) throws(ZoneError) -> LocaleAnswer {
    let written = facts.writtenOffsets
    guard let locale = facts.locale, let country = ZoneCountries.country(ofLocale: locale), written.count > 0 else {
      return .none
    }
    guard ZoneRules.databaseIsUsable else {
      // Offsets that change with the seasons need the zone's rules: a fixed offset would be an
      // hour off for half the year, so a missing database fails the run as for HKTimeZone.
      if written.distinctOffsets.count > 1 { throw .databaseMissing(path: ZoneRules.databaseDirectory) }
      return .none
    }
    guard let tables = ZoneCountries.load() else { return .none }
    let place = tables.name(ofCountry: country).map { "\(locale) (\($0))" } ?? locale
    let candidates = tables.zones(ofCountry: country).compactMap { try? ZoneRules.load($0) }
    let votes = written.votes
    let offsets = describe(written.distinctOffsets)
    let noZone = facts.timeZoneVotes.isEmpty ? "no HKTimeZone" : "no usable HKTimeZone"
    guard let best = ZoneMatch.best(of: candidates, votes: votes) else {
      return .noMatch("locale \(place) names no zone of the tz database")
    }
    let dates = best.total == 1 ? "date" : "dates"
    guard best.matched * 100 >= best.total * leastMatchingShare else {
      if let guess = exportDayGuess(facts, candidates: candidates, place: place, noZone: noZone) {
        return .chosen(guess)
      }
      return .noMatch(
        "no zone of locale \(place) matches the \(best.total) \(dates) written at \(offsets) (\(best.rules.identifier) matches \(best.matched))"
      )
    }
    let count = best.matched == best.total ? "\(best.total)" : "\(best.matched) of \(best.total)"
    return .chosen(
      RunZone(
        rules: best.rules,
        reason: "\(noZone); locale \(place) and \(count) \(dates) written at \(offsets) match \(best.rules.identifier)")
    )
  }

  /// An export written at one offset all year, that of its `ExportDate` (as since iOS 10: the
  /// phone writes every date at its offset on the day of the export), says nothing of the seasons;
  /// the zone is guessed as the first of the locale's country, in the tz table's order, whose
  /// offset at `ExportDate` is that one (Pipelines/docs/samples.md, "Time zone"). Nil when the
  /// dates carry other offsets too, or no zone of the country has that offset then.
  static func exportDayGuess(_ facts: ExportFacts, candidates: [ZoneRules], place: String, noZone: String)
    -> RunZone?
  {
    guard let exportDate = facts.exportDate, let offset = facts.exportDateOffset,
      facts.writtenOffsets.distinctOffsets == [offset]
    else { return nil }
    let matching = candidates.filter { $0.offset(at: exportDate) == offset }
    guard let first = matching.first else { return nil }
    let written = describe([offset])
    let others =
      matching.count == 1
      ? "" : ", the first of \(matching.count) zones of the country at \(written) then"
    return RunZone(
      rules: first,
      reason:
        "\(noZone); every date written at \(written), the offset of ExportDate: \(first.identifier) is a guess from locale \(place) and that offset on the export day\(others)"
    )
  }

  /// The share of votes, in percent, a zone must match: a stray date of another app's clock may
  /// not throw the zone away, while an export of one offset all year (the phone's on the day of
  /// the export, as since iOS 10) matches a zone with daylight saving on half its dates only:
  /// that one is left to `exportDayGuess`, which says it is a guess.
  static let leastMatchingShare = 99

  /// `+0100/+0200`, the offsets as exports write them; at most four, then `…`.
  static func describe(_ offsets: [Int32]) -> String {
    var parts: [String] = offsets.prefix(4).map { offset in
      var text: [UInt8] = []
      LocalTimeFormatter.appendOffset(offset, to: &text)
      return String(decoding: text.filter { $0 != UInt8(ascii: ":") }, as: UTF8.self)
    }
    if offsets.count > 4 { parts.append("…") }
    return parts.joined(separator: "/")
  }
}
