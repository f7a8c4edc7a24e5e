import Foundation

/// `healthetl deliver` and `healthetl nightly --deliver`: posts the workout server records an
/// output folder has emitted and no server has acknowledged yet (Pipelines/README.md,
/// "Delivering to a server").
///
/// The queue is the folder's delivery state. A run first seals the `outbox` into batches and
/// commits them, so a batch keeps its records — and its idempotency key — on every attempt of
/// every run, however many records arrive in between. Then it sends the batches in order. A 2xx
/// removes a batch from the state in a commit of its own (state and log only; the outputs are
/// carried over), so a run killed at any moment loses nothing and sends again only the batch in
/// flight, under the same key. A 4xx that is about the batch moves it to the quarantine and the
/// run goes on; a failure that may pass (no connection, a timeout, 408, 429, 5xx) is retried
/// with exponential backoff and jitter within bounds, then left for the next run; a refusal of
/// the client itself (a redirect, 401, 403, 404, 405, 407, a certificate not trusted) stops the
/// run with everything still queued, since every batch would fare the same.
public enum WorkoutDelivery {
  public struct Result: Sendable {
    /// The endpoint, without query or user information.
    public var url: String
    /// Batches sealed from the outbox by this run.
    public var sealedBatches = 0
    /// Records put back into the queue from the quarantine (`--retry-quarantined`).
    public var requeuedRecords = 0
    public var acknowledgedBatches = 0
    public var acknowledgedRecords = 0
    /// Batches quarantined by this run.
    public var quarantined: [DeliveryState.QuarantinedBatch] = []
    /// Batches quarantined by earlier runs and not put back.
    public var stillQuarantined: [DeliveryState.QuarantinedBatch] = []
    /// Records neither acknowledged nor quarantined when the run ended.
    public var pendingRecords = 0
    /// Why the run stopped with records still queued; nil when it did not.
    public var stopped: String?
    /// The server or the TLS setup refused the client itself: nothing will go through until the
    /// URL, the token or the CA changes.
    public var refused = false
    /// HTTP requests made.
    public var requests = 0
    public var seconds = 0.0
    /// `--dry-run`: each request that would be sent, headers then body (the token hidden).
    public var dryRun: [(headers: [String], body: String)]?

    public var exitCode: ExitCode {
      if refused { return .usage }
      if !quarantined.isEmpty { return .dataError }
      if stopped != nil { return .temporaryFailure }
      return .success
    }
  }

  /// Delivers under the folder's lock (exit 75 when another run holds it).
  public static func run(outputDirectory: String, settings: DeliverySettings) throws(ETLError) -> Result {
    do { try settings.validate() } catch { throw .delivery(error) }
    let folder = OutputFolder(outputDirectory)
    if settings.dryRun { return try dryRun(folder, settings) }
    let lock: OutputLock
    do { lock = try OutputLock(folder) } catch { throw .output(error) }
    defer { lock.release() }
    return try deliver(folder, settings)
  }

  /// What a delivery would send, without sending or writing anything.
  static func dryRun(_ folder: OutputFolder, _ settings: DeliverySettings) throws(ETLError) -> Result {
    let directory = folder.given
    var state = try NightlyBatch.loadState(directory)
    var result = Result(url: settings.displayURL)
    var log = DeliveryLog(progress: nil)
    queue(&state, settings, into: &result, log: &log)
    result.stillQuarantined = state.quarantinedBatches
    result.dryRun = state.batches.map { (headers($0.key, settings, hideToken: true), payload($0)) }
    result.pendingRecords = state.undelivered
    return result
  }

  /// Delivers with the folder's lock already held (by this run or by the nightly batch).
  static func deliver(_ folder: OutputFolder, _ settings: DeliverySettings) throws(ETLError) -> Result {
    let directory = folder.given
    let started = ContinuousClock.now
    let deadline = started + .milliseconds(Int64(settings.maxTime * 1000))
    var result = Result(url: settings.displayURL)
    var log = DeliveryLog(progress: settings.progress)
    var info = stat()
    guard lstat(directory + "/" + ToolFiles.state, &info) == 0 else {
      // A folder no run has written into has nothing to deliver, and gets nothing written.
      log.add("nothing to deliver: \(directory) has no \(ToolFiles.state)")
      return result
    }
    var state = try NightlyBatch.loadState(directory)
    if queue(&state, settings, into: &result, log: &log) { try commit(folder, state: state, log: &log) }
    result.stillQuarantined = state.quarantinedBatches
    if state.batches.isEmpty { log.add("nothing to deliver") }

    let client = HTTPClient(caFile: settings.caFile, proxyAllowed: settings.proxyAllowed)
    sending: while let batch = state.batches.first {
      let key = batch.key
      let label = "batch \(key) (\(batch.records.count) record\(batch.records.count == 1 ? "" : "s"))"
      let body = Array(payload(batch).utf8)
      let requestHeaders = headers(key, settings, hideToken: false)
      var attempt = 0
      while true {
        attempt += 1
        let left = seconds(deadline - ContinuousClock.now)
        guard left > 0 else {
          result.stopped = "the delivery's time (--max-time \(number(settings.maxTime)) s) ran out"
          log.add("\(label): not sent, \(result.stopped!)")
          break sending
        }
        result.requests += 1
        let response = client.post(
          url: settings.url, headers: requestHeaders, body: body, timeout: min(settings.timeout, left))
        switch verdict(response, token: settings.token) {
        case .acknowledged(let status):
          state.batches.removeFirst()
          result.acknowledgedBatches += 1
          result.acknowledgedRecords += batch.records.count
          log.add("\(label): HTTP \(status), acknowledged")
          try commit(folder, state: state, log: &log)
          continue sending
        case .rejected(let status, let excerpt):
          state.batches.removeFirst()
          let entry = DeliveryState.QuarantinedBatch(
            records: batch.records, status: status, body: excerpt, at: DeliveryLog.timestamp())
          state.quarantinedBatches.append(entry)
          result.quarantined.append(entry)
          log.add("\(label): HTTP \(status), quarantined: \(excerpt.isEmpty ? "(empty body)" : excerpt)")
          try commit(folder, state: state, log: &log)
          continue sending
        case .refused(let reason):
          result.refused = true
          result.stopped = reason
          log.add("\(label): \(reason); stopped, every record stays queued")
          break sending
        case .retry(let reason, let retryAfter):
          guard attempt < settings.attempts else {
            result.stopped = "\(reason) on the last of \(settings.attempts) attempts"
            log.add("\(label): \(result.stopped!); left queued for the next run")
            break sending
          }
          var delay = backoff(after: attempt, settings)
          if let retryAfter { delay = max(delay, retryAfter) }
          guard delay < seconds(deadline - ContinuousClock.now) else {
            result.stopped =
              "\(reason); the next attempt (in \(number(delay)) s\(retryAfter != nil ? ", as Retry-After asks" : "")) would start past --max-time"
            log.add("\(label): \(result.stopped!); left queued for the next run")
            break sending
          }
          log.add("\(label): \(reason), attempt \(attempt) of \(settings.attempts); retrying in \(number(delay)) s")
          Thread.sleep(forTimeInterval: delay)
        }
      }
    }
    result.pendingRecords = state.undelivered
    result.seconds = seconds(ContinuousClock.now - started)
    log.add(
      "\(result.acknowledgedRecords) record(s) in \(result.acknowledgedBatches) batch(es) acknowledged, "
        + "\(result.quarantined.count) batch(es) quarantined, \(result.pendingRecords) record(s) still queued")
    try commit(folder, state: nil, log: &log, report: report(result))
    return result
  }

  /// Puts quarantined records back when asked, and seals the outbox into batches. Returns
  /// whether the state changed.
  @discardableResult
  static func queue(
    _ state: inout DeliveryState, _ settings: DeliverySettings, into result: inout Result, log: inout DeliveryLog
  ) -> Bool {
    var changed = false
    if settings.retryQuarantined, !state.quarantinedBatches.isEmpty {
      let records = state.quarantinedBatches.flatMap(\.records)
      log.add(
        "put \(records.count) record(s) of \(state.quarantinedBatches.count) quarantined batch(es) back in the queue")
      // Ahead of the outbox: they were emitted first.
      state.outbox = records + state.outbox
      state.quarantinedBatches = []
      result.requeuedRecords = records.count
      changed = true
    }
    guard !state.outbox.isEmpty else { return changed }
    let sealed = stride(from: 0, to: state.outbox.count, by: settings.batchSize).map {
      DeliveryState.Batch(records: Array(state.outbox[$0..<min($0 + settings.batchSize, state.outbox.count)]))
    }
    log.add("sealed \(state.outbox.count) record(s) into \(sealed.count) batch(es) of at most \(settings.batchSize)")
    state.batches += sealed
    state.outbox = []
    result.sealedBatches = sealed.count
    return true
  }

  /// The request body: a JSON array of the batch's records, each with the seven fields of the
  /// server contract in order.
  static func payload(_ batch: DeliveryState.Batch) -> String {
    "[" + batch.records.map(DeliveryState.json).joined(separator: ",") + "]"
  }

  /// The request headers. With `hideToken`, the `Authorization` value names where the token
  /// comes from instead of showing it.
  static func headers(_ key: String, _ settings: DeliverySettings, hideToken: Bool) -> [String] {
    var lines = [
      "Content-Type: application/json", "Accept: application/json", "Idempotency-Key: \(key)",
      "User-Agent: \(settings.userAgent)",
    ]
    if let token = settings.token {
      lines.append("Authorization: Bearer " + (hideToken ? "<\(token), hidden>" : token.value))
    }
    return lines
  }

  enum Verdict: Equatable {
    case acknowledged(Int)
    /// A 4xx about the batch: quarantined, with the body's excerpt.
    case rejected(Int, String)
    /// Nothing will go through until the setup changes.
    case refused(String)
    /// May go through later; `after` is the server's Retry-After in seconds.
    case retry(String, after: Double?)
  }

  /// - Parameter option: the option that gave the URL, for messages (`--url`, `--influx`).
  static func verdict(
    _ outcome: Swift.Result<HTTPClient.Response, HTTPClient.Failure>, token: BearerToken?, option: String = "--url"
  ) -> Verdict {
    let response: HTTPClient.Response
    // libcurl's messages pass through the excerpt too: a TLS error quotes the certificate's
    // names, which the server chose.
    func clean(_ message: String) -> String { excerpt(Array(message.utf8), cutShort: false, token: token) }
    switch outcome {
    case .failure(.transient(let message)): return .retry(clean(message), after: nil)
    case .failure(.untrusted(let message)):
      return .refused("TLS: \(clean(message)) (a server with a private CA needs --ca-file)")
    case .failure(.unusable(let message)): return .refused(clean(message))
    case .success(let success): response = success
    }
    let status = response.status
    // Only a refusal or a rejection keeps what the server said, so only those pay for the
    // redaction (three passes over up to 64 KiB).
    var body: String { excerpt(response.body, cutShort: response.bodyCutShort, token: token) }
    var said: String { body.isEmpty ? "" : ": \(body)" }
    switch status {
    case 200...299: return .acknowledged(status)
    case 408, 429, 500...599:
      return .retry("HTTP \(status)", after: retryAfter(response.headers["retry-after"], now: Date()))
    case 300...399:
      return .refused("HTTP \(status), a redirect, which deliver does not follow: give \(option) the final address")
    case 401, 403, 407:
      return .refused(
        "HTTP \(status), the server refused the credentials (\(token.map(\.description) ?? "no token given"))\(said)")
    case 404, 405: return .refused("HTTP \(status), no endpoint at \(option) takes this POST\(said)")
    case 400...499: return .rejected(status, body)
    default: return .retry("HTTP \(status)", after: nil)
    }
  }

  /// The delay before the attempt after attempt `n`: `backoff × 2^(n−1)`, at most
  /// `maxBackoff`, of which a random half is dropped (jitter), so clients that failed together
  /// do not come back together.
  static func backoff(after attempt: Int, _ settings: DeliverySettings) -> Double {
    let full = min(settings.maxBackoff, settings.backoff * pow(2, Double(attempt - 1)))
    return full / 2 + Double.random(in: 0...(full / 2))
  }

  /// `Retry-After` in seconds from now: delay-seconds or an HTTP date; nil when absent or not
  /// understood.
  static func retryAfter(_ value: String?, now: Date) -> Double? {
    guard let text = value?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
    if text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) { return Double(text) }
    let format = DateFormatter()
    format.locale = Locale(identifier: "en_US_POSIX")
    format.timeZone = TimeZone(identifier: "GMT")
    format.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return format.date(from: text).map { max(0, $0.timeIntervalSince(now)) }
  }

  /// Bytes of a server's answer kept for messages, the state, the log and `run.json`.
  public static let excerptLimit = 200

  /// What is kept of a server's answer: the token, in any form a server may echo it in
  /// (`TokenEchoes`), replaced by `[token]` in the whole body read, then the start of the rest
  /// as one line — each run of white space and control characters one space — of at most
  /// `excerptLimit` bytes. `cutShort`: the server sent more than `body`. Public for the fuzz
  /// harness (Tests/Fuzz): an answer is input a machine hands over.
  public static func excerpt(_ body: [UInt8], cutShort: Bool, token: BearerToken?) -> String {
    var text = String(decoding: body, as: UTF8.self)
    if let token { text = token.redact(text, cutShort: cutShort) }
    var line = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
      guard TokenEchoes.isBlank(scalar) else {
        line.append(scalar)
        continue
      }
      if !line.isEmpty && line.last != " " { line.append(" ") }
    }
    if line.last == " " { line.removeLast() }
    guard String(line).utf8.count > excerptLimit else { return String(line) }
    let scalars = Array(line)
    var (kept, bytes) = (0, "…".utf8.count)
    while kept < scalars.count, bytes + UTF8.width(scalars[kept]) <= excerptLimit {
      bytes += UTF8.width(scalars[kept])
      kept += 1
    }
    // Never half a marker: "[tok…" would read as text the server sent.
    let marker = Array(TokenEchoes.marker.unicodeScalars)
    for split in 1..<marker.count where kept >= split && scalars[(kept - split)...].starts(with: marker) {
      kept -= split
      break
    }
    while kept > 0, scalars[kept - 1] == " " { kept -= 1 }
    return String(String.UnicodeScalarView(scalars[..<kept])) + "…"
  }

  /// One commit of the delivery: the state (when given), the new log lines, and the run
  /// report's `reportKey` section (when given). The outputs are carried over unchanged.
  static func commit(
    _ folder: OutputFolder, state: DeliveryState?, log: inout DeliveryLog, report: [String: Any]? = nil,
    reportKey: String = "delivery"
  ) throws(ETLError) {
    do {
      let transaction = try OutputTransaction(folder)
      try state?.write(to: transaction, ids: false)
      try log.write(to: transaction)
      if let report {
        var runReport = try RunReport.readForAmending(transaction.committedPath(ToolFiles.runReport)) ?? [:]
        runReport[reportKey] = report
        // It now holds what servers answered: readable by the folder's owner only.
        _ = try JSONOutput.write(runReport, to: transaction, path: ToolFiles.runReport, ownerOnly: true)
      }
      try transaction.commit()
    } catch {
      throw .output(error)
    }
    log.committed()
  }

  /// The `delivery` section of `run.json`.
  static func report(_ result: Result) -> [String: Any] {
    func describe(_ batch: DeliveryState.QuarantinedBatch) -> [String: Any] {
      [
        "key": DeliveryState.Batch(records: batch.records).key, "records": batch.records.count,
        "status": batch.status, "body": batch.body, "at": batch.at,
      ]
    }
    return [
      "url": result.url, "sealedBatches": result.sealedBatches, "requeuedRecords": result.requeuedRecords,
      "acknowledgedBatches": result.acknowledgedBatches, "acknowledgedRecords": result.acknowledgedRecords,
      "quarantined": result.quarantined.map(describe), "stillQuarantined": result.stillQuarantined.map(describe),
      "pendingRecords": result.pendingRecords, "stopped": result.stopped ?? NSNull(), "requests": result.requests,
      "seconds": (result.seconds * 1000).rounded() / 1000, "exitCode": Int(result.exitCode.rawValue),
    ]
  }

  static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
  }

  static func number(_ value: Double) -> String { String(format: "%.2f", value) }
}

/// `delivery.log`: one line per event, `<UTC time> <what happened>`. New lines are written with
/// the next commit (so a line never describes a state that was not committed), and the file
/// keeps its last `limit` lines. It quotes servers' answers, so only its owner may read it.
struct DeliveryLog {
  static let limit = 10_000
  var progress: (@Sendable (String) -> Void)?
  private var lines: [String] = []

  init(progress: (@Sendable (String) -> Void)?) { self.progress = progress }

  mutating func add(_ message: String) {
    lines.append(Self.timestamp() + " " + message)
    progress?(message)
  }

  func write(to transaction: OutputTransaction) throws(OutputError) {
    guard !lines.isEmpty else { return }
    var all: [Substring] = []
    if let data = FileManager.default.contents(atPath: transaction.committedPath(ToolFiles.deliveryLog)) {
      all = String(decoding: data, as: UTF8.self).split(separator: "\n")
    }
    all += lines.map { Substring($0) }
    let file = try transaction.create(ToolFiles.deliveryLog, ownerOnly: true)
    try file.write(all.suffix(Self.limit).joined(separator: "\n") + "\n")
    try file.close()
  }

  mutating func committed() { lines = [] }

  static func timestamp() -> String {
    let format = ISO8601DateFormatter()
    format.formatOptions = [.withInternetDateTime]
    return format.string(from: Date())
  }
}
