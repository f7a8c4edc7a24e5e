/// What can go wrong while reading an export, each with the sentence a user sees.
public enum ExtractError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The path does not exist.
  case notFound(path: String)
  /// The file could not be opened or read (permissions, I/O error).
  case unreadable(path: String, reason: String)
  /// The input is not an Apple Health export at all.
  case notAnExport(path: String, reason: String)
  /// The XML is malformed at a place other than its end.
  case malformed(path: String, line: Int, column: Int, message: String)
  /// The input ended before the document did (a download cut short).
  case truncated(path: String, line: Int, message: String)

  public var description: String {
    switch self {
    case .notFound(let path):
      return
        "\(path): no such file or folder; pass the export.zip, the unpacked apple_health_export folder, its export.xml, or - for standard input"
    case .unreadable(let path, let reason):
      return "\(path): cannot be read: \(reason)"
    case .notAnExport(let path, let reason):
      return
        "\(path) is not an Apple Health export: \(reason). Export it from the Health app (profile picture → Export All Health Data) and pass export.zip or its export.xml."
    case .malformed(let path, let line, let column, let message):
      return
        "\(path):\(line):\(column): the export is not well-formed XML: \(message). Re-export from the Health app; if it persists, report the line above."
    case .truncated(let path, let line, let message):
      return
        "\(path):\(line): the export ends too early (\(message)): the file looks cut short, e.g. an interrupted download or copy. Re-export or copy it again, or pass --allow-truncated to process everything before line \(line)."
    }
  }
}
