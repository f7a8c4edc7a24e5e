import Foundation
import HealthModel

/// The nights worth a look (Pipelines/docs/nightly.md, "Worth a look"): nights no person sleeps, and
/// one source's identical blocks repeated night after night. Their values stay as written in
/// `sleep_daily.csv`; the report leaves them out of its averages and lists them.
enum SleepOddities {
  /// More than this asleep in one night.
  static let longestAsleep: Int64 = 16 * 3600
  /// More than this in bed in one night.
  static let longestInBed: Int64 = 24 * 3600
  /// An asleep sample this long or longer may be a block an app repeats…
  static let shortestBlock: Int64 = 3 * 3600
  /// …when the same source wrote `repeats` of exactly its length within `repeatWindow`.
  static let repeats = 3
  static let repeatWindow: Int64 = 7 * 86_400

  static let longNights = Oddities.Rule(
    key: "longNights", title: "Nights longer than anyone sleeps",
    why:
      "More than 16 hours asleep, or more than 24 hours in bed, in one night: an app left running, or entries "
      + "that overlap (a manual entry over an app's night). Kept as written in sleep_daily.csv; left out of "
      + "the report's averages.")
  static let repeatedBlocks = Oddities.Rule(
    key: "repeatedSleepBlocks", title: "Nights of one source's identical asleep blocks",
    why:
      "One source wrote asleep blocks of exactly the same length (3 hours or more) on 3 or more nights within a "
      + "week: a timer or a schedule, not a measurement. Kept as written in sleep_daily.csv; left out of the "
      + "report's averages.")

  /// An asleep sample long enough to be a repeated block.
  struct Block {
    var start: Instant
    var length: Int64
    var group: Int32
  }

  /// The asleep samples of `intervals` of at least `shortestBlock`, before the nights are
  /// computed (the computation reorders them).
  static func blocks(of intervals: [SleepInterval]) -> [Block] {
    intervals.compactMap { interval in
      guard interval.stage.isAsleep, interval.length >= shortestBlock else { return nil }
      return Block(start: interval.start, length: interval.length, group: interval.group)
    }
  }

  /// The blocks that repeat: per group and exact length, those of `repeats` or more that start
  /// within `repeatWindow` of each other; each with how many share its length in its series,
  /// and the series' first and last start.
  static func repeated(_ blocks: [Block]) -> [(block: Block, count: Int, first: Instant, last: Instant)] {
    let sorted = blocks.sorted { ($0.group, $0.length, $0.start) < ($1.group, $1.length, $1.start) }
    var result: [(block: Block, count: Int, first: Instant, last: Instant)] = []
    var index = 0
    while index < sorted.count {
      var end = index
      while end + 1 < sorted.count, sorted[end + 1].group == sorted[index].group,
        sorted[end + 1].length == sorted[index].length
      {
        end += 1
      }
      // Within one (group, length) run, in start order: a block is repeated when some window of
      // `repeatWindow` holding it holds `repeats` blocks.
      var flagged = [Bool](repeating: false, count: end - index + 1)
      var low = index
      for high in index...end {
        while sorted[high].start - sorted[low].start >= repeatWindow { low += 1 }
        if high - low + 1 >= repeats { for member in low...high { flagged[member - index] = true } }
      }
      let members = (index...end).filter { flagged[$0 - index] }
      if let first = members.first, let last = members.last {
        for member in members {
          result.append((sorted[member], members.count, sorted[first].start, sorted[last].start))
        }
      }
      index = end + 1
    }
    return result
  }

  /// Flags the nights of `result` and returns, per flagged night's date, the first reason in words.
  static func flag(
    _ result: SleepNightCalculator.Result, blocks: [Block], sourceNames: [String], rules: ZoneRules,
    into oddities: inout Oddities
  ) -> [CivilDate: String] {
    var flagged: [CivilDate: String] = [:]
    var repeatedByDate: [CivilDate: (block: Block, count: Int, first: Instant, last: Instant)] = [:]
    let sessions = result.sessions
    for entry in repeated(blocks) {
      // The session holding the block's start: the last that starts at or before it.
      var low = 0
      var high = sessions.count
      while low < high {
        let mid = (low + high) / 2
        if sessions[mid].start <= entry.block.start { low = mid + 1 } else { high = mid }
      }
      guard low > 0 else { continue }
      let date = sessions[low - 1].date
      if repeatedByDate[date] == nil { repeatedByDate[date] = entry }
    }
    for night in result.nights {
      let tally = night.tally
      if tally.asleep > longestAsleep || (tally.inBed ?? 0) > longestInBed {
        var detail = "asleep \(hoursMinutes(tally.asleep))"
        if let inBed = tally.inBed { detail += ", in bed \(hoursMinutes(inBed))" }
        if let start = tally.sleepStart, let end = tally.sleepEnd {
          detail += ", from \(minute(start, rules)) to \(minute(end, rules))"
        }
        detail += sources(tally, sourceNames)
        oddities.flag(longNights, .init(date: night.date, detail: detail))
        flagged[night.date] = "longer than anyone sleeps: " + detail
      }
      if let entry = repeatedByDate[night.date] {
        let name = sourceNames[Int(entry.block.group)]
        let detail =
          "\(name) wrote \(hoursMinutes(entry.block.length)) asleep, exactly as long as on \(entry.count - 1) "
          + "other nights from \(rules.localDate(at: entry.first)) to \(rules.localDate(at: entry.last))"
        oddities.flag(repeatedBlocks, .init(date: night.date, detail: detail))
        if flagged[night.date] == nil { flagged[night.date] = "an identical block: " + detail }
      }
    }
    return flagged
  }

  /// The sources a night's sleep came from, at most `sourcesNamed` of them, each cut to
  /// `nameLimit` characters: a night overlapped by 100,000 sources made a 150 KB line of run.json.
  private static func sources(_ tally: SleepTally, _ names: [String]) -> String {
    var seen = Set<String>()
    let winners = tally.winningGroups.map { names[Int($0)] }.filter { seen.insert($0).inserted }
    guard !winners.isEmpty else { return "" }
    let named = winners.prefix(sourcesNamed).map { $0.count > nameLimit ? $0.prefix(nameLimit) + "…" : $0 }
    let rest = winners.count - named.count
    return "; from " + named.joined(separator: ", ") + (rest > 0 ? " and \(rest) more" : "")
  }

  static let sourcesNamed = 3
  static let nameLimit = 80

  /// `25 h 10 min`.
  static func hoursMinutes(_ seconds: Int64) -> String {
    let minutes = (seconds + 30) / 60
    return "\(minutes / 60) h \(minutes % 60 < 10 ? "0" : "")\(minutes % 60) min"
  }

  /// `2024-03-20 22:15`, local.
  static func minute(_ instant: Instant, _ rules: ZoneRules) -> String {
    let text = LocalTimeFormatter.iso8601(instant, offsetSeconds: rules.offset(at: instant))
    return String(text.prefix(16)).replacingOccurrences(of: "T", with: " ")
  }
}
