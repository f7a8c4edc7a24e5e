import HealthModel

/// The marts of one run, as the jobs' kinds add them (`JobWork.addStages`), wired to what they
/// read from each other.
public struct MartGraph {
  /// The run's output transaction, which every mart writes through.
  public let transaction: OutputTransaction
  private var jobStages: [any OutputStage] = []
  /// Every statistics query goes to one mart: one spill and one merge per type for all of them.
  private var queries: [StatisticsQuery] = []
  /// Nil without a daily job.
  private var dailyDestinations: [DailyMart.Destination]?
  private var report: (file: String, page: ReportPage)?

  init(transaction: OutputTransaction) { self.transaction = transaction }

  /// A mart of one job, which reads the sample stream only.
  mutating func add(_ stage: any OutputStage) { jobStages.append(stage) }
  mutating func addStatistics(_ query: StatisticsQuery) { queries.append(query) }
  mutating func addDaily(_ destinations: [DailyMart.Destination]) {
    dailyDestinations = (dailyDestinations ?? []) + destinations
  }
  /// The last report job of the run wins.
  mutating func setReport(file: String, page: ReportPage) { report = (file, page) }

  /// Builds the marts a plan asks for, for one run's output transaction. Everything that can be
  /// wrong with a job was refused by the planner, so what is left is a file read now (a report's
  /// page) or a defect, reported rather than trapped.
  public static func stages(for plan: RunPlan, transaction: OutputTransaction) throws(ConfigFileError)
    -> [any OutputStage]
  {
    var graph = MartGraph(transaction: transaction)
    for job in plan.jobs { try job.work.addStages(for: job, to: &graph) }
    return try graph.stages(pipelines: plan.pipelines.map(\.path))
  }

  private func stages(pipelines: [String]) throws(ConfigFileError) -> [any OutputStage] {
    var stages = jobStages
    var queries = queries
    // `daily.csv` repeats the other outputs: their stages hand it their results. The report shows
    // its days, so a report job gets a daily mart that writes no file when there is no daily job.
    let daily = dailyDestinations == nil && report == nil ? nil : DailyCollector()
    var reportMart: ReportMart?
    var taps: [StatisticsMart.Tap] = []
    if let report {
      let mart = ReportMart(
        transaction: transaction, page: report.page, file: report.file,
        sleep: stages.lazy.compactMap { $0 as? SleepMart }.first,
        workouts: stages.lazy.compactMap { $0 as? WorkoutMart }.first)
      mart.electrocardiograms = stages.lazy.compactMap { $0 as? ElectrocardiogramMart }.first
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
        throw ConfigFileError(file: pipelines.joined(separator: ", "), message: error.description)
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
        transaction: transaction, destinations: dailyDestinations ?? [], collector: daily, ownStages: own)
      reportMart?.daily = dailyMart
      stages.append(dailyMart)
    }
    // Last: it reads what the other marts computed in their own finish.
    if let reportMart { stages.append(reportMart) }
    return stages
  }
}
