import Foundation
import Testing

@testable import HealthETL

/// The order of the marts' finishes, derived from what each reads.
@Suite struct MartScheduleTests {
  final class Mart: OutputStage {
    let name: String
    var reads: [any OutputStage]
    init(_ name: String, reads: [any OutputStage] = []) {
      self.name = name
      self.reads = reads
    }
    func finish(_ context: StageContext) throws(OutputError) -> [OutputSummary] { [] }
  }

  static func names(_ marts: [any OutputStage]) -> [String] { marts.map { ($0 as! Mart).name } }

  @Test func aMartFinishesAfterWhatItReadsAndTheRestKeepTheirOrder() throws {
    let sleep = Mart("sleep")
    let workouts = Mart("workouts")
    let statistics = Mart("statistics")
    let daily = Mart("daily", reads: [sleep, workouts, statistics])
    let report = Mart("report", reads: [daily, sleep, workouts, statistics])
    let samples = Mart("samples")
    // Listed in the worst order: readers first.
    let order = try MartSchedule.finishOrder([report, daily, sleep, samples, statistics, workouts])
    // report waits for daily, which waits for sleep, workouts, statistics; samples reads
    // nothing, so it comes as listed, after sleep (the first ready).
    #expect(Self.names(order) == ["sleep", "samples", "statistics", "workouts", "daily", "report"])
  }

  @Test func aMartNamedTwiceIsOneInput() throws {
    let sleep = Mart("sleep")
    let daily = Mart("daily", reads: [sleep, sleep])
    #expect(Self.names(try MartSchedule.finishOrder([daily, sleep])) == ["sleep", "daily"])
  }

  @Test func aCircleOrAMartNotFinishedIsADefectNamed() {
    let a = Mart("a")
    let b = Mart("b", reads: [a])
    a.reads = [b]
    let c = Mart("c")
    #expect(throws: MartSchedule.Failure.cycle(["Mart", "Mart"])) { try MartSchedule.finishOrder([c, a, b]) }
    let lone = Mart("lone")
    let reader = Mart("reader", reads: [lone])
    #expect(throws: MartSchedule.Failure.readsUnlisted(reader: "Mart", read: "Mart")) {
      try MartSchedule.finishOrder([reader])
    }
    // Break the circle, or the marts keep each other alive.
    a.reads = []
  }

  /// The run's own graph: a plan of sleep, workouts, a statistics job, daily and the report
  /// finishes the job marts in job order, then statistics, daily, the report; the report reads
  /// the marts the jobs made (no second sleep or workouts mart of its own).
  @Test func theRunsGraphDerivesTheDocumentedOrder() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("healthetl-graph-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder.path)
    defer { transaction.abandon() }
    var graph = MartGraph(transaction: transaction, feedsDaily: true, hasReport: true)
    graph.addSleep { SleepMart(destinations: [], daily: $0.daily) }
    graph.addWorkouts {
      WorkoutMart(transaction: $0.transaction, outputs: [], daily: $0.daily, keepsRouteShapes: $0.report)
    }
    graph.addStatistics(try StatisticsQuery(name: "steps", type: "StepCount", interval: "1d", options: ["sum"]))
    graph.addDaily([])
    let page = try ReportPage(
      template: Array("<!--HEALTHETL:CHART_JS--><!--HEALTHETL:REPORT_DATA-->".utf8), templatePath: "t", library: [],
      libraryPath: "c")
    graph.setReport(file: "report.html", page: page)
    let marts = try graph.marts(pipelines: [])
    #expect(
      marts.stages.map { String(describing: type(of: $0)) } == [
        "SleepMart", "WorkoutMart", "StatisticsMart", "DailyMart", "ReportMart",
      ])
    let report = try #require(marts.report)
    #expect(report.reads.count == 4)
    #expect(report.reads[0] === marts.stages[0] && report.reads[1] === marts.stages[1])
  }
}
