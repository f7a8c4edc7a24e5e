import HealthModel

/// `statistics`: interval statistics of one type (Pipelines/docs/statistics.md, "Interval statistics").
/// Every statistics job of a run shares one mart: one spill and one merge per type.
public struct StatisticsJobKind: JobKind {
  public var name: String { "statistics" }
  public var tables: [TableSchema] { StatisticsTables.all }
  public var keys: [String] { ["type", "interval", "anchor", "options", "separateBySource"] }
  public var requiredKeys: [String] { ["type", "interval", "options"] }

  /// One mart for every statistics job of the run: one spill and one merge per type.
  public func marts(for jobs: [PlannedJob], build: MartBuild) throws(ConfigFileError) -> [any Mart] {
    let queries = jobs.compactMap { ($0.work as? Work)?.query }
    guard !queries.isEmpty else { return [] }
    return [try mart(queries, build: build)]
  }

  public func makeProvider(of product: ProductKey, build: MartBuild) -> (any Mart)? {
    let provided = [
      ProductKey(DayStatistics.self), ProductKey(RecentDays.self), ProductKey(MergedStreams.self),
      ProductKey(ClosedBuckets.self),
    ]
    guard provided.contains(product) else { return nil }
    return try? mart([], build: build)
  }

  private func mart(_ queries: [StatisticsQuery], build: MartBuild) throws(ConfigFileError) -> StatisticsMart {
    do { return try StatisticsMart(jobs: queries, transaction: build.transaction) } catch {
      // The planner refuses two jobs on one file first, so this is a defect, reported rather
      // than trapped.
      throw ConfigFileError(file: build.pipelines.joined(separator: ", "), message: error.description)
    }
  }

  public func resolve(_ job: inout PipelineDefinition.Job, in pipeline: PipelineDefinition) throws(ConfigFileError)
    -> any JobWork
  {
    do { return Work(query: try StatisticsQuery(pipelineJob: job), anchor: job.anchor) } catch {
      var field = error.field
      // Point at the offending option itself: `jobs[2].options[1]`.
      switch error {
      case .unknownOption(_, let option), .duplicateOption(_, let option), .optionNotApplicable(_, _, let option, _):
        if let index = (job.options ?? []).lastIndex(of: option) { field = "options[\(index)]" }
      default: break
      }
      throw ConfigFileError(
        file: pipeline.path, line: job.line, keyPath: job.keyPath + "." + field, message: error.description)
    }
  }

  struct Work: JobWork {
    var query: StatisticsQuery
    /// As the pipeline writes it.
    var anchor: String?

    var explanation: String {
      var text = " of \(query.type.shortName) per \(query.interval): "
      text += query.options.map(\.rawValue).joined(separator: ", ")
      if query.separateBySource { text += ", by source" }
      if let anchor { text += ", anchored at \(anchor)" }
      return text
    }

    func columns(of table: TableSchema) -> [Column] { StatisticsTables.columns(of: query) }

    func sheet(of table: TableSchema, job: String) -> WorkbookSheetChoice {
      guard StatisticsTables.rowsAreDays(query.interval) else {
        return .leftToFile(reason: "rows are parts of a day; years of them fill several sheets")
      }
      return .sheet(name: JobName.words(job), columns: columns(of: table))
    }

    func databaseKeys(of table: TableSchema) -> TableKeys? { StatisticsTables.keys(of: query) }

    func shows(type shortName: String) -> Bool { query.type.shortName == shortName }

    /// The kind makes one mart for all the run's statistics jobs.
    func mart(for job: PlannedJob, build: MartBuild) -> (any Mart)? { nil }
  }
}
