import Foundation
import HealthExtract
import HealthModel
public import RunExecution

/// `healthetl nightly`: every export in the inbox not processed yet (by content hash), oldest
/// first, each as one atomic run into the output folder, under the folder's lock
/// (Pipelines/docs/nightly.md, "Runs and the nightly batch").
///
/// Safe to kill at any moment: an export's outputs, the state recording it as processed, and the
/// delta it adds to `workout_records.new.json` are committed together or not at all. An export
/// that is not a usable export is quarantined — recorded in the state with its reason and skipped
/// until its content changes — so one bad file never blocks the exports after it; so is one whose
/// run fails in a way that may be its own doing on `failingNightsLimit` nights in a row (`Fault`).
public enum NightlyBatch {
  /// Nights in a row an export may fail with an unclear fault before it is quarantined.
  public static let failingNightsLimit = 3

  public struct Options: Sendable {
    public var inbox: String
    /// `--out`, resolved once (`OutputFolder`).
    public var output: OutputFolder
    public var outputDirectory: String {
      get { output.given }
      set { output = OutputFolder(newValue) }
    }
    public var plan: RunPlan
    public var zone: RunZone.Request = .auto
    /// Progress shows only when stderr is a terminal anyway (never under cron).
    public var quiet = false
    /// Where to deliver the workout records at the end of the night (`--deliver URL`).
    public var delivery: DeliverySettings?
    /// Where to push the line protocol at the end of the night (`--influx URL`).
    public var influx: InfluxSettings?
    /// The threads of the night's runs.
    public var executor: RunExecutor
    /// How many bytes each export's outputs may take for its size (`--output-budget`).
    public var outputBudget = OutputBudget.standard

    public init(inbox: String, outputDirectory: String, plan: RunPlan, executor: RunExecutor) {
      self.inbox = inbox
      output = OutputFolder(outputDirectory)
      self.plan = plan
      self.executor = executor
    }
  }

  public struct Result: Sendable {
    /// Inbox files processed this night, in order.
    public var processed: [String] = []
    /// Inbox files skipped because their content was processed before.
    public var alreadyProcessed = 0
    /// Exports quarantined this night.
    public var quarantined: [DeliveryState.Quarantined] = []
    /// Exports quarantined on an earlier night and still in the inbox unchanged.
    public var stillQuarantined: [DeliveryState.Quarantined] = []
    /// The night's final delta.
    public var sequence = 0
    /// Records in it.
    public var newWorkoutRecords = 0
    /// What the delivery after the night did (`--deliver`).
    public var delivery: WorkoutDelivery.Result?
    /// What the push of the line protocol after the night did (`--influx`).
    public var influxDelivery: InfluxDelivery.Result?

    /// A quarantined export (65) and what the deliveries say, whichever needs the operator more:
    /// a refused client (64), then anything quarantined or rejected (65), then what is left for
    /// the next night (75).
    public var exitCode: ExitCode {
      let codes: [ExitCode] = [
        quarantined.isEmpty ? .success : .dataError, delivery?.exitCode ?? .success,
        influxDelivery?.exitCode ?? .success,
      ]
      return [ExitCode.usage, .dataError, .temporaryFailure].first(where: codes.contains) ?? .success
    }
  }

  public static func run(_ options: Options) throws(ETLError) -> Result {
    do {
      try options.delivery?.validate()
      try options.influx?.validate()
    } catch { throw .delivery(error) }
    let lock: OutputLock
    // The inbox may sit inside the output folder (its exports are read before the swap), so
    // only the folder itself is checked here.
    do {
      try OutputFolderCheck.check(options.output, input: nil)
      lock = try OutputLock(options.output)
    } catch { throw .output(error) }
    defer { lock.release() }
    var result = Result()
    var candidates = try inboxFiles(options.inbox)
    try countDeath(candidates, options, into: &result)
    // An export whose run died on an earlier night goes after the others, so that it cannot stop
    // them again while its deaths are counted.
    let died = Set(try loadState(options.outputDirectory).failing.filter { $0.exitCode == diedCode }.map(\.export.name))
    candidates = candidates.filter { !died.contains($0.name) } + candidates.filter { died.contains($0.name) }
    for candidate in candidates {
      let state = try loadState(options.outputDirectory)
      let export: DeliveryState.Export
      do {
        export = DeliveryState.Export(
          sha256: try sha256(ofFile: candidate.path), name: candidate.name, bytes: candidate.bytes)
      } catch let error where Fault.of(error) == .machine {
        // No descriptor left to open it with: the machine's, not the file's.
        throw error
      } catch {
        // Unreadable: quarantined by name (there is no content to key it by) until it can be read.
        let unreadable = DeliveryState.Export(
          sha256: String(repeating: "0", count: 64), name: candidate.name, bytes: candidate.bytes)
        if let known = state.quarantined.first(where: { $0.export == unreadable }) {
          result.stillQuarantined.append(known)
        } else {
          try quarantine(unreadable, error, options, into: &result)
        }
        continue
      }
      if state.processed.contains(where: { $0.sha256 == export.sha256 }) {
        result.alreadyProcessed += 1
        continue
      }
      if let known = state.quarantined.first(where: { $0.export.sha256 == export.sha256 }) {
        // Quarantined tonight already (its run died on the nights before) or on an earlier night.
        if !result.quarantined.contains(known) { result.stillQuarantined.append(known) }
        continue
      }
      var run = ExportRun.RunOptions(input: .path(candidate.path), plan: options.plan, executor: options.executor)
      run.output = options.output
      run.zone = options.zone
      run.quiet = options.quiet
      run.nightlyEntry = export
      run.outputBudget = options.outputBudget
      // Durably first: a run that dies (a signal, an abort, out of memory) leaves it set.
      try requireDescriptorHeadroom(opening: candidate.path)
      var attempting = state
      attempting.attempt = export
      try commit(attempting, options)
      do {
        _ = try ExportRun.run(run)
        result.processed.append(candidate.name)
      } catch {
        switch Fault.of(error) {
        case .export: try quarantine(export, error, options, into: &result)
        case .machine:
          // Not the export's: the attempt goes if it can (a disk still full leaves it, and the
          // next night counts it as a death; three nights of that in a row are needed).
          var cleared = attempting
          cleared.attempt = nil
          try? commit(cleared, options)
          throw error
        case .unclear: try countFailure(export, error, options, into: &result)
        }
      }
    }
    try finishNight(options, candidates: candidates, into: &result)
    // At the end of the night, under the same lock: the night's final delta is in the outbox.
    if let delivery = options.delivery {
      result.delivery =
        delivery.dryRun
        ? try WorkoutDelivery.dryRun(options.output, delivery)
        : try WorkoutDelivery.deliver(options.output, delivery)
    }
    if let influx = options.influx {
      result.influxDelivery = try InfluxDelivery.deliver(options.output, influx)
    }
    return result
  }

  static func loadState(_ directory: String) throws(ETLError) -> DeliveryState {
    do { return try DeliveryState.load(from: directory) } catch { throw .state(error) }
  }

  /// Whose fault a failed run of one export is (Pipelines/docs/nightly.md, "Runs and the nightly batch").
  enum Fault: Equatable {
    /// Not a usable export (not an export, cut short, malformed, unreadable): quarantined at once.
    case export
    /// The machine's, the pipelines' or the output folder's: a full disk, a disk that failed while
    /// the export was read, no permission, the limit of open files (whatever was being opened:
    /// the export, a pipeline, an output, the database, the workbook's row files), a lock, a bad
    /// pipeline or state. The night stops; the export is tried again the next night, however often.
    case machine
    /// Any other failure to write the outputs, which an export's content might cause: the night
    /// stops, and the export is quarantined once it has failed with the same exit code on
    /// `failingNightsLimit` nights in a row, so that it cannot hold the exports after it forever.
    case unclear

    static func of(_ error: ETLError) -> Fault {
      switch error {
      case .extract(.readFailed), .extract(.tooManyOpenFiles): return .machine
      case .extract, .strictRejection, .nothingUsable, .output(.overBudget): return .export
      case .output(.cannotCreate(_, _, let code)), .output(.ioError(_, _, let code)):
        return code.map(machineCodes.contains) == true ? .machine : .unclear
      case .output, .zone, .pipeline, .state, .delivery: return .machine
      case .exportFailing(_, _, _, let cause): return of(cause)
      }
    }

    /// The system's errors of a machine rather than of what is written: a full disk or quota, a
    /// failing disk, a read-only or forbidden place, no memory, the system's table of open files
    /// full. Told by the error number the output error carries (from a system call, SQLite or
    /// libxlsxwriter), never by its words: SQLite says a full disk as "database or disk is full".
    static let machineCodes: Set<Int32> = [ENOSPC, EDQUOT, EIO, EROFS, EACCES, EPERM, ENOMEM, ENFILE, EMFILE]
  }

  /// The exit code kept for a run that died without one (killed by a signal, aborted, out of
  /// memory) in `failing` and `quarantined`.
  static let diedCode: Int32 = 0

  /// Counts the death of the run a night left unfinished (the state's `attempt` still set when a
  /// night starts) as one night that export failed, in a commit of its own; on the
  /// `failingNightsLimit`-th night in a row it is quarantined. The night goes on either way. A
  /// machine's crash (power loss, a kernel panic) cannot be told from the export's: it counts
  /// too, and takes as many nights in a row to quarantine (Pipelines/README.md, "Runs and the
  /// nightly batch").
  static func countDeath(_ candidates: [Candidate], _ options: Options, into result: inout Result) throws(ETLError) {
    var state = try loadState(options.outputDirectory)
    guard let export = state.attempt else { return }
    state.attempt = nil
    // Killed after its commit (already processed), or since taken out of the inbox: nothing to count.
    let present = candidates.contains { $0.name == export.name }
    if present, !state.processed.contains(where: { $0.sha256 == export.sha256 }) {
      let earlier = state.failing.first { $0.export.sha256 == export.sha256 && $0.exitCode == diedCode }
      let nights = (earlier?.nights ?? 0) + 1
      state.failing.removeAll { $0.export.sha256 == export.sha256 }
      let reason =
        "its run died (killed by a signal, aborted or out of memory) on \(nights) night(s) in a row, "
        + "without an exit code"
      if nights >= failingNightsLimit {
        let entry = DeliveryState.Quarantined(export: export, exitCode: diedCode, reason: reason)
        state.quarantined.append(entry)
        result.quarantined.append(entry)
      } else {
        state.failing.append(.init(export: export, exitCode: diedCode, reason: reason, nights: nights))
      }
    }
    try commit(state, options)
  }

  /// Records `export` as unusable, in a commit of its own.
  static func quarantine(
    _ export: DeliveryState.Export, _ error: ETLError, _ options: Options, into result: inout Result
  ) throws(ETLError) {
    var state = try loadState(options.outputDirectory)
    state.attempt = nil
    let entry = DeliveryState.Quarantined(
      export: export, exitCode: error.exitCode.rawValue, reason: quarantineReason(error))
    state.quarantined.append(entry)
    try commit(state, options)
    result.quarantined.append(entry)
  }

  /// Why an export is quarantined, short. A night never reads past damage; for XML broken in the
  /// middle, or an export cut short, the reason keeps where and what, and names what keeps the
  /// rest by hand (Pipelines/docs/input.md, "Bad input").
  static func quarantineReason(_ error: ETLError) -> String {
    switch error {
    case .extract(.malformed(_, let line, let column, let message)):
      return ConfigNode.excerpt("not well-formed XML at line \(line), column \(column): \(message)", limit: 200)
        + "; `healthetl run --recover` on it keeps what is readable"
    case .extract(.truncated(_, let line, let message)):
      // The hint comes after the cut: it is what the operator can do about it.
      return ConfigNode.excerpt("the export ends too early at line \(line): \(message)", limit: 200)
        + "; `healthetl run --allow-truncated` on it keeps what comes before"
    default:
      return ConfigNode.excerpt(error.description)
    }
  }

  /// Counts one more night on which `export` failed with an unclear fault, in a commit of its
  /// own. On the `failingNightsLimit`-th night in a row with the same exit code the export is
  /// quarantined and the night goes on; before, the night stops with the failure.
  static func countFailure(
    _ export: DeliveryState.Export, _ error: ETLError, _ options: Options, into result: inout Result
  ) throws(ETLError) {
    var state = try loadState(options.outputDirectory)
    state.attempt = nil
    let code = error.exitCode.rawValue
    let earlier = state.failing.first { $0.export.sha256 == export.sha256 && $0.exitCode == code }
    let nights = (earlier?.nights ?? 0) + 1
    state.failing.removeAll { $0.export.sha256 == export.sha256 }
    if nights >= failingNightsLimit {
      let entry = DeliveryState.Quarantined(
        export: export, exitCode: code,
        reason: "failed on \(nights) nights in a row: " + ConfigNode.excerpt(error.description, limit: 240))
      state.quarantined.append(entry)
      try commit(state, options)
      result.quarantined.append(entry)
      return
    }
    state.failing.append(
      .init(export: export, exitCode: code, reason: ConfigNode.excerpt(error.description, limit: 240), nights: nights))
    // The failure is what the operator must see, even when its count cannot be written.
    do throws(ETLError) { try commit(state, options) } catch _ { throw error }
    throw .exportFailing(name: export.name, nights: nights, limit: failingNightsLimit, cause: error)
  }

  /// Commits `state` alone.
  /// Free descriptors a night needs before it writes an attempt. A commit swaps its folder and
  /// then syncs the parent; at the last descriptors (12 for the default pipeline) that sync fails
  /// after the swap, so the attempt stays on disk for a run that never started, no descriptor is
  /// left to take it back, and the next night would count a good export's death.
  static let attemptHeadroom = 8

  /// Stops the night, as the machine's fault, when fewer than `attemptHeadroom` descriptors are free.
  static func requireDescriptorHeadroom(opening path: String) throws(ETLError) {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(Int32.max),
      let open = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
    else { return }
    if Int(limit.rlim_cur) - open < attemptHeadroom {
      throw .output(.tooManyOpenFiles(path: path, limit: Int(limit.rlim_cur)))
    }
  }

  static func commit(_ state: DeliveryState, _ options: Options) throws(ETLError) {
    do {
      let transaction = try OutputTransaction(options.output)
      try state.write(to: transaction)
      try transaction.commit()
    } catch {
      throw .output(error)
    }
  }

  /// The end of a night: the delta becomes final, and `run.json` says what the night did.
  /// Quarantine entries of files no longer in the inbox are dropped.
  static func finishNight(_ options: Options, candidates: [Candidate], into result: inout Result) throws(ETLError) {
    var state = try loadState(options.outputDirectory)
    let present = Set(candidates.map(\.name))
    state.quarantined.removeAll { !present.contains($0.export.name) }
    state.failing.removeAll { !present.contains($0.export.name) }
    result.newWorkoutRecords = state.pending.count
    do {
      let transaction = try OutputTransaction(options.output)
      result.sequence = try state.commitDelta(adding: [], final: true, to: transaction).sequence
      try writeNightReport(result, state: state, transaction: transaction)
      try transaction.commit()
    } catch {
      throw .output(error)
    }
  }

  /// Adds the night's summary to the last export's `run.json` (or starts one).
  static func writeNightReport(_ result: Result, state: DeliveryState, transaction: OutputTransaction)
    throws(OutputError)
  {
    var report = try RunReport.readForAmending(transaction.committedPath(ToolFiles.runReport)) ?? [:]
    func describe(_ entry: DeliveryState.Quarantined) -> [String: Any] {
      [
        "name": entry.export.name, "sha256": entry.export.sha256, "exitCode": Int(entry.exitCode),
        "reason": entry.reason,
      ]
    }
    report["nightly"] = [
      "processed": result.processed, "alreadyProcessed": result.alreadyProcessed,
      "quarantined": result.quarantined.map(describe), "stillQuarantined": result.stillQuarantined.map(describe),
    ]
    report["delta"] = [
      "file": ToolFiles.newRecords, "sequence": result.sequence, "final": true, "records": result.newWorkoutRecords,
    ]
    // A delivery section (from a delivery run into this folder) quotes what servers answered.
    _ = try JSONOutput.write(
      report, to: transaction, path: ToolFiles.runReport,
      ownerOnly: report["delivery"] != nil || report[InfluxDelivery.reportKey] != nil)
  }

  struct Candidate {
    var path: String
    var name: String
    var bytes: Int64
    var modified: Int64
  }

  /// Exports in the inbox (`.zip` and `.xml` files), oldest first, then by name. A symbolic link
  /// counts as the file it points to (the inbox is the user's: an export kept elsewhere may be
  /// linked into it); anything that is not a regular file — a FIFO, a socket, a device, a folder,
  /// a dangling link — is passed over without being opened.
  static func inboxFiles(_ inbox: String) throws(ETLError) -> [Candidate] {
    let names: [String]
    do { names = try FileManager.default.contentsOfDirectory(atPath: inbox) } catch {
      // Only a missing inbox is one: a limit of open files reached is said as such.
      let code = OutputError.systemCode(of: error)
      if let code, ExtractError.isOutOfDescriptors(code) { throw .extract(.openFailure(path: inbox, code: code)) }
      throw .extract(.notFound(path: inbox))
    }
    var candidates: [Candidate] = []
    for name in names where !name.hasPrefix(".") {
      let lower = name.lowercased()
      guard lower.hasSuffix(".zip") || lower.hasSuffix(".xml") else { continue }
      let path = inbox + "/" + name
      var info = stat()
      guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
      candidates.append(
        Candidate(path: path, name: name, bytes: Int64(info.st_size), modified: Int64(info.st_mtim.tv_sec)))
    }
    return candidates.sorted { ($0.modified, $0.name) < ($1.modified, $1.name) }
  }

  /// The SHA-256 of the regular file `path`. It is opened without waiting and checked once open,
  /// so an entry swapped for a FIFO or a device since the inbox was listed is refused, not read.
  static func sha256(ofFile path: String) throws(ETLError) -> String {
    let fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
    guard fd >= 0 else { throw .extract(.openFailure(path: path, code: errno)) }
    var info = stat()
    guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
      close(fd)
      throw .extract(.unreadable(path: path, reason: "not a regular file"))
    }
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
    defer { close(fd) }
    do { return try InputDigest.sha256(reading: fd) ?? "" } catch {
      throw .extract(.unreadable(path: path, reason: error.reason))
    }
  }
}
