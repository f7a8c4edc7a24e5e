/// Short names for category values: `HKCategoryValueSleepAnalysisAsleepCore` → `asleepCore`.
public enum CategoryValueName {
  /// The short name of `raw` for a category type whose short name is `typeShortName`.
  ///
  /// A missing value is `notApplicable` (older exports omit it for that value). The pre-iOS 16
  /// `HKCategoryValueSleepAnalysisAsleep` is the same value as `AsleepUnspecified`.
  public static func shortName(raw: String?, typeShortName: String) -> String {
    guard let raw, !raw.isEmpty else { return "notApplicable" }
    guard raw.hasPrefix("HKCategoryValue") else { return raw }
    var rest = Substring(raw.dropFirst("HKCategoryValue".count))
    if rest.hasPrefix(typeShortName), rest.count > typeShortName.count {
      rest = rest.dropFirst(typeShortName.count)
    }
    if typeShortName == "SleepAnalysis" && rest == "Asleep" { return "asleepUnspecified" }
    guard let first = rest.first else { return raw }
    return first.lowercased() + rest.dropFirst()
  }
}

/// `SleepAnalysis` values (HKCategoryValueSleepAnalysis raw values).
public enum SleepStage: Int, Sendable, Hashable, CaseIterable {
  case inBed = 0
  case asleepUnspecified = 1
  case awake = 2
  case asleepCore = 3
  case asleepDeep = 4
  case asleepREM = 5

  public init?(shortName: String) {
    switch shortName {
    case "inBed": self = .inBed
    case "asleepUnspecified", "asleep": self = .asleepUnspecified
    case "awake": self = .awake
    case "asleepCore": self = .asleepCore
    case "asleepDeep": self = .asleepDeep
    case "asleepREM": self = .asleepREM
    default: return nil
    }
  }

  public var isAsleep: Bool {
    switch self {
    case .asleepUnspecified, .asleepCore, .asleepDeep, .asleepREM: return true
    case .inBed, .awake: return false
    }
  }
}
