import HealthModel

/// The marts of one run, as the jobs' kinds add them (`JobWork.addStages`), wired to what they
/// read from each other:
///
/// - samples, elements, sleep, workouts: the sample stream;
/// - statistics (one mart for every query): the sample stream; it hands the one-day values
///   `daily.csv` repeats to the daily collector, and the report's statistics (taps) and merged
///   streams (quality) to the report as it sweeps;
/// - daily: the sleep and workouts marts' results (the first job's, else file-less marts of its
///   own) and the statistics' one-day values;
/// - report: the sleep and workouts marts (the same), the daily mart's days, the first
///   electrocardiograms mart's latest recordings, the statistics' taps, the inventory.
///
/// So they finish in that order (`RunMarts.stages`): the job marts in job order, statistics,
/// daily, the report last.
public struct MartGraph {
  /// The run's output transaction, which every mart writes through.
  public let transaction: OutputTransaction
  private var jobStages: [any OutputStage] = []
  /// The first sleep and workouts marts of the jobs: what daily and the report read.
  private var sleep: SleepMart?
  private var workouts: [WorkoutMart] = []
  /// The first electrocardiograms mart: the report charts its latest recordings.
  private var electrocardiograms: ElectrocardiogramMart?
  /// The first clinical-records mart: run.json summarises what it read.
  private var clinicalRecords: ClinicalRecordMart?
  /// Every statistics query goes to one mart: one spill and one merge per type for all of them.
  private var queries: [StatisticsQuery] = []
  /// Nil without a daily job.
  private var dailyDestinations: [DailyMart.Destination]?
  private var report: (file: String, page: ReportPage)?

  init(transaction: OutputTransaction) { self.transaction = transaction }

  /// A mart of one job, which reads the sample stream only.
  mutating func add(_ stage: any OutputStage) { jobStages.append(stage) }
  mutating func addSleep(_ mart: SleepMart) {
    if sleep == nil { sleep = mart }
    jobStages.append(mart)
  }
  mutating func addWorkouts(_ mart: WorkoutMart) {
    workouts.append(mart)
    jobStages.append(mart)
  }
  mutating func addElectrocardiograms(_ mart: ElectrocardiogramMart) {
    if electrocardiograms == nil { electrocardiograms = mart }
    jobStages.append(mart)
  }
  mutating func addClinicalRecords(_ mart: ClinicalRecordMart) {
    if clinicalRecords == nil { clinicalRecords = mart }
    jobStages.append(mart)
  }
  mutating func addStatistics(_ query: StatisticsQuery) { queries.append(query) }
  mutating func addDaily(_ destinations: [DailyMart.Destination]) {
    dailyDestinations = (dailyDestinations ?? []) + destinations
  }
  /// The last report job of the run wins.
  mutating func setReport(file: String, page: ReportPage) { report = (file, page) }

  /// Builds the marts a plan asks for, for one run's output transaction. Everything that can be
  /// wrong with a job was refused by the planner, so what is left is a file read now (a report's
  /// page) or a defect, reported rather than trapped.
  public static func marts(for plan: RunPlan, transaction: OutputTransaction) throws(ConfigFileError) -> RunMarts {
    var graph = MartGraph(transaction: transaction)
    for job in plan.jobs { try job.work.addStages(for: job, to: &graph) }
    return try graph.marts(pipelines: plan.pipelines.map(\.path))
  }

  private func marts(pipelines: [String]) throws(ConfigFileError) -> RunMarts {
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
        sleep: sleep, workouts: workouts.first)
      mart.electrocardiograms = electrocardiograms
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
      if let sleep {
        sleep.daily = daily
      } else {
        let sleep = SleepMart(transaction: transaction, destinations: [])
        sleep.daily = daily
        own.append(sleep)
      }
      if let workouts = workouts.first {
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
    return RunMarts(
      tableStages: stages, report: reportMart, workouts: workouts, electrocardiograms: electrocardiograms,
      clinicalRecords: clinicalRecords)
  }
}

/// The marts of a run, in the order they finish.
public struct RunMarts {
  /// Every mart that writes tables; they finish in this order.
  public let tableStages: [any OutputStage]
  /// Finishes last: it reads what the others computed in their own finish, and writes a page
  /// rather than tables (the workbook may close while it does).
  public let report: ReportMart?
  /// The workouts marts of the jobs, whose server records go into the delivery delta.
  public let workouts: [WorkoutMart]
  /// The first electrocardiograms and clinical-records marts, whose summaries go into run.json.
  public let electrocardiograms: ElectrocardiogramMart?
  public let clinicalRecords: ClinicalRecordMart?

  /// Every mart, in finish order: what the sample stream feeds.
  public var stages: [any OutputStage] { tableStages + (report.map { [$0] } ?? []) }
}
