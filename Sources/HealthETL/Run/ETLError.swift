public import HealthExtract
public import HealthModel

/// Every failure a run can end with, and the exit status it maps to.
public enum ETLError: Error, CustomStringConvertible {
  case extract(ExtractError)
  case zone(ZoneError)
  case output(OutputError)
  case pipeline(ConfigFileError)
  /// The output folder's delivery state cannot be used.
  case state(ConfigFileError)
  /// A delivery's URL, token, CA file or option cannot be used.
  case delivery(DeliveryError)
  /// `--strict` and at least one record was rejected.
  case strictRejection(count: Int, first: RejectionLog.Example, reason: String)
  /// An export of a night failed in a way that may be its own doing, on `nights` nights in a row
  /// (`NightlyBatch.Fault.unclear`); at `limit` it is quarantined.
  indirect case exportFailing(name: String, nights: Int, limit: Int, cause: ETLError)
  /// The export held nothing a job can use: no records or workouts, or every one rejected.
  case nothingUsable(rejected: Int, first: (reason: String, example: RejectionLog.Example)?)

  public var description: String {
    switch self {
    case .extract(let error): return error.description
    case .zone(let error): return error.description
    case .output(let error): return error.description
    case .pipeline(let error): return error.description
    case .state(let error): return error.description
    case .delivery(let error): return error.description

    case .nothingUsable(let rejected, let first?):
      return
        "nothing in the export can be used: every one of its \(rejected) records and workouts was rejected (line \(first.example.line): \(first.example.element) rejected, \(first.reason): \(first.example.detail)); nothing was written. `healthetl validate` lists every problem."
    case .nothingUsable:
      return
        "the export holds no records, workouts or activity summaries; nothing was written. Export again from the Health app (profile picture → Export All Health Data)."
    case .strictRejection(let count, let first, let reason):
      return
        "line \(first.line): \(first.element) rejected (\(reason): \(first.detail)); --strict makes any rejection fatal (\(count) rejected in all). Run without --strict to skip such records, or `healthetl validate` to list them."
    case .exportFailing(let name, let nights, let limit, let cause):
      return
        "\(cause.description) (\(name) has failed so on \(nights) night(s) in a row; the night stops here and tries it again next time; after \(limit) it is quarantined and the exports after it go on)"
    }
  }

  /// The exit status this failure ends the program with.
  public var exitCode: ExitCode {
    switch self {
    case .extract(.notFound): return .noInput
    case .extract(.unreadable): return .noInput
    case .extract(.readFailed): return .ioError
    case .extract(.tooManyOpenFiles): return .cannotCreate
    case .extract: return .dataError
    case .zone(.unknown): return .usage
    case .zone(.unreadable), .zone(.databaseMissing): return .ioError
    case .zone(.tooManyOpenFiles): return .cannotCreate
    case .output(.cannotCreate): return .cannotCreate
    case .output(.ioError): return .ioError
    case .output(.locked): return .temporaryFailure
    case .output(.tooManyOpenFiles): return .cannotCreate
    case .output(.unsuitable): return .usage
    case .strictRejection, .nothingUsable: return .dataError
    // No descriptor left to read it with: the machine's limit, said like the outputs' (73).
    case .pipeline(let error) where error.isOutOfDescriptors: return .cannotCreate
    case .state(let error) where error.isOutOfDescriptors: return .cannotCreate
    case .pipeline: return .usage
    case .state: return .dataError
    case .delivery(.unreadable): return .noInput
    case .delivery: return .usage
    case .exportFailing(_, _, _, let cause): return cause.exitCode
    }
  }
}
