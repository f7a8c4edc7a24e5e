import Foundation
import HealthETL
import HealthExtract
import Synchronization
import Testing

/// Samples the resident set size every few milliseconds on a thread of its own: the process's
/// `ru_maxrss` is dominated by a fixed start-up peak, so it cannot show a stage's share.
final class ResidentSampler: Sendable {
  private let state = Mutex<(running: Bool, peakPages: Int)>((true, 0))

  static func residentPages() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    return Int(text.split(separator: " ")[1]) ?? 0
  }

  func start() {
    let thread = Thread { [self] in
      while state.withLock({ $0.running }) {
        let pages = Self.residentPages()
        state.withLock { $0.peakPages = max($0.peakPages, pages) }
        usleep(2000)
      }
    }
    thread.start()
  }

  /// Stops sampling; the peak in MB.
  func stop() -> Double {
    let pages = state.withLock { state in
      state.running = false
      return max(state.peakPages, Self.residentPages())
    }
    return Double(pages * Int(sysconf(Int32(_SC_PAGESIZE)))) / 1_048_576
  }
}

/// Peak memory of the statistics stage on a large export, on demand only:
///
///     healthetl sample --target-mb 1000 --seed 7 --out /tmp/big.xml
///     HEALTHETL_STATS_MEMORY=/tmp/big.xml swift test --filter StatisticsMemory
///     HEALTHETL_STATS_MEMORY=/tmp/big.xml HEALTHETL_STATS_MEMORY_STAGE=0 swift test --filter StatisticsMemory
///
/// The second run parses without the stage: the difference of the two peaks is the stage's.
@Suite(
  .enabled(
    if: ProcessInfo.processInfo.environment["HEALTHETL_STATS_MEMORY"] != nil,
    "set HEALTHETL_STATS_MEMORY=<export> to measure the statistics stage's memory"))
struct StatisticsMemoryTests {
  @Test func peakMemoryOfTheDefaultJobs() throws {
    let environment = ProcessInfo.processInfo.environment
    let path = environment["HEALTHETL_STATS_MEMORY"]!
    let withStage = environment["HEALTHETL_STATS_MEMORY_STAGE"] != "0"
    let started = ContinuousClock.now
    let baseline = Double(ResidentSampler.residentPages() * Int(sysconf(Int32(_SC_PAGESIZE)))) / 1_048_576
    let sampler = ResidentSampler()
    sampler.start()
    var stage: StatisticsMart?
    let result = try StageHarness.run(.path(path), zone: .named("Europe/Berlin")) { transaction in
      guard withStage else { return [] }
      stage = try? StatisticsMart(jobs: StatsFixture.defaultQueries, transaction: transaction)
      return [stage!]
    }
    let peak = sampler.stop()
    defer { result.remove() }
    let rows = result.outputs.reduce(0) { $0 + $1.rows }
    print(
      "STATS-MEMORY stage=\(withStage) residentBeforeMB=\(baseline) residentPeakMB=\(peak) "
        + "maxrssMB=\(ExportRun.peakMemoryMB()) samples=\(stage?.spilledSamples ?? 0) "
        + "runs=\(stage?.spilledRuns ?? 0) rows=\(rows) seconds=\(ContinuousClock.now - started)")
  }
}
