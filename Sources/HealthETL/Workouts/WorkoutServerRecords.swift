/// The server records of a workouts job's mart, in output order: what the run's delivery delta
/// takes. They wait in a scratch file (`WorkoutServerRecordScratch`), not in memory
/// (Pipelines/docs/workouts.md, "Memory"); `forEach` reads them back in order.
public struct WorkoutServerRecords: MartProduct {
  private let scratch: WorkoutServerRecordScratch

  /// Published once the mart's finish has appended every record.
  init(_ scratch: WorkoutServerRecordScratch) { self.scratch = scratch }

  /// How many records there are.
  public var count: Int { scratch.count }

  /// Calls `body` with each record in order, reading the scratch a piece at a time.
  public func forEach(_ body: (WorkoutServerRecord) throws(OutputError) -> Void) throws(OutputError) {
    try scratch.forEach(body)
  }
}

/// Server records as `RowScratch` rows of their seven text fields, appended as a mart's rows are
/// built and read back in order, a piece of the file at a time.
final class WorkoutServerRecordScratch {
  private let rows: RowScratch
  private var fields: [Field] = []

  init(transaction: OutputTransaction) {
    rows = RowScratch(transaction: transaction, prefix: "workout-records")
  }

  /// Records appended so far.
  var count: Int { rows.count }

  func append(_ record: WorkoutServerRecord) {
    fields.removeAll(keepingCapacity: true)
    for value in record.fieldValues { fields.append(.text(value)) }
    rows.append(fields)
  }

  /// The records, in the order they were appended.
  func forEach(_ body: (WorkoutServerRecord) throws(OutputError) -> Void) throws(OutputError) {
    try rows.forEach { (fields) throws(OutputError) in try body(Self.record(fields)) }
  }

  private static func record(_ fields: [Field]) -> WorkoutServerRecord {
    func text(_ index: Int) -> String {
      if index < fields.count, case .text(let value) = fields[index] { return value }
      return ""
    }
    return WorkoutServerRecord(
      recordDate: text(0), execTypeCode: text(1), execStartTime: text(2), execEndTime: text(3), execRuntime: text(4),
      deviceTypeCode: text(5), recordUuid: text(6))
  }
}
