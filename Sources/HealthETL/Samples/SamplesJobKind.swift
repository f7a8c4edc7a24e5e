import HealthModel

/// `samples`: every distinct record as a row (Pipelines/docs/samples.md, "Samples").
public struct SamplesJobKind: JobKind {
  public var name: String { "samples" }
  public var tables: [TableSchema] { SampleTables.all }
  public var keys: [String] { ["types"] }

  public func check(_ output: PipelineDefinition.Output) -> (key: String, message: String)? {
    guard output.format != .csv, output.file.contains("{type}") else { return nil }
    return ("file", "{type} (one file per type) is for csv; json and ndjson write one file for all types")
  }

  public func resolve(_ job: inout PipelineDefinition.Job, in pipeline: PipelineDefinition) throws(ConfigFileError)
    -> any JobWork
  {
    for (index, name) in (job.types ?? []).enumerated() where !SampleTypeInfo.isKnown(shortName: name) {
      throw ConfigFileError(
        file: pipeline.path, line: job.line, keyPath: "\(job.keyPath).types[\(index)]",
        message:
          "unknown sample type '\(ConfigNode.excerpt(name))' (use short names such as StepCount, HeartRate, SleepAnalysis)"
      )
    }
    return Work(
      types: job.types, destinations: job.outputs.map { SampleMart.Destination(file: $0.file, format: $0.format) })
  }

  struct Work: JobWork {
    /// As the pipeline lists them; nil keeps every type.
    var types: [String]?
    var destinations: [SampleMart.Destination]

    var explanation: String { types.map { " of \($0.joined(separator: ", "))" } ?? "" }

    func shows(type shortName: String) -> Bool { types?.contains(shortName) ?? true }

    func mart(for job: PlannedJob, build: MartBuild) -> (any Mart)? {
      SampleMart(
        transaction: build.transaction, tableSinks: build.tableSinks, destinations: destinations,
        types: types.map(Set.init))
    }
  }
}
