/// What reading the clinical records found (`run.json`'s `clinicalRecords`).
public struct ClinicalRecordReport: Sendable, Equatable {
  public var records = 0
  /// Resource files read and summarised.
  public var resourcesRead = 0
  /// Resource files copied into the output folder (`copyResources`).
  public var resourcesCopied = 0
  /// Records whose resource file was not read (missing, too large, not JSON, a path outside
  /// `clinical-records/`); each row says why.
  public var resourceProblems = 0
  /// Control characters in the values taken from resources, made spaces (Pipelines/README.md,
  /// "Clinical records").
  public var controlCharactersReplaced = 0

  public func jsonObject() -> [String: Any] {
    [
      "records": records, "resourcesRead": resourcesRead, "resourcesCopied": resourcesCopied,
      "resourceProblems": resourceProblems, "controlCharactersReplaced": controlCharactersReplaced,
    ]
  }
}
