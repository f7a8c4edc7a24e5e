import Foundation
import HealthETL
import HealthExtract
import HealthModel
import Testing

/// Builds sleep exports, runs `SleepMart` over them and reads its files back typed.
enum SleepTesting {
  static let watchDevice =
    "&lt;&lt;HKDevice: 0x1&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, "
    + "software:9.1&gt;"
  static let phoneDevice =
    "&lt;&lt;HKDevice: 0x2&gt;, name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone14,2, "
    + "software:16.1&gt;"
  static let watch = "Alex’s Apple Watch"
  static let phone = "Alex’s iPhone"

  /// A `SleepAnalysis` record; `value` is the part after `HKCategoryValueSleepAnalysis`.
  static func sleep(
    _ value: String, _ start: String, _ end: String, source: String = watch, device: String? = watchDevice,
    created: String? = nil, metadata: [(String, String)] = []
  ) -> String {
    Staging.record(
      "HKCategoryTypeIdentifierSleepAnalysis", source: source, value: "HKCategoryValueSleepAnalysis" + value,
      unit: nil, start: start, end: end, created: created, device: device, metadata: metadata)
  }

  /// Runs the stage over an in-memory export of `records`.
  static func run(
    _ records: [String], zone: String = "UTC", settings: RunSettings = RunSettings(), json: Bool = false
  ) throws -> Output {
    try run(StageHarness.export(records.joined(separator: "\n")), zone: .named(zone), settings: settings, json: json)
  }

  static func run(
    _ source: InputSource, zone: RunZone.Request, settings: RunSettings = RunSettings(), json: Bool = false,
    extraStages: @escaping (OutputTransaction) -> [any Mart] = { _ in [] }
  ) throws -> Output {
    let result = try StageHarness.run(source, zone: zone, settings: settings) { transaction in
      [SleepMart(writeJSON: json)] + extraStages(transaction)
    }
    defer { result.remove() }
    let header = try result.text("sleep_daily.csv").prefix { $0 != "\n" }
    #expect(header == SleepTables.daily.columnNames.joined(separator: ","))
    let sessionHeader = try result.text("sleep_sessions.csv").prefix { $0 != "\n" }
    #expect(sessionHeader == SleepTables.sessions.columnNames.joined(separator: ","))
    var output = Output(
      days: try result.csvRows("sleep_daily.csv").map(Day.init),
      sessions: try result.csvRows("sleep_sessions.csv").map(Session.init), zone: result.zone)
    if json {
      output.dailyJSON =
        try JSONSerialization.jsonObject(with: Data(result.text("sleep_daily.json").utf8))
        as? [[String: Any]]
      output.sessionsJSON =
        try JSONSerialization.jsonObject(with: Data(result.text("sleep_sessions.json").utf8))
        as? [[String: Any]]
    }
    return output
  }

  struct Output {
    var days: [Day]
    var sessions: [Session]
    var zone: RunZone
    var dailyJSON: [[String: Any]]?
    var sessionsJSON: [[String: Any]]?

    func day(_ date: String) -> Day? { days.first { $0.date == date } }
  }

  /// The measures both files share; nil = empty field.
  struct Measures: Equatable {
    var asleep: Int64?
    var core: Int64?
    var deep: Int64?
    var rem: Int64?
    var unspecified: Int64?
    var awake: Int64?
    var inBed: Int64?
    var sleepStart: String?
    var sleepEnd: String?
    var sources: String?

    init(
      asleep: Int64? = nil, core: Int64? = nil, deep: Int64? = nil, rem: Int64? = nil, unspecified: Int64? = nil,
      awake: Int64? = nil, inBed: Int64? = nil, sleepStart: String? = nil, sleepEnd: String? = nil,
      sources: String? = nil
    ) {
      self.asleep = asleep
      self.core = core
      self.deep = deep
      self.rem = rem
      self.unspecified = unspecified
      self.awake = awake
      self.inBed = inBed
      self.sleepStart = sleepStart
      self.sleepEnd = sleepEnd
      self.sources = sources
    }

    init(_ row: [String: String]) {
      func text(_ column: String) -> String? { row[column].flatMap { $0.isEmpty ? nil : $0 } }
      // A field that is not an integer reads as -1, which every invariant rejects.
      func number(_ column: String) -> Int64? { text(column).map { Int64($0) ?? -1 } }
      self.init(
        asleep: number("asleep_s"), core: number("core_s"), deep: number("deep_s"), rem: number("rem_s"),
        unspecified: number("unspecified_s"), awake: number("awake_s"), inBed: number("in_bed_s"),
        sleepStart: text("sleep_start"), sleepEnd: text("sleep_end"), sources: text("sources"))
    }

    /// Asleep + awake: the time some stage won, an empty field counting as nothing.
    var staged: Int64 { (asleep ?? 0) + (awake ?? 0) }
  }

  struct Day: Equatable {
    var date: String
    var measures: Measures
    var sessions: Int

    init(_ row: [String: String]) {
      date = row["date"] ?? ""
      measures = Measures(row)
      sessions = Int(row["sessions"] ?? "") ?? -1
    }
  }

  struct Session: Equatable {
    var start: String
    var end: String
    var date: String
    var measures: Measures

    init(_ row: [String: String]) {
      start = row["session_start"] ?? ""
      end = row["session_end"] ?? ""
      date = row["date"] ?? ""
      measures = Measures(row)
    }
  }

  /// Epoch seconds of `2024-03-10T07:15:03-04:00`, parsed independently of the code under test.
  static func epoch(_ text: String) -> Int64 {
    let bytes = Array(text.utf8)
    precondition(bytes.count == 25, "not an ISO 8601 instant with offset: \(text)")
    func number(_ range: Range<Int>) -> Int64 { Int64(String(decoding: bytes[range], as: UTF8.self))! }
    let date = CivilDate(String(decoding: bytes[0..<10], as: UTF8.self))!
    let wall = date.daysSinceEpoch * 86_400 + number(11..<13) * 3600 + number(14..<16) * 60 + number(17..<19)
    let offset = (number(20..<22) * 3600 + number(23..<25) * 60) * (bytes[19] == UInt8(ascii: "-") ? -1 : 1)
    return wall - offset
  }

  /// The sleep invariants every output must satisfy, whatever the input. Returns the number of
  /// dates checked.
  @discardableResult
  static func checkInvariants(_ output: Output, gapSeconds: Int64 = 3600, boundaryHour: Int = 18) -> Int {
    // Every date once, in date order (ISO dates order as text).
    for (a, b) in zip(output.days, output.days.dropFirst()) { #expect(a.date < b.date, "dates out of order") }
    // Sessions in start order, disjoint, separated by more than the gap.
    for (a, b) in zip(output.sessions, output.sessions.dropFirst()) {
      #expect(epoch(b.start) - epoch(a.end) > gapSeconds, "sessions \(a.start) and \(b.start) overlap or touch")
    }
    for session in output.sessions {
      check(session.measures, span: epoch(session.end) - epoch(session.start), where: session.start)
      // The date follows from the end's wall clock as written (offset of the run's zone).
      let wall = Array(session.end.utf8)
      let hour = Int(String(decoding: wall[11..<13], as: UTF8.self))!
      var expected = CivilDate(String(session.end.prefix(10)))!
      if hour >= boundaryHour { expected = expected.adding(days: 1) }
      #expect(session.date == expected.description, "session ending \(session.end) dated \(session.date)")
      #expect(epoch(session.start) <= epoch(session.end))
    }
    let byDate = Dictionary(grouping: output.sessions, by: \.date)
    #expect(Set(byDate.keys) == Set(output.days.map(\.date)), "dates of sessions and daily rows differ")
    for day in output.days {
      let sessions = byDate[day.date] ?? []
      #expect(day.sessions == sessions.count, "\(day.date): sessions")
      let span = sessions.reduce(Int64(0)) { $0 + epoch($1.end) - epoch($1.start) }
      check(day.measures, span: span, where: day.date)
      // The date's measures are the sums of its sessions', empty only when all of theirs are.
      func sum(_ measure: KeyPath<Measures, Int64?>) -> Int64? {
        let values = sessions.compactMap { $0.measures[keyPath: measure] }
        return values.isEmpty ? nil : values.reduce(0, +)
      }
      let summed: [(String, KeyPath<Measures, Int64?>)] = [
        ("asleep", \.asleep), ("core", \.core), ("deep", \.deep), ("rem", \.rem), ("unspecified", \.unspecified),
        ("awake", \.awake),
      ]
      for (name, measure) in summed {
        #expect(day.measures[keyPath: measure] == sum(measure), "\(day.date): \(name)")
      }
      let inBeds = sessions.compactMap(\.measures.inBed)
      #expect(day.measures.inBed == (inBeds.isEmpty ? nil : inBeds.reduce(0, +)), "\(day.date): in bed")
    }
    return output.days.count
  }

  private static func check(_ m: Measures, span: Int64, where label: String) {
    let asleep = m.asleep ?? 0
    let stages = [m.core, m.deep, m.rem, m.unspecified].reduce(Int64(0)) { $0 + ($1 ?? 0) }
    #expect(asleep == stages, "\(label): asleep is not the sum of its stages")
    #expect([m.asleep, m.core, m.deep, m.rem, m.unspecified, m.awake].allSatisfy { ($0 ?? 0) >= 0 }, "\(label)")
    #expect(m.staged <= span, "\(label): asleep + awake \(m.staged) > session span \(span)")
    if let inBed = m.inBed { #expect(inBed >= 0 && inBed <= span, "\(label): in bed \(inBed) > span \(span)") }
    // sleep_start/sleep_end exist exactly when something was asleep, and enclose it.
    #expect((m.sleepStart != nil) == (asleep > 0) && (m.sleepEnd != nil) == (asleep > 0), "\(label)")
    if let start = m.sleepStart, let end = m.sleepEnd { #expect(epoch(end) - epoch(start) >= asleep, "\(label)") }
    // Someone won a piece exactly when some time was asleep or awake.
    #expect((m.sources != nil) == (m.staged > 0), "\(label): sources")
    // Empty, never 0 (Pipelines/docs/sleep.md, "Sleep jobs" step 7): asleep and unspecified are
    // measured when a stretch was won; core, deep and REM together; a staged night measures awake.
    #expect((m.asleep != nil) == (m.sources != nil) && (m.unspecified != nil) == (m.asleep != nil), "\(label)")
    #expect((m.core != nil) == (m.deep != nil) && (m.core != nil) == (m.rem != nil), "\(label): stages")
    if m.core != nil { #expect(m.awake != nil, "\(label): a staged night without awake") }
    if m.awake != nil { #expect(m.asleep != nil, "\(label): awake without asleep") }
  }
}

/// Copies every `SleepAnalysis` sample it sees, for references computed without the code under test.
final class SleepSampleRecorder: Mart {
  struct Raw {
    var start: Int64
    var end: Int64
    /// `inBed`, `asleepCore`, … as the catalog names it.
    var value: String
    var source: String
  }

  var samples: [Raw] = []

  func consume(_ sample: borrowing Sample, catalog: SampleCatalog) {
    guard catalog.typeInfo(sample.type).shortName == "SleepAnalysis" else { return }
    samples.append(
      Raw(
        start: sample.start.seconds, end: sample.end.seconds,
        value: catalog.categoryShortName(value: sample.categoryValue, type: sample.type),
        source: catalog.sourceName(sample.source)))
  }

  func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary] { [] }

  /// Length of the union of `intervals`.
  static func unionLength(_ intervals: [(Int64, Int64)]) -> Int64 {
    var total: Int64 = 0
    var current: (Int64, Int64)?
    for (start, end) in intervals.sorted(by: { $0.0 < $1.0 }) {
      if let run = current, start <= run.1 {
        current = (run.0, max(run.1, end))
      } else {
        if let run = current { total += run.1 - run.0 }
        current = (start, end)
      }
    }
    return total + (current.map { $0.1 - $0.0 } ?? 0)
  }

  /// Checks each session against the raw samples inside it: the time that got a stage
  /// (asleep + awake) is exactly the union of the stage samples, and in_bed_s the union of the
  /// in-bed samples — whoever won each piece.
  func checkCoverage(_ output: SleepTesting.Output) {
    let stages: Set<String> = ["asleepUnspecified", "awake", "asleepCore", "asleepDeep", "asleepREM"]
    let spans = output.sessions.map { (SleepTesting.epoch($0.start), SleepTesting.epoch($0.end)) }
    var stageIntervals = [[(Int64, Int64)]](repeating: [], count: spans.count)
    var inBedIntervals = [[(Int64, Int64)]](repeating: [], count: spans.count)
    var inBedSeen = [Bool](repeating: false, count: spans.count)
    var stageValues = [Set<String>](repeating: [], count: spans.count)
    for sample in samples where sample.value == "inBed" || stages.contains(sample.value) {
      // The session whose span holds the sample (spans are sorted and disjoint).
      var low = 0
      var high = spans.count
      while low < high {
        let mid = (low + high) / 2
        if spans[mid].1 < sample.start { low = mid + 1 } else { high = mid }
      }
      guard low < spans.count, spans[low].0 <= sample.start, sample.end <= spans[low].1 else {
        Issue.record("sample \(sample.start)–\(sample.end) \(sample.value) lies in no session")
        continue
      }
      if sample.value == "inBed" {
        inBedIntervals[low].append((sample.start, sample.end))
        inBedSeen[low] = true
      } else {
        stageIntervals[low].append((sample.start, sample.end))
        stageValues[low].insert(sample.value)
      }
    }
    for (index, session) in output.sessions.enumerated() {
      let m = session.measures
      #expect(m.staged == Self.unionLength(stageIntervals[index]), "session \(session.start): staged time")
      // No 0 where nothing was measured: a stage column of a session without a sample of that
      // stage is empty, and so is asleep when only in-bed samples were recorded.
      let recorded = stageValues[index]
      if recorded.isDisjoint(with: ["asleepCore", "asleepDeep", "asleepREM"]) {
        #expect(m.core == nil && m.deep == nil && m.rem == nil, "session \(session.start): stage 0 without stages")
        if !recorded.contains("awake") { #expect(m.awake == nil, "session \(session.start): awake 0 unmeasured") }
      }
      if recorded.isEmpty { #expect(m.asleep == nil && m.unspecified == nil, "session \(session.start): asleep") }
      #expect(m.inBed == (inBedSeen[index] ? Self.unionLength(inBedIntervals[index]) : nil), "\(session.start)")
    }
  }
}
