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
    extraStages: @escaping (OutputTransaction) -> [any OutputStage] = { _ in [] }
  ) throws -> Output {
    let result = try StageHarness.run(source, zone: zone, settings: settings) { transaction in
      [SleepMart(transaction: transaction, writeJSON: json)] + extraStages(transaction)
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

  /// The measures both files share.
  struct Measures: Equatable {
    var asleep: Int64
    var core: Int64
    var deep: Int64
    var rem: Int64
    var unspecified: Int64
    var awake: Int64
    /// nil = empty field.
    var inBed: Int64?
    var sleepStart: String?
    var sleepEnd: String?
    var sources: String?

    init(
      asleep: Int64, core: Int64 = 0, deep: Int64 = 0, rem: Int64 = 0, unspecified: Int64 = 0, awake: Int64 = 0,
      inBed: Int64? = nil, sleepStart: String? = nil, sleepEnd: String? = nil, sources: String? = nil
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
      func number(_ column: String) -> Int64 { Int64(row[column] ?? "") ?? -1 }
      func text(_ column: String) -> String? { row[column].flatMap { $0.isEmpty ? nil : $0 } }
      self.init(
        asleep: number("asleep_s"), core: number("core_s"), deep: number("deep_s"), rem: number("rem_s"),
        unspecified: number("unspecified_s"), awake: number("awake_s"), inBed: text("in_bed_s").flatMap { Int64($0) },
        sleepStart: text("sleep_start"), sleepEnd: text("sleep_end"), sources: text("sources"))
    }
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
      // The date's measures are the sums of its sessions'.
      #expect(day.measures.core == sessions.reduce(0) { $0 + $1.measures.core }, "\(day.date): core")
      #expect(day.measures.deep == sessions.reduce(0) { $0 + $1.measures.deep }, "\(day.date): deep")
      #expect(day.measures.rem == sessions.reduce(0) { $0 + $1.measures.rem }, "\(day.date): rem")
      #expect(day.measures.unspecified == sessions.reduce(0) { $0 + $1.measures.unspecified })
      #expect(day.measures.awake == sessions.reduce(0) { $0 + $1.measures.awake }, "\(day.date): awake")
      let inBeds = sessions.compactMap(\.measures.inBed)
      #expect(day.measures.inBed == (inBeds.isEmpty ? nil : inBeds.reduce(0, +)), "\(day.date): in bed")
    }
    return output.days.count
  }

  private static func check(_ m: Measures, span: Int64, where label: String) {
    #expect(m.asleep == m.core + m.deep + m.rem + m.unspecified, "\(label): asleep is not the sum of its stages")
    #expect(m.asleep >= 0 && m.awake >= 0 && m.core >= 0 && m.deep >= 0 && m.rem >= 0 && m.unspecified >= 0)
    #expect(m.asleep + m.awake <= span, "\(label): asleep + awake \(m.asleep + m.awake) > session span \(span)")
    if let inBed = m.inBed { #expect(inBed >= 0 && inBed <= span, "\(label): in bed \(inBed) > span \(span)") }
    // sleep_start/sleep_end exist exactly when something was asleep, and enclose it.
    #expect((m.sleepStart != nil) == (m.asleep > 0) && (m.sleepEnd != nil) == (m.asleep > 0), "\(label)")
    if let start = m.sleepStart, let end = m.sleepEnd { #expect(epoch(end) - epoch(start) >= m.asleep, "\(label)") }
    // Someone won a piece exactly when some time was asleep or awake.
    #expect((m.sources != nil) == (m.asleep + m.awake > 0), "\(label): sources")
  }
}

/// Copies every `SleepAnalysis` sample it sees, for references computed without the code under test.
final class SleepSampleRecorder: OutputStage {
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

  func finish(_ context: StageContext) throws(OutputError) -> [OutputSummary] { [] }

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
      }
    }
    for (index, session) in output.sessions.enumerated() {
      let m = session.measures
      #expect(m.asleep + m.awake == Self.unionLength(stageIntervals[index]), "session \(session.start): staged time")
      #expect(m.inBed == (inBedSeen[index] ? Self.unionLength(inBedIntervals[index]) : nil), "\(session.start)")
    }
  }
}
