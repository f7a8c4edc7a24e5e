import Foundation

/// Writes a JSON document (sorted keys, so reruns are byte-identical).
public enum JSONOutput {
  /// - Parameter ownerOnly: mode 0600 (`OutputTransaction.create`).
  public static func write(
    _ object: Any, to transaction: OutputTransaction, path: String, ownerOnly: Bool = false
  ) throws(OutputError) -> OutputSummary {
    guard let data = SortedJSON.data(object) else {
      throw .ioError(path: path, reason: "cannot encode JSON: a key that is not text or a number that is not finite")
    }
    let file = try transaction.create(path, ownerOnly: ownerOnly)
    try file.write(data + [0x0A])
    try file.close()
    return OutputSummary(path: path, rows: (object as? [Any])?.count ?? 1)
  }
}
