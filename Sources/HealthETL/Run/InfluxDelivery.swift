import Foundation

/// `healthetl deliver --influx URL` and `healthetl nightly --influx URL`: writes the output
/// folder's line protocol (`influx.lp`, run.json's `influx.file`) to InfluxDB over HTTP, in
/// batches (Pipelines/influx/README.md, "Pushing").
///
/// Only what is new is sent: per measurement, the state keeps the latest time of a point the
/// target acknowledged (its mark), and a delivery sends the points dated at or after the mark
/// less `lookback` — a day still going, a watch that synced late, the night or workout of the
/// day before change within it. InfluxDB keeps one point per series and time and replaces it
/// when written again, so what is sent twice changes nothing. The marks move only when every
/// batch of the delivery was acknowledged: a delivery that fails anywhere is sent whole again
/// the next time. Retries, refusals and what is kept of an answer follow the workout delivery
/// (`WorkoutDelivery`).
public enum InfluxDelivery {
  /// Points dated up to this many seconds before their measurement's mark are sent again.
  public static let lookback: Int64 = 2 * 86_400

  public struct Result: Sendable {
    /// The endpoint, without query or user information.
    public var url: String
    /// The file pushed, relative to the output folder.
    public var file = ""
    /// Points in the file.
    public var points = 0
    /// Points sent (dated at or after their mark less `lookback`), and those left out as older.
    public var sentPoints = 0
    public var olderPoints = 0
    public var batches = 0
    public var acknowledgedBatches = 0
    /// Batches the server rejected (a 4xx about the batch): status and what is kept of the answer.
    public var rejected: [(status: Int, body: String)] = []
    /// Why the delivery stopped before the end; nil when it did not.
    public var stopped: String?
    /// The server or the TLS setup refused the client itself.
    public var refused = false
    /// Whether the marks moved: every batch was acknowledged.
    public var marksAdvanced = false
    public var requests = 0
    public var bytes: Int64 = 0
    public var seconds = 0.0

    public var exitCode: ExitCode {
      if refused { return .usage }
      if !rejected.isEmpty { return .dataError }
      if stopped != nil { return .temporaryFailure }
      return .success
    }
  }

  /// Delivers under the folder's lock (exit 75 when another run holds it).
  public static func run(outputDirectory: String, settings: InfluxSettings) throws(ETLError) -> Result {
    do { try settings.validate() } catch { throw .delivery(error) }
    let folder = OutputFolder(outputDirectory)
    let lock: OutputLock?
    if settings.http.dryRun {
      lock = nil
    } else {
      do { lock = try OutputLock(folder) } catch { throw .output(error) }
    }
    defer { lock?.release() }
    return try deliver(folder, settings)
  }

  /// Delivers with the folder's lock already held (by this run or by the nightly batch); with
  /// `--dry-run`, hands each request to `printRequest` and changes nothing.
  static func deliver(_ folder: OutputFolder, _ settings: InfluxSettings) throws(ETLError) -> Result {
    let directory = folder.given
    let started = ContinuousClock.now
    let deadline = started + .milliseconds(Int64(settings.http.maxTime * 1000))
    var result = Result(url: settings.http.displayURL)
    var log = DeliveryLog(progress: settings.http.progress)
    let file = try pointsFile(directory)
    result.file = file
    var state = try NightlyBatch.loadState(directory)
    let earlier = state.influx.first { $0.target == settings.target }?.marks ?? [:]
    let now = Int64(Date().timeIntervalSince1970)
    var marks = earlier
    let client = HTTPClient(caFile: settings.http.caFile, proxyAllowed: settings.http.proxyAllowed)
    let headers = settings.headers(hideToken: false)
    var body: [UInt8] = []
    var bodyPoints = 0

    /// Sends `body`; false when the delivery stops.
    func send() throws(ETLError) -> Bool {
      guard bodyPoints > 0 else { return true }
      defer {
        body.removeAll(keepingCapacity: true)
        bodyPoints = 0
      }
      result.batches += 1
      result.sentPoints += bodyPoints
      result.bytes += Int64(body.count)
      if let printRequest = settings.printRequest {
        printRequest(settings.headers(hideToken: true), body)
        return true
      }
      let label = "influx batch \(result.batches) (\(bodyPoints) point\(bodyPoints == 1 ? "" : "s"))"
      var attempt = 0
      while true {
        attempt += 1
        let left = WorkoutDelivery.seconds(deadline - ContinuousClock.now)
        guard left > 0 else {
          result.stopped = "the delivery's time (--max-time \(WorkoutDelivery.number(settings.http.maxTime)) s) ran out"
          log.add("\(label): not sent, \(result.stopped!)")
          return false
        }
        result.requests += 1
        let response = client.post(
          url: settings.http.url, headers: headers, body: body, timeout: min(settings.http.timeout, left))
        switch WorkoutDelivery.verdict(response, token: settings.http.token, option: "--influx") {
        case .acknowledged:
          result.acknowledgedBatches += 1
          return true
        case .rejected(let status, let excerpt):
          result.rejected.append((status, excerpt))
          log.add("\(label): HTTP \(status), rejected: \(excerpt.isEmpty ? "(empty body)" : excerpt)")
          return true
        case .refused(let reason):
          result.refused = true
          result.stopped = reason
          log.add("\(label): \(reason); stopped, the marks stay where they were")
          return false
        case .retry(let reason, let retryAfter):
          guard attempt < settings.http.attempts else {
            result.stopped = "\(reason) on the last of \(settings.http.attempts) attempts"
            log.add("\(label): \(result.stopped!); the next delivery sends every point again")
            return false
          }
          var delay = WorkoutDelivery.backoff(after: attempt, settings.http)
          if let retryAfter { delay = max(delay, retryAfter) }
          guard delay < WorkoutDelivery.seconds(deadline - ContinuousClock.now) else {
            result.stopped =
              "\(reason); the next attempt (in \(WorkoutDelivery.number(delay)) s) would start past --max-time"
            log.add("\(label): \(result.stopped!); the next delivery sends every point again")
            return false
          }
          log.add(
            "\(label): \(reason), attempt \(attempt) of \(settings.http.attempts); retrying in \(WorkoutDelivery.number(delay)) s"
          )
          Thread.sleep(forTimeInterval: delay)
        }
      }
    }

    // Per measurement as written in the file: its name, and the first time sent again.
    var measurements: [[UInt8]: (name: String, from: Int64)] = [:]
    let path = directory + "/" + file
    let reader: LineFile
    do { reader = try LineFile(path: path) } catch {
      throw .delivery(.unreadable(path: path, what: "the points to push", reason: error.message))
    }
    var lineNumber = 0
    var stopped = false
    while !stopped {
      let next: UnsafeRawBufferPointer?
      do { next = try reader.nextLine() } catch {
        throw .output(.ioError(path: path, reason: error.message, code: error.code))
      }
      guard let line = next else { break }
      lineNumber += 1
      guard let (end, time) = LineProtocolReader.measurementAndTime(line) else {
        throw .state(
          ConfigFileError(
            file: path, line: lineNumber, message: "is not a point as HealthETL writes them; run again to write it anew"
          ))
      }
      let written = UnsafeRawBufferPointer(rebasing: line[..<end])
      let key = Array(written)
      let measurement: (name: String, from: Int64)
      if let known = measurements[key] {
        measurement = known
      } else {
        guard let name = LineProtocolReader.unescapedMeasurement(written) else {
          throw .state(
            ConfigFileError(file: path, line: lineNumber, message: "has a measurement HealthETL does not write"))
        }
        measurement = (name, settings.allPoints ? Int64.min : earlier[name].map { $0 - lookback } ?? .min)
        measurements[key] = measurement
      }
      result.points += 1
      guard time >= measurement.from else {
        result.olderPoints += 1
        continue
      }
      // A point dated after this machine's clock moves no mark: a wrong date in the future would
      // hold back every point before it.
      if time <= now { marks[measurement.name] = max(marks[measurement.name] ?? .min, time) }
      body.append(contentsOf: line)
      body.append(LineProtocol.newline)
      bodyPoints += 1
      if bodyPoints >= settings.batchLines, try !send() { stopped = true }
    }
    if !stopped { stopped = try !send() }
    result.seconds = WorkoutDelivery.seconds(ContinuousClock.now - started)
    if settings.printRequest != nil { return result }
    result.marksAdvanced = !stopped && result.rejected.isEmpty
    var summary =
      "influx: \(result.sentPoints) of \(result.points) point(s) of \(file) sent in \(result.batches) batch(es) to \(result.url) "
      + "(\(result.olderPoints) older than the marks left out); \(result.acknowledgedBatches) acknowledged"
    if !result.rejected.isEmpty { summary += ", \(result.rejected.count) rejected" }
    summary +=
      result.marksAdvanced
      ? "; marks moved" : "; the marks stay where they were, so the next delivery sends these points again"
    log.add(summary)
    var newState: DeliveryState?
    if result.marksAdvanced {
      state.influx.removeAll { $0.target == settings.target }
      state.influx.append(DeliveryState.InfluxMarks(target: settings.target, marks: marks))
      newState = state
    }
    try WorkoutDelivery.commit(folder, state: newState, log: &log, report: report(result), reportKey: reportKey)
    return result
  }

  /// The `run.json` key of what a delivery did.
  public static let reportKey = "influxDelivery"

  /// The file run.json says the influx job wrote.
  static func pointsFile(_ directory: String) throws(ETLError) -> String {
    let runReport: [String: Any]?
    do { runReport = try RunReport.readForAmending(directory + "/" + ToolFiles.runReport) } catch {
      throw .output(error)
    }
    guard let section = runReport?[InfluxMart.reportKey] as? [String: Any], let file = section["file"] as? String else {
      throw .delivery(
        .unreadable(
          path: directory + "/" + ToolFiles.runReport, what: "the points to push",
          reason: "it names no influx output; run with --pipeline influx (Pipelines/influx.json) first"))
    }
    return file
  }

  static func report(_ result: Result) -> [String: Any] {
    [
      "url": result.url, "file": result.file, "points": result.points, "sentPoints": result.sentPoints,
      "olderPoints": result.olderPoints, "batches": result.batches, "acknowledgedBatches": result.acknowledgedBatches,
      "rejected": result.rejected.map { ["status": $0.status, "body": $0.body] as [String: Any] },
      "stopped": result.stopped ?? NSNull(), "marksAdvanced": result.marksAdvanced, "requests": result.requests,
      "bytes": result.bytes, "seconds": (result.seconds * 1000).rounded() / 1000,
      "exitCode": Int(result.exitCode.rawValue),
    ]
  }
}

/// A file read a line at a time through a fixed buffer: a line comes without its line feed,
/// valid until the next call.
final class LineFile {
  private let descriptor: Int32
  private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 1)
  private var start = 0
  private var end = 0
  private var atEnd = false

  struct Failure: Error {
    var message: String
    var code: Int32?
  }

  init(path: String) throws(Failure) {
    descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else {
      buffer.deallocate()
      throw Failure(message: String(cString: strerror(errno)), code: errno)
    }
  }

  deinit {
    if descriptor >= 0 { close(descriptor) }
    buffer.deallocate()
  }

  /// The next line; nil once there is none. A last line without a line feed counts; a line
  /// longer than the buffer comes in pieces of the buffer's size.
  func nextLine() throws(Failure) -> UnsafeRawBufferPointer? {
    while true {
      if let newline = buffer[start..<end].firstIndex(of: LineProtocol.newline) {
        let line = UnsafeRawBufferPointer(rebasing: buffer[start..<newline])
        start = newline + 1
        return line
      }
      if atEnd {
        guard start < end else { return nil }
        let line = UnsafeRawBufferPointer(rebasing: buffer[start..<end])
        start = end
        return line
      }
      if start > 0 {
        buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: end - start)
        end -= start
        start = 0
      }
      if end == buffer.count {
        start = end
        return UnsafeRawBufferPointer(buffer)
      }
      let count = read(descriptor, buffer.baseAddress! + end, buffer.count - end)
      if count < 0 {
        if errno == EINTR { continue }
        throw Failure(message: String(cString: strerror(errno)), code: errno)
      }
      if count == 0 { atEnd = true } else { end += count }
    }
  }
}
