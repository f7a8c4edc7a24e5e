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
/// Each mart is made with what it feeds (a mart that hands values to another is given the
/// receiver when it is made, never wired afterwards) and declares the marts it reads
/// (`OutputStage.reads`); `MartSchedule` derives the order of their finishes from that: the job
/// marts in job order, statistics, daily, the report last.
public struct MartGraph {
  /// The run's output transaction, which every mart writes through.
  public let transaction: OutputTransaction
  /// Made before any mart when the plan has `daily.csv` or a report (which shows its days): the
  /// marts that feed it are made with it.
  private let daily: DailyCollector?
  /// Whether the plan has a report: the first workouts and ECG marts are made keeping what it
  /// draws.
  private let hasReport: Bool
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
  private var dailyDestinations: [DailyMart.Destination] = []
  private var report: (file: String, page: ReportPage)?

  /// - Parameters:
  ///   - feedsDaily: whether the run has `daily.csv` or a report.
  ///   - hasReport: whether it has a report.
  init(transaction: OutputTransaction, feedsDaily: Bool, hasReport: Bool) {
    self.transaction = transaction
    daily = feedsDaily || hasReport ? DailyCollector() : nil
    self.hasReport = hasReport
  }

  /// What a job's mart is made with: the run's transaction and, for the first mart of its kind
  /// (the one daily and the report read), what they want of it.
  struct Wiring {
    let transaction: OutputTransaction
    /// Receives the mart's results for `daily.csv` as it finishes.
    let daily: DailyCollector?
    /// Whether the report reads the mart.
    let report: Bool
  }

  private func wiring(first: Bool) -> Wiring {
    Wiring(transaction: transaction, daily: first ? daily : nil, report: first && hasReport)
  }

  /// A mart of one job, which reads the sample stream only and feeds no other.
  mutating func add(_ stage: any OutputStage) { jobStages.append(stage) }
  mutating func addSleep(_ make: (Wiring) -> SleepMart) {
    let mart = make(wiring(first: sleep == nil))
    if sleep == nil { sleep = mart }
    jobStages.append(mart)
  }
  mutating func addWorkouts(_ make: (Wiring) -> WorkoutMart) {
    let mart = make(wiring(first: workouts.isEmpty))
    workouts.append(mart)
    jobStages.append(mart)
  }
  mutating func addElectrocardiograms(_ make: (Wiring) -> ElectrocardiogramMart) {
    let mart = make(wiring(first: electrocardiograms == nil))
    if electrocardiograms == nil { electrocardiograms = mart }
    jobStages.append(mart)
  }
  mutating func addClinicalRecords(_ mart: ClinicalRecordMart) {
    if clinicalRecords == nil { clinicalRecords = mart }
    jobStages.append(mart)
  }
  mutating func addStatistics(_ query: StatisticsQuery) { queries.append(query) }
  mutating func addDaily(_ destinations: [DailyMart.Destination]) { dailyDestinations += destinations }
  /// The last report job of the run wins.
  mutating func setReport(file: String, page: ReportPage) { report = (file, page) }

  /// Builds the marts a plan asks for, for one run's output transaction. Everything that can be
  /// wrong with a job was refused by the planner, so what is left is a file read now (a report's
  /// page) or a defect, reported rather than trapped.
  public static func marts(for plan: RunPlan, transaction: OutputTransaction) throws(ConfigFileError) -> RunMarts {
    var graph = MartGraph(
      transaction: transaction, feedsDaily: plan.jobs.contains { $0.kind is DailyJobKind },
      hasReport: plan.jobs.contains { $0.kind is ReportJobKind })
    for job in plan.jobs { try job.work.addStages(for: job, to: &graph) }
    return try graph.marts(pipelines: plan.pipelines.map(\.path))
  }

  /// The marts added, with those they read made now: the statistics mart, and with `daily.csv`
  /// or a report, the daily mart (and sleep and workouts marts that write no file when the
  /// jobs have none), then the report; in the order they finish.
  func marts(pipelines: [String]) throws(ConfigFileError) -> RunMarts {
    var stages = jobStages
    var queries = queries
    let failure = { (message: String) in ConfigFileError(file: pipelines.joined(separator: ", "), message: message) }
    // The report's values from the statistics, handed over as the sweep closes its buckets.
    var taps: [StatisticsMart.Tap] = []
    var reportParts: (heartRate: ReportHeartRateDays, quality: ReportQuality)?
    if report != nil {
      let heartRate = ReportHeartRateDays(limit: ReportMart.heartRateDays)
      reportParts = (heartRate, ReportQuality())
      // A statistic the run computes anyway is shared; one it does not is added without files.
      taps = ReportMart.statisticsTaps(into: heartRate) { type, interval, option in
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
    }
    var statistics: StatisticsMart?
    if !queries.isEmpty || daily != nil {
      do {
        statistics = try StatisticsMart(
          jobs: queries, transaction: transaction, taps: taps, daily: daily, observer: reportParts?.quality)
      } catch {
        throw failure(error.description)
      }
      stages.append(statistics!)
    }
    var reportMart: ReportMart?
    if let daily, let statistics {
      // `daily.csv` repeats the other outputs: without a sleep or workouts job, marts that
      // write no file compute them.
      let sleep =
        self.sleep
        ?? {
          let mart = SleepMart(destinations: [], daily: daily)
          stages.append(mart)
          return mart
        }()
      let workouts =
        self.workouts.first
        ?? {
          let mart = WorkoutMart(transaction: transaction, outputs: [], daily: daily, keepsRouteShapes: hasReport)
          stages.append(mart)
          return mart
        }()
      let dailyMart = DailyMart(
        destinations: dailyDestinations, collector: daily,
        reads: [sleep, workouts, statistics])
      stages.append(dailyMart)
      if let report, let reportParts {
        let mart = ReportMart(
          transaction: transaction, page: report.page, file: report.file, sleep: sleep, workouts: workouts,
          daily: dailyMart, statistics: statistics, heartRate: reportParts.heartRate, quality: reportParts.quality,
          electrocardiograms: electrocardiograms)
        stages.append(mart)
        reportMart = mart
      }
    }
    let order: [any OutputStage]
    do { order = try MartSchedule.finishOrder(stages) } catch { throw failure(error.description) }
    return RunMarts(
      tableStages: order.filter { $0 !== reportMart }, report: reportMart, workouts: workouts,
      electrocardiograms: electrocardiograms, clinicalRecords: clinicalRecords)
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
