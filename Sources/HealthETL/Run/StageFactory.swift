/// Builds the stages a plan asks for, for one run's output transaction.
enum StageFactory {
  static func stages(for plan: RunPlan, transaction: OutputTransaction) throws(PipelineError) -> [any OutputStage] {
    var stages: [any OutputStage] = []
    // Every statistics job goes to one stage: one spill and one merge per type for all of them.
    var statistics: [StatisticsQuery] = []
    for job in plan.jobs {
      switch job.kind {
      case .samples:
        stages.append(
          SampleMart(
            transaction: transaction,
            destinations: job.outputs.map { SampleMart.Destination(file: $0.file, format: $0.format) },
            types: job.types.map(Set.init)))
      case .sleep:
        stages.append(
          SleepMart(
            transaction: transaction,
            destinations: job.outputs.compactMap { output in
              SleepMart.Table(rawValue: output.table).map {
                SleepMart.Destination(table: $0, file: output.file, format: output.format)
              }
            }))
      case .workouts:
        // A job without `codes` gets the built-in copy of the shipped table.
        var codes = WorkoutCodeTable.shipped
        if let path = job.codes {
          do { codes = try WorkoutCodeTable.load(path: path) } catch {
            throw PipelineError(path: error.file, keyPath: error.keyPath ?? "", message: error.detail)
          }
        }
        stages.append(
          WorkoutMart(
            transaction: transaction, codes: codes,
            outputs: job.outputs.compactMap { output in
              WorkoutMart.Table(rawValue: output.table).map {
                WorkoutMart.Output(table: $0, file: output.file, format: output.format)
              }
            }))
      case .elements:
        stages.append(
          ElementMart(
            transaction: transaction,
            destinations: job.outputs.map { .init(table: $0.table, file: $0.file, format: $0.format) },
            names: job.names.map(Set.init)))
      case .statistics:
        do { statistics.append(try StatisticsQuery(pipelineJob: job)) } catch {
          throw PipelineError(path: "", keyPath: "\(job.name).\(error.field)", message: error.description)
        }
      }
    }
    if !statistics.isEmpty {
      do { stages.append(try StatisticsMart(jobs: statistics, transaction: transaction)) } catch {
        throw PipelineError(path: "", keyPath: error.job, message: error.description)
      }
    }
    return stages
  }
}
