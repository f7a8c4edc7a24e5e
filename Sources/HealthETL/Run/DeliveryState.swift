import Foundation

/// What an output folder has delivered of its workout server records (Pipelines/README.md, "Runs and the nightly batch"), kept in
/// `<out>/.healthetl-state.json` and written in the same atomic commit as the outputs it describes.
///
/// `emitted` are record ids delivered by runs that completed; `pending` are records committed by
/// a nightly batch that has not finished yet (it was killed, or is still going): they are part of
/// the next `workout_records.new.json` too, so nothing is lost and no completed run's delta is
/// repeated.
public struct DeliveryState: Sendable, Equatable {
  public static let recordsFile = "workout_records.json"

  public struct Processed: Sendable, Equatable {
    public var sha256: String
    public var name: String
    public var bytes: Int64
  }

  public var emitted: [String] = []
  public var pending: [[String: String]] = []
  public var processed: [Processed] = []

  public init() {}

  public static func load(from directory: String) throws(OutputError) -> DeliveryState {
    let path = directory + "/" + ToolFiles.state
    guard let data = FileManager.default.contents(atPath: path) else { return DeliveryState() }
    guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
      throw .ioError(path: path, reason: "the state file is not valid JSON; move it away to start over")
    }
    var state = DeliveryState()
    state.emitted = object["emitted"] as? [String] ?? []
    state.pending = object["pending"] as? [[String: String]] ?? []
    state.processed = (object["processed"] as? [[String: Any]] ?? []).compactMap { entry in
      guard let sha = entry["sha256"] as? String, let name = entry["name"] as? String else { return nil }
      return Processed(sha256: sha, name: name, bytes: (entry["bytes"] as? NSNumber)?.int64Value ?? 0)
    }
    return state
  }

  public func write(to transaction: OutputTransaction) throws(OutputError) {
    let object: [String: Any] = [
      "version": 1,
      "emitted": emitted,
      "pending": pending,
      "processed": processed.map { ["sha256": $0.sha256, "name": $0.name, "bytes": $0.bytes] as [String: Any] },
    ]
    _ = try JSONOutput.write(object, to: transaction, path: ToolFiles.state)
  }

  /// The staged server records of this run whose ids this folder has neither emitted nor pending.
  func newRecords(in transaction: OutputTransaction) throws(OutputError) -> [[String: String]]? {
    let path = transaction.stagedPath(Self.recordsFile)
    guard let data = FileManager.default.contents(atPath: path) else { return nil }
    guard let records = try? JSONSerialization.jsonObject(with: data) as? [[String: String]] else {
      throw .ioError(path: path, reason: "staged server records are not a JSON array of objects")
    }
    var known = Set(emitted)
    for record in pending { if let id = record["recordUuid"] { known.insert(id) } }
    var fresh: [[String: String]] = []
    for record in records {
      guard let id = record["recordUuid"], !known.contains(id) else { continue }
      known.insert(id)
      fresh.append(record)
    }
    return fresh
  }

  /// `run`: this run's delta is whatever was pending plus its new records; all become emitted.
  mutating func deliverRun(_ transaction: OutputTransaction) throws(OutputError) -> Int? {
    guard let fresh = try newRecords(in: transaction) else { return nil }
    let delta = pending + fresh
    _ = try JSONOutput.write(delta, to: transaction, path: ToolFiles.newRecords)
    emitted += delta.compactMap { $0["recordUuid"] }
    pending = []
    try write(to: transaction)
    return fresh.count
  }

  /// One export of a nightly batch: its new records join the pending delta.
  mutating func deliverNightlyExport(_ transaction: OutputTransaction, processed entry: Processed) throws(OutputError)
    -> Int
  {
    let fresh = try newRecords(in: transaction) ?? []
    pending += fresh
    _ = try JSONOutput.write(pending, to: transaction, path: ToolFiles.newRecords)
    processed.append(entry)
    try write(to: transaction)
    return fresh.count
  }

  /// The end of a nightly batch: the night's delta is final.
  mutating func finishNight(_ transaction: OutputTransaction) throws(OutputError) {
    _ = try JSONOutput.write(pending, to: transaction, path: ToolFiles.newRecords)
    emitted += pending.compactMap { $0["recordUuid"] }
    pending = []
    try write(to: transaction)
  }
}
