/// The one rule for job names: they name output files (`stats/<name>.csv`), so they are 1 to 100
/// ASCII letters, digits, `-`, `_` and `.`, not starting with `.` (no hidden files, no `..`).
public enum JobName {
  public static let maximumLength = 100

  public static func isValid(_ name: String) -> Bool {
    guard !name.isEmpty, name.utf8.count <= maximumLength, name.first != "." else { return false }
    return name.utf8.allSatisfy { byte in
      (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
        || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }
  }

  /// A job name as words, for a sheet's tab: `heart-rate-per-day` is "Heart rate per day",
  /// `hrv-per-day` "HRV per day", `vo2max-per-day` "VO2 max per day". `-` and `_` become spaces,
  /// the first letter is capitalised, and the abbreviations of health measures are written as
  /// such; any other name keeps its letters.
  public static func words(_ name: String) -> String {
    let abbreviations = ["hrv": "HRV", "vo2max": "VO2 max", "ecg": "ECG", "bmi": "BMI", "spo2": "SpO2"]
    let parts = name.split(whereSeparator: { $0 == "-" || $0 == "_" }).map { abbreviations[String($0)] ?? String($0) }
    let text = parts.joined(separator: " ")
    guard let first = text.first else { return name }
    return first.uppercased() + text.dropFirst()
  }

  /// What the rule says, for messages.
  public static let rule = "1 to 100 letters, digits, '-', '_' or '.' (not first), as it names output files"
}
