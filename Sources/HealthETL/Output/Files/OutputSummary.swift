/// One file a stage wrote (path relative to the output folder).
public struct OutputSummary: Sendable, Equatable {
  public var path: String
  public var rows: Int
  /// For a file of a `{type}` or `{name}` output: the type or element name it holds, as the
  /// export wrote it (its file name may differ: `ContentFileNames`).
  public var name: String?

  public init(path: String, rows: Int, name: String? = nil) {
    self.path = path
    self.rows = rows
    self.name = name
  }
}
