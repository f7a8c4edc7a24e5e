/// What reading the ECG files found (`run.json`'s `electrocardiograms`).
public struct ElectrocardiogramReport: Sendable, Equatable {
  /// CSV files looked at (one folder below the main XML).
  public var files = 0
  /// Recording rows written.
  public var recordings = 0
  /// Sample rows written.
  public var samples = 0
  /// Files that look like an ECG but cannot be read as one, or that broke off part-way.
  public var malformed = 0
  /// CSV files whose header has neither a date nor a sample rate: not ECGs, not read further.
  public var notECG = 0
  /// Control characters in header values made spaces (Pipelines/docs/electrocardiograms.md, "Electrocardiograms").
  public var controlCharactersReplaced = 0
  /// Their names, in the order read (at most `listLimit`).
  public var notECGFiles: [String] = []
  /// Every malformed file with what was wrong, in the order read (at most `listLimit`).
  public var problems: [Problem] = []

  public struct Problem: Sendable, Equatable {
    public var file: String
    public var problem: String
  }

  static let listLimit = 20

  /// The one line `healthetl run` prints when files were malformed (a name from the export with
  /// its control characters made `?`, so it stays one line); nil when none was.
  public var summaryLine: String? {
    guard let first = problems.first else { return nil }
    return "\(malformed) ECG file\(malformed == 1 ? "" : "s") not read whole (first: "
      + "\(PrintableExcerpt.of(first.file, limit: 120)): \(PrintableExcerpt.of(first.problem, limit: 200))); see run.json"
  }

  public func jsonObject() -> [String: Any] {
    [
      "files": files, "recordings": recordings, "samples": samples, "malformedFiles": malformed,
      "notECGFiles": notECG, "controlCharactersReplaced": controlCharactersReplaced,
      "notECG": Array(notECGFiles.prefix(Self.listLimit)),
      "problems": problems.prefix(Self.listLimit).map { ["file": $0.file, "problem": $0.problem] },
    ]
  }
}
