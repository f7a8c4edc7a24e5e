import Foundation
import Synchronization
import Testing

@testable import HealthETL

/// The parts of `deliver --influx` that need no server: the URL, the configuration keys, the
/// marks in the state, and which points a delivery sends (a dry run hands over each request).
/// The exchange with a real InfluxDB: Tests/EndToEnd/test_influx.py.
@Suite struct InfluxDeliveryTests {
  @Test func theURLNamesAWriteEndpointAndGetsPrecisionSeconds() throws {
    let v1 = try InfluxSettings(url: "http://127.0.0.1:8086/write?db=health")
    #expect(v1.api == .v1)
    #expect(v1.http.url == "http://127.0.0.1:8086/write?db=health&precision=s")
    #expect(v1.target == "http://127.0.0.1:8086/write?db=health")
    let v2 = try InfluxSettings(url: "https://influx.example.org/api/v2/write?org=me&bucket=health&precision=s")
    #expect(v2.api == .v2)
    #expect(v2.http.url == "https://influx.example.org/api/v2/write?org=me&bucket=health&precision=s")
    #expect(v2.target == "https://influx.example.org/api/v2/write?org=me&bucket=health")
    // The display form hides the query, as the workout delivery's does.
    #expect(v2.http.displayURL == "https://influx.example.org/api/v2/write?…")
    for (url, message) in [
      ("http://127.0.0.1:8086/write", "names no database"),
      ("https://h/api/v2/write?org=me", "names no bucket"),
      ("https://h/query?db=x", "is not an InfluxDB write endpoint"),
      ("https://h/write?db=x&precision=ns", "precision=ns"),
      ("https://h/write?db=x&u=me&p=secret", "put it in --influx-token-file"),
      ("http://influx.example.org/write?db=x", "--influx: plain http://"),
    ] {
      #expect {
        _ = try InfluxSettings(url: url)
      } throws: { error in
        (error as? DeliveryError).map { $0.description.contains(message) } ?? false
      }
    }
  }

  /// 1.x takes `user:password` as HTTP Basic, 2.x and 3.x a token; the dry run hides either.
  @Test func theTokenGoesInTheHeaderItsAPITakes() throws {
    var v1 = try InfluxSettings(url: "http://127.0.0.1:8086/write?db=health")
    v1.http.token = try BearerToken("me:s3cret", source: "--influx-token-file t")
    // python3 -c 'import base64; print(base64.b64encode(b"me:s3cret"))'
    #expect(v1.headers(hideToken: false).contains("Authorization: Basic bWU6czNjcmV0"))
    var v2 = try InfluxSettings(url: "http://127.0.0.1:8086/api/v2/write?org=o&bucket=b")
    v2.http.token = try BearerToken("tok3n", source: "--influx-token-file t")
    #expect(v2.headers(hideToken: false).contains("Authorization: Token tok3n"))
    #expect(!v2.headers(hideToken: true).joined().contains("tok3n"))
  }

  @Test func theConfigurationFileTakesTheInfluxKeys() throws {
    let text = """
      {"influx": "http://127.0.0.1:8086/write?db=health", "influxTokenFile": "influx-token", "influxBatch": 2000}
      """
    let config = try DeliveryConfig.parse(Array(text.utf8), file: "/etc/healthetl/delivery.json")
    #expect(config.influx == "http://127.0.0.1:8086/write?db=health")
    #expect(config.influxTokenFile == "/etc/healthetl/influx-token")
    #expect(config.influxBatch == 2000)
    for (text, message) in [
      (#"{"influx": "https://h/query"}"#, "is not an InfluxDB write endpoint"),
      (#"{"influxToken": "x"}"#, "a token is never kept in this file"),
      (#"{"influxTokenFile": "a", "influxTokenEnvironment": "B"}"#, "name two tokens"),
      (#"{"influxBatch": 0}"#, "out of range"),
    ] {
      #expect(throws: ConfigFileError.self) { _ = try DeliveryConfig.parse(Array(text.utf8), file: "c.json") }
      do { _ = try DeliveryConfig.parse(Array(text.utf8), file: "c.json") } catch {
        #expect(error.description.contains(message), "\(error)")
      }
    }
  }

  /// The marks survive the state file, which is then version 5 (an older HealthETL refuses it
  /// rather than forget them); without marks the state is written as before.
  @Test func theMarksSurviveTheStateFile() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("influx-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    var state = DeliveryState()
    state.influx = [.init(target: "http://127.0.0.1:8086/write?db=health", marks: ["HeartRate": 1_710_748_800])]
    let transaction = try OutputTransaction(outputDirectory: folder.path)
    try state.write(to: transaction)
    try transaction.commit()
    let text = try String(contentsOf: folder.appendingPathComponent(ToolFiles.state), encoding: .utf8)
    #expect(text.hasPrefix("{\n  \"version\": 5,\n"))
    #expect(text.contains(#""marks": {"HeartRate": 1710748800}"#))
    #expect(try DeliveryState.load(from: folder.path) == state)
    // Version 4 has no marks.
    let older = text.replacingOccurrences(of: "\"version\": 5", with: "\"version\": 4")
    #expect(throws: ConfigFileError.self) { _ = try DeliveryState.decode(Array(older.utf8), path: "s") }
  }

  /// An output folder as an influx run leaves it: `run.json` naming the file, the file, and a
  /// state with a mark for `m` at 1,000,000.
  static func folder(lines: [String], marks: [String: Int64]) throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("influx-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try #"{"influx": {"file": "influx.lp"}}"#.write(
      to: folder.appendingPathComponent("run.json"), atomically: true, encoding: .utf8)
    try (lines.joined(separator: "\n") + "\n").write(
      to: folder.appendingPathComponent("influx.lp"), atomically: true, encoding: .utf8)
    var state = DeliveryState()
    state.influx = [.init(target: "http://127.0.0.1:9/write?db=h", marks: marks)]
    let transaction = try OutputTransaction(outputDirectory: folder.path)
    try state.write(to: transaction)
    try transaction.commit()
    return folder
  }

  /// The bodies a dry run handed over.
  final class Requests: Sendable {
    let list = Mutex<[String]>([])
    func add(_ body: [UInt8]) { list.withLock { $0.append(String(decoding: body, as: UTF8.self)) } }
    var bodies: [String] { list.withLock { $0 } }
  }

  /// With a mark of 1,000,000 for `m`: its points from 1,000,000 − 2 days (827,200) on are sent,
  /// an older one is not; `n` has no mark, so all of its points go; batches of two points.
  @Test func sendsThePointsFromTheMarkLessTheLookback() throws {
    let lines = [
      "m v=1 827199", "m v=2 827200", "n,t=a\\ b v=3 5", "m v=4 1000000", "m v=5 2000000", "n,t=a\\ b v=6 6",
    ]
    let folder = try Self.folder(lines: lines, marks: ["m": 1_000_000])
    defer { try? FileManager.default.removeItem(at: folder) }
    var settings = try InfluxSettings(url: "http://127.0.0.1:9/write?db=h")
    settings.batchLines = 2
    settings.http.dryRun = true
    let requests = Requests()
    settings.printRequest = { _, body in requests.add(body) }
    let result = try InfluxDelivery.run(outputDirectory: folder.path, settings: settings)
    #expect(
      requests.bodies == [
        "m v=2 827200\nn,t=a\\ b v=3 5\n", "m v=4 1000000\nm v=5 2000000\n", "n,t=a\\ b v=6 6\n",
      ])
    #expect(result.points == 6)
    #expect(result.sentPoints == 5)
    #expect(result.olderPoints == 1)
    #expect(result.batches == 3)
    // A dry run changes nothing.
    #expect(try DeliveryState.load(from: folder.path).influx[0].marks == ["m": 1_000_000])

    // `--influx-all` sends every point.
    settings.allPoints = true
    let all = Requests()
    settings.printRequest = { _, body in all.add(body) }
    #expect(try InfluxDelivery.run(outputDirectory: folder.path, settings: settings).sentPoints == 6)
  }

  /// A line that is not a point as HealthETL writes it stops the delivery with its line number.
  @Test func aBrokenLineIsReportedWithItsNumber() throws {
    let folder = try Self.folder(lines: ["m v=1 1", "m v=1"], marks: [:])
    defer { try? FileManager.default.removeItem(at: folder) }
    var settings = try InfluxSettings(url: "http://127.0.0.1:9/write?db=h")
    settings.http.dryRun = true
    settings.printRequest = { _, _ in }
    #expect {
      _ = try InfluxDelivery.run(outputDirectory: folder.path, settings: settings)
    } throws: { error in
      guard case .state(let problem) = error as? ETLError else { return false }
      return problem.line == 2 && problem.file.hasSuffix("influx.lp")
    }
  }
}
