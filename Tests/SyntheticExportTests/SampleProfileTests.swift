import Foundation
import HealthExtract
import HealthModel
import SyntheticExport
import Testing

/// The records of an export written by the generator: one element a line, attributes as written.
private struct WrittenExport {
  let text: String
  let lines: [String]

  init(_ profile: SampleProfile, days: Int = 28, seed: UInt64 = 1) throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("healthprofile-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    var options = SyntheticExportOptions(days: days, start: profile.defaultStart, seed: seed)
    options.profile = profile
    _ = try SyntheticExportGenerator.write(options, to: folder.appendingPathComponent("export.xml").path)
    text = String(decoding: try Data(contentsOf: folder.appendingPathComponent("export.xml")), as: UTF8.self)
    lines = text.split(separator: "\n").map(String.init)
  }

  static func attribute(_ name: String, _ line: String) -> String? {
    guard let range = line.range(of: " \(name)=\"") else { return nil }
    let rest = line[range.upperBound...]
    return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
  }

  /// The top-level records of `type` (`HeartRate`, `SleepAnalysis`).
  func records(_ type: String) -> [String] {
    lines.filter { $0.hasPrefix(" <Record type=\"HK") && $0.contains("TypeIdentifier\(type)\"") }
  }

  func sources(_ type: String) -> Set<String> { Set(records(type).compactMap { Self.attribute("sourceName", $0) }) }

  var workouts: [String] { lines.filter { $0.hasPrefix(" <Workout ") } }

  static func instant(_ text: String) -> Int64 { HealthDateParser.parse(text)!.instant.seconds }
}

@Suite struct SampleProfileTests {
  /// The Watch profile is the default, byte for byte: the bundled sample is still what
  /// `make sample` (`--days 28 --seed 1 --zip`) writes.
  @Test func theWatchProfileIsTheBundledSample() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("healthprofile-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    var options = SyntheticExportOptions(days: 28, seed: 1, zip: true)
    options.profile = .watch
    _ = try SyntheticExportGenerator.write(options, to: folder.appendingPathComponent("export.zip").path)
    let bundled = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("SampleData/export.zip")
    #expect(try Data(contentsOf: folder.appendingPathComponent("export.zip")) == Data(contentsOf: bundled))
    #expect(SyntheticExportOptions().profile == .watch)
  }

  @Test(arguments: SampleProfile.allCases)
  func sameSeedSameBytesOtherSeedOtherBytes(profile: SampleProfile) throws {
    let first = try WrittenExport(profile, days: 7, seed: 3)
    #expect(first.text == (try WrittenExport(profile, days: 7, seed: 3)).text)
    #expect(first.text != (try WrittenExport(profile, days: 7, seed: 4)).text)
  }

  /// Garmin Connect beside the iPhone, as in bwassim's real export.
  @Test func garminHasHeartRateEveryTwoMinutesAndOverlappingRunDistance() throws {
    let export = try WrittenExport(.garmin)
    let heartRate = export.records("HeartRate")
    #expect(export.sources("HeartRate") == ["Connect"])
    var previous = Int64.min
    for record in heartRate {
      let start = WrittenExport.attribute("startDate", record)!
      // "2024-03-18 07:42:00 +0200": on the even minute, never two consecutive minutes.
      let minute = Int(start.dropFirst(14).prefix(2))!
      #expect(minute % 2 == 0 && start.dropFirst(17).hasPrefix("00"), "\(start)")
      let instant = WrittenExport.instant(start)
      #expect(instant >= previous + 120 || instant < previous, "\(start)")
      previous = instant
    }
    #expect(heartRate.count > 28 * 500)
    #expect(export.sources("StepCount") == ["Connect", "Alex’s iPhone"])
    #expect(export.records("RestingHeartRate").isEmpty)
    #expect(export.records("HeartRateVariabilitySDNN").isEmpty)
    let sleepValues = Set(export.records("SleepAnalysis").compactMap { WrittenExport.attribute("value", $0) })
    #expect(sleepValues == ["HKCategoryValueSleepAnalysisInBed", "HKCategoryValueSleepAnalysisAsleep"])
    #expect(!export.text.contains("<ActivitySummary ") && !export.text.contains("<WorkoutRoute"))

    // Every run: three Connect distance samples a minute apart, each the whole distance, the
    // last ending two minutes after the run.
    let runs = export.workouts
    #expect(runs.count >= 6)
    // The walks' distance from Connect is in km, the runs' in m.
    let distance = export.records("DistanceWalkingRunning").filter {
      $0.contains("sourceName=\"Connect\"") && $0.contains(" unit=\"m\"")
    }
    #expect(distance.count == 3 * runs.count)
    for run in runs {
      #expect(run.contains("sourceName=\"Connect\"") && run.contains("totalDistanceUnit=\"km\""))
      let start = WrittenExport.instant(WrittenExport.attribute("startDate", run)!)
      let end = WrittenExport.instant(WrittenExport.attribute("endDate", run)!)
      let meters = Double(WrittenExport.attribute("totalDistance", run)!)! * 1000
      let samples = distance.filter { line in
        let sampleStart = WrittenExport.instant(WrittenExport.attribute("startDate", line)!)
        return sampleStart >= start && sampleStart <= start + 120
      }
      #expect(samples.count == 3)
      for (copy, sample) in samples.enumerated() {
        #expect(WrittenExport.instant(WrittenExport.attribute("startDate", sample)!) == start + Int64(copy) * 60)
        #expect(WrittenExport.instant(WrittenExport.attribute("endDate", sample)!) == end + Int64(copy) * 60)
        #expect(Double(WrittenExport.attribute("value", sample)!) == meters)
      }
    }
  }

  /// The sleep apps' export with the nights worth a look: Sleep Cycle's flat 12.0 h asleep on
  /// nights 7–13 (7 identical blocks in a week) and a 25-hour asleep typed in on night 26; the
  /// other nights as `iphone-sleep-apps` writes them.
  @Test func sleepAppsOdditiesHasAFlatWeekAndALongManualNight() throws {
    let export = try WrittenExport(.sleepAppsOddities)
    let plain = try WrittenExport(.iphoneSleepApps)
    func length(_ line: String) -> Int64 {
      WrittenExport.instant(WrittenExport.attribute("endDate", line)!)
        - WrittenExport.instant(WrittenExport.attribute("startDate", line)!)
    }
    let asleep = export.records("SleepAnalysis").filter { $0.contains("SleepAnalysisAsleep\"") }
    // Nights 7–13 are 12.0 h each; night 11's left-running 12 h is one of them, not an eighth.
    #expect(asleep.filter { $0.contains("\"Sleep Cycle\"") && length($0) == 12 * 3600 }.count == 7)
    let manual = asleep.filter { WrittenExport.attribute("sourceName", $0) == "Alex’s iPhone" }
    #expect(manual.count == 1 && manual.map(length) == [25 * 3600])
    let line = try #require(export.lines.firstIndex(of: manual[0]))
    #expect(export.lines[line + 1].contains("<MetadataEntry key=\"HKWasUserEntered\" value=\"1\"/>"))
    #expect(export.records("StepCount") == plain.records("StepCount"))
  }

  /// An iPhone without a Watch and two sleep apps, as in rgosdin's iOS 12 export and the sleep
  /// apps of SampleData/README.md, "Shapes of real exports".
  @Test func iphoneSleepAppsHasNoWatchAndNoStages() throws {
    let export = try WrittenExport(.iphoneSleepApps)
    #expect(export.records("HeartRate").isEmpty && export.records("ActiveEnergyBurned").isEmpty)
    #expect(export.workouts.isEmpty && !export.text.contains("<ActivitySummary "))
    #expect(!export.text.contains("sourceName=\"Alex’s Apple Watch\""))
    #expect(export.sources("StepCount") == ["Alex’s iPhone"])
    let sleep = export.records("SleepAnalysis")
    #expect(export.sources("SleepAnalysis") == ["Sleep Cycle", "Pillow"])
    let values = Set(sleep.compactMap { WrittenExport.attribute("value", $0) })
    #expect(
      values == [
        "HKCategoryValueSleepAnalysisInBed", "HKCategoryValueSleepAnalysisAsleep",
        "HKCategoryValueSleepAnalysisAsleepUnspecified",
      ])
    // Pillow's in-bed record twice, byte for byte: nights 0, 2, … 26 → 14 pairs.
    let pillowInBed = sleep.filter { $0.contains("\"Pillow\"") && $0.contains("SleepAnalysisInBed") }
    #expect(pillowInBed.count == 28 && Set(pillowInBed).count == 14)
    // Nights 3, 8, 13, 18, 23 in bed without sleep: Sleep Cycle writes 28 in-bed records, and
    // asleep for the other 23 nights (night 11 the 12-hour one).
    let sleepCycle = sleep.filter { $0.contains("\"Sleep Cycle\"") }
    #expect(sleepCycle.filter { $0.contains("SleepAnalysisInBed") }.count == 28)
    let asleep = sleepCycle.filter { $0.contains("SleepAnalysisAsleep\"") }
    #expect(asleep.count == 23)
    #expect(
      asleep.contains { line in
        WrittenExport.instant(WrittenExport.attribute("endDate", line)!)
          - WrittenExport.instant(WrittenExport.attribute("startDate", line)!) == 12 * 3600
      })
  }

  /// An iOS 10 export: manual entries and Runtastic's overlapping distance, as in paulstaab's.
  @Test func ios10HasManualEntriesAndThirdPartyRuns() throws {
    let export = try WrittenExport(.ios10)
    #expect(export.text.contains("startDate=\"2017-01-02 "))
    #expect(!export.text.contains("sourceName=\"Alex’s Apple Watch\""))
    for type in ["StepCount", "SleepAnalysis", "BodyMass"] {
      #expect(
        export.lines.contains { $0.contains("TypeIdentifier\(type)\"") && $0.hasSuffix("\">") },
        "\(type) typed in by hand")
    }
    #expect(export.text.components(separatedBy: "key=\"HKWasUserEntered\"").count > 10)
    #expect(export.sources("SleepAnalysis") == ["Mi Fit", "Alex’s iPhone"])
    let runs = export.workouts
    #expect(!runs.isEmpty && runs.allSatisfy { $0.contains("sourceName=\"Runtastic\"") })
    #expect(export.records("DistanceWalkingRunning").filter { $0.contains("\"Runtastic\"") }.count == 3 * runs.count)
  }

  /// The multisport profile is the Watch export with its Saturday rides saved as triathlons: a
  /// `SwimBikeRun` workout whose five activities — swim, transition, ride, transition, run — tile
  /// it, each with its own type, Segment event and statistics, the distances again at workout level.
  @Test func multisportSavesTheRidesAsTriathlons() throws {
    let export = try WrittenExport(.multisport)
    let watch = try WrittenExport(.watch)
    #expect(export.workouts.count == watch.workouts.count)
    var triathlons = 0
    var index = 0
    while index < export.lines.count {
      defer { index += 1 }
      let line = export.lines[index]
      guard line.hasPrefix(" <Workout "), line.contains("HKWorkoutActivityTypeSwimBikeRun") else { continue }
      triathlons += 1
      let end = export.lines[index...].firstIndex(of: " </Workout>")!
      let body = export.lines[index...end]
      let activities = body.filter { $0.hasPrefix("  <WorkoutActivity ") }
      #expect(
        activities.map { WrittenExport.attribute("workoutActivityType", $0)! } == [
          "HKWorkoutActivityTypeSwimming", "HKWorkoutActivityTypeTransition", "HKWorkoutActivityTypeCycling",
          "HKWorkoutActivityTypeTransition", "HKWorkoutActivityTypeRunning",
        ])
      let starts = activities.map { WrittenExport.instant(WrittenExport.attribute("startDate", $0)!) }
      let ends = activities.map { WrittenExport.instant(WrittenExport.attribute("endDate", $0)!) }
      #expect(starts.first == WrittenExport.instant(WrittenExport.attribute("startDate", line)!))
      #expect(ends.last == WrittenExport.instant(WrittenExport.attribute("endDate", line)!))
      #expect(Array(starts.dropFirst()) == Array(ends.dropLast()))
      // Each distance at workout level (two spaces in) repeats the one activity's (three).
      for type in ["DistanceSwimming", "DistanceCycling", "DistanceWalkingRunning"] {
        let sums = body.filter { $0.contains("TypeIdentifier\(type)\"") }.map { line in
          (line.hasPrefix("   "), WrittenExport.attribute("sum", line)!)
        }
        #expect(sums.count == 2 && sums[0].0 && !sums[1].0 && sums[0].1 == sums[1].1, "\(type)")
      }
      #expect(body.filter { $0.hasPrefix("   <WorkoutEvent ") }.count == 5)
      #expect(body.filter { $0.hasPrefix("  <WorkoutEvent ") }.count == 5)
    }
    #expect(triathlons >= 2)
  }

  /// The iOS 8–9 format, as SampleData/README.md, "Shapes of real exports", describes it: no DTD, `source=`, compact dates, and
  /// Health Mate's metadata attributes with spaces in their names.
  @Test func ios8WritesTheOldFormat() throws {
    let export = try WrittenExport(.ios8, days: 7)
    #expect(!export.text.contains("<!DOCTYPE"))
    #expect(!export.text.contains("sourceName="))
    #expect(export.text.contains("<ExportDate value=\"20150309"))
    let steps = export.records("StepCount")
    #expect(!steps.isEmpty)
    for line in steps + export.workouts {
      let start = try #require(WrittenExport.attribute("startDate", line))
      #expect(start.utf8.count == 19 && HealthDateParser.parse(start) != nil, "\(start)")
      #expect(WrittenExport.attribute("source", line) != nil)
    }
    let weights = export.records("BodyMass")
    #expect(!weights.isEmpty)
    #expect(
      weights.allSatisfy { $0.contains(" Health Mate App Version=\"2.6.2\" Withings User Identifier=\"4711\"/>") })
    #expect(!export.workouts.isEmpty && export.workouts.allSatisfy { $0.contains("source=\"Runtastic\"") })
  }

  /// The rest of the "Older formats" (SampleData/README.md, "Shapes of real exports"): sleep values as numbers, Jawbone UP's
  /// records without a value, Withings' `Sleep Stage`, heart rate as day aggregates in count/s,
  /// `recordCount` and `sessionId`, and each date at its own offset with no `HKTimeZone`. Sixty
  /// days from 2015-03-02 cross the 2015-03-29 spring-forward.
  @Test func ios8WritesTheShapesOfTheEra() throws {
    let export = try WrittenExport(.ios8, days: 60)
    let berlin = try ZoneRules.load("Europe/Berlin")
    #expect(export.text.contains("<HealthData locale=\"en_DE\">"))
    #expect(!export.text.contains("HKTimeZone"))
    var offsets = Set<Int32>()
    for line in export.lines where line.hasPrefix(" <Record ") || line.hasPrefix(" <Workout ") {
      for name in ["startDate", "endDate"] {
        let text = try #require(WrittenExport.attribute(name, line))
        let date = try #require(HealthDateParser.parse(text))
        #expect(date.offsetSeconds == berlin.offset(at: date.instant), "\(line)")
        offsets.insert(date.offsetSeconds)
      }
    }
    #expect(offsets == [3600, 7200])

    let sleep = export.records("SleepAnalysis")
    func from(_ source: String) -> [String] { sleep.filter { WrittenExport.attribute("source", $0) == source } }
    #expect(Set(sleep.compactMap { WrittenExport.attribute("value", $0) }) == ["0", "1"])
    let miFit = from("Mi Fit")
    #expect(!miFit.isEmpty && miFit.allSatisfy { WrittenExport.attribute("value", $0) == "1" })
    #expect(miFit.allSatisfy { WrittenExport.attribute("sessionId", $0) != nil })
    let typedIn = from("Alex’s iPhone")
    #expect(!typedIn.isEmpty && typedIn.allSatisfy { $0.hasSuffix(" value=\"0\" HKWasUserEntered=\"1\"/>") })
    let jawbone = from("Jawbone UP")
    #expect(!jawbone.isEmpty && jawbone.allSatisfy { WrittenExport.attribute("value", $0) == nil })
    let withings = from("Health Mate")
    #expect(Set(withings.compactMap { WrittenExport.attribute("Sleep Stage", $0) }) == ["Light", "Deep"])
    #expect(withings.allSatisfy { WrittenExport.attribute("value", $0) == nil })

    let heartRate = export.records("HeartRate")
    #expect(heartRate.count > 30)
    var aggregatesOfSeveral = 0
    for line in heartRate {
      #expect(WrittenExport.attribute("source", line) == "Sleep Cycle")
      #expect(WrittenExport.attribute("unit", line) == "count/s")
      #expect(WrittenExport.attribute("value", line) == nil)
      let low = try #require(WrittenExport.attribute("min", line).flatMap(Double.init))
      let high = try #require(WrittenExport.attribute("max", line).flatMap(Double.init))
      let average = try #require(WrittenExport.attribute("average", line).flatMap(Double.init))
      let count = try #require(WrittenExport.attribute("recordCount", line).flatMap(Int.init))
      #expect(low <= average && average <= high && (1...3).contains(count), "\(line)")
      // Beats per second: 40–100 bpm.
      #expect(low >= 40.0 / 60 && high <= 100.0 / 60, "\(line)")
      if count == 1 { #expect(low == high && high == average, "\(line)") } else { aggregatesOfSeveral += 1 }
    }
    #expect(aggregatesOfSeveral > 3)
    let phoneSteps = export.records("StepCount").filter { !$0.contains("HKWasUserEntered") }
    #expect(!phoneSteps.isEmpty && phoneSteps.allSatisfy { WrittenExport.attribute("recordCount", $0) == "1" })
  }

  /// Past the writer's 1 MB buffer, which is flushed between two dates: every compact date stays
  /// whole and in its place.
  @Test func ios8DatesSurviveTheWritersFlushes() throws {
    let export = try WrittenExport(.ios8, days: 150)
    #expect(export.text.utf8.count > 1 << 20)
    var dates = 0
    for line in export.lines where line.hasPrefix(" <Record ") {
      for name in ["startDate", "endDate"] {
        let date = try #require(WrittenExport.attribute(name, line), "\(line)")
        #expect(date.utf8.count == 19 && HealthDateParser.parse(date) != nil, "\(line)")
        dates += 1
      }
    }
    #expect(dates > 10_000)
  }

  /// A running app's shapes, as SampleData/README.md, "Shapes of real exports", lists them for third-party workout apps, 28 days from Monday
  /// 2024-03-18: day 9 (Wed 03-27) has no steps and five 4 km entries 18:00–19:30; day 16
  /// (Wed 04-03) a 5.5 km run in 341 s; day 20 (Sun 04-07) a 7,200 s run of 18 km in five 3.6 km
  /// lumps of 20 s, 1,500 s apart; each routine run three whole-distance samples a minute apart.
  @Test func thirdPartyWorkoutsHasTheRunningAppsShapes() throws {
    let export = try WrittenExport(.thirdPartyWorkouts)
    func span(_ line: String) -> (start: Int64, end: Int64) {
      (
        WrittenExport.instant(WrittenExport.attribute("startDate", line)!),
        WrittenExport.instant(WrittenExport.attribute("endDate", line)!)
      )
    }
    let app = export.records("DistanceWalkingRunning").filter { $0.contains("sourceName=\"Runkeeper\"") }
    func value(_ line: String) -> Double { Double(WrittenExport.attribute("value", line)!)! }

    // Day 9: no step, five 4 km entries starting 15 minutes apart, 18:00 to 19:30 (+0100).
    #expect(!export.records("StepCount").contains { $0.contains("startDate=\"2024-03-27") })
    let entries = app.filter { $0.contains("startDate=\"2024-03-27") }
    #expect(entries.map(value) == [4000, 4000, 4000, 4000, 4000])
    let first = WrittenExport.instant("2024-03-27 18:00:00 +0100")
    #expect(entries.map { span($0).start } == [0, 900, 1800, 2700, 3600].map { first + $0 })
    #expect(entries.last.map { span($0).end } == first + 90 * 60)

    let workouts = export.workouts
    // The impossible run: 5.5 km in 341 s, one sample over it.
    let fast = workouts.filter { WrittenExport.attribute("totalDistance", $0) == "5.5" }
    let fastRun = try #require(fast.first)
    #expect(fast.count == 1 && span(fastRun).end - span(fastRun).start == 341)
    #expect(app.filter { span($0) == span(fastRun) }.map(value) == [5500])
    // The long run: 18 km in 2 h, its distance five 3.6 km lumps of 20 s, 25 minutes apart.
    let long = try #require(workouts.first { WrittenExport.attribute("totalDistance", $0) == "18" })
    let run = span(long)
    #expect(run.end - run.start == 7200)
    let lumps = app.filter { span($0).start >= run.start && span($0).end <= run.end }
    #expect(lumps.map(value) == [3600, 3600, 3600, 3600, 3600])
    #expect(lumps.map { span($0).start - run.start } == [60, 1560, 3060, 4560, 6060])
    #expect(lumps.allSatisfy { span($0).end - span($0).start == 20 })

    // The routine runs: three samples each holding the whole distance, the last two past the end.
    let routine = workouts.filter { $0 != long && $0 != fastRun }
    #expect(routine.count >= 3 && workouts.allSatisfy { $0.contains("sourceName=\"Runkeeper\"") })
    #expect(app.count == 3 * routine.count + 5 + 1 + 5)
    for workout in routine {
      let meters = Double(WrittenExport.attribute("totalDistance", workout)!)! * 1000
      let copies = app.filter { span($0).start >= span(workout).start && span($0).start <= span(workout).start + 120 }
      #expect(copies.map(value) == [meters, meters, meters])
      #expect(copies.map { span($0).end - span(workout).end } == [0, 60, 120])
    }

    // Headphone audio during the runs, a sample per 10 minutes (the long run 12, the short one
    // 1), measured by AirPods named as a product with a model number or by their code alone.
    let audio = export.records("HeadphoneAudioExposure")
    let expected = workouts.reduce(0) { sum, workout in sum + Int((span(workout).end - span(workout).start + 599) / 600)
    }
    #expect(audio.count == expected)
    let byName = audio.filter { $0.contains("name:AirPods Pro, manufacturer:Apple Inc., model:A2084") }
    let byCode = audio.filter { $0.contains("name:0x200f, manufacturer:Apple Inc., model:0x200f") }
    #expect(!byName.isEmpty && !byCode.isEmpty && byName.count + byCode.count == audio.count)
  }

  /// The families of food, glucose and blood-pressure apps, 28 days: three meals a day (84 `Food`
  /// correlations of 4 members, each member also at top level); mySugr before each meal (84, mg/dL)
  /// and OneTouch Reveal on even days (14, mmol/L); OMRON's readings on even days (14 correlations)
  /// and Qardio's systolic without diastolic on day 5; Renpho on days 1, 4, … 25 (9) and EufyLife's
  /// BMI on days 3, 10, 17, 24 (4); headphones twice a day (56) and the Watch's environment every
  /// half hour 9:00–21:00 (24 × 28 = 672); cycling on the 20 weekdays; 21 sources.
  @Test func foodGlucoseBPHasTheFamilies() throws {
    let export = try WrittenExport(.foodGlucoseBP)
    let food = export.lines.filter { $0.hasPrefix(" <Correlation type=\"HKCorrelationTypeIdentifierFood\"") }
    #expect(food.count == 84)
    let nested = export.lines.filter { $0.hasPrefix("  <Record type=\"HKQuantityTypeIdentifierDietary") }
    #expect(nested.count == 4 * 84)
    var topLevel: [String] = []
    for type in ["DietaryEnergyConsumed", "DietaryCarbohydrates", "DietaryProtein", "DietaryFatTotal"] {
      #expect(export.records(type).count == 84, "\(type)")
      topLevel += export.records(type)
    }
    #expect(
      Set(topLevel.map { $0.trimmingCharacters(in: .whitespaces) })
        == Set(nested.map { $0.trimmingCharacters(in: .whitespaces) }))

    let glucose = export.records("BloodGlucose")
    #expect(glucose.filter { $0.contains("sourceName=\"mySugr\" sourceVersion=\"3.96.1\" unit=\"mg/dL\"") }.count == 84)
    #expect(
      glucose.filter {
        $0.contains("sourceName=\"OneTouch Reveal\"") && $0.contains("unit=\"mmol&lt;180.1558800000541&gt;/L\"")
      }.count == 14)
    #expect(glucose.count == 98)

    let pressure = export.lines.filter {
      $0.hasPrefix(" <Correlation type=\"HKCorrelationTypeIdentifierBloodPressure\"")
    }
    #expect(pressure.count == 14 && pressure.allSatisfy { $0.contains("sourceName=\"OMRON connect\"") })
    #expect(export.records("BloodPressureSystolic").count == 15 && export.records("BloodPressureDiastolic").count == 14)
    #expect(export.sources("BloodPressureSystolic") == ["OMRON connect", "Qardio"])
    #expect(export.sources("BloodPressureDiastolic") == ["OMRON connect"])

    #expect(export.records("BodyFatPercentage").count == 9 && export.records("LeanBodyMass").count == 9)
    #expect(export.records("BodyMassIndex").count == 13)
    #expect(export.records("BodyFatPercentage").allSatisfy { $0.contains("unit=\"%\" ") && $0.contains("value=\"0.") })
    let mobility = [
      "WalkingSpeed", "WalkingStepLength", "WalkingAsymmetryPercentage", "WalkingDoubleSupportPercentage",
    ]
    let walks = export.records(mobility[0]).count
    #expect(walks > 28)
    for type in mobility {
      #expect(export.records(type).count == walks && export.sources(type) == ["Alex’s iPhone"], "\(type)")
    }
    #expect(export.records("HeadphoneAudioExposure").count == 56)
    #expect(export.records("HeadphoneAudioExposure").allSatisfy { $0.contains("name:AirPods Pro") })
    #expect(export.records("EnvironmentalAudioExposure").count == 672)
    #expect(export.records("DistanceCycling").count == 20)
    #expect(export.sources("DistanceCycling") == ["Strava", "Wahoo", "Zwift", "Connect"])

    let names = Set(export.lines.compactMap { WrittenExport.attribute("sourceName", $0) })
    #expect(names.count == 21, "\(names.sorted())")
  }
}
