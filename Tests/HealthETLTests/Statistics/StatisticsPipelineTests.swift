import Foundation
import HealthETL
import Testing

/// Statistics jobs built from pipeline files (`StatisticsQuery(pipelineJob:)`).
@Suite struct StatisticsPipelineTests {
  static let pipelines = StageHarness.repository.appendingPathComponent("Pipelines")

  @Test func theShippedStatsPipelineIsTheDefaultJobs() throws {
    let definition = try PipelineDecoder.load(Self.pipelines.appendingPathComponent("stats.json").path)
    let jobs = try definition.jobs.map { job throws(StatisticsQueryError) in try StatisticsQuery(pipelineJob: job) }
    #expect(jobs == StatsFixture.defaultQueries)
  }

  @Test func everyShippedStatisticsJobIsValid() throws {
    for file in ["default.json", "heart-rate.json", "swimming.json", "stats.json"] {
      let definition = try PipelineDecoder.load(Self.pipelines.appendingPathComponent(file).path)
      for job in definition.jobs where job.kind is StatisticsJobKind {
        #expect(throws: Never.self, "\(file) \(job.name)") { try StatisticsQuery(pipelineJob: job) }
      }
    }
  }

  @Test func bucketsOutputsBecomeDestinationsAndErrorsNameTheirKey() throws {
    let text = """
      {"version": 1, "name": "t", "jobs": [
        {"name": "steps", "kind": "statistics", "type": "StepCount", "interval": "1d", "options": ["sum"],
         "separateBySource": true, "anchor": "2024-01-01T03:00",
         "outputs": [{"table": "buckets", "file": "s/steps.json", "format": "json"}]},
        {"name": "bad", "kind": "statistics", "type": "HeartRate", "interval": "1h", "options": ["sum"]}
      ]}
      """
    let definition = try PipelineDecoder.decode(Data(text.utf8), path: "t.json")
    let steps = try StatisticsQuery(pipelineJob: definition.jobs[0])
    #expect(steps.destinations == [.init(file: "s/steps.json", format: .json)])
    #expect(steps.separateBySource && steps.anchor.description == "2024-01-01T03:00")
    do {
      _ = try StatisticsQuery(pipelineJob: definition.jobs[1])
      Issue.record("sum of HeartRate accepted")
    } catch {
      #expect(error.job == "bad" && error.field == "options")
    }
  }
}
