/// One file a stage wrote (path relative to the output folder).
public struct OutputSummary: Sendable, Equatable {
  public var path: String
  public var rows: Int

  public init(path: String, rows: Int) {
    self.path = path
    self.rows = rows
  }
}
