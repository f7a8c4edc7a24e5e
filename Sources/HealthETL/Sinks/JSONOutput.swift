import Foundation

/// Writes a JSON document (sorted keys, so reruns are byte-identical).
public enum JSONOutput {
  public static func write(_ object: Any, to transaction: OutputTransaction, path: String) throws(OutputError)
    -> OutputSummary
  {
    let data: Data
    do {
      data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
    } catch {
      throw .ioError(path: path, reason: "cannot encode JSON: \(error)")
    }
    let file = try transaction.create(path)
    try file.write(Array(data) + [0x0A])
    try file.close()
    return OutputSummary(path: path, rows: (object as? [Any])?.count ?? 1)
  }
}
