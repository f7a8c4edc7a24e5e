import Foundation
import HealthModel

/// What an output folder has delivered of its workout server records, and which exports the
/// nightly batch has handled (Pipelines/docs/nightly.md, "Runs and the nightly batch"). It lives in
/// `.healthetl-state.json` (small) and `.healthetl-emitted` (the ids, binary), both written in the
/// same atomic commit as the outputs they describe.
///
/// Deltas: every commit that writes `workout_records.new.json` gives it the next `sequence`
/// number. A delta holds the records emitted since the last final delta; it is final at the end
/// of a `run` and at the end of a night, and not final after each export of a night still going
/// (its records stay `pending` until the night ends). A consumer that posts every sequence it has
/// not posted yet, keyed by `recordUuid`, gets every workout exactly once in effect, whenever a
/// run was killed.
///
/// Delivery (`healthetl deliver`, Pipelines/docs/nightly.md, "Delivering to a server"): a record
/// emitted in a final delta joins the `outbox`; a delivery run seals the outbox into `batches`
/// (committed before anything is sent, so a batch keeps its records, and with them its
/// idempotency key, on every attempt of every run); a batch leaves the state when a server
/// acknowledges it, or moves to `quarantinedBatches` when the server rejects it.
public struct DeliveryState: Sendable, Equatable {
  /// Version 3 added `batches` and `quarantinedBatches`, and is written only while either holds
  /// something; version 4 added `failing`, and is written only while it holds something; version
  /// 5 added `influx`, likewise; version 6 added `attempt`, and is written only while it is set;
  /// versions 1 and 2 are still read.
  public static let version = 6

  /// An inbox export the nightly batch has handled.
  public struct Export: Sendable, Equatable {
    public var sha256: String
    public var name: String
    public var bytes: Int64

    public init(sha256: String, name: String, bytes: Int64) {
      self.sha256 = sha256
      self.name = name
      self.bytes = bytes
    }
  }

  /// An inbox export that could not be used, skipped until its content changes.
  public struct Quarantined: Sendable, Equatable {
    public var export: Export
    public var exitCode: Int32
    public var reason: String
  }

  /// An inbox export whose runs failed on nights in a row in a way that may be its own doing (see
  /// `NightlyBatch.Fault.unclear`): quarantined once it has failed so on
  /// `NightlyBatch.failingNightsLimit` nights.
  public struct Failing: Sendable, Equatable {
    public var export: Export
    /// The exit code of the failure; a failure with another code counts from 1 again.
    public var exitCode: Int32
    public var reason: String
    /// Nights in a row it failed with `exitCode`.
    public var nights: Int
  }

  /// Records sealed for delivery together: posted as one request, with one idempotency key.
  public struct Batch: Sendable, Equatable {
    public var records: [WorkoutServerRecord]

    public init(records: [WorkoutServerRecord]) { self.records = records }

    /// The `Idempotency-Key` of the batch: SHA-256 (lower-case hex) of its `recordUuid`s sorted
    /// by their bytes, each followed by a line feed. It depends on nothing but which records the
    /// batch holds, so every attempt of the batch, in any run, carries the same key.
    public var key: String {
      let digest = Digest.SHA256Stream()
      for uuid in records.map(\.recordUuid).sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }) {
        var line = Array(uuid.utf8)
        line.append(0x0A)
        line.withUnsafeBytes { digest.update($0) }
      }
      return digest.finalizeHex()
    }
  }

  /// What an InfluxDB has acknowledged of the folder's line protocol (`deliver --influx`,
  /// Pipelines/influx/README.md, "Pushing"): per measurement, the latest time of a point it
  /// acknowledged, not counting points dated after the delivery's own clock.
  public struct InfluxMarks: Sendable, Equatable {
    /// The write URL without its precision (`InfluxSettings.target`).
    public var target: String
    /// Measurement → Unix seconds.
    public var marks: [String: Int64]

    public init(target: String, marks: [String: Int64]) {
      self.target = target
      self.marks = marks
    }
  }

  /// A batch the server rejected (an HTTP 4xx that says the request itself is wrong): kept apart,
  /// not sent again until `healthetl deliver --retry-quarantined` puts its records back.
  public struct QuarantinedBatch: Sendable, Equatable {
    public var records: [WorkoutServerRecord]
    /// The HTTP status of the rejection.
    public var status: Int
    /// What is kept of the response body (`WorkoutDelivery.excerpt`).
    public var body: String
    /// When it was rejected, ISO 8601 UTC.
    public var at: String

    public init(records: [WorkoutServerRecord], status: Int, body: String, at: String) {
      self.records = records
      self.status = status
      self.body = body
      self.at = at
    }
  }

  /// The number of the last delta written.
  public var sequence = 0
  /// Exports processed, oldest first.
  public var processed: [Export] = []
  public var quarantined: [Quarantined] = []
  /// Exports that failed on the last nights they were tried, and may still go through.
  public var failing: [Failing] = []
  /// The export a night has started to run and not finished: committed before its run starts and
  /// cleared by whatever ends it, so one still set when a night starts is a run that died
  /// (`NightlyBatch.countDeath`).
  public var attempt: Export?
  /// Records of the night still going: in the current delta, not yet final.
  public var pending: [WorkoutServerRecord] = []
  /// Records emitted in a final delta and not yet sealed into a delivery batch.
  public var outbox: [WorkoutServerRecord] = []
  /// Batches sealed for delivery and not yet acknowledged, in the order they are sent.
  public var batches: [Batch] = []
  /// Batches a server rejected, oldest first.
  public var quarantinedBatches: [QuarantinedBatch] = []
  /// Per InfluxDB target, what it has acknowledged.
  public var influx: [InfluxMarks] = []
  /// Ids of every record emitted in a final delta.
  var emitted = EmittedRecords()

  public init() {}

  public static func == (a: DeliveryState, b: DeliveryState) -> Bool {
    a.sequence == b.sequence && a.processed == b.processed && a.quarantined == b.quarantined
      && a.failing == b.failing && a.attempt == b.attempt && a.pending == b.pending && a.outbox == b.outbox
      && a.batches == b.batches
      && a.quarantinedBatches == b.quarantinedBatches && a.influx == b.influx && a.emitted.ids == b.emitted.ids
  }

  /// How many records the folder has emitted in final deltas.
  public var emittedCount: Int { emitted.count }

  /// Records emitted and neither acknowledged by a server nor quarantined.
  public var undelivered: Int { outbox.count + batches.reduce(0) { $0 + $1.records.count } }

  // MARK: - Reading

  /// The state of `directory`; empty when the folder has none yet. A state that cannot be read
  /// is an error (exit 65), never taken as empty: that would deliver every workout again.
  public static func load(from directory: String) throws(ConfigFileError) -> DeliveryState {
    let path = directory + "/" + ToolFiles.state
    var info = stat()
    guard lstat(path, &info) == 0 else {
      guard errno == ENOENT else {
        throw ConfigFileError(file: path, message: "cannot be read: \(String(cString: strerror(errno)))")
      }
      return DeliveryState()
    }
    if (info.st_mode & S_IFMT) == S_IFLNK, stat(path, &info) != 0 {
      throw ConfigFileError(file: path, message: "is a symbolic link to nothing; \(StateProblem.advice)")
    }
    var (state, version) = try decode(ConfigFile.read(path, limit: 256 << 20), path: path)
    // Version 1 kept the ids in the state file; version 2 always writes them beside it.
    if version >= 2 {
      guard lstat(directory + "/" + ToolFiles.emitted, &info) == 0 else {
        throw ConfigFileError(
          file: directory + "/" + ToolFiles.emitted,
          message: "is missing beside \(ToolFiles.state); \(StateProblem.advice)")
      }
      state.emitted = try EmittedRecords.load(from: directory)
    }
    return state
  }

  /// The state file's text, read strictly: every key of its version, each of its type.
  public static func decode(_ bytes: [UInt8], path: String) throws(ConfigFileError) -> (DeliveryState, version: Int) {
    do throws(ConfigFileError) {
      let root = try ConfigFile.parse(bytes, file: path)
      let object = try root.object(
        allowed: [
          "version", "sequence", "processed", "quarantined", "failing", "attempt", "pending", "outbox",
          "batches", "quarantinedBatches", "emitted", "influx",
        ],
        required: ["version"])
      let versionNode = try object.required("version")
      let version = try versionNode.integer(in: Int.min...Int.max)
      guard (1...Self.version).contains(version) else {
        throw versionNode.error(
          "is \(version); this healthetl reads state versions 1 to \(Self.version) (a newer healthetl wrote it?)")
      }
      for (key, since) in [
        ("batches", 3), ("quarantinedBatches", 3), ("failing", 4), ("influx", 5), ("attempt", 6),
      ]
      where version < since {
        if let node = object[key] { throw node.error("is not part of a version \(version) state") }
      }
      var state = DeliveryState()
      state.sequence = try object["sequence"]?.integer(in: 0...Int.max) ?? 0
      state.processed = try (object["processed"]?.array() ?? []).map(export)
      for node in try object["quarantined"]?.array() ?? [] {
        let entry = try node.object(allowed: ["sha256", "name", "bytes", "exitCode", "reason"], required: ["sha256"])
        state.quarantined.append(
          Quarantined(
            export: try export(node), exitCode: Int32(try entry["exitCode"]?.integer(in: 0...255) ?? 65),
            reason: try entry["reason"]?.string() ?? ""))
      }
      for node in try object["failing"]?.array() ?? [] {
        let entry = try node.object(
          allowed: ["sha256", "name", "bytes", "exitCode", "reason", "nights"],
          required: ["sha256", "name", "bytes", "exitCode", "reason", "nights"])
        state.failing.append(
          Failing(
            export: try export(node, alsoAllowed: ["nights"]),
            exitCode: Int32(try entry.required("exitCode").integer(in: 0...255)),
            reason: try entry.required("reason").string(), nights: try entry.required("nights").integer(in: 1...Int.max)
          ))
      }
      if let node = object["attempt"] { state.attempt = try export(node) }
      state.pending = try (object["pending"]?.array() ?? []).map(record)
      state.outbox = try (object["outbox"]?.array() ?? []).map(record)
      for node in try object["batches"]?.array() ?? [] {
        let entry = try node.object(allowed: ["records"], required: ["records"])
        state.batches.append(Batch(records: try records(entry.required("records"))))
      }
      for node in try object["quarantinedBatches"]?.array() ?? [] {
        let entry = try node.object(
          allowed: ["status", "body", "at", "records"], required: ["status", "body", "at", "records"])
        state.quarantinedBatches.append(
          QuarantinedBatch(
            records: try records(entry.required("records")),
            status: try entry.required("status").integer(in: 100...599),
            body: try entry.required("body").string(), at: try entry.required("at").string()))
      }
      for node in try object["influx"]?.array() ?? [] {
        let entry = try node.object(allowed: ["target", "marks"], required: ["target", "marks"])
        var marks: [String: Int64] = [:]
        for (measurement, seconds) in try entry.required("marks").entries() {
          marks[measurement] = Int64(
            try seconds.integer(in: Int(LineProtocol.timeRange.lowerBound)...Int(LineProtocol.timeRange.upperBound)))
        }
        state.influx.append(InfluxMarks(target: try entry.required("target").nonEmptyString(), marks: marks))
      }
      // Version 1 kept the emitted ids in the file itself.
      if let emitted = object["emitted"] {
        var ids: [EmittedRecords.ID] = []
        for node in try emitted.array() {
          guard let id = EmittedRecords.id(try node.string()) else { throw node.error("is not a record id (UUID)") }
          ids.append(id)
        }
        state.emitted.insert(ids)
      }
      return (state, version)
    } catch {
      var refused = error
      refused.message += "; \(StateProblem.advice)"
      throw refused
    }
  }

  private static func export(_ node: ConfigNode) throws(ConfigFileError) -> Export {
    try export(node, alsoAllowed: [])
  }

  private static func export(_ node: ConfigNode, alsoAllowed: [String]) throws(ConfigFileError) -> Export {
    let object = try node.object(
      allowed: ["sha256", "name", "bytes", "exitCode", "reason"] + alsoAllowed, required: ["sha256", "name", "bytes"])
    let sha = try object.required("sha256").string()
    guard sha.utf8.count == 64, sha.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
    else { throw try object.required("sha256").error("must be 64 lower-case hex digits") }
    return Export(
      sha256: sha, name: try object.required("name").string(),
      bytes: Int64(try object.required("bytes").integer(in: 0...Int.max)))
  }

  /// A batch's records: at least one.
  private static func records(_ node: ConfigNode) throws(ConfigFileError) -> [WorkoutServerRecord] {
    let list = try node.array()
    guard !list.isEmpty else { throw node.error("is empty; a batch holds at least one record") }
    return try list.map(record)
  }

  private static func record(_ node: ConfigNode) throws(ConfigFileError) -> WorkoutServerRecord {
    let names = WorkoutTables.records.columnNames
    let object = try node.object(allowed: names, required: names)
    var values: [String] = []
    for name in names { values.append(try object.required(name).string()) }
    guard EmittedRecords.id(values[6]) != nil else {
      throw try object.required("recordUuid").error("is not a record id (UUID)")
    }
    return WorkoutServerRecord(
      recordDate: values[0], execTypeCode: values[1], execStartTime: values[2], execEndTime: values[3],
      execRuntime: values[4], deviceTypeCode: values[5], recordUuid: values[6])
  }

  // MARK: - Writing

  /// Stages the state and the emitted ids in `transaction`. A commit that changes no id (a
  /// delivery) passes `ids: false`: the folder's `.healthetl-emitted` is then carried over as it is.
  ///
  /// The records go to the file one at a time, never all as text at once (their number grows
  /// with the workouts; Pipelines/docs/workouts.md, "Memory").
  func write(to transaction: OutputTransaction, ids writeIDs: Bool = true) throws(OutputError) {
    try write(to: transaction, ids: writeIDs, outboxTail: nil)
  }

  /// As `write(to:ids:)`, the outbox followed by the records of `outboxTail`.
  private func write(to transaction: OutputTransaction, ids writeIDs: Bool, outboxTail: Tail?) throws(OutputError) {
    // Quarantined batches quote what the server answered: readable by the folder's owner only.
    let file = try transaction.create(ToolFiles.state, ownerOnly: true)
    var out: [UInt8] = []
    func line(_ text: String) { out.append(contentsOf: Array(text.utf8)) }
    func quoted(_ text: String) -> String {
      var bytes: [UInt8] = []
      JSONText.appendString(text, to: &bytes)
      return String(decoding: bytes, as: UTF8.self)
    }
    func list(_ key: String, _ items: [String], last: Bool = false) {
      line("  \(quoted(key)): [")
      line(items.isEmpty ? "" : "\n    " + items.joined(separator: ",\n    ") + "\n  ")
      line(last ? "]\n" : "],\n")
    }
    func export(_ entry: Export) -> String {
      "{\"sha256\": \(quoted(entry.sha256)), \"name\": \(quoted(entry.name)), \"bytes\": \(entry.bytes)"
    }
    // Without batches the state is written as version 2, byte for byte what a healthetl that
    // cannot deliver writes and reads; with batches it is version 3, which such a healthetl
    // refuses instead of dropping the queue; with failing exports version 4, with an attempt
    // under way version 5, likewise.
    let delivering = !batches.isEmpty || !quarantinedBatches.isEmpty
    let version = attempt != nil ? 6 : !influx.isEmpty ? 5 : !failing.isEmpty ? 4 : delivering ? 3 : 2
    line("{\n  \"version\": \(version),\n  \"sequence\": \(sequence),\n")
    list("processed", processed.map { export($0) + "}" })
    list(
      "quarantined",
      quarantined.map { export($0.export) + ", \"exitCode\": \($0.exitCode), \"reason\": \(quoted($0.reason))}" })
    if !failing.isEmpty {
      list(
        "failing",
        failing.map {
          export($0.export)
            + ", \"exitCode\": \($0.exitCode), \"reason\": \(quoted($0.reason)), \"nights\": \($0.nights)}"
        })
    }
    if !influx.isEmpty {
      list(
        "influx",
        influx.map { entry in
          let marks = entry.marks.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
          return "{\"target\": \(quoted(entry.target)), \"marks\": {"
            + marks.map { "\(quoted($0.key)): \($0.value)" }.joined(separator: ", ") + "}}"
        })
    }
    if let attempt { line("  \"attempt\": \(export(attempt))},\n") }
    try Self.list(of: pending, key: quoted("pending"), last: false, out: &out, file: file)
    try Self.list(of: outbox, then: outboxTail, key: quoted("outbox"), last: !delivering, out: &out, file: file)
    func records(_ list: [WorkoutServerRecord]) -> String {
      "\"records\": [\n      " + list.map(Self.json).joined(separator: ",\n      ") + "\n    ]}"
    }
    if delivering {
      list("batches", batches.map { "{" + records($0.records) })
      list(
        "quarantinedBatches",
        quarantinedBatches.map {
          "{\"status\": \($0.status), \"body\": \(quoted($0.body)), \"at\": \(quoted($0.at)), " + records($0.records)
        }, last: true)
    }
    line("}\n")
    try file.write(out)
    try file.close()
    // A state read from version 1 has no id file yet: it is written whatever the caller says.
    var info = stat()
    if !writeIDs, lstat(transaction.committedPath(ToolFiles.emitted), &info) == 0 { return }
    let ids = try transaction.create(ToolFiles.emitted)
    try ids.write(emitted.encoded())
    try ids.close()
  }

  /// `  "key": [` and `records` then those of `tail` one a line (indented 4), then `]`: what
  /// `list` writes of their `json`, passed to `file` as it goes (after what `out` holds).
  private static func list(
    of records: [WorkoutServerRecord], then tail: Tail? = nil, key: String, last: Bool, out: inout [UInt8],
    file: OutputFile
  ) throws(OutputError) {
    out.append(contentsOf: Array("  \(key): [".utf8))
    try file.write(out)
    out.removeAll(keepingCapacity: true)
    try appendRecords(records, startingTheList: true, to: file)
    if let tail { try tail.append(startingTheList: records.isEmpty, to: file) }
    if !records.isEmpty || (tail?.count ?? 0) > 0 { out.append(contentsOf: Array("\n  ".utf8)) }
    out.append(contentsOf: Array((last ? "]\n" : "],\n").utf8))
  }

  /// Each record's `json` on a line of its own, indented 4, after a comma but for the list's
  /// first; straight into `file`.
  private static func appendRecords(_ records: [WorkoutServerRecord], startingTheList: Bool, to file: OutputFile)
    throws(OutputError)
  {
    for (index, record) in records.enumerated() {
      try appendRecord(record, startingTheList: startingTheList && index == 0, to: file)
    }
  }

  /// One record of `appendRecords`.
  private static func appendRecord(_ record: WorkoutServerRecord, startingTheList: Bool, to file: OutputFile)
    throws(OutputError)
  {
    try file.append { out in
      if !startingTheList { out.append(UInt8(ascii: ",")) }
      out.append(contentsOf: "\n    ".utf8)
      appendJSON(record, to: &out)
    }
  }

  /// One record as a JSON object, fields in the order of the server contract.
  static func json(_ record: WorkoutServerRecord) -> String {
    var bytes: [UInt8] = []
    appendJSON(record, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// `json(record)`'s bytes, appended.
  static func appendJSON(_ record: WorkoutServerRecord, to bytes: inout [UInt8]) {
    bytes.append(UInt8(ascii: "{"))
    for (index, (name, value)) in zip(WorkoutTables.records.columnNames, record.fieldValues).enumerated() {
      if index > 0 { bytes.append(contentsOf: [UInt8(ascii: ","), UInt8(ascii: " ")]) }
      JSONText.appendString(name, to: &bytes)
      bytes.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: " ")])
      JSONText.appendString(value, to: &bytes)
    }
    bytes.append(UInt8(ascii: "}"))
  }

  // MARK: - Deltas

  /// What a delta took.
  struct Delta {
    /// The delta's sequence number.
    var sequence: Int
    /// How many of the records it was given were fresh: neither emitted in a final delta nor
    /// pending, and not given before in the same delta.
    var fresh: Int
  }

  /// Stages the next delta: the pending records plus the fresh ones of `sources`, in order (each
  /// id once; none emitted in a final delta or already pending); a final delta makes them
  /// emitted. `sources` are read in order, never all at once (Pipelines/docs/workouts.md,
  /// "Memory"); the fresh records then join `pending` or `outbox`.
  @discardableResult
  mutating func commitDelta(adding sources: [WorkoutServerRecords], final: Bool, to transaction: OutputTransaction)
    throws(OutputError) -> Delta
  {
    try commit(adding: sources, final: final, keepingFresh: true, to: transaction)
  }

  /// As `commitDelta(adding:final: true, to:)` for a state nothing reads afterwards (a run's): the
  /// fresh records go from `sources` into the staged state's outbox, read a second time, and are
  /// never all in memory (Pipelines/docs/workouts.md, "Memory").
  consuming func commitFinalDelta(adding sources: [WorkoutServerRecords], to transaction: OutputTransaction)
    throws(OutputError) -> Delta
  {
    try commit(adding: sources, final: true, keepingFresh: false, to: transaction)
  }

  /// `commitDelta`; without `keepingFresh`, the fresh records of a final delta are written to the
  /// state's outbox from `sources` and are not in `outbox`.
  private mutating func commit(
    adding sources: [WorkoutServerRecords], final: Bool, keepingFresh: Bool, to transaction: OutputTransaction
  ) throws(OutputError) -> Delta {
    sequence += 1
    // Written a record at a time, never all as text at once (Pipelines/docs/workouts.md, "Memory").
    let file = try transaction.create(ToolFiles.newRecords)
    try file.write(Array("{\n  \"sequence\": \(sequence),\n  \"final\": \(final),\n  \"records\": [".utf8))
    try Self.appendRecords(pending, startingTheList: true, to: file)
    var seen = Set(pending.compactMap { EmittedRecords.id($0.recordUuid).map(RecordKey.init) })
    var listed = !pending.isEmpty
    var freshIDs: [EmittedRecords.ID] = []
    var kept: [WorkoutServerRecord] = []
    // Without `keepingFresh`: which records of `sources` are fresh, for the second reading.
    var taken: [Bool] = []
    let known = emitted
    for source in sources {
      try source.forEach { (record) throws(OutputError) in
        let id = EmittedRecords.id(record.recordUuid)
        let fresh = id.map { !known.contains($0) && seen.insert(RecordKey($0)).inserted } ?? false
        if !keepingFresh { taken.append(fresh) }
        guard fresh, let id else { return }
        try Self.appendRecord(record, startingTheList: !listed, to: file)
        listed = true
        freshIDs.append(id)
        if keepingFresh { kept.append(record) }
      }
    }
    try file.write(Array(((listed ? "\n  " : "") + "]\n}\n").utf8))
    try file.close()
    let delta = Delta(sequence: sequence, fresh: freshIDs.count)
    guard final else {
      pending += kept
      try write(to: transaction)
      return delta
    }
    emitted.insert(pending.compactMap { EmittedRecords.id($0.recordUuid) } + freshIDs)
    outbox += pending
    pending = []
    if keepingFresh {
      outbox += kept
      try write(to: transaction)
    } else {
      try write(to: transaction, ids: true, outboxTail: Tail(sources: sources, taken: taken, count: freshIDs.count))
    }
    return delta
  }

  /// A record id as a set member.
  private struct RecordKey: Hashable {
    var high: UInt64
    var low: UInt64

    init(_ id: EmittedRecords.ID) {
      high = id.0
      low = id.1
    }
  }

  /// Records of `sources` that end the state's outbox without being held: those `taken`, in order.
  private struct Tail {
    var sources: [WorkoutServerRecords]
    var taken: [Bool]
    /// How many are taken.
    var count: Int

    func append(startingTheList: Bool, to file: OutputFile) throws(OutputError) {
      var index = 0
      var first = startingTheList
      for source in sources {
        try source.forEach { (record) throws(OutputError) in
          defer { index += 1 }
          guard taken[index] else { return }
          try DeliveryState.appendRecord(record, startingTheList: first, to: file)
          first = false
        }
      }
    }
  }
}

/// What to do about a state file that cannot be used.
enum StateProblem {
  static let advice =
    "it records what this folder has delivered: restore it from a backup, or move it (and "
    + ".healthetl-emitted) away to start over, after which every workout is delivered again"
}
