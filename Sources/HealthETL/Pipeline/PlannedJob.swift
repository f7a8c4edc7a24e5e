/// A job of the plan with everything its marts need worked out by its kind: output paths
/// normalized, the statistics query validated, the code table loaded.
public struct PlannedJob: Sendable {
  public var definition: PipelineDefinition.Job
  /// What the job's marts are given, and what its kind says about its tables.
  public var work: any JobWork

  public var name: String { definition.name }
  public var kind: any JobKind { definition.kind }
  public var outputs: [PipelineDefinition.Output] { definition.outputs }
}
