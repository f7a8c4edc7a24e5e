import HealthModel

/// Builds the stages a plan asks for, for one run's output transaction. Everything that can be
/// wrong with a job was refused by the planner (which checks every output file against every
/// other), so the one error left is a defect, reported rather than trapped.
enum StageFactory {
  static func stages(for plan: RunPlan, transaction: OutputTransaction) throws(ConfigFileError) -> [any OutputStage] {
    var stages: [any OutputStage] = []
    // Every statistics query goes to one stage: one spill and one merge per type for all of them.
    var queries: [StatisticsQuery] = []
    var report: (file: String, template: String, library: String)?
    // `daily.csv` repeats the other outputs: their stages hand it their results. The report shows
    // its days, so a report job gets a daily mart that writes no file when there is no daily job.
    let dailyJobs = plan.jobs.filter { $0.kind == .daily }
    let daily = dailyJobs.isEmpty && !plan.jobs.contains { $0.kind == .report } ? nil : DailyCollector()
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
      case .report(let template, let library):
        report = (job.outputs.first?.file ?? ReportTables.page.defaultFile, template, library)
      }
    }
    var reportMart: ReportMart?
    var taps: [StatisticsMart.Tap] = []
    if let report {
      let page: ReportPage
      do { page = try ReportPage(templatePath: report.template, libraryPath: report.library) } catch {
        throw ConfigFileError(file: report.template, message: error.description)
      }
      let mart = ReportMart(
        transaction: transaction, page: page, file: report.file,
        sleep: stages.lazy.compactMap { $0 as? SleepMart }.first,
        workouts: stages.lazy.compactMap { $0 as? WorkoutMart }.first)
      // A statistic the run computes anyway is shared; one it does not is added without files.
      taps = mart.statisticsTaps { type, interval, option in
        if let index = queries.firstIndex(where: {
          $0.type.shortName == type && $0.interval == BucketInterval(interval) && !$0.separateBySource
            && $0.anchor == BucketAnchor.defaultAnchor(for: $0.interval) && $0.options.contains(option)
        }) {
          return index
        }
        // Built from constants that are valid, so this cannot fail.
        queries.append(
          try! StatisticsQuery(
            name: "report-\(type)-\(interval)-\(option.rawValue)", type: type, interval: interval,
            options: [option.rawValue],
            destinations: []))
        return queries.count - 1
      }
      reportMart = mart
    }
    if !queries.isEmpty || daily != nil {
      do {
        let statistics = try StatisticsMart(jobs: queries, transaction: transaction, taps: taps, daily: daily)
        statistics.streamObserver = reportMart?.statisticsObserver
        reportMart?.streamedTypes = Set(statistics.streamTypeNames)
        stages.append(statistics)
      } catch {
        throw ConfigFileError(file: plan.pipelines.map(\.path).joined(separator: ", "), message: error.description)
      }
    }
    if let daily {
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
      let dailyMart = DailyMart(
        transaction: transaction,
        destinations: dailyJobs.flatMap { job in
          job.outputs.map { DailyMart.Destination(table: .daily, file: $0.file, format: $0.format) }
        },
        collector: daily, ownStages: own)
      reportMart?.daily = dailyMart
      stages.append(dailyMart)
    }
    // Last: it reads what the other marts computed in their own finish.
    if let reportMart { stages.append(reportMart) }
    return stages
  }
}
