/// Builds the stages a plan asks for, for one run's output transaction.
enum StageFactory {
  static func stages(for plan: RunPlan, transaction: OutputTransaction) throws(PipelineError) -> [any OutputStage] {
    var stages: [any OutputStage] = []
    for job in plan.jobs {
      switch job.kind {
      case .samples:
        stages.append(
          SampleRowWriter(
            transaction: transaction,
            destinations: job.outputs.map { SampleRowWriter.Destination(file: $0.file, format: $0.format) },
            types: job.types.map(Set.init)))
      case .sleep, .workouts, .statistics:
        throw PipelineError(
          path: "", keyPath: job.name, message: "\(job.kind.rawValue) jobs are not available in this build yet")
      }
    }
    return stages
  }
}
