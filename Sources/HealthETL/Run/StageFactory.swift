/// Builds the stages a plan asks for, for one run's output transaction. Everything that can be
/// wrong with a job was refused by the planner (which checks every output file against every
/// other), so the one error left is a defect, reported rather than trapped.
enum StageFactory {
  static func stages(for plan: RunPlan, transaction: OutputTransaction) throws(ConfigFileError) -> [any OutputStage] {
    var stages: [any OutputStage] = []
    // Every statistics query goes to one stage: one spill and one merge per type for all of them.
    var queries: [StatisticsQuery] = []
    // `daily.csv` repeats the other outputs: their stages hand it their results.
    let dailyJobs = plan.jobs.filter { $0.kind == .daily }
    let daily = dailyJobs.isEmpty ? nil : DailyCollector()
    for job in plan.jobs {
      switch job.work {
      case .samples(let types):
        stages.append(
          SampleMart(
            transaction: transaction,
            destinations: job.outputs.map { SampleMart.Destination(file: $0.file, format: $0.format) }, types: types))
      case .sleep:
        stages.append(
          SleepMart(
            transaction: transaction,
            destinations: job.outputs.compactMap { output in
              SleepMart.Table(rawValue: output.table).map {
                SleepMart.Destination(table: $0, file: output.file, format: output.format)
              }
            }))
      case .workouts(let codes):
        stages.append(
          WorkoutMart(
            transaction: transaction, codes: codes,
            outputs: job.outputs.compactMap { output in
              WorkoutMart.Table(rawValue: output.table).map {
                WorkoutMart.Output(table: $0, file: output.file, format: output.format)
              }
            }))
      case .elements(let names):
        stages.append(
          ElementMart(
            transaction: transaction,
            destinations: job.outputs.map { .init(table: $0.table, file: $0.file, format: $0.format) }, names: names))
      case .statistics(let query):
        queries.append(query)
      case .daily:
        break
      }
    }
    if !queries.isEmpty || daily != nil {
      do { stages.append(try StatisticsMart(jobs: queries, transaction: transaction, daily: daily)) } catch {
        throw ConfigFileError(file: plan.pipelines.map(\.path).joined(separator: ", "), message: error.description)
      }
    }
    guard let daily else { return stages }
    // Without a sleep or workouts job, the daily stage runs one that writes nothing.
    var own: [any OutputStage] = []
    if let sleep = stages.lazy.compactMap({ $0 as? SleepMart }).first {
      sleep.daily = daily
    } else {
      let sleep = SleepMart(transaction: transaction, destinations: [])
      sleep.daily = daily
      own.append(sleep)
    }
    if let workouts = stages.lazy.compactMap({ $0 as? WorkoutMart }).first {
      workouts.daily = daily
    } else {
      let workouts = WorkoutMart(transaction: transaction, outputs: [])
      workouts.daily = daily
      own.append(workouts)
    }
    stages.append(
      DailyMart(
        transaction: transaction,
        destinations: dailyJobs.flatMap { job in
          job.outputs.map { DailyMart.Destination(table: .daily, file: $0.file, format: $0.format) }
        },
        collector: daily, ownStages: own))
    return stages
  }
}
