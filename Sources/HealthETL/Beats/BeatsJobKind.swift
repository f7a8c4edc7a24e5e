/// `beats`: beat-to-beat heart rate, and each HRV reading's SDNN and RMSSD (Pipelines/README.md,
/// "Beat-to-beat heart rate").
public struct BeatsJobKind: JobKind {
  public var name: String { "beats" }
  public var tables: [TableSchema] { HeartBeatMart.Table.allCases.map(\.schema) }
  public var keys: [String] { [] }

  public func resolve(_ job: inout PipelineDefinition.Job, in pipeline: PipelineDefinition) throws(ConfigFileError)
    -> any JobWork
  {
    Work(destinations: try job.resolveDestinations(HeartBeatMart.Table.self, file: pipeline.path))
  }

  struct Work: JobWork {
    var destinations: [HeartBeatMart.Destination]

    func mart(for job: PlannedJob, build: MartBuild) -> (any Mart)? {
      HeartBeatMart(transaction: build.transaction, destinations: destinations)
    }
  }
}
