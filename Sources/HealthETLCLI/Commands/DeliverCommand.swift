import Foundation
import HealthETL

enum DeliverCommand {
  /// The options of a delivery, shared with `nightly --deliver`.
  static let deliveryOptions = [
    OptionSpec(
      name: "delivery-config", valueName: "FILE",
      help: "JSON file with the URL, where the token is, and the options below; an option given here wins."),
    OptionSpec(
      name: "token-file", valueName: "FILE",
      help: "File holding the bearer token for the Authorization header (default: $HEALTHETL_TOKEN, if set)."),
    OptionSpec(name: "ca-file", valueName: "FILE", help: "PEM CA certificates to trust besides the system store."),
    OptionSpec(name: "batch", valueName: "N", help: "Records per request (default 100)."),
    OptionSpec(
      name: "timeout", valueName: "SECONDS", help: "Time one request may take, connecting included (default 30)."),
    OptionSpec(name: "attempts", valueName: "N", help: "Attempts per batch in one run (default 5)."),
    OptionSpec(
      name: "backoff", valueName: "SECONDS",
      help: "Delay before the first retry, doubled for each next one (default 1)."),
    OptionSpec(name: "max-time", valueName: "SECONDS", help: "Time the whole delivery may take (default 300)."),
    OptionSpec(name: "allow-insecure-http", valueName: nil, help: "Allow http:// to hosts other than this machine."),
    OptionSpec(
      name: "retry-quarantined", valueName: nil, help: "Queue the records of quarantined batches again, first."),
    OptionSpec(
      name: "dry-run", valueName: nil, help: "Print the requests that would be sent; send and change nothing."),
    OptionSpec(
      name: "influx-token-file", valueName: "FILE",
      help:
        "File holding the InfluxDB token (2.x, 3.x) or user:password (1.x) (default: $\(InfluxSettings.tokenVariable), if set)."
    ),
    OptionSpec(name: "influx-batch", valueName: "N", help: "Points per request to InfluxDB (default 5000)."),
    OptionSpec(
      name: "influx-all", valueName: nil,
      help: "Send every point to InfluxDB, not only those after what it acknowledged."),
  ]

  /// The options that apply only to the push of the line protocol.
  static let influxOptions: Set<String> = ["influx-token-file", "influx-batch", "influx-all"]

  static let options =
    [
      OptionSpec(name: "out", valueName: "DIR", help: "The output folder whose records to deliver (required)."),
      OptionSpec(
        name: "url", valueName: "URL",
        help: "Where to POST the workout records: https://, or http:// to this machine."),
      OptionSpec(
        name: "influx", valueName: "URL",
        help:
          "Write the folder's influx.lp to InfluxDB: …/write?db=NAME (1.x) or …/api/v2/write?org=ORG&bucket=NAME (2.x, 3.x)."
      ),
    ] + deliveryOptions

  static let usage =
    "healthetl deliver --out DIR (--url URL | --influx URL | --delivery-config FILE) [--token-file FILE] [--influx-token-file FILE] [--ca-file FILE] [--batch N] [--influx-batch N] [--influx-all] [--timeout SECONDS] [--attempts N] [--backoff SECONDS] [--max-time SECONDS] [--allow-insecure-http] [--retry-quarantined] [--dry-run]"

  static func main(_ arguments: [String]) throws -> ExitCode {
    guard
      let parsed = try HealthETLCommand.parseOptionsCommand(
        arguments, name: "deliver", usage: usage,
        summary:
          "POST the workout server records this output folder has emitted and no server has acknowledged, in batches, each with an Idempotency-Key (--url); write its line protocol to InfluxDB, the points after what it acknowledged (--influx). Exit 0 when all went through, 65 when the server rejected a batch, 75 when something is left for the next run, 64 when the server refused the client (URL, token or certificate).",
        options: options)
    else { return ExitCode.success }
    guard let out = parsed.value("out") else {
      throw UsageError(message: "--out DIR is required", command: "deliver")
    }
    let (workouts, influx) = try settings(
      url: parsed.value("url"), influx: parsed.value("influx"), parsed, command: "deliver")
    var codes: [ExitCode] = []
    if let workouts {
      let result = try WorkoutDelivery.run(outputDirectory: out, settings: workouts)
      printDryRun(result)
      codes.append(result.exitCode)
    }
    if let influx {
      let result = try InfluxDelivery.run(outputDirectory: out, settings: influx)
      printDryRun(result, dryRun: influx.http.dryRun)
      codes.append(result.exitCode)
    }
    return [ExitCode.usage, .dataError, .temporaryFailure].first(where: codes.contains) ?? .success
  }

  /// The settings of a command line's deliveries: the workout records' (`--url`) and the line
  /// protocol's (`--influx`), each nil when neither the option nor the configuration names its
  /// URL; at least one must.
  static func settings(url: String?, influx: String?, _ parsed: ParsedArguments, command: String) throws
    -> (workouts: DeliverySettings?, influx: InfluxSettings?)
  {
    let config: DeliveryConfig
    do { config = try parsed.value("delivery-config").map(DeliveryConfig.read) ?? DeliveryConfig() } catch {
      throw ETLError.delivery(error)
    }
    let workoutURL = url ?? config.url
    let influxURL = influx ?? config.influx
    guard workoutURL != nil || influxURL != nil else {
      throw UsageError(
        message:
          "nothing to deliver to: pass \(command == "nightly" ? "--deliver" : "--url") URL (workout records) or --influx URL (line protocol), or a --delivery-config with \"url\" or \"influx\"",
        command: command)
    }
    if influxURL == nil,
      let stray = influxOptions.sorted().first(where: { parsed.values[$0] != nil || parsed.flag($0) })
    {
      throw UsageError(message: "--\(stray) is an option of --influx URL", command: command)
    }
    let workouts = try workoutURL.map { (url) throws -> DeliverySettings in
      try settings(url: url, config: config, parsed, command: command)
    }
    let pushed = try influxURL.map { (url) throws -> InfluxSettings in
      try influxSettings(url: url, config: config, parsed, command: command)
    }
    return (workouts, pushed)
  }

  /// The line protocol's settings: `--influx URL` and the shared options over the configuration.
  static func influxSettings(url: String, config: DeliveryConfig, _ parsed: ParsedArguments, command: String) throws
    -> InfluxSettings
  {
    do {
      var settings = try InfluxSettings(
        url: url, allowInsecureHTTP: parsed.flag("allow-insecure-http") || (config.allowInsecureHTTP ?? false))
      settings.http = try shared(settings.http, config: config, parsed, command: command)
      if let file = parsed.value("influx-token-file") ?? config.influxTokenFile {
        settings.http.token = try BearerToken.read(file: file, option: "--influx-token-file")
      } else if let variable = config.influxTokenEnvironment {
        settings.http.token = try BearerToken.fromEnvironment(
          ProcessInfo.processInfo.environment, variable: variable, required: true)
      } else {
        settings.http.token = try BearerToken.fromEnvironment(
          ProcessInfo.processInfo.environment, variable: InfluxSettings.tokenVariable)
      }
      if let text = parsed.value("influx-batch") {
        guard let value = Int(text) else {
          throw UsageError(message: "--influx-batch needs a whole number, got '\(text)'", command: command)
        }
        settings.batchLines = value
      } else if let value = config.influxBatch {
        settings.batchLines = value
      }
      settings.allPoints = parsed.flag("influx-all")
      if settings.http.dryRun {
        let url = settings.http.displayURL
        settings.printRequest = { headers, body in
          var text = "POST \(url)\n" + headers.joined(separator: "\n") + "\n\n"
          text += String(decoding: body, as: UTF8.self)
          print(text)
        }
      }
      settings.http.progress = { line in
        HealthETLCommand.standardError("healthetl: deliver: " + HealthETLCommand.oneLine(line) + "\n")
      }
      try settings.validate()
      return settings
    } catch let error as DeliveryError {
      throw ETLError.delivery(error)
    }
  }

  /// The workout records' settings: the URL and the options of `deliveryOptions`, over the keys
  /// of `--delivery-config`.
  static func settings(url: String, config: DeliveryConfig, _ parsed: ParsedArguments, command: String) throws
    -> DeliverySettings
  {
    do {
      var settings = try DeliverySettings(
        url: url, allowInsecureHTTP: parsed.flag("allow-insecure-http") || (config.allowInsecureHTTP ?? false))
      settings = try shared(settings, config: config, parsed, command: command)
      if let file = parsed.value("token-file") ?? config.tokenFile {
        settings.token = try BearerToken.read(file: file)
      } else if let variable = config.tokenEnvironment {
        settings.token = try BearerToken.fromEnvironment(
          ProcessInfo.processInfo.environment, variable: variable, required: true)
      } else {
        settings.token = try BearerToken.fromEnvironment(ProcessInfo.processInfo.environment)
      }
      settings.batchSize = try integer("batch", parsed, command: command) ?? config.batch ?? settings.batchSize
      settings.retryQuarantined = parsed.flag("retry-quarantined")
      settings.progress = { line in
        HealthETLCommand.standardError("healthetl: deliver: " + HealthETLCommand.oneLine(line) + "\n")
      }
      try settings.validate()
      return settings
    } catch let error as DeliveryError {
      throw ETLError.delivery(error)
    }
  }

  /// The options both deliveries take: CA file, timing, dry run, user agent.
  static func shared(_ base: DeliverySettings, config: DeliveryConfig, _ parsed: ParsedArguments, command: String)
    throws -> DeliverySettings
  {
    func number(_ name: String) throws -> Double? {
      guard let text = parsed.value(name) else { return nil }
      guard let value = Double(text), value.isFinite else {
        throw UsageError(message: "--\(name) needs a number of seconds, got '\(text)'", command: command)
      }
      return value
    }
    var settings = base
    settings.caFile = parsed.value("ca-file") ?? config.caFile
    settings.attempts = try integer("attempts", parsed, command: command) ?? config.attempts ?? settings.attempts
    settings.timeout = try number("timeout") ?? config.timeout ?? settings.timeout
    settings.backoff = try number("backoff") ?? config.backoff ?? settings.backoff
    settings.maxTime = try number("max-time") ?? config.maxTime ?? settings.maxTime
    settings.dryRun = parsed.flag("dry-run")
    settings.userAgent = "healthetl/\(HealthETLCommand.version)"
    return settings
  }

  static func integer(_ name: String, _ parsed: ParsedArguments, command: String) throws -> Int? {
    guard let text = parsed.value(name) else { return nil }
    guard let value = Int(text) else {
      throw UsageError(message: "--\(name) needs a whole number, got '\(text)'", command: command)
    }
    return value
  }

  /// `--dry-run` of the line protocol: the requests were printed as they were made.
  static func printDryRun(_ result: InfluxDelivery.Result, dryRun: Bool) {
    guard dryRun else { return }
    HealthETLCommand.standardError(
      "healthetl: deliver: dry run: \(result.batches) request(s) with \(result.sentPoints) of \(result.points) point(s) "
        + "to \(result.url); nothing was sent or changed\n")
  }

  /// `--dry-run`: each request as it would go out, the token hidden.
  static func printDryRun(_ result: WorkoutDelivery.Result) {
    guard let requests = result.dryRun else { return }
    for request in requests {
      print("POST \(result.url)")
      for header in request.headers { print(header) }
      print("")
      print(request.body)
      print("")
    }
    HealthETLCommand.standardError(
      "healthetl: deliver: dry run: \(requests.count) request(s) to \(result.url), "
        + "\(result.stillQuarantined.count) batch(es) quarantined; nothing was sent or changed\n")
  }
}
