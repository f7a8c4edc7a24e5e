import Foundation
import Testing

@testable import HealthETL

/// The parts of delivery that need no server: the idempotency key, how each answer is judged,
/// the Retry-After and backoff arithmetic, the configuration file and the queue in the state.
/// The HTTP exchange itself is tested against a real server (Tests/EndToEnd/test_delivery.py).
@Suite struct DeliveryTests {
  static func record(_ uuid: String, start: String = "20240318070000") -> WorkoutServerRecord {
    WorkoutServerRecord(
      recordDate: "20240318", execTypeCode: "SERVER01", execStartTime: start, execEndTime: "20240318073000",
      execRuntime: "1800", deviceTypeCode: "WATCH", recordUuid: uuid)
  }

  static let first = "289DA714-C2DA-5473-8C28-E278807A0917"
  static let second = "8EBAA60B-7356-5A7D-8D41-4E356E4843A0"

  @Test func theKeyIsTheSHA256OfTheSortedUUIDsWhateverTheirOrder() {
    // python3 -c 'import hashlib; print(hashlib.sha256(b"289DA714-…-E278807A0917\n8EBAA60B-…-4E356E4843A0\n").hexdigest())'
    let expected = "c2bc6fbf624e9a6fd36ed69d77c7e078478e465e365f7b564c0a08b4f7e30544"
    #expect(DeliveryState.Batch(records: [Self.record(Self.first), Self.record(Self.second)]).key == expected)
    #expect(DeliveryState.Batch(records: [Self.record(Self.second), Self.record(Self.first)]).key == expected)
    // Only the ids count: the same workouts with another field are the same batch to the server.
    #expect(
      DeliveryState.Batch(records: [Self.record(Self.second, start: "20240318070001"), Self.record(Self.first)]).key
        == expected)
    #expect(DeliveryState.Batch(records: [Self.record(Self.first)]).key != expected)
  }

  static func response(_ status: Int, _ headers: [String: String] = [:], _ body: String = "")
    -> Swift.Result<HTTPClient.Response, HTTPClient.Failure>
  {
    .success(HTTPClient.Response(status: status, headers: headers, body: Array(body.utf8)))
  }

  @Test func eachAnswerIsJudged() throws {
    let token = try BearerToken("s3cret-token", source: "--token-file t")
    func verdict(_ outcome: Swift.Result<HTTPClient.Response, HTTPClient.Failure>) -> WorkoutDelivery.Verdict {
      WorkoutDelivery.verdict(outcome, token: token)
    }
    #expect(verdict(Self.response(200)) == .acknowledged(200))
    #expect(verdict(Self.response(204)) == .acknowledged(204))
    #expect(verdict(Self.response(400, [:], "bad s3cret-token\nline")) == .rejected(400, "bad [token] line"))
    #expect(verdict(Self.response(422)) == .rejected(422, ""))
    #expect(verdict(Self.response(503)) == .retry("HTTP 503", after: nil))
    #expect(verdict(Self.response(500, ["retry-after": "7"])) == .retry("HTTP 500", after: 7))
    #expect(verdict(Self.response(429, ["retry-after": "2"])) == .retry("HTTP 429", after: 2))
    #expect(verdict(Self.response(408)) == .retry("HTTP 408", after: nil))
    #expect(verdict(.failure(.transient("Connection refused"))) == .retry("Connection refused", after: nil))
    for status in [301, 401, 403, 404, 405, 407] {
      guard case .refused = verdict(Self.response(status)) else {
        Issue.record("HTTP \(status) should stop the run")
        continue
      }
    }
    guard case .refused(let reason) = verdict(.failure(.untrusted("unable to get local issuer certificate"))) else {
      Issue.record("an untrusted certificate should stop the run")
      return
    }
    #expect(reason.contains("--ca-file"))
  }

  @Test func retryAfterTakesSecondsOrAnHTTPDate() {
    // 07:28:00 GMT is 90 s after 07:26:30 GMT.
    let now = Date(timeIntervalSince1970: 1_445_412_390)
    #expect(WorkoutDelivery.retryAfter("120", now: now) == 120)
    #expect(WorkoutDelivery.retryAfter(" 0 ", now: now) == 0)
    #expect(WorkoutDelivery.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT", now: now) == 90)
    #expect(WorkoutDelivery.retryAfter("Wed, 21 Oct 2015 07:00:00 GMT", now: now) == 0)
    #expect(WorkoutDelivery.retryAfter("soon", now: now) == nil)
    #expect(WorkoutDelivery.retryAfter("-5", now: now) == nil)
    #expect(WorkoutDelivery.retryAfter(nil, now: now) == nil)
  }

  @Test func backoffDoublesWithJitterAndIsCapped() throws {
    var settings = try DeliverySettings(url: "https://example.org/records")
    settings.backoff = 1
    settings.maxBackoff = 60
    for _ in 0..<200 {
      #expect((0.5...1).contains(WorkoutDelivery.backoff(after: 1, settings)))
      #expect((2...4).contains(WorkoutDelivery.backoff(after: 3, settings)))
      #expect((30...60).contains(WorkoutDelivery.backoff(after: 12, settings)))
    }
  }

  @Test(arguments: [
    ("ftp://example.org/x", "must start with https://"),
    ("http://example.org/x", "unencrypted"),
    ("https://user:pw@example.org/x", "user name or password"),
    ("https:///x", "has no host"),
  ])
  func aURLThatCannotBeUsedIsRefused(url: String, message: String) {
    #expect(throws: DeliveryError.self) { try DeliverySettings(url: url) }
    do {
      _ = try DeliverySettings(url: url)
    } catch {
      #expect(error.description.contains(message), "\(error)")
      #expect(!error.description.contains("pw@"))
    }
  }

  @Test func plainHTTPIsForThisMachineOnly() throws {
    for host in ["127.0.0.1", "127.1.2.3", "localhost", "[::1]"] {
      #expect(try DeliverySettings(url: "http://\(host):8080/r").url == "http://\(host):8080/r")
    }
    #expect(try DeliverySettings(url: "http://10.0.0.5/r", allowInsecureHTTP: true).displayURL == "http://10.0.0.5/r")
    #expect(try DeliverySettings(url: "https://example.org/r?key=abc").displayURL == "https://example.org/r?…")
  }

  @Test func onlyHTTPSToAnotherMachineMayGoThroughAProxy() throws {
    #expect(try DeliverySettings(url: "https://records.example.org/v1").proxyAllowed)
    #expect(try DeliverySettings(url: "https://10.0.0.5:8443/r").proxyAllowed)
    for url in ["http://127.0.0.1:8080/r", "http://localhost/r", "https://127.0.0.1:8443/r", "https://[::1]/r"] {
      #expect(try !DeliverySettings(url: url).proxyAllowed, "\(url)")
    }
    #expect(try !DeliverySettings(url: "http://10.0.0.5/r", allowInsecureHTTP: true).proxyAllowed)
    #expect(try !DeliverySettings(url: "HTTP://records.example.org/r", allowInsecureHTTP: true).proxyAllowed)
  }

  static func config(_ text: String) -> Swift.Result<DeliveryConfig, ConfigFileError> {
    do throws(ConfigFileError) {
      return .success(try DeliveryConfig.parse(Array(text.utf8), file: "/etc/healthetl/delivery.json"))
    } catch {
      return .failure(error)
    }
  }

  @Test func aConfigurationFileIsReadWithPathsBesideIt() throws {
    let text = """
      {
        "url": "https://records.example.org/v1/workouts",
        "tokenFile": "token",
        "caFile": "/etc/ssl/private-ca.pem",
        "batch": 50,
        "timeout": 2.5,
        "attempts": 3,
        "backoff": 0.5,
        "maxTime": 120
      }
      """
    let config = try Self.config(text).get()
    #expect(config.url == "https://records.example.org/v1/workouts")
    #expect(config.tokenFile == "/etc/healthetl/token")
    #expect(config.caFile == "/etc/ssl/private-ca.pem")
    #expect(config.batch == 50 && config.attempts == 3)
    #expect(config.timeout == 2.5 && config.backoff == 0.5 && config.maxTime == 120)
    #expect(config.allowInsecureHTTP == nil && config.tokenEnvironment == nil)
  }

  @Test(arguments: [
    (
      "{\n  \"url\": \"https://x.example/\",\n  \"batch\": 0\n}",
      "/etc/healthetl/delivery.json:3: batch: 0 is out of range"
    ),
    ("{\n  \"bearerToken\": \"abc\"\n}", ":2: bearerToken: a token is never kept in this file"),
    ("{\"timout\": 3}", ":1: timout: unknown key (did you mean 'timeout'?)"),
    ("{\"timeout\": \"3\"}", ":1: timeout: must be a number, not a string"),
    ("{\"tokenEnvironment\": \"MY TOKEN\"}", "tokenEnvironment: must be the name of an environment variable"),
    ("{\"tokenFile\": \"t\", \"tokenEnvironment\": \"T\"}", "tokenEnvironment: and tokenFile name two tokens"),
    ("{\"url\": \"http://10.1.1.1/\"}", "url: plain http:// to 10.1.1.1"),
    ("{\"url\": \"http://10.1.1.1/\", \"allowInsecureHTTP\": true}", ""),
  ])
  func aConfigurationFileIsCheckedKeyByKey(text: String, message: String) {
    switch Self.config(text) {
    case .success: #expect(message.isEmpty, "accepted: \(text)")
    case .failure(let error): #expect(!message.isEmpty && error.description.contains(message), "\(error)")
    }
  }

  @Test func theQueueSurvivesTheStateFileAndAnEmptyQueueIsWrittenAsVersionTwo() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("delivery-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    var state = DeliveryState()
    state.sequence = 4
    state.outbox = [Self.record(Self.first)]
    func roundTrip() throws -> (DeliveryState, String) {
      let transaction = try OutputTransaction(outputDirectory: folder.path)
      try state.write(to: transaction)
      try transaction.commit()
      let text = try String(contentsOf: folder.appendingPathComponent(ToolFiles.state), encoding: .utf8)
      return (try DeliveryState.load(from: folder.path), text)
    }
    var (read, text) = try roundTrip()
    #expect(read == state)
    #expect(text.hasPrefix("{\n  \"version\": 2,\n"))
    // It may quote what a server answered: its owner's only.
    var info = stat()
    #expect(stat(folder.appendingPathComponent(ToolFiles.state).path, &info) == 0 && info.st_mode & 0o777 == 0o600)
    #expect(!text.contains("batches"))

    state.batches = [DeliveryState.Batch(records: [Self.record(Self.second), Self.record(Self.first)])]
    state.quarantinedBatches = [
      DeliveryState.QuarantinedBatch(
        records: [Self.record("0A78DA88-0962-5750-98D9-DD0024887F22")], status: 422, body: "bad \"date\"",
        at: "2026-11-30T15:00:00Z")
    ]
    state.outbox = []
    (read, text) = try roundTrip()
    #expect(read == state)
    #expect(text.hasPrefix("{\n  \"version\": 3,\n"))
    #expect(read.undelivered == 2)
  }
}

/// A delta takes the records of every workouts job in order, read from their scratch files:
/// fresh ones only, each id once; a run's final delta writes them into the state's outbox
/// without holding them, byte for byte as a delta that keeps them does.
@Suite struct DeliveryDeltaTests {
  static let ids = [
    "289DA714-C2DA-5473-8C28-E278807A0917", "8EBAA60B-7356-5A7D-8D41-4E356E4843A0",
    "0A78DA88-0962-5750-98D9-DD0024887F22", "11111111-2222-5333-8444-555555555555",
    "AAAAAAAA-BBBB-5CCC-8DDD-EEEEEEEEEEEE",
  ]
  static let (emitted, pending, outbox, fresh, later) = (ids[0], ids[1], ids[2], ids[3], ids[4])

  /// A state that has emitted `emitted`, holds `outbox` and `pending`, and the delta's sources:
  /// two jobs' records, with one emitted, one pending and one given twice.
  static func state() -> DeliveryState {
    var state = DeliveryState()
    state.sequence = 7
    state.emitted.insert([EmittedRecords.id(emitted)!, EmittedRecords.id(outbox)!])
    state.outbox = [DeliveryTests.record(outbox)]
    state.pending = [DeliveryTests.record(pending)]
    return state
  }

  static func sources(_ transaction: OutputTransaction) -> [WorkoutServerRecords] {
    [[emitted, fresh, pending, fresh.lowercased()], [later, fresh]].map { uuids in
      let scratch = WorkoutServerRecordScratch(transaction: transaction)
      for uuid in uuids { scratch.append(DeliveryTests.record(uuid, start: "2024031807000\(uuids.count)")) }
      return WorkoutServerRecords(scratch)
    }
  }

  struct Committed {
    var delta: DeliveryState.Delta
    var deltaText: String
    var stateText: String
    var state: DeliveryState
  }

  static func commit(_ body: (DeliveryState, [WorkoutServerRecords], OutputTransaction) throws -> DeliveryState.Delta)
    throws -> Committed
  {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("delta-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let transaction = try OutputTransaction(outputDirectory: folder.path)
    let delta = try body(state(), sources(transaction), transaction)
    try transaction.commit()
    func text(_ file: String) throws -> String {
      try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
    }
    return Committed(
      delta: delta, deltaText: try text(ToolFiles.newRecords), stateText: try text(ToolFiles.state),
      state: try DeliveryState.load(from: folder.path))
  }

  static func uuids(_ text: String) throws -> [String] {
    let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    return (object?["records"] as? [[String: String]] ?? []).compactMap { $0["recordUuid"] }
  }

  @Test func aRunsFinalDeltaWritesWhatADeltaKeepingItsRecordsWrites() throws {
    let streamed = try Self.commit { state, sources, transaction in
      try state.commitFinalDelta(adding: sources, to: transaction)
    }
    let kept = try Self.commit { state, sources, transaction in
      var state = state
      let delta = try state.commitDelta(adding: sources, final: true, to: transaction)
      #expect(state.outbox.map(\.recordUuid) == [Self.outbox, Self.pending, Self.fresh, Self.later])
      return delta
    }
    #expect(streamed.deltaText == kept.deltaText)
    #expect(streamed.stateText == kept.stateText)
    #expect(streamed.delta.sequence == 8 && streamed.delta.fresh == 2)
    #expect(kept.delta.sequence == 8 && kept.delta.fresh == 2)
    // The pending record, then the fresh ones in the jobs' order: the emitted one, the second
    // copy of an id (whatever its case) and the pending one are left out.
    #expect(try Self.uuids(streamed.deltaText) == [Self.pending, Self.fresh, Self.later])
    #expect(streamed.deltaText.hasPrefix("{\n  \"sequence\": 8,\n  \"final\": true,\n  \"records\": [\n    {"))
    #expect(streamed.deltaText.hasSuffix("\"}\n  ]\n}\n"))
    #expect(streamed.state.outbox.map(\.recordUuid) == [Self.outbox, Self.pending, Self.fresh, Self.later])
    #expect(streamed.state.outbox[2] == DeliveryTests.record(Self.fresh, start: "20240318070004"))
    #expect(streamed.state.outbox[3] == DeliveryTests.record(Self.later, start: "20240318070002"))
    #expect(streamed.state.pending.isEmpty && streamed.state.emittedCount == 5 && streamed.state.sequence == 8)
    #expect(streamed.state == kept.state)
  }

  @Test func aNightsDeltaKeepsItsFreshRecordsPending() throws {
    let night = try Self.commit { state, sources, transaction in
      var state = state
      return try state.commitDelta(adding: sources, final: false, to: transaction)
    }
    #expect(night.delta.fresh == 2)
    #expect(try Self.uuids(night.deltaText) == [Self.pending, Self.fresh, Self.later])
    #expect(night.deltaText.contains("\"final\": false"))
    #expect(night.state.pending.map(\.recordUuid) == [Self.pending, Self.fresh, Self.later])
    #expect(night.state.outbox.map(\.recordUuid) == [Self.outbox] && night.state.emittedCount == 2)
  }

  @Test func aDeltaWithoutRecordsIsAnEmptyList() throws {
    let empty = try Self.commit { state, _, transaction in
      var state = state
      state.pending = []
      return try state.commitFinalDelta(adding: [], to: transaction)
    }
    #expect(empty.deltaText == "{\n  \"sequence\": 8,\n  \"final\": true,\n  \"records\": []\n}\n")
    #expect(empty.delta.fresh == 0 && empty.state.outbox.map(\.recordUuid) == [Self.outbox])
  }
}
