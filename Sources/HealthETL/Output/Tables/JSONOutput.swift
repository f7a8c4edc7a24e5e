import Foundation

/// Writes a JSON document (sorted keys, so reruns are byte-identical).
public enum JSONOutput {
  /// - Parameter ownerOnly: mode 0600 (`OutputTransaction.create`).
  public static func write(
    _ object: Any, to transaction: OutputTransaction, path: String, ownerOnly: Bool = false
  ) throws(OutputError) -> OutputSummary {
    let data: Data
    do {
      data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
    } catch {
      throw .ioError(path: path, reason: "cannot encode JSON: \(error)")
    }
    let file = try transaction.create(path, ownerOnly: ownerOnly)
    try file.write(Array(data) + [0x0A])
    try file.close()
    return OutputSummary(path: path, rows: (object as? [Any])?.count ?? 1)
  }
}
