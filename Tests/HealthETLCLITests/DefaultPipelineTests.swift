import Foundation
import Testing

/// `make run`'s job end to end: the default pipeline on the bundled sample.
@Suite struct DefaultPipelineTests {
  static let expectedFiles: Set<String> = [
    ".healthetl-state.json", ".healthetl-emitted", ".healthetl.lock", "run.json", "sleep_daily.csv",
    "sleep_sessions.csv", "workouts.csv",
    "workouts.json", "workout_records.json", "workout_records.new.json", "swim_laps.csv",
    "stats/heart-rate-per-minute.csv", "stats/steps-per-day.csv", "stats/walking-running-distance-per-day.csv",
    "stats/active-energy-per-day.csv", "stats/flights-per-day.csv", "stats/resting-heart-rate-per-day.csv",
    "stats/hrv-per-day.csv", "stats/swimming-distance-per-day.csv", "stats/swimming-strokes-per-day.csv",
    "stats/basal-energy-per-day.csv", "stats/exercise-time-per-day.csv", "stats/heart-rate-per-day.csv",
    "stats/walking-heart-rate-per-day.csv", "stats/respiratory-rate-per-day.csv", "stats/vo2max-per-day.csv",
    "stats/body-mass-per-day.csv", "daily.csv", "health.xlsx", "route_points.csv", "workout_splits.csv",
    "workout_activities.csv", "report.html", "ecg_recordings.csv", "ecg_samples.csv", "health.sqlite",
    "metadata.json",
  ]

  @Test func writesEveryOutputAndRerunsAreByteIdentical() throws {
    let (a, b) = try CLI.runTwice([CLI.sampleExport])
    #expect(Set(a.keys) == Self.expectedFiles.subtracting(["run.json"]))
    #expect(a == b)
    // The bundled sample has 17 workouts: the first run into a folder delivers all of them.
    let delta = try JSONSerialization.jsonObject(with: a["workout_records.new.json"]!) as? [String: Any]
    #expect((delta?["records"] as? [[String: String]])?.count == 17)
    #expect(delta?["sequence"] as? Int == 1)
    #expect(delta?["final"] as? Bool == true)
  }

  @Test func csvByteOrderMarkIsOptIn() throws {
    let out = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: out) }
    let bom = Data([0xEF, 0xBB, 0xBF])
    #expect(try CLI.run(["run", "--quiet", "--out", out.path, CLI.sampleExport]).status == 0)
    for file in ["sleep_daily.csv", "workouts.csv", "stats/steps-per-day.csv"] {
      #expect(try Data(contentsOf: out.appendingPathComponent(file)).prefix(3) != bom, "\(file)")
    }
    #expect(try CLI.run(["run", "--quiet", "--csv-bom", "--out", out.path, CLI.sampleExport]).status == 0)
    for file in ["sleep_daily.csv", "workouts.csv", "swim_laps.csv", "stats/steps-per-day.csv"] {
      #expect(try Data(contentsOf: out.appendingPathComponent(file)).prefix(3) == bom, "\(file)")
    }
    // JSON never gets a byte-order mark.
    #expect(try Data(contentsOf: out.appendingPathComponent("workouts.json")).first == UInt8(ascii: "["))
  }
}
