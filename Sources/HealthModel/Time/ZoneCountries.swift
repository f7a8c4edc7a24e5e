import Foundation

/// Which time zones each country has, and the country's name, from the system tz database's own
/// tables (`zone.tab`, else `zone1970.tab`, and `iso3166.tab`), read once per run: so that an
/// export's locale (`en_DE`) can name the zones its dates may have been written in
/// (Pipelines/docs/samples.md, "Time zone").
public struct ZoneCountries: Sendable {
  /// Country code → zone names, in the table's order: `zone.tab` lists a country's most
  /// populous zone first (`America/New_York` for US), and gives each country its own names
  /// (`Europe/Oslo` for NO, where `zone1970.tab` has only `Europe/Berlin`).
  private let zonesByCountry: [String: [String]]
  private let names: [String: String]

  /// Reads the tables of the database in `directory`; nil when it has neither zone table.
  public static func load(directory: String = ZoneRules.databaseDirectory) -> ZoneCountries? {
    func text(_ name: String) -> String? {
      FileManager.default.contents(atPath: directory + "/" + name).map { String(decoding: $0, as: UTF8.self) }
    }
    guard let zones = text("zone.tab") ?? text("zone1970.tab") else { return nil }
    return ZoneCountries(zoneTable: zones, countryTable: text("iso3166.tab") ?? "")
  }

  /// Parses the tables' text: tab-separated rows, `#` comments. A zone row is `codes`,
  /// coordinates, zone name, comment (`zone1970.tab` lists several codes, `DE,DK,NO`); a country
  /// row is code, name.
  public init(zoneTable: String, countryTable: String) {
    var zones: [String: [String]] = [:]
    // In zone1970.tab a zone is listed under each of its countries; those of its first
    // (the country it is named after) come first.
    var later: [String: [String]] = [:]
    for line in zoneTable.split(separator: "\n") where !line.hasPrefix("#") {
      let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
      guard fields.count >= 3 else { continue }
      let name = String(fields[2])
      for (index, code) in fields[0].split(separator: ",").enumerated() {
        if index == 0 {
          zones[String(code), default: []].append(name)
        } else {
          later[String(code), default: []].append(name)
        }
      }
    }
    for (code, names) in later { zones[code, default: []] += names }
    zonesByCountry = zones
    var names: [String: String] = [:]
    for line in countryTable.split(separator: "\n") where !line.hasPrefix("#") {
      let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
      if fields.count >= 2 { names[String(fields[0])] = String(fields[1]) }
    }
    self.names = names
  }

  /// The zones of a country (`DE`), in the table's order; empty for a code the table lacks.
  public func zones(ofCountry code: String) -> [String] { zonesByCountry[code] ?? [] }

  /// The country's name (`Germany`, `Britain (UK)`), or nil.
  public func name(ofCountry code: String) -> String? { names[code] }

  /// The country of a locale identifier: `en_DE` and `de_DE` → `DE`, `zh_Hans_CN` → `CN`,
  /// `en-US` → `US`; nil for one without a two-letter region (`en`, `es_419`).
  public static func country(ofLocale locale: String) -> String? {
    let identifier = locale.split(separator: "@", maxSplits: 1).first ?? ""
    let parts = identifier.split(whereSeparator: { $0 == "_" || $0 == "-" })
    for part in parts.dropFirst() where part.utf8.count == 2 && part.allSatisfy({ $0.isASCII && $0.isLetter }) {
      return part.uppercased()
    }
    return nil
  }
}

/// Which of several zones best explains the offsets an export wrote (`WrittenOffsets`).
public enum ZoneMatch {
  /// A zone and the votes its offsets match.
  public struct Result: Sendable {
    public let rules: ZoneRules
    /// Votes whose written offset is the zone's offset at their instant.
    public let matched: Int
    public let total: Int
  }

  /// The candidate matching the most votes; a tie goes to the candidate listed first. Nil when
  /// there are no candidates or no votes.
  public static func best(
    of candidates: [ZoneRules], votes: [(instant: Instant, offsetSeconds: Int32)]
  ) -> Result? {
    guard !votes.isEmpty else { return nil }
    var best: Result?
    for rules in candidates {
      let matched = votes.reduce(0) { $0 + (rules.offset(at: $1.instant) == $1.offsetSeconds ? 1 : 0) }
      if matched > (best?.matched ?? -1) { best = Result(rules: rules, matched: matched, total: votes.count) }
    }
    return best
  }
}
