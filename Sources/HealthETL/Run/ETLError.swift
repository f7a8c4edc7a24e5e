public import HealthExtract
public import HealthModel

/// Every failure a run can end with, and the sysexits code it maps to (SPEC §11).
public enum ETLError: Error, CustomStringConvertible {
  case extract(ExtractError)
  case zone(ZoneError)
  case output(OutputError)
  case pipeline(PipelineError)
  /// `--strict` and at least one record was rejected.
  case strictRejection(count: Int, first: RejectionLog.Example, reason: String)

  public var description: String {
    switch self {
    case .extract(let error): return error.description
    case .zone(let error): return error.description
    case .output(let error): return error.description
    case .pipeline(let error): return error.description

    case .strictRejection(let count, let first, let reason):
      return
        "line \(first.line): \(first.element) rejected (\(reason): \(first.detail)); --strict makes any rejection fatal (\(count) rejected in all). Run without --strict to skip such records, or `healthetl validate` to list them."
    }
  }

  /// 64 usage, 65 bad data, 66 no input, 73 cannot create output, 74 I/O error.
  public var exitCode: Int32 {
    switch self {
    case .extract(.notFound): return 66
    case .extract(.unreadable): return 66
    case .extract: return 65
    case .zone(.unknown): return 64
    case .zone(.unreadable): return 74
    case .output(.cannotCreate): return 73
    case .output(.ioError): return 74
    case .output(.locked): return 75
    case .strictRejection: return 65
    case .pipeline: return 64
    }
  }
}
