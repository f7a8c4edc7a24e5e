import Foundation
import HealthExtract
import HealthModel
import SyntheticExport
import Testing

/// A fresh folder under the system temporary directory, removed by `cleanUp`.
private struct Scratch {
  let path: String

  init() throws {
    path = FileManager.default.temporaryDirectory.appendingPathComponent("healthsample-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  func file(_ name: String) -> String { path + "/" + name }

  func cleanUp() { try? FileManager.default.removeItem(atPath: path) }
}

/// Counts every element the project's reader reports.
private final class CountingHandler: ExportEventHandler {
  var counts: [ExportElement: Int] = [:]

  func didStart(_ element: ExportElement, attributes: ElementAttributes, line: Int) {
    counts[element, default: 0] += 1
  }

  func didEnd(_ element: ExportElement) {}
}

private func occurrences(of needle: String, in bytes: [UInt8]) -> Int {
  let pattern = Array(needle.utf8)
  var count = 0
  var index = 0
  while index + pattern.count <= bytes.count {
    if bytes[index] == pattern[0] && bytes[index..<(index + pattern.count)].elementsEqual(pattern) {
      count += 1
      index += pattern.count
    } else {
      index += 1
    }
  }
  return count
}

private func readBytes(_ path: String) throws -> [UInt8] {
  [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

private func countElements(_ path: String) throws -> [ExportElement: Int] {
  let handler = CountingHandler()
  let input = try ExportInput.open(path)
  defer { input.close() }
  _ = try ExportXMLReader(handler: handler).read(input)
  return handler.counts
}

@Suite struct SyntheticExportGeneratorTests {
  @Test func sameSeedSameBytesOtherSeedOtherBytes() throws {
    let scratch = try Scratch()
    defer { scratch.cleanUp() }
    let first = try SyntheticExportGenerator.write(
      SyntheticExportOptions(days: 5, seed: 7), to: scratch.file("a/export.xml"))
    let second = try SyntheticExportGenerator.write(
      SyntheticExportOptions(days: 5, seed: 7), to: scratch.file("b/export.xml"))
    let other = try SyntheticExportGenerator.write(
      SyntheticExportOptions(days: 5, seed: 8), to: scratch.file("c/export.xml"))
    #expect(first == second)
    #expect(try readBytes(scratch.file("a/export.xml")) == readBytes(scratch.file("b/export.xml")))
    #expect(try readBytes(scratch.file("a/export.xml")) != readBytes(scratch.file("c/export.xml")))
    #expect(first != other)
    let routes = try FileManager.default.contentsOfDirectory(atPath: scratch.file("a/workout-routes")).sorted()
    #expect(routes.count == first.routeFiles)
    for name in routes {
      #expect(
        try readBytes(scratch.file("a/workout-routes/" + name)) == readBytes(scratch.file("b/workout-routes/" + name)))
    }
  }

  @Test func statsAgreeWithTheWrittenBytes() throws {
    let scratch = try Scratch()
    defer { scratch.cleanUp() }
    let path = scratch.file("export.xml")
    let stats = try SyntheticExportGenerator.write(SyntheticExportOptions(days: 8), to: path)
    let bytes = try readBytes(path)
    #expect(stats.xmlBytes == Int64(bytes.count))
    #expect(stats.days == 8)
    #expect(occurrences(of: "<Record ", in: bytes) == stats.elements["Record"])
    #expect(occurrences(of: "<Workout ", in: bytes) == stats.elements["Workout"])
    #expect(occurrences(of: "<Correlation ", in: bytes) == stats.elements["Correlation"])
    #expect(occurrences(of: "<ActivitySummary ", in: bytes) == stats.elements["ActivitySummary"])
    #expect(occurrences(of: "<MetadataEntry ", in: bytes) == stats.elements["MetadataEntry"])
    #expect(stats.elements["ActivitySummary"] == 8)
    // Correlation children are counted as elements but not as top-level records.
    let topLevel = stats.records.values.reduce(0, +)
    #expect(topLevel + 2 * (stats.elements["Correlation"] ?? 0) == stats.elements["Record"])
    #expect(
      occurrences(of: "\n <Record type=\"HKQuantityTypeIdentifierStepCount\"", in: bytes) == stats.records["StepCount"])
    #expect(stats.routeFiles > 0)
  }

  @Test func theProjectReaderParsesItAndCountsTheSame() throws {
    let scratch = try Scratch()
    defer { scratch.cleanUp() }
    let path = scratch.file("export.xml")
    let stats = try SyntheticExportGenerator.write(SyntheticExportOptions(days: 10), to: path)
    let counts = try countElements(path)
    #expect(counts[.other] == nil)
    var seen: [String: Int] = [:]
    for (element, count) in counts {
      if let name = element.xmlName { seen[name] = count }
    }
    #expect(seen == stats.elements)
    #expect(counts[.workoutActivity, default: 0] > 0)
    #expect(counts[.instantaneousBeatsPerMinute, default: 0] > 0)
  }

  @Test func zipHoldsTheExportTheCDAAndTheRoutes() throws {
    let scratch = try Scratch()
    defer { scratch.cleanUp() }
    let path = scratch.file("out/export.zip")
    let stats = try SyntheticExportGenerator.write(SyntheticExportOptions(days: 7, zip: true), to: path)
    let bytes = try readBytes(path)
    #expect(Array(bytes.prefix(4)) == [0x50, 0x4B, 0x03, 0x04])
    #expect(occurrences(of: "apple_health_export/export_cda.xml", in: bytes) >= 1)
    #expect(occurrences(of: "apple_health_export/workout-routes/route_", in: bytes) >= stats.routeFiles)
    #expect(stats.routeFiles > 0)
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: scratch.file("out"))
    #expect(leftovers == ["export.zip"])

    let input = try ExportInput.open(path)
    #expect(input.memberName.hasSuffix("export.xml"))
    #expect(input.memberName == "apple_health_export/export.xml")
    input.close()
    let counts = try countElements(path)
    #expect(counts[.record] == stats.elements["Record"])
    #expect(counts[.workout] == stats.elements["Workout"])

    // Zipping is deterministic too.
    let again = try SyntheticExportGenerator.write(
      SyntheticExportOptions(days: 7, zip: true), to: scratch.file("again.zip"))
    #expect(again == stats)
    #expect(try readBytes(scratch.file("again.zip")) == bytes)
  }

  @Test func theContentHasTheShapesPipelinesMustHandle() throws {
    let scratch = try Scratch()
    defer { scratch.cleanUp() }
    let path = scratch.file("export.xml")
    _ = try SyntheticExportGenerator.write(SyntheticExportOptions(days: 14), to: path)
    let text = String(decoding: try readBytes(path), as: UTF8.self)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)

    func attribute(_ name: String, _ line: String) -> String? {
      guard let range = line.range(of: " \(name)=\"") else { return nil }
      let rest = line[range.upperBound...]
      return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }

    // One offset for every date: the export's, also before the spring-forward.
    #expect(text.contains("<ExportDate value=\"2024-04-01 09:00:00 +0200\"/>"))
    #expect(text.contains("startDate=\"2024-03-18 "))
    #expect(!text.contains(" +0100\""))
    #expect(text.contains("<HealthData locale=\"en_DE\">"))
    #expect(text.contains("<!-- HealthKit Export Version: 14 -->"))

    // A pool swim: one stroke sample per length, at least three styles.
    var styles = Set<String>()
    for (index, line) in lines.enumerated()
    where line.hasPrefix(" <Record type=\"HKQuantityTypeIdentifierSwimmingStrokeCount\"") {
      let next = lines[index + 1]
      #expect(next.contains("key=\"HKSwimmingStrokeStyle\""))
      if let style = attribute("value", next) { styles.insert(style) }
    }
    #expect(styles.count >= 3)
    #expect(text.contains("<MetadataEntry key=\"HKLapLength\" value=\"25 m\"/>"))
    #expect(text.contains("<MetadataEntry key=\"HKSWOLFScore\" value=\""))

    // Sleep: the Watch, the iPhone and AutoSleep overlap; one Watch stage appears twice in a row.
    struct Span {
      var source: String
      var value: String
      var start: Int64
      var end: Int64
    }
    var sleep: [Span] = []
    var duplicated = false
    var previous = ""
    for line in lines where line.contains("HKCategoryTypeIdentifierSleepAnalysis") {
      if line == previous { duplicated = true }
      previous = line
      guard let source = attribute("sourceName", line), let value = attribute("value", line),
        let start = attribute("startDate", line).flatMap(HealthDateParser.parse),
        let end = attribute("endDate", line).flatMap(HealthDateParser.parse)
      else { continue }
      sleep.append(Span(source: source, value: value, start: start.instant.seconds, end: end.instant.seconds))
    }
    #expect(duplicated)
    let watch = sleep.filter { $0.source == "Alex’s Apple Watch" }
    let autoSleep = sleep.filter { $0.source == "AutoSleep" && $0.value.hasSuffix("AsleepUnspecified") }
    #expect(!watch.isEmpty && !autoSleep.isEmpty)
    #expect(autoSleep.contains { a in watch.contains { w in a.start < w.end && w.start < a.end } })
    #expect(sleep.contains { $0.source == "Alex’s iPhone" && $0.value.hasSuffix("InBed") })

    // Manual entries, heart rate with motion context, HRV beat lists, stand hours, old-style
    // mindful sessions, blood pressure both in a correlation and at top level.
    #expect(text.contains("<MetadataEntry key=\"HKWasUserEntered\" value=\"1\"/>"))
    #expect(text.contains("<MetadataEntry key=\"HKMetadataKeyHeartRateMotionContext\" value=\"1\"/>"))
    #expect(text.contains("<InstantaneousBeatsPerMinute bpm=\""))
    #expect(text.contains("value=\"HKCategoryValueAppleStandHourStood\""))
    #expect(text.contains("value=\"HKCategoryValueAppleStandHourIdle\""))
    #expect(text.contains("<Correlation type=\"HKCorrelationTypeIdentifierBloodPressure\""))
    #expect(text.contains("\n <Record type=\"HKQuantityTypeIdentifierBloodPressureSystolic\""))
    #expect(text.contains("\n  <Record type=\"HKQuantityTypeIdentifierBloodPressureSystolic\""))
    #expect(text.contains("device=\"&lt;&lt;HKDevice: 0x28"))
    #expect(text.contains("unit=\"km\""))
    #expect(text.contains("unit=\"Cal\""))

    // Workouts: a run with an activity, events, statistics and a route; the old-style run.
    #expect(text.contains("<WorkoutActivity uuid=\""))
    #expect(text.contains("<WorkoutStatistics type=\"HKQuantityTypeIdentifierHeartRate\""))
    #expect(text.contains("<FileReference path=\"/workout-routes/route_2024-03-"))
  }

  @Test func everyRecordTypeIsInOneBlockInTimeOrder() throws {
    let scratch = try Scratch()
    defer { scratch.cleanUp() }
    let path = scratch.file("export.xml")
    _ = try SyntheticExportGenerator.write(SyntheticExportOptions(days: 9, seed: 3), to: path)
    let text = String(decoding: try readBytes(path), as: UTF8.self)
    var finished = Set<String>()
    var current = ""
    var lastStart: Int64 = .min
    for line in text.split(separator: "\n") where line.hasPrefix(" <Record type=\"") {
      let type = String(line.dropFirst(15).prefix { $0 != "\"" })
      if type != current {
        #expect(!finished.contains(type), "\(type) appears in two blocks")
        finished.insert(current)
        current = type
        lastStart = .min
      }
      guard let range = line.range(of: "startDate=\"") else { continue }
      let date = String(line[range.upperBound...].prefix(25))
      let start = HealthDateParser.parse(date)!.instant.seconds
      #expect(start >= lastStart, "\(type) out of order at \(date)")
      lastStart = start
    }
  }

  @Test func workoutStatisticsMatchTheDenseHeartRateInsideTheRun() throws {
    let scratch = try Scratch()
    defer { scratch.cleanUp() }
    let path = scratch.file("export.xml")
    _ = try SyntheticExportGenerator.write(SyntheticExportOptions(days: 14, seed: 11), to: path)
    let lines = String(decoding: try readBytes(path), as: UTF8.self).split(separator: "\n").map(String.init)
    func value(_ name: String, _ line: String) -> String {
      guard let range = line.range(of: " \(name)=\"") else { return "" }
      return String(line[range.upperBound...].prefix { $0 != "\"" })
    }
    func instant(_ text: String) -> Int64 { HealthDateParser.parse(text)!.instant.seconds }

    // The first modern run: its span and its heart-rate statistics.
    guard
      let runIndex = lines.firstIndex(where: {
        $0.contains("workoutActivityType=\"HKWorkoutActivityTypeRunning\"") && !$0.contains("totalDistance")
      })
    else {
      Issue.record("no run in two weeks")
      return
    }
    let start = instant(value("startDate", lines[runIndex]))
    let end = instant(value("endDate", lines[runIndex]))
    guard
      let statistics = lines[runIndex...].first(where: {
        $0.hasPrefix("  <WorkoutStatistics type=\"HKQuantityTypeIdentifierHeartRate\"")
      })
    else {
      Issue.record("the run has no heart-rate statistics")
      return
    }
    var rates: [Double] = []
    for line in lines where line.hasPrefix(" <Record type=\"HKQuantityTypeIdentifierHeartRate\"") {
      let t = instant(value("startDate", line))
      if t >= start && t <= end { rates.append(Double(value("value", line))!) }
    }
    #expect(rates.count >= Int(end - start) / 5 - 2)
    #expect(Double(value("minimum", statistics)) == rates.min())
    #expect(Double(value("maximum", statistics)) == rates.max())
    let average = rates.reduce(0, +) / Double(rates.count)
    #expect(abs(Double(value("average", statistics))! - average) < 0.001)
  }

  @Test func targetSizeIsMet() throws {
    let scratch = try Scratch()
    defer { scratch.cleanUp() }
    let path = scratch.file("export.xml")
    let stats = try SyntheticExportGenerator.write(SyntheticExportOptions(seed: 5, targetMegabytes: 6), to: path)
    let megabytes = Double(stats.xmlBytes) / 1_000_000
    #expect(megabytes > 5.4 && megabytes < 6.6, "got \(megabytes) MB in \(stats.days) days")
  }

  @Test func badOptionsAndPathsAreReported() throws {
    let scratch = try Scratch()
    defer { scratch.cleanUp() }
    #expect(throws: SampleExportError.self) {
      try SyntheticExportGenerator.write(SyntheticExportOptions(days: 0), to: scratch.file("export.xml"))
    }
    try Data().write(to: URL(fileURLWithPath: scratch.file("plain")))
    do {
      _ = try SyntheticExportGenerator.write(SyntheticExportOptions(days: 1), to: scratch.file("plain/export.xml"))
      Issue.record("writing below a file succeeded")
    } catch let error as SampleExportError {
      guard case .cannotCreate(let path, _) = error else {
        Issue.record("unexpected \(error)")
        return
      }
      #expect(path.hasSuffix("plain"))
      #expect(error.description.hasPrefix("cannot create"))
    }
  }
}
