import Foundation

/// Where and how `deliver --influx` writes the line protocol (Pipelines/influx/README.md,
/// "Pushing"): InfluxDB's write endpoint, 1.x (`…/write?db=NAME`) or 2.x and 3.x
/// (`…/api/v2/write?org=ORG&bucket=NAME`), always with `precision=s`.
public struct InfluxSettings: Sendable {
  /// Which write API the URL names.
  public enum API: String, Sendable {
    /// `/write?db=…`: a token is `user:password`, sent as HTTP Basic.
    case v1 = "1.x"
    /// `/api/v2/write?org=…&bucket=…`: a token sent as `Authorization: Token …`.
    case v2 = "2.x"
  }

  /// The connection: the write URL with `precision=s`, its display form, the token, the CA file
  /// and the timing options shared with the workout delivery; its `batchSize` is not used.
  public var http: DeliverySettings
  public let api: API
  /// What the state keys acknowledged points by: the write URL without `precision` (scheme,
  /// host, port, path and the database or bucket), so that each database keeps its own marks.
  public let target: String
  /// Points per request (`--influx-batch`).
  public var batchLines = 5000
  /// Send every point, whatever was acknowledged before (`--influx-all`).
  public var allPoints = false
  /// `--dry-run`: called with each request instead of sending it.
  public var printRequest: (@Sendable (_ headers: [String], _ body: [UInt8]) -> Void)?

  public static let batchRange = 1...100_000
  /// The variable read for the token when no `--influx-token-file` is given.
  public static let tokenVariable = "HEALTHETL_INFLUX_TOKEN"

  /// Checks `url` as `--influx`: https (or http to this machine), a write endpoint with its
  /// database or bucket, no credentials in the query, a precision of seconds if any.
  public init(url: String, allowInsecureHTTP: Bool = false) throws(DeliveryError) {
    func bad(_ reason: String) -> DeliveryError { .badURL(url, reason: reason, option: "--influx") }
    _ = try DeliverySettings(url: url, allowInsecureHTTP: allowInsecureHTTP, option: "--influx")
    guard var components = URLComponents(string: url) else { throw bad("is not a URL") }
    var path = components.percentEncodedPath
    while path.hasSuffix("/") { path.removeLast() }
    var items = components.queryItems ?? []
    func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
    if path.hasSuffix("/api/v2/write") {
      api = .v2
      guard let bucket = value("bucket"), !bucket.isEmpty else {
        throw bad("names no bucket: …/api/v2/write?org=ORG&bucket=NAME")
      }
    } else if path.hasSuffix("/write") || path == "write" {
      api = .v1
      guard let database = value("db"), !database.isEmpty else { throw bad("names no database: …/write?db=NAME") }
    } else {
      throw bad(
        "is not an InfluxDB write endpoint: http://HOST:8086/write?db=NAME (1.x) or "
          + "https://HOST/api/v2/write?org=ORG&bucket=NAME (2.x, 3.x)")
    }
    if items.contains(where: { ["u", "p", "token", "password"].contains($0.name) }) {
      throw .badURL(
        "(hidden)",
        reason:
          "carries a user name, password or token, which would end up in logs; put it in --influx-token-file",
        option: "--influx")
    }
    if let precision = items.first(where: { $0.name == "precision" }) {
      guard precision.value == "s" else {
        throw bad("asks for precision=\(precision.value ?? ""); the points are in seconds: leave precision out")
      }
    }
    items.removeAll { $0.name == "precision" }
    components.queryItems = items.isEmpty ? nil : items
    target = components.string ?? url
    items.append(URLQueryItem(name: "precision", value: "s"))
    components.queryItems = items
    http = try DeliverySettings(url: components.string ?? url, allowInsecureHTTP: allowInsecureHTTP, option: "--influx")
  }

  /// Checks the numbers and the CA file.
  public func validate() throws(DeliveryError) {
    guard Self.batchRange.contains(batchLines) else { throw .badOption("--influx-batch must be between 1 and 100000") }
    try http.validate()
  }

  /// The request headers; with `hideToken`, the `Authorization` value says where the token
  /// comes from instead of showing it.
  func headers(hideToken: Bool) -> [String] {
    var lines = [
      "Content-Type: text/plain; charset=utf-8", "Accept: application/json", "User-Agent: \(http.userAgent)",
    ]
    if let token = http.token {
      let scheme = api == .v1 ? "Basic" : "Token"
      let credentials = api == .v1 ? Data(token.value.utf8).base64EncodedString() : token.value
      lines.append("Authorization: \(scheme) " + (hideToken ? "<\(token), hidden>" : credentials))
    }
    return lines
  }
}
