import Foundation

/// Why a delivery cannot start: a URL, token, CA file or option that cannot be used. Each is
/// found before anything is read or sent.
public enum DeliveryError: Error, CustomStringConvertible, Sendable {
  /// The URL of `option` (`--url`, `--influx`) cannot be used.
  case badURL(String, reason: String, option: String = "--url")
  /// `http://` to a host that is not this machine, without `--allow-insecure-http`.
  case insecureHTTP(host: String, option: String = "--url")
  case unreadable(path: String, what: String, reason: String)
  case badToken(source: String, reason: String)
  case badOption(String)
  /// The delivery configuration file (`--delivery-config`) cannot be used.
  case config(ConfigFileError)

  public var description: String {
    switch self {
    case .config(let error): return error.description
    case .badURL(let url, let reason, let option): return "\(option) \(url): \(reason)"
    case .insecureHTTP(let host, let option):
      return
        "\(option): plain http:// to \(host) would send the \(option == "--url" ? "records" : "points") and the token unencrypted; use https://, or pass --allow-insecure-http if the network is trusted"
    case .unreadable(let path, let what, let reason): return "\(what) \(path) cannot be read: \(reason)"
    case .badToken(let source, let reason): return "the token in \(source) \(reason)"
    case .badOption(let message): return message
    }
  }
}

/// A bearer token. It is held only to be put into the `Authorization` header: its description
/// never shows it, so no message, log line or report can carry it by accident.
public struct BearerToken: Sendable, CustomStringConvertible {
  /// Where it came from, for messages: `--token-file PATH` or `$HEALTHETL_TOKEN`.
  public let source: String
  let value: String
  /// The forms a server may echo it back in.
  let echoes: TokenEchoes

  public var description: String { "the token from \(source)" }

  /// The variable read when no `--token-file` is given.
  public static let environmentVariable = "HEALTHETL_TOKEN"

  /// The token of `file`: its text without the white space around it. `option` names the file
  /// in messages (`--token-file`, `--influx-token-file`).
  public static func read(file: String, option: String = "--token-file") throws(DeliveryError) -> BearerToken {
    let bytes: [UInt8]
    do { bytes = try ConfigFile.read(file, limit: 64 << 10) } catch {
      throw .unreadable(path: file, what: option, reason: error.message)
    }
    return try BearerToken(String(decoding: bytes, as: UTF8.self), source: "\(option) \(file)")
  }

  /// The token of `variable`, or nil when it is unset or empty. A variable the configuration
  /// names (`required`) must be set.
  public static func fromEnvironment(
    _ environment: [String: String], variable: String = environmentVariable, required: Bool = false
  ) throws(DeliveryError) -> BearerToken? {
    guard let text = environment[variable], !text.isEmpty else {
      if required {
        throw .badToken(source: "$\(variable)", reason: "is not set, or empty (tokenEnvironment names it)")
      }
      return nil
    }
    return try BearerToken(text, source: "$\(variable)")
  }

  init(_ text: String, source: String) throws(DeliveryError) {
    let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !token.isEmpty else { throw .badToken(source: source, reason: "is empty") }
    // Printable ASCII without spaces: anything else could split or smuggle a header.
    guard token.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
      throw .badToken(
        source: source, reason: "holds spaces, control or non-ASCII characters, which a header cannot carry")
    }
    self.value = token
    self.source = source
    echoes = TokenEchoes(token: token)
  }

  /// `text` with every stretch that carries the token, in any form `TokenEchoes` knows, replaced
  /// by `[token]`: for anything kept from what a server sent back (a server may echo the
  /// request's headers in an error body). `cutShort`: `text` is the start of a longer answer.
  func redact(_ text: String, cutShort: Bool = false) -> String { echoes.redact(text, cutShort: cutShort) }
}

/// How to deliver: where to, with which credentials, in which batches, how patiently
/// (Pipelines/docs/nightly.md, "Delivering to a server").
public struct DeliverySettings: Sendable {
  /// The endpoint, as given.
  public let url: String
  /// The endpoint for messages and reports: scheme, host, port and path, never a query (which
  /// may hold a key) or user information (refused anyway).
  public let displayURL: String
  /// Whether a proxy of the environment (`https_proxy`, `all_proxy`, `no_proxy`) may carry the
  /// requests: for https to another machine only, where it can but tunnel TLS it cannot read.
  /// Plain http never goes through one — the loopback rule would be void if a proxy received
  /// the token in clear and its answer counted as the server's — and neither does a request to
  /// this machine.
  public let proxyAllowed: Bool
  public var token: BearerToken?
  /// PEM file of CA certificates trusted besides the system store (`--ca-file`).
  public var caFile: String?
  /// Records per request (`--batch`).
  public var batchSize = 100
  /// Seconds one request may take, connecting included (`--timeout`).
  public var timeout = 30.0
  /// Attempts per batch in one run (`--attempts`).
  public var attempts = 5
  /// The first retry's delay in seconds; it doubles with each further retry (`--backoff`).
  public var backoff = 1.0
  /// The longest delay between two attempts, Retry-After aside.
  public var maxBackoff = 60.0
  /// Seconds the whole delivery may take: no attempt starts, and no delay is waited, past it
  /// (`--max-time`).
  public var maxTime = 300.0
  /// Print what would be sent instead of sending it (`--dry-run`).
  public var dryRun = false
  /// Put the records of quarantined batches back in the queue first (`--retry-quarantined`).
  public var retryQuarantined = false
  /// `User-Agent` of every request.
  public var userAgent = "healthetl"
  /// Called with each line of the delivery log as it happens (the command prints it on stderr).
  public var progress: (@Sendable (String) -> Void)?

  /// Checks `url`: `https://`, or `http://` to this machine (or anywhere with `allowInsecureHTTP`).
  /// `option` names it in messages.
  public init(url: String, allowInsecureHTTP: Bool = false, option: String = "--url") throws(DeliveryError) {
    guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
      throw .badURL(url, reason: "is not a URL", option: option)
    }
    guard scheme == "https" || scheme == "http" else {
      throw .badURL(url, reason: "must start with https:// (or http:// to this machine)", option: option)
    }
    guard let host = components.host, !host.isEmpty else { throw .badURL(url, reason: "has no host", option: option) }
    guard components.user == nil, components.password == nil else {
      throw .badURL(
        "(hidden)",
        reason:
          "carries a user name or password, which would end up in logs; put a token in \(option == "--url" ? "--token-file" : "\(option)-token-file")",
        option: option)
    }
    guard components.fragment == nil else {
      throw .badURL(url, reason: "has a #fragment, which is never sent", option: option)
    }
    if scheme == "http", !allowInsecureHTTP, !Self.isLoopback(host) { throw .insecureHTTP(host: host, option: option) }
    self.url = url
    proxyAllowed = scheme == "https" && !Self.isLoopback(host)
    var display = scheme + "://" + (host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host)
    if let port = components.port { display += ":\(port)" }
    display += components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
    if components.percentEncodedQuery != nil { display += "?…" }
    displayURL = display
  }

  /// `localhost`, 127.0.0.0/8 and ::1: where plain HTTP never leaves the machine.
  static func isLoopback(_ host: String) -> Bool {
    let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
    if bare == "localhost" || bare == "::1" || bare == "0:0:0:0:0:0:0:1" { return true }
    let parts = bare.split(separator: ".", omittingEmptySubsequences: false)
    return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
  }

  public static let batchRange = 1...10_000
  public static let timeoutRange = 0.001...3600
  public static let attemptsRange = 1...100
  public static let backoffRange = 0.0...3600
  public static let maxTimeRange = 0.001...86_400

  /// Checks the numbers and that the CA file can be read.
  public func validate() throws(DeliveryError) {
    guard Self.batchRange.contains(batchSize) else { throw .badOption("--batch must be between 1 and 10000") }
    guard Self.timeoutRange.contains(timeout) else {
      throw .badOption("--timeout must be between 0.001 and 3600 seconds")
    }
    guard Self.attemptsRange.contains(attempts) else { throw .badOption("--attempts must be between 1 and 100") }
    guard Self.backoffRange.contains(backoff) else {
      throw .badOption("--backoff must be between 0 and 3600 seconds")
    }
    guard Self.maxTimeRange.contains(maxTime) else {
      throw .badOption("--max-time must be between 0.001 and 86400 seconds")
    }
    if let caFile {
      guard FileManager.default.isReadableFile(atPath: caFile) else {
        throw .unreadable(path: caFile, what: "--ca-file", reason: "no such file, or not readable")
      }
    }
  }
}

/// A delivery configuration file (`--delivery-config FILE`): where and how to deliver, so a
/// crontab line stays short and the token's location is written down once (Pipelines/README.md,
/// "Delivering to a server"). Read strictly: an unknown key, a wrong type or a value out of
/// range is reported with the file, line and key. The token itself is never in it — only where
/// to find it — so the file can be shown, diffed and backed up. Paths are relative to the file's
/// folder. A command-line option wins over the file's key of the same meaning.
public struct DeliveryConfig: Sendable, Equatable {
  public var url: String?
  public var tokenFile: String?
  /// The environment variable holding the token (instead of `$HEALTHETL_TOKEN`).
  public var tokenEnvironment: String?
  public var caFile: String?
  public var batch: Int?
  public var timeout: Double?
  public var attempts: Int?
  public var backoff: Double?
  public var maxTime: Double?
  public var allowInsecureHTTP: Bool?
  /// Where `--influx` pushes the line protocol, and how (Pipelines/influx/README.md, "Pushing").
  public var influx: String?
  public var influxTokenFile: String?
  public var influxTokenEnvironment: String?
  public var influxBatch: Int?

  public init() {}

  /// The keys of the file, in the order the documentation lists them.
  public static let keys = [
    "url", "tokenFile", "tokenEnvironment", "caFile", "batch", "timeout", "attempts", "backoff", "maxTime",
    "allowInsecureHTTP", "influx", "influxTokenFile", "influxTokenEnvironment", "influxBatch",
  ]

  public static func read(_ path: String) throws(DeliveryError) -> DeliveryConfig {
    let bytes: [UInt8]
    do { bytes = try ConfigFile.read(path, limit: 64 << 10) } catch {
      throw .unreadable(path: path, what: "--delivery-config", reason: error.message)
    }
    do throws(ConfigFileError) {
      return try parse(bytes, file: path)
    } catch {
      throw .config(error)
    }
  }

  static func parse(_ bytes: [UInt8], file: String) throws(ConfigFileError) -> DeliveryConfig {
    let root = try ConfigFile.parse(bytes, file: file)
    // Named before the unknown-key check, so the message says why rather than "unknown key".
    for secret in ["token", "bearerToken", "authorization", "password", "influxToken"] {
      if let node = try root.peek(secret) {
        throw node.error(
          "a token is never kept in this file (it would travel with every copy of it); put it in a file named by tokenFile, or in $\(BearerToken.environmentVariable)"
        )
      }
    }
    let object = try root.object(allowed: keys)
    let folder = (file as NSString).deletingLastPathComponent
    func path(_ node: ConfigNode) throws(ConfigFileError) -> String {
      let text = try node.nonEmptyString()
      return text.hasPrefix("/") || folder.isEmpty ? text : folder + "/" + text
    }
    var config = DeliveryConfig()
    config.allowInsecureHTTP = try object["allowInsecureHTTP"]?.bool()
    if let node = object["url"] {
      let url = try node.nonEmptyString()
      do {
        _ = try DeliverySettings(url: url, allowInsecureHTTP: config.allowInsecureHTTP ?? false)
      } catch {
        switch error {
        case .insecureHTTP(let host, _):
          throw node.error(
            "plain http:// to \(host) would send the records and the token unencrypted; use https://, or set \"allowInsecureHTTP\": true if the network is trusted"
          )
        case .badURL(_, let reason, _): throw node.error(reason)
        default: throw node.error(error.description)
        }
      }
      config.url = url
    }
    if let node = object["tokenFile"] { config.tokenFile = try path(node) }
    func variable(_ node: ConfigNode) throws(ConfigFileError) -> String {
      let name = try node.nonEmptyString()
      guard let first = name.utf8.first, !(0x30...0x39).contains(first),
        name.utf8.allSatisfy({
          $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
        })
      else {
        throw node.error(
          "must be the name of an environment variable (letters, digits, _), not \(ConfigNode.excerpt(name))")
      }
      return name
    }
    if let node = object["tokenEnvironment"] { config.tokenEnvironment = try variable(node) }
    guard config.tokenFile == nil || config.tokenEnvironment == nil else {
      throw try object.required("tokenEnvironment").error("and tokenFile name two tokens; keep one")
    }
    if let node = object["influx"] {
      let url = try node.nonEmptyString()
      do {
        _ = try InfluxSettings(url: url, allowInsecureHTTP: config.allowInsecureHTTP ?? false)
      } catch {
        switch error {
        case .insecureHTTP(let host, _):
          throw node.error(
            "plain http:// to \(host) would send the points and the token unencrypted; use https://, or set \"allowInsecureHTTP\": true if the network is trusted"
          )
        case .badURL(_, let reason, _): throw node.error(reason)
        default: throw node.error(error.description)
        }
      }
      config.influx = url
    }
    if let node = object["influxTokenFile"] { config.influxTokenFile = try path(node) }
    if let node = object["influxTokenEnvironment"] { config.influxTokenEnvironment = try variable(node) }
    guard config.influxTokenFile == nil || config.influxTokenEnvironment == nil else {
      throw try object.required("influxTokenEnvironment").error("and influxTokenFile name two tokens; keep one")
    }
    config.influxBatch = try object["influxBatch"]?.integer(in: InfluxSettings.batchRange)
    if let node = object["caFile"] { config.caFile = try path(node) }
    config.batch = try object["batch"]?.integer(in: DeliverySettings.batchRange)
    config.timeout = try object["timeout"]?.number(in: DeliverySettings.timeoutRange)
    config.attempts = try object["attempts"]?.integer(in: DeliverySettings.attemptsRange)
    config.backoff = try object["backoff"]?.number(in: DeliverySettings.backoffRange)
    config.maxTime = try object["maxTime"]?.number(in: DeliverySettings.maxTimeRange)
    return config
  }
}
