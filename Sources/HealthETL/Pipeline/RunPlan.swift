import Foundation
import HealthModel

/// Pipelines checked against each other and turned into what one run computes: the settings,
/// the jobs and the files they write (`healthetl pipelines explain` prints it).
public struct RunPlan: Sendable {
  public var pipelines: [PipelineDefinition]
  public var settings: RunSettings
  /// The zone the pipelines ask for (`--tz` wins); nil means auto.
  public var timezone: String?
  public var jobs: [PipelineDefinition.Job]

  /// Every file the plan writes, in job order.
  public var outputFiles: [String] { jobs.flatMap { $0.outputs.map(\.file) } }
}

public enum RunPlanner {
  /// Checks `pipelines` and merges them into one plan.
  ///
  /// - Throws: `PipelineError` for an unknown sample type, an illegal statistics option, two
  ///   jobs writing the same file, or pipelines that disagree on the zone, source priority or sleep
  ///   settings — all before any input is read.
  public static func plan(_ pipelines: [PipelineDefinition]) throws(PipelineError) -> RunPlan {
    var settings = RunSettings()
    var timezone: String?
    var timezoneFrom: String?
    var priorityFrom: String?
    var sleepFrom: String?
    var jobs: [PipelineDefinition.Job] = []
    var writers: [String: String] = [:]
    for pipeline in pipelines {
      if let zone = pipeline.timezone, zone != "auto" {
        if let timezone, timezone != zone {
          throw PipelineError(
            path: pipeline.path, keyPath: "timezone",
            message: "'\(zone)' disagrees with '\(timezone)' in \(timezoneFrom!); one run has one zone")
        }
        do { _ = try ZoneRules.load(zone) } catch {
          throw PipelineError(path: pipeline.path, keyPath: "timezone", message: error.description)
        }
        timezone = zone
        timezoneFrom = pipeline.path
      }
      if let priority = pipeline.sourcePriority {
        if let priorityFrom, settings.sourcePriority.overrides != priority {
          throw PipelineError(
            path: pipeline.path, keyPath: "sourcePriority", message: "disagrees with \(priorityFrom)")
        }
        settings.sourcePriority = SourcePriority(overrides: priority)
        priorityFrom = pipeline.path
      }
      if let sleep = pipeline.sleep {
        let gap = sleep.sessionGapMinutes ?? 60
        let boundary = sleep.dayBoundaryMinutes ?? 18 * 60
        if let sleepFrom, gap != settings.sessionGapMinutes || boundary != settings.dayBoundaryMinutes {
          throw PipelineError(path: pipeline.path, keyPath: "sleep", message: "disagrees with \(sleepFrom)")
        }
        settings.sessionGapMinutes = gap
        settings.dayBoundaryMinutes = boundary
        sleepFrom = pipeline.path
      }
      for (index, var job) in pipeline.jobs.enumerated() {
        let keyPath = "jobs[\(index)]"
        if job.outputs.isEmpty { job.outputs = defaultOutputs(job) }
        try validate(job, pipeline: pipeline, keyPath: keyPath)
        for output in job.outputs {
          if let other = writers[output.file] {
            throw PipelineError(
              path: pipeline.path, keyPath: keyPath + ".outputs",
              message: "'\(output.file)' is also written by \(other); give one of them another file name")
          }
          writers[output.file] = "job '\(job.name)' of \(pipeline.path)"
        }
        if job.kind == .workouts, let codes = job.codes, !codes.hasPrefix("/") {
          job.codes = (URL(fileURLWithPath: pipeline.path).deletingLastPathComponent().path as NSString)
            .appendingPathComponent(codes)
        }
        if job.kind == .workouts, let codes = job.codes {
          do { _ = try WorkoutCodeTable.load(path: codes) } catch {
            throw PipelineError(path: error.file, keyPath: error.keyPath ?? "", message: error.detail)
          }
        }
        jobs.append(job)
      }
    }
    return RunPlan(pipelines: pipelines, settings: settings, timezone: timezone, jobs: jobs)
  }

  /// The outputs of a job whose pipeline lists none: every table of its kind to its default file.
  static func defaultOutputs(_ job: PipelineDefinition.Job) -> [PipelineDefinition.Output] {
    job.kind.tables.map { table in
      let file = table.defaultFile.replacingOccurrences(of: "{job}", with: job.name)
      return PipelineDefinition.Output(table: table.name, file: file, format: TableSchema.format(ofFile: file))
    }
  }

  static func validate(_ job: PipelineDefinition.Job, pipeline: PipelineDefinition, keyPath: String)
    throws(PipelineError)
  {
    switch job.kind {
    case .samples:
      for (index, name) in (job.types ?? []).enumerated() where !SampleTypeInfo.isKnown(shortName: name) {
        throw PipelineError(
          path: pipeline.path, keyPath: "\(keyPath).types[\(index)]",
          message: "unknown sample type '\(name)' (use short names such as StepCount, HeartRate, SleepAnalysis)")
      }
    case .sleep, .workouts, .elements:
      break
    case .statistics:
      do { _ = try StatisticsQuery(pipelineJob: job) } catch {
        var field = error.field
        // Point at the offending option itself: `jobs[2].options[1]`.
        switch error {
        case .unknownOption(_, let option), .duplicateOption(_, let option), .optionNotApplicable(_, _, let option, _):
          if let index = (job.options ?? []).lastIndex(of: option) { field = "options[\(index)]" }
        default: break
        }
        throw PipelineError(path: pipeline.path, keyPath: keyPath + "." + field, message: error.description)
      }
    }
    for (index, output) in job.outputs.enumerated()
    where job.kind == .samples && output.format != .csv
      && output.file.contains("{type}")
    {
      throw PipelineError(
        path: pipeline.path, keyPath: "\(keyPath).outputs[\(index)].file",
        message: "{type} (one file per type) is for csv; json and ndjson write one file for all types")
    }
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
      var detail = job.kind.rawValue
      if job.kind == .statistics {
        detail += " of \(job.type ?? "?") per \(job.interval ?? "?"): \((job.options ?? []).joined(separator: ", "))"
        if job.separateBySource == true { detail += ", by source" }
        if let anchor = job.anchor { detail += ", anchored at \(anchor)" }
      }
      if job.kind == .samples, let types = job.types { detail += " of \(types.joined(separator: ", "))" }
      if job.kind == .elements, let names = job.names { detail += " of \(names.joined(separator: ", "))" }
      if job.kind == .workouts, let codes = job.codes { detail += ", server codes from \(codes)" }
      lines.append("  \(job.name): \(detail)")
      for output in job.outputs {
        lines.append("    → \(output.file) (\(output.table), \(output.format.rawValue))")
      }
    }
    return lines.joined(separator: "\n") + "\n"
  }
}
