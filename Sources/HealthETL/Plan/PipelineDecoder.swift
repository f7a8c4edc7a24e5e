public import Foundation

/// Reads pipeline files strictly (Pipelines/README.md, "File format"): an unknown key, job kind,
/// table or format, a value of the wrong JSON type (`null` included), a number out of range, or a
/// missing field is an error naming the file, the line and the key path (`jobs[2].options[1]`),
/// reported before any input is read.
public enum PipelineDecoder {
  /// The longest session gap a pipeline may ask for: a day. Longer gaps would join separate
  /// nights into one session.
  public static let maximumSessionGapMinutes = 24 * 60

  public static func load(_ path: String) throws(ConfigFileError) -> PipelineDefinition {
    try decode(ConfigFile.read(path), path: path)
  }

  public static func decode(_ data: Data, path: String) throws(ConfigFileError) -> PipelineDefinition {
    try decode(Array(data), path: path)
  }

  public static func decode(_ bytes: [UInt8], path: String) throws(ConfigFileError) -> PipelineDefinition {
    let root = try ConfigFile.parse(bytes, file: path)
    let object = try root.object(
      allowed: ["version", "name", "description", "timezone", "sourcePriority", "sleep", "jobs"],
      required: ["version", "name", "jobs"])
    let versionNode = try object.required("version")
    let version = try versionNode.integer(in: Int.min...Int.max)
    guard version == PipelineDefinition.supportedVersion else {
      throw versionNode.error(
        "is \(version); this healthetl reads version \(PipelineDefinition.supportedVersion) pipelines")
    }
    var pipeline = PipelineDefinition(
      path: path, version: version, name: try object.required("name").nonEmptyString(),
      description: try object["description"]?.string(), timezone: try object["timezone"]?.nonEmptyString(),
      sourcePriority: try sourcePriority(object["sourcePriority"]), sleep: try sleep(object["sleep"]), jobs: [])
    let jobs = try object.required("jobs").array()
    guard !jobs.isEmpty else { throw try object.required("jobs").error("must list at least one job") }
    // Every job writes at least one file: a list past the plan's limit is refused before each
    // job is decoded (see `RunPlanner.maximumOutputFiles`).
    guard jobs.count <= RunPlanner.maximumOutputFiles else {
      throw try object.required("jobs").error(
        "lists \(jobs.count) jobs, more than the \(RunPlanner.maximumOutputFiles) output files one run may write (each stays open while the run writes); split the jobs over several pipelines and runs"
      )
    }
    var names: Set<String> = []
    for node in jobs {
      let job = try self.job(node)
      guard names.insert(job.name).inserted else {
        throw try node.object(allowed: jobKeys(job.kind)).required("name").error(
          "'\(job.name)' is used by another job of this pipeline")
      }
      pipeline.jobs.append(job)
    }
    return pipeline
  }

  /// Substrings must say something: an empty one would match every source.
  static func sourcePriority(_ node: ConfigNode?) throws(ConfigFileError) -> [String]? {
    guard let node else { return nil }
    var names: [String] = []
    for item in try node.array() { names.append(try item.nonEmptyString()) }
    return names
  }

  static func sleep(_ node: ConfigNode?) throws(ConfigFileError) -> PipelineDefinition.SleepParameters? {
    guard let node else { return nil }
    let settings = try node.object(allowed: ["sessionGapMinutes", "dayBoundary"])
    var parameters = PipelineDefinition.SleepParameters()
    if let gap = settings["sessionGapMinutes"] {
      parameters.sessionGapMinutes = try gap.integer(in: 0...maximumSessionGapMinutes)
    }
    if let boundary = settings["dayBoundary"] {
      guard let minutes = minutes(try boundary.string()) else {
        throw boundary.error("must be a local time HH:MM, e.g. 18:00")
      }
      parameters.dayBoundaryMinutes = minutes
    }
    return parameters
  }

  static func jobKeys(_ kind: any JobKind) -> [String] { ["name", "kind", "outputs"] + kind.keys }

  static func job(_ node: ConfigNode) throws(ConfigFileError) -> PipelineDefinition.Job {
    // The kind decides which keys are allowed, so it is read first.
    guard let kindNode = try node.peek("kind") else {
      throw ConfigFileError(file: node.file, line: node.line, keyPath: node.keyPath + ".kind", message: "is required")
    }
    let kindText = try kindNode.string()
    guard let kind = JobKinds.named(kindText) else {
      let known = JobKinds.all.map(\.name).joined(separator: ", ")
      throw kindNode.error("unknown job kind '\(ConfigNode.excerpt(kindText))'; known: \(known)")
    }
    let required = ["name"] + kind.requiredKeys
    let object = try node.object(allowed: jobKeys(kind), required: required)
    let nameNode = try object.required("name")
    let name = try nameNode.string()
    guard JobName.isValid(name) else {
      throw nameNode.error("'\(ConfigNode.excerpt(name))' is not \(JobName.rule)")
    }
    var job = PipelineDefinition.Job(name: name, kind: kind, outputs: [])
    job.keyPath = node.keyPath
    job.line = node.line
    job.types = try object["types"]?.strings()
    job.names = try object["names"]?.strings()
    job.codes = try object["codes"]?.nonEmptyString()
    job.template = try object["template"]?.nonEmptyString()
    job.chartLibrary = try object["chartLibrary"]?.nonEmptyString()
    job.type = try object["type"]?.string()
    job.interval = try object["interval"]?.string()
    job.anchor = try object["anchor"]?.string()
    job.options = try object["options"]?.strings()
    job.separateBySource = try object["separateBySource"]?.bool()
    job.copyResources = try object["copyResources"]?.bool()
    if let outputs = object["outputs"] {
      for item in try outputs.array() { job.outputs.append(try output(item, kind: kind)) }
    }
    return job
  }

  static func output(_ node: ConfigNode, kind: any JobKind) throws(ConfigFileError)
    -> PipelineDefinition.Output
  {
    let object = try node.object(allowed: ["table", "file", "format"], required: ["file"])
    let tables = kind.tables.map(\.name)
    var table = tables[0]
    if let tableNode = object["table"] {
      table = try tableNode.string()
      guard tables.contains(table) else {
        throw tableNode.error(
          "unknown table '\(ConfigNode.excerpt(table))' for a \(kind.name) job; known: "
            + tables.joined(separator: ", "))
      }
    }
    let file = try object.required("file").string()
    var format = TableSchema.format(ofFile: file)
    if let formatNode = object["format"] {
      let text = try formatNode.string()
      guard let named = TableFormat(rawValue: text) else {
        throw formatNode.error("unknown format '\(ConfigNode.excerpt(text))'; known: csv, json, ndjson")
      }
      format = named
    }
    return PipelineDefinition.Output(
      keyPath: node.keyPath, line: node.line, table: table, file: file, format: format)
  }

  static func minutes(_ text: String) -> Int? {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 2, parts[0].count == 2, parts[1].count == 2, parts.allSatisfy({ $0.allSatisfy(\.isASCII) }),
      let h = Int(parts[0]), let m = Int(parts[1]), (0...23).contains(h), (0...59).contains(m)
    else { return nil }
    return h * 60 + m
  }
}
