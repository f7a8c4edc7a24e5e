import Foundation
import Testing

/// A run's threads belong to one executor (Sources/README.md, "Who runs on which thread"): however many tables it
/// writes, the process never has more than 8 threads, counted from outside in /proc.
@Suite struct ThreadCountTests {
  /// The most tasks /proc/<pid>/task listed while `process` ran, sampled every millisecond.
  static func peakThreads(of process: Process) -> Int {
    var peak = 0
    while process.isRunning {
      let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/task"))
      peak = max(peak, tasks?.count ?? 0)
      usleep(1000)
    }
    return peak
  }

  /// Runs `healthetl run` over `export` with a pipeline of `jobs` (JSON objects), its output in
  /// `work/out`; its exit status and the most threads it had at once.
  static func run(jobs: [String], export: String, in work: URL) throws -> (status: Int32, peak: Int, out: String) {
    let pipeline = work.appendingPathComponent("pipeline.json").path
    try Data((#"{"version":1,"name":"threads","jobs":["# + jobs.joined(separator: ",") + "]}").utf8).write(
      to: URL(fileURLWithPath: pipeline))
    let out = work.appendingPathComponent("out").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CLI.binary)
    process.arguments = ["run", "--quiet", "--pipeline", pipeline, "--out", out, export]
    try process.run()
    let peak = peakThreads(of: process)
    process.waitUntilExit()
    return (process.terminationStatus, peak, out)
  }

  /// 40 heart-rate-per-minute tables (each long enough to be encoded on the pool) and the daily
  /// table with its workbook: main used to start a thread per table, 40 and more at once. Now at
  /// most 8, and every table holds the same rows in the same order (the lanes keep order).
  @Test(.timeLimit(.minutes(10))) func manyLongTablesShareAFewThreads() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let export = work.appendingPathComponent("export.zip").path
    #expect(try CLI.run(["sample", "--days", "20", "--seed", "5", "--zip", "--out", export]).status == 0)
    let jobs =
      (0..<40).map {
        #"{"name":"hr\#($0)","kind":"statistics","type":"HeartRate","interval":"1m","options":["max"]}"#
      } + [#"{"name":"daily","kind":"daily"}"#]
    let (status, peak, out) = try Self.run(jobs: jobs, export: export, in: work)
    #expect(status == 0)
    #expect(peak >= 2, "the sampling saw the run")
    #expect(peak <= 8, "peak \(peak) threads")

    let first = try Data(contentsOf: URL(fileURLWithPath: out + "/stats/hr0.csv"))
    #expect(first.split(separator: UInt8(ascii: "\n")).count > 2048 * 2, "long enough for several batches")
    for index in 1..<40 {
      #expect(try Data(contentsOf: URL(fileURLWithPath: out + "/stats/hr\(index).csv")) == first, "hr\(index)")
    }
  }

  /// The route and ECG files are read during the parse, each on a thread of its own, beside the
  /// parse's two and the zip's hash: five workouts jobs still add one routes thread (the others
  /// read in their finish), a third kind of file (clinical records) reads in its finish, and the
  /// run stays within 8 threads with the database and the workbook.
  @Test(.timeLimit(.minutes(10))) func filesBesideTheExportAddOneThreadEach() throws {
    let work = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: work) }
    let export = work.appendingPathComponent("export.zip").path
    #expect(
      try CLI.run(["sample", "--seed", "5", "--routes", "6", "--ecgs", "4", "--zip", "--out", export])
        .status == 0)
    let jobs =
      (0..<5).map { #"{"name":"w\#($0)","kind":"workouts","outputs":[{"table":"route_points","file":"r\#($0).csv"}]}"# }
      + [
        #"{"name":"ecg","kind":"electrocardiograms"}"#, #"{"name":"daily","kind":"daily"}"#,
        #"{"name":"hr","kind":"statistics","type":"HeartRate","interval":"1m","options":["max"]}"#,
        #"{"name":"clinical","kind":"clinical-records"}"#,
      ]
    let (status, peak, out) = try Self.run(jobs: jobs, export: export, in: work)
    #expect(status == 0)
    #expect(peak >= 2, "the sampling saw the run")
    #expect(peak <= 8, "peak \(peak) threads")
    // Each job got every point: the one read during the parse and the four read in their finish.
    let first = try Data(contentsOf: URL(fileURLWithPath: out + "/r0.csv"))
    #expect(first.split(separator: UInt8(ascii: "\n")).count > 6 * 60, "six routes of a point a second")
    for index in 1..<5 {
      #expect(try Data(contentsOf: URL(fileURLWithPath: out + "/r\(index).csv")) == first, "r\(index)")
    }
    let samples = try String(contentsOf: URL(fileURLWithPath: out + "/ecg_samples.csv"), encoding: .utf8)
    #expect(samples.split(separator: "\n").count == 1 + 4 * 30 * 512)
  }
}
