import Foundation
public import HealthModel

/// Pipelines checked against each other and turned into what one run computes: the settings,
/// the jobs and the files they write (`healthetl pipelines explain` prints it).
public struct RunPlan: Sendable {
  public var pipelines: [PipelineDefinition]
  public var settings: RunSettings
  /// The zone the pipelines ask for (`--tz` wins); nil means auto.
  public var timezone: String?
  public var jobs: [PlannedJob]

  /// Every file the plan writes, in job order.
  public var outputFiles: [String] { jobs.flatMap { $0.outputs.map(\.file) } }
}

public enum RunPlanner {
  /// The most output files one plan may declare (a `{type}` or `{name}` pattern counts once).
  /// A run keeps every output file, and a spill file per statistics job, open at once; far past
  /// this it would run out of file descriptors (and memory) after reading the whole export.
  public static let maximumOutputFiles = 10_000

  /// Why a zone `pipelines` name can be neither checked nor used on this machine: the tz database
  /// is missing (a `TZDIR` pointing nowhere). That is the machine's problem (exit 74), not the
  /// files', so callers ask before `plan`, which would blame the file. Nil when no pipeline names
  /// a zone or the database is there.
  public static func zoneDatabaseProblem(_ pipelines: [PipelineDefinition]) -> ZoneError? {
    guard pipelines.contains(where: { $0.timezone != nil && $0.timezone != "auto" }), !ZoneRules.databaseIsUsable
    else { return nil }
    return .databaseMissing(path: ZoneRules.databaseDirectory)
  }

  /// Checks `pipelines` and merges them into one plan.
  ///
  /// - Throws: `ConfigFileError` for anything a run would refuse: an unknown sample type, an
  ///   illegal statistics option, an output that is not a file inside the output folder or takes
  ///   a file of HealthETL's own, two outputs on one file, a code table that cannot be read, or
  ///   pipelines that disagree on the zone, source priority or sleep settings, more than
  ///   `maximumOutputFiles` outputs — all before any input is read.
  public static func plan(_ pipelines: [PipelineDefinition]) throws(ConfigFileError) -> RunPlan {
    var settings = RunSettings()
    var timezone: String?
    var timezoneFrom: String?
    var priorityFrom: String?
    var sleepFrom: String?
    var jobs: [PlannedJob] = []
    var writers = OutputClaims()
    for pipeline in pipelines {
      func fail(_ keyPath: String, _ message: String) -> ConfigFileError {
        ConfigFileError(file: pipeline.path, keyPath: keyPath, message: message)
      }
      if let zone = pipeline.timezone, zone != "auto" {
        if let timezone, timezone != zone {
          throw fail("timezone", "'\(zone)' disagrees with '\(timezone)' in \(timezoneFrom!); one run has one zone")
        }
        do { _ = try ZoneRules.load(zone) } catch { throw fail("timezone", error.description) }
        timezone = zone
        timezoneFrom = pipeline.path
      }
      if let priority = pipeline.sourcePriority {
        if let priorityFrom, settings.sourcePriority.overrides != priority {
          throw fail("sourcePriority", "disagrees with \(priorityFrom)")
        }
        settings.sourcePriority = SourcePriority(overrides: priority)
        priorityFrom = pipeline.path
      }
      if let sleep = pipeline.sleep {
        let gap = sleep.sessionGapMinutes ?? RunSettings().sessionGapMinutes
        let boundary = sleep.dayBoundaryMinutes ?? RunSettings().dayBoundaryMinutes
        if let sleepFrom, gap != settings.sessionGapMinutes || boundary != settings.dayBoundaryMinutes {
          throw fail("sleep", "disagrees with \(sleepFrom)")
        }
        settings.sessionGapMinutes = gap
        settings.dayBoundaryMinutes = boundary
        sleepFrom = pipeline.path
      }
      let declared = pipeline.jobs.reduce(writers.count) {
        $0 + ($1.outputs.isEmpty ? $1.kind.tables.count : $1.outputs.count)
      }
      if declared > maximumOutputFiles {
        throw fail(
          "jobs",
          "the plan writes \(declared) output files, more than the \(maximumOutputFiles) one run may write (each stays open while the run writes); split the jobs over several pipelines and runs"
        )
      }
      for var job in pipeline.jobs {
        if job.outputs.isEmpty { job.outputs = defaultOutputs(job) }
        let work = try resolve(&job, pipeline: pipeline)
        for output in job.outputs {
          if let (conflict, by) = writers.conflict(output.file) {
            throw fail(
              job.keyPath + ".outputs", "'\(output.file)' \(conflict) \(by); give one of them another file name")
          }
          writers.add(output.file, by: "job '\(job.name)' of \(pipeline.path)")
        }
        jobs.append(PlannedJob(definition: job, work: work))
      }
    }
    return RunPlan(pipelines: pipelines, settings: settings, timezone: timezone, jobs: jobs)
  }

  /// The outputs of a job whose pipeline lists none: every table of its kind to its default file.
  static func defaultOutputs(_ job: PipelineDefinition.Job) -> [PipelineDefinition.Output] {
    job.kind.tables.map { table in
      let file = table.defaultFile.replacingOccurrences(of: "{job}", with: job.name)
      return PipelineDefinition.Output(
        keyPath: job.keyPath, line: job.line, table: table.name, file: file, format: TableSchema.format(ofFile: file))
    }
  }

  /// Checks what the job asks for, normalizes its output paths and works out its marts' input.
  static func resolve(_ job: inout PipelineDefinition.Job, pipeline: PipelineDefinition) throws(ConfigFileError)
    -> any JobWork
  {
    try checkOutputs(&job, file: pipeline.path)
    return try job.kind.resolve(&job, in: pipeline)
  }

  /// Normalizes every output path of `job`, refusing what no run could write.
  static func checkOutputs(_ job: inout PipelineDefinition.Job, file: String) throws(ConfigFileError) {
    let line = job.line
    func fail(_ keyPath: String, _ message: String) -> ConfigFileError {
      ConfigFileError(file: file, line: line, keyPath: keyPath, message: message)
    }
    for index in job.outputs.indices {
      let output = job.outputs[index]
      let keyPath = output.keyPath.isEmpty ? job.keyPath + ".outputs" : output.keyPath
      switch OutputPaths.normalize(output.file) {
      case .success(let normalized): job.outputs[index].file = normalized
      case .failure(let problem):
        throw fail(keyPath + ".file", "'\(ConfigNode.excerpt(output.file))' \(problem.message)")
      }
      if let problem = job.kind.check(job.outputs[index]) { throw fail(keyPath + "." + problem.key, problem.message) }
    }
  }

  /// The column names a job's table gets, as its mart declares them.
  static func columns(of job: PlannedJob, table: String) -> [String] {
    guard let schema = job.kind.tables.first(where: { $0.name == table }) else { return [] }
    return job.work.columnNames(of: schema)
  }

  /// The text `healthetl pipelines explain` prints.
  public static func explain(_ plan: RunPlan) -> String {
    var lines: [String] = []
    lines.append("Pipelines: " + plan.pipelines.map { "\($0.name) (\($0.path))" }.joined(separator: ", "))
    lines.append("Time zone: " + (plan.timezone ?? "auto (most frequent HKTimeZone, else the export's offset)"))
    let overrides = plan.settings.sourcePriority.overrides
    lines.append(
      "Source priority: "
        + (overrides.isEmpty ? "" : overrides.joined(separator: " > ") + " > ")
        + "entered by hand > Apple Watch > iPhone > other sources (by name)")
    lines.append(
      "Sleep: sessions split at gaps over \(plan.settings.sessionGapMinutes) min; a session ending at or after "
        + String(format: "%02d:%02d", plan.settings.dayBoundaryMinutes / 60, plan.settings.dayBoundaryMinutes % 60)
        + " belongs to the next date")
    lines.append("One parse of the export feeds \(plan.jobs.count) jobs:")
    for job in plan.jobs {
      let detail = job.kind.name + job.work.explanation
      lines.append("  \(job.name): \(detail)")
      for output in job.outputs {
        lines.append("    → \(output.file) (\(output.table), \(output.format.rawValue))")
        lines.append("      columns: " + columns(of: job, table: output.table).joined(separator: ", "))
      }
    }
    return lines.joined(separator: "\n") + "\n"
  }
}
