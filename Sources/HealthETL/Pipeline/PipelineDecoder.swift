public import Foundation

/// Reads pipeline files strictly: an unknown key, job kind, type or option, a wrong value type or
/// a missing field is an error naming the file and the key path (`jobs[2].options[1]`), reported
/// before any input is read.
public enum PipelineDecoder {
  public static func load(_ path: String) throws(PipelineError) -> PipelineDefinition {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw PipelineError(path: path, keyPath: "", message: "cannot be read (no such file?)")
    }
    return try decode(data, path: path)
  }

  public static func decode(_ data: Data, path: String) throws(PipelineError) -> PipelineDefinition {
    let root: Any
    do {
      root = try JSONSerialization.jsonObject(with: data)
    } catch {
      throw PipelineError(path: path, keyPath: "", message: "is not valid JSON (\(error.localizedDescription))")
    }
    var reader = Reader(path: path)
    return try reader.pipeline(root)
  }

  struct Reader {
    let path: String

    func fail(_ keyPath: String, _ message: String) -> PipelineError {
      PipelineError(path: path, keyPath: keyPath, message: message)
    }

    func object(_ value: Any, _ keyPath: String, allowed: [String], required: [String]) throws(PipelineError)
      -> [String: Any]
    {
      guard let object = value as? [String: Any] else { throw fail(keyPath, "must be an object") }
      for key in object.keys.sorted() where !allowed.contains(key) {
        let nearest = allowed.min { distance($0, key) < distance($1, key) }
        let hint = nearest.map { distance($0, key) <= 3 ? " (did you mean '\($0)'?)" : "" } ?? ""
        throw fail(join(keyPath, key), "unknown key\(hint); allowed: \(allowed.joined(separator: ", "))")
      }
      for key in required where object[key] == nil { throw fail(join(keyPath, key), "is required") }
      return object
    }

    func string(_ value: Any?, _ keyPath: String) throws(PipelineError) -> String? {
      guard let value, !(value is NSNull) else { return nil }
      guard let text = value as? String else { throw fail(keyPath, "must be a string") }
      return text
    }

    /// JSONSerialization gives NSNumber for numbers and booleans alike; booleans report the
    /// Objective-C type `c` (char), numbers `i`, `q` or `d`.
    static func isBoolean(_ value: Any) -> Bool {
      guard let number = value as? NSNumber else { return false }
      return number.objCType.pointee == CChar(UInt8(ascii: "c"))
    }

    func int(_ value: Any?, _ keyPath: String) throws(PipelineError) -> Int? {
      guard let value, !(value is NSNull) else { return nil }
      guard let number = value as? NSNumber, !Self.isBoolean(value), number.doubleValue == number.doubleValue.rounded()
      else { throw fail(keyPath, "must be a whole number") }
      return number.intValue
    }

    func bool(_ value: Any?, _ keyPath: String) throws(PipelineError) -> Bool? {
      guard let value, !(value is NSNull) else { return nil }
      guard Self.isBoolean(value), let flag = value as? Bool else { throw fail(keyPath, "must be true or false") }
      return flag
    }

    func strings(_ value: Any?, _ keyPath: String) throws(PipelineError) -> [String]? {
      guard let value, !(value is NSNull) else { return nil }
      guard let array = value as? [Any] else { throw fail(keyPath, "must be an array of strings") }
      var result: [String] = []
      for (index, item) in array.enumerated() {
        guard let text = item as? String else { throw fail("\(keyPath)[\(index)]", "must be a string") }
        result.append(text)
      }
      return result
    }

    mutating func pipeline(_ root: Any) throws(PipelineError) -> PipelineDefinition {
      let object = try self.object(
        root, "",
        allowed: ["version", "name", "description", "timezone", "sourcePriority", "sleep", "jobs"],
        required: ["version", "name", "jobs"])
      let version = try int(object["version"], "version")!
      guard version == PipelineDefinition.supportedVersion else {
        throw fail(
          "version", "is \(version); this healthetl reads version \(PipelineDefinition.supportedVersion) pipelines")
      }
      let name = try string(object["name"], "name")!
      guard !name.isEmpty else { throw fail("name", "must not be empty") }
      var sleep: PipelineDefinition.SleepParameters?
      if let value = object["sleep"] {
        let settings = try self.object(value, "sleep", allowed: ["sessionGapMinutes", "dayBoundary"], required: [])
        var parameters = PipelineDefinition.SleepParameters()
        if let gap = try int(settings["sessionGapMinutes"], "sleep.sessionGapMinutes") {
          guard gap >= 0 else { throw fail("sleep.sessionGapMinutes", "must be 0 or more") }
          parameters.sessionGapMinutes = gap
        }
        if let boundary = try string(settings["dayBoundary"], "sleep.dayBoundary") {
          guard let minutes = Self.minutes(boundary) else {
            throw fail("sleep.dayBoundary", "must be a local time HH:MM, e.g. 18:00")
          }
          parameters.dayBoundaryMinutes = minutes
        }
        sleep = parameters
      }
      guard let jobsValue = object["jobs"] as? [Any] else { throw fail("jobs", "must be an array of jobs") }
      var jobs: [PipelineDefinition.Job] = []
      for (index, value) in jobsValue.enumerated() {
        let job = try self.job(value, "jobs[\(index)]")
        if jobs.contains(where: { $0.name == job.name }) {
          throw fail("jobs[\(index)].name", "'\(job.name)' is used by another job of this pipeline")
        }
        jobs.append(job)
      }
      guard !jobs.isEmpty else { throw fail("jobs", "must list at least one job") }
      return PipelineDefinition(
        path: path, version: version, name: name, description: try string(object["description"], "description"),
        timezone: try string(object["timezone"], "timezone"),
        sourcePriority: try strings(object["sourcePriority"], "sourcePriority"), sleep: sleep, jobs: jobs)
    }

    func job(_ value: Any, _ keyPath: String) throws(PipelineError) -> PipelineDefinition.Job {
      guard let raw = value as? [String: Any] else { throw fail(keyPath, "must be an object") }
      guard let kindText = try string(raw["kind"], join(keyPath, "kind")) else {
        throw fail(join(keyPath, "kind"), "is required")
      }
      guard let kind = PipelineDefinition.Kind(rawValue: kindText) else {
        throw fail(
          join(keyPath, "kind"),
          "unknown job kind '\(kindText)'; known: \(PipelineDefinition.Kind.allCases.map(\.rawValue).joined(separator: ", "))"
        )
      }
      var allowed = ["name", "kind", "outputs"]
      switch kind {
      case .samples: allowed.append("types")
      case .sleep: break
      case .workouts: allowed.append("codes")
      case .statistics: allowed += ["type", "interval", "anchor", "options", "separateBySource"]
      case .elements: allowed.append("names")
      }
      let required = kind == .statistics ? ["name", "type", "interval", "options"] : ["name"]
      let object = try self.object(raw, keyPath, allowed: allowed, required: required)
      let name = try string(object["name"], join(keyPath, "name"))!
      guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
        throw fail(join(keyPath, "name"), "must be letters, digits, '-' or '_' (it names output files)")
      }
      var job = PipelineDefinition.Job(name: name, kind: kind, outputs: [])
      job.types = try strings(object["types"], join(keyPath, "types"))
      job.names = try strings(object["names"], join(keyPath, "names"))
      job.codes = try string(object["codes"], join(keyPath, "codes"))
      job.type = try string(object["type"], join(keyPath, "type"))
      job.interval = try string(object["interval"], join(keyPath, "interval"))
      job.anchor = try string(object["anchor"], join(keyPath, "anchor"))
      job.options = try strings(object["options"], join(keyPath, "options"))
      job.separateBySource = try bool(object["separateBySource"], join(keyPath, "separateBySource"))
      if let outputs = object["outputs"] {
        guard let array = outputs as? [Any] else { throw fail(join(keyPath, "outputs"), "must be an array") }
        for (index, item) in array.enumerated() {
          job.outputs.append(try output(item, "\(join(keyPath, "outputs"))[\(index)]", kind: kind))
        }
      }
      return job
    }

    func output(_ value: Any, _ keyPath: String, kind: PipelineDefinition.Kind) throws(PipelineError)
      -> PipelineDefinition.Output
    {
      let object = try self.object(value, keyPath, allowed: ["table", "file", "format"], required: ["file"])
      let tables = kind.tables.map(\.name)
      let table = try string(object["table"], join(keyPath, "table")) ?? tables[0]
      guard tables.contains(table) else {
        throw fail(
          join(keyPath, "table"),
          "unknown table '\(table)' for a \(kind.rawValue) job; known: \(tables.joined(separator: ", "))")
      }
      let file = try string(object["file"], join(keyPath, "file"))!
      guard !file.isEmpty, !file.hasPrefix("/"), !file.split(separator: "/").contains("..") else {
        throw fail(join(keyPath, "file"), "must be a relative path inside the output folder")
      }
      let formatText =
        try string(object["format"], join(keyPath, "format")) ?? TableSchema.format(ofFile: file).rawValue
      guard let format = TableFormat(rawValue: formatText) else {
        throw fail(join(keyPath, "format"), "unknown format '\(formatText)'; known: csv, json, ndjson")
      }
      if kind == .workouts && table == "records" && format != .json {
        throw fail(join(keyPath, "format"), "workout server records are a JSON array; use json")
      }
      return PipelineDefinition.Output(table: table, file: file, format: format)
    }

    static func minutes(_ text: String) -> Int? {
      let parts = text.split(separator: ":")
      guard parts.count == 2, parts[0].count == 2, parts[1].count == 2, let h = Int(parts[0]), let m = Int(parts[1]),
        (0...23).contains(h), (0...59).contains(m)
      else { return nil }
      return h * 60 + m
    }

    func join(_ keyPath: String, _ key: String) -> String { keyPath.isEmpty ? key : keyPath + "." + key }

    /// Edit distance, for "did you mean" hints.
    func distance(_ a: String, _ b: String) -> Int {
      let a = Array(a.lowercased()), b = Array(b.lowercased())
      var row = Array(0...b.count)
      for i in 1...max(a.count, 1) where !a.isEmpty {
        var previous = row[0]
        row[0] = i
        for j in stride(from: 1, through: b.count, by: 1) {
          let current = row[j]
          row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
          previous = current
        }
      }
      return row[b.count]
    }
  }
}
