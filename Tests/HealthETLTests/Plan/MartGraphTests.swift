import Foundation
import Testing

@testable import HealthETL

/// The run's graph: products matched to their readers, providers added where no job's mart
/// provides one, requests handed over, finishes ordered.
@Suite struct MartGraphTests {
  /// Products of the fake marts below.
  struct Nights: MartProduct {}
  struct Days: MartProduct {
    struct Request { var columns: [String] }
  }

  /// A mart that provides and reads what it is told, and keeps what it was asked.
  final class Fake: Mart {
    let name: String
    let provides: [ProductKey]
    var needs: [ProductNeed]
    var asked: [[String]] = []
    init(_ name: String, provides: [ProductKey] = [], needs: [ProductNeed] = []) {
      self.name = name
      self.provides = provides
      self.needs = needs
    }
    func prepare(requests: ProductRequests) { asked = requests.of(Days.self).map(\.columns) }
    func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary] { [] }
  }

  /// A kind that makes a provider of `Nights` on demand.
  struct NightsKind: JobKind {
    var name: String { "nights" }
    var tables: [TableSchema] { [] }
    var keys: [String] { [] }
    func resolve(_ job: inout PipelineDefinition.Job, in pipeline: PipelineDefinition) throws(ConfigFileError)
      -> any JobWork
    { preconditionFailure("not planned") }
    func makeProvider(of product: ProductKey, build: MartBuild) -> (any Mart)? {
      product == ProductKey(Nights.self) ? Fake("nights (added)", provides: [product]) : nil
    }
  }

  static func names(_ marts: RunMarts) -> [String] { marts.marts.map { ($0 as! Fake).name } }

  static func build() throws -> (MartBuild, () -> Void) {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("healthetl-graph-\(UUID().uuidString)")
    let transaction = try OutputTransaction(outputDirectory: folder.path)
    return (
      MartBuild(transaction: transaction, tableSinks: TableSinks()),
      {
        transaction.abandon()
        try? FileManager.default.removeItem(at: folder)
      }
    )
  }

  @Test func aMartFinishesAfterWhatItReadsAndTheRestKeepTheirOrder() throws {
    let (build, cleanUp) = try Self.build()
    defer { cleanUp() }
    let nights = ProductKey(Nights.self)
    let days = ProductKey(Days.self)
    // Listed in the worst order: readers first.
    let report = Fake(
      "report", needs: [ProductNeed(Days.self, request: .init(columns: ["steps"])), ProductNeed(Nights.self)])
    let daily = Fake("daily", provides: [days], needs: [ProductNeed(Nights.self)])
    let sleep = Fake("sleep", provides: [nights])
    let samples = Fake("samples")
    let marts = try MartGraph.wire([report, daily, sleep, samples], build: build, kinds: [])
    // Each step takes the first ready mart in the listed order: sleep (report and daily wait),
    // then daily (listed before samples), then report (listed first), then samples.
    #expect(Self.names(marts) == ["sleep", "daily", "report", "samples"])
    // The provider got its reader's request; a mart nobody reads got none.
    #expect(daily.asked == [["steps"]])
    #expect(sleep.asked == [] && samples.asked == [])
  }

  @Test func theFirstProviderInPlanOrderServesEveryReader() throws {
    let (build, cleanUp) = try Self.build()
    defer { cleanUp() }
    let days = ProductKey(Days.self)
    let first = Fake("first", provides: [days])
    let second = Fake("second", provides: [days])
    let reader = Fake("reader", needs: [ProductNeed(Days.self, request: .init(columns: ["a"]))])
    let marts = try MartGraph.wire([first, second, reader], build: build, kinds: [])
    #expect(first.asked == [["a"]] && second.asked == [])
    #expect(Self.names(marts) == ["first", "second", "reader"])
  }

  @Test func aMissingProviderIsAddedByItsKindUnlessTheNeedIsOptional() throws {
    let (build, cleanUp) = try Self.build()
    defer { cleanUp() }
    let daily = Fake("daily", needs: [ProductNeed(Nights.self)])
    let marts = try MartGraph.wire([daily], build: build, kinds: [NightsKind()])
    #expect(Self.names(marts) == ["nights (added)", "daily"])
    let optional = Fake("optional", needs: [ProductNeed(Nights.self, optional: true)])
    #expect(Self.names(try MartGraph.wire([optional], build: build, kinds: [NightsKind()])) == ["optional"])
    // No kind provides it: a defect, named.
    #expect(throws: MartGraph.WiringError.self) {
      try MartGraph.wire([Fake("daily", needs: [ProductNeed(Nights.self)])], build: build, kinds: [])
    }
  }

  @Test func aCircleIsADefectNamed() throws {
    #expect(throws: MartSchedule.Failure.cycle(["a", "b"])) {
      try MartSchedule.finishOrder(reads: [[1], [0], []], names: ["a", "b", "c"])
    }
    // A mart named twice is one input.
    #expect(try MartSchedule.finishOrder(reads: [[1, 1], []], names: ["daily", "sleep"]) == [1, 0])
  }

  /// The run's own graph, from the shipped default pipeline: the job marts in job order (daily
  /// is listed first but reads sleep, workouts and the statistics), then the mindful mart the
  /// run adds for daily's `mindful_min` (the pipeline has no mindful job), daily, the report last;
  /// the report reads the marts the jobs made (no second sleep or workouts mart of its own).
  @Test func theDefaultPipelineFinishesInTheDocumentedOrder() throws {
    let (build, cleanUp) = try Self.build()
    defer { cleanUp() }
    let repository = StageHarness.repository
    let plan = try RunPlanner.plan([
      try PipelineDecoder.load(repository.appendingPathComponent("Pipelines/default.json").path)
    ])
    let marts = try MartGraph.marts(for: plan, build: build)
    #expect(
      marts.marts.map { String(describing: type(of: $0)) } == [
        "SleepMart", "WorkoutMart", "ElectrocardiogramMart", "StatisticsMart", "MindfulMart", "DailyMart",
        "ReportMart",
      ])
  }
}
