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
  ]

  static let options =
    [
      OptionSpec(name: "out", valueName: "DIR", help: "The output folder whose records to deliver (required)."),
      OptionSpec(
        name: "url", valueName: "URL",
        help: "Where to POST them: https://, or http:// to this machine (required unless the config has url)."),
    ] + deliveryOptions

  static let usage =
    "healthetl deliver --out DIR (--url URL | --delivery-config FILE) [--token-file FILE] [--ca-file FILE] [--batch N] [--timeout SECONDS] [--attempts N] [--backoff SECONDS] [--max-time SECONDS] [--allow-insecure-http] [--retry-quarantined] [--dry-run]"

  static func main(_ arguments: [String]) throws -> ExitCode {
    guard
      let parsed = try HealthETLCommand.parseOptionsCommand(
        arguments, name: "deliver", usage: usage,
        summary:
          "POST the workout server records this output folder has emitted and no server has acknowledged, in batches, each with an Idempotency-Key. Exit 0 when all went through, 65 when the server rejected a batch (quarantined), 75 when records are left for the next run, 64 when the server refused the client (URL, token or certificate).",
        options: options)
    else { return ExitCode.success }
    guard let out = parsed.value("out") else {
      throw UsageError(message: "--out DIR is required", command: "deliver")
    }
    let settings = try self.settings(url: parsed.value("url"), parsed, command: "deliver")
    let result = try WorkoutDelivery.run(outputDirectory: out, settings: settings)
    printDryRun(result)
    return result.exitCode
  }

  /// The delivery settings of a command line: the URL and the options of `deliveryOptions`,
  /// over the keys of `--delivery-config`.
  static func settings(url: String?, _ parsed: ParsedArguments, command: String) throws -> DeliverySettings {
    func number(_ name: String) throws -> Double? {
      guard let text = parsed.value(name) else { return nil }
      guard let value = Double(text), value.isFinite else {
        throw UsageError(message: "--\(name) needs a number of seconds, got '\(text)'", command: command)
      }
      return value
    }
    func integer(_ name: String) throws -> Int? {
      guard let text = parsed.value(name) else { return nil }
      guard let value = Int(text) else {
        throw UsageError(message: "--\(name) needs a whole number, got '\(text)'", command: command)
      }
      return value
    }
    do {
      let config = try parsed.value("delivery-config").map(DeliveryConfig.read) ?? DeliveryConfig()
      guard let url = url ?? config.url else {
        throw UsageError(
          message:
            "no URL to deliver to: pass \(command == "nightly" ? "--deliver" : "--url") URL, or a --delivery-config with \"url\"",
          command: command)
      }
      var settings = try DeliverySettings(
        url: url, allowInsecureHTTP: parsed.flag("allow-insecure-http") || (config.allowInsecureHTTP ?? false))
      if let file = parsed.value("token-file") ?? config.tokenFile {
        settings.token = try BearerToken.read(file: file)
      } else if let variable = config.tokenEnvironment {
        settings.token = try BearerToken.fromEnvironment(
          ProcessInfo.processInfo.environment, variable: variable, required: true)
      } else {
        settings.token = try BearerToken.fromEnvironment(ProcessInfo.processInfo.environment)
      }
      settings.caFile = parsed.value("ca-file") ?? config.caFile
      settings.batchSize = try integer("batch") ?? config.batch ?? settings.batchSize
      settings.attempts = try integer("attempts") ?? config.attempts ?? settings.attempts
      settings.timeout = try number("timeout") ?? config.timeout ?? settings.timeout
      settings.backoff = try number("backoff") ?? config.backoff ?? settings.backoff
      settings.maxTime = try number("max-time") ?? config.maxTime ?? settings.maxTime
      settings.retryQuarantined = parsed.flag("retry-quarantined")
      settings.dryRun = parsed.flag("dry-run")
      settings.userAgent = "healthetl/\(HealthETLCommand.version)"
      settings.progress = { line in
        HealthETLCommand.standardError("healthetl: deliver: " + HealthETLCommand.oneLine(line) + "\n")
      }
      try settings.validate()
      return settings
    } catch let error as DeliveryError {
      throw ETLError.delivery(error)
    }
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
