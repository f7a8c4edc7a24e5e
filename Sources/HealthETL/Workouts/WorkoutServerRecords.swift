/// The server records of a workouts job's mart, in output order: what the run's delivery delta
/// takes. They wait in a scratch file (`WorkoutServerRecordScratch`), not in memory
/// (Pipelines/docs/workouts.md, "Memory"); `forEach` reads them back in order.
public struct WorkoutServerRecords: MartProduct {
  /// How many records there are.
  public let count: Int
  private let scratch: WorkoutServerRecordScratch

  init(_ scratch: WorkoutServerRecordScratch) {
    self.scratch = scratch
    count = scratch.count
  }

  /// Calls `body` with each record in order, reading the scratch a piece at a time.
  public func forEach(_ body: (WorkoutServerRecord) throws(OutputError) -> Void) throws(OutputError) {
    try scratch.forEach(count, body)
  }
}

/// Server records as `ScratchRows` rows of their seven text fields, appended as a mart's rows are
/// built and read back in order, a piece of the file at a time.
final class WorkoutServerRecordScratch {
  private let transaction: OutputTransaction
  // Named after this object as well: two workouts marts of one run never share a file.
  private lazy var bytes = RecordScratch<UInt8>(
    transaction: transaction,
    name: "workout-records-" + String(UInt(bitPattern: ObjectIdentifier(self).hashValue), radix: 16))
  /// Records appended so far.
  private(set) var count = 0
  private var fields: [Field] = []
  private var encoded: [UInt8] = []

  /// The bytes `forEach` reads at a time.
  static let pieceBytes = 64 * 1024

  init(transaction: OutputTransaction) {
    self.transaction = transaction
  }

  func append(_ record: WorkoutServerRecord) {
    fields.removeAll(keepingCapacity: true)
    for value in record.fieldValues { fields.append(.text(value)) }
    encoded.removeAll(keepingCapacity: true)
    ScratchRows.append(fields, to: &encoded)
    bytes.append(contentsOf: encoded)
    count += 1
  }

  /// The first `records` records, in the order they were appended.
  func forEach(_ records: Int, _ body: (WorkoutServerRecord) throws(OutputError) -> Void) throws(OutputError) {
    guard records > 0 else { return }
    var reader = ScratchRows.Reader()
    var piece: [UInt8] = []
    var offset = 0
    var visited = 0
    let total = bytes.count
    while offset < total, visited < records {
      let length = min(Self.pieceBytes, total - offset)
      try bytes.read(first: offset, count: length, into: &piece)
      offset += length
      let failure = piece.withUnsafeBytes { raw -> OutputError? in
        do throws(OutputError) {
          try reader.rows(in: raw) { (fields) throws(OutputError) in
            guard visited < records else { return }
            visited += 1
            try body(Self.record(fields))
          }
        } catch {
          return error
        }
        return nil
      }
      if let failure { throw failure }
    }
  }

  private static func record(_ fields: [Field]) -> WorkoutServerRecord {
    func text(_ index: Int) -> String {
      if case .text(let value) = fields[index] { return value }
      return ""
    }
    return WorkoutServerRecord(
      recordDate: text(0), execTypeCode: text(1), execStartTime: text(2), execEndTime: text(3), execRuntime: text(4),
      deviceTypeCode: text(5), recordUuid: text(6))
  }
}
