extension StatisticsQuery {
  /// The job a pipeline file's `"kind": "statistics"` entry describes; its `outputs` with table
  /// `buckets` become the destinations (none listed: `stats/<name>.csv`).
  ///
  /// - Throws: `StatisticsQueryError`; `field` says which key of the entry is at fault.
  public init(pipelineJob job: PipelineDefinition.Job) throws(StatisticsQueryError) {
    let outputs = job.outputs.filter { $0.table == "buckets" }
    try self.init(
      name: job.name, type: job.type ?? "", interval: job.interval ?? "", anchor: job.anchor,
      options: job.options ?? [], separateBySource: job.separateBySource ?? false,
      destinations: outputs.isEmpty ? nil : outputs.map { Destination(file: $0.file, format: $0.format) })
  }
}

extension StatisticsQueryError {
  /// The job at fault.
  public var job: String {
    switch self {
    case .invalidName(let job), .duplicateName(let job), .noOptions(let job): return job
    case .invalidOutput(let job, _), .unknownType(let job, _), .notAQuantityType(let job, _),
      .invalidInterval(let job, _), .invalidAnchor(let job, _), .unknownOption(let job, _),
      .duplicateOption(let job, _):
      return job
    case .optionNotApplicable(let job, _, _, _): return job
    }
  }

  /// The pipeline key at fault (`type`, `options`, …), for a key path such as `jobs[3].options`.
  public var field: String {
    switch self {
    case .invalidName, .duplicateName: return "name"
    case .invalidOutput: return "outputs"
    case .unknownType, .notAQuantityType: return "type"
    case .invalidInterval: return "interval"
    case .invalidAnchor: return "anchor"
    case .noOptions, .unknownOption, .duplicateOption, .optionNotApplicable: return "options"
    }
  }
}
