import Synchronization

/// How many bytes a run's output files may hold: a fixed allowance plus a multiple of the
/// export's size (Pipelines/docs/outputs.md, "Output budget"). Outputs follow what an export can
/// plausibly hold, so one whose outputs pass it is the export's fault (exit 65; a night
/// quarantines it), found while writing, long before a disk is full.
public struct OutputBudget: Sendable, Equatable {
  /// Output bytes allowed per input byte. Past the fixed part, the real exports, the sample
  /// profiles and a 100 MB bench export write at most 1.4 times their size (default and samples
  /// pipelines together; 3.1 with health.sqlite); an export of nothing but minimal workouts 8.7
  /// (the default pipeline). 50 leaves room over those, and for pipelines that write a table in
  /// several formats.
  public var ratio: Double
  /// Bytes every run may write whatever the export's size: a report page, a workbook's frame and
  /// the headers of every table of a tiny export.
  public var allowance: Int64

  public static let standard = OutputBudget(ratio: 50, allowance: 64 << 20)
  /// `--output-budget 0`: no budget.
  public static let unlimited = OutputBudget(ratio: 0, allowance: 0)

  public init(ratio: Double, allowance: Int64) {
    self.ratio = ratio
    self.allowance = allowance
  }

  public var isUnlimited: Bool { ratio == 0 }

  /// The bytes an export of `inputBytes` may write.
  public func limit(inputBytes: Int64) -> Int64 {
    guard !isUnlimited else { return .max }
    let scaled = ratio * Double(max(0, inputBytes))
    return scaled >= Double(Int64.max - allowance) ? .max : allowance + Int64(scaled)
  }
}

/// The bytes a transaction's files have staged, counted as they are written (from any thread),
/// against the run's budget once the export's size is known.
public final class OutputMeter: Sendable {
  private let staged = Atomic<Int64>(0)
  private let limit = Atomic<Int64>(.max)
  private let inputBytes = Atomic<Int64>(0)

  init() {}

  /// Bytes staged so far.
  public var bytes: Int64 { staged.load(ordering: .relaxed) }

  /// From now on, the run may stage `budget.limit(inputBytes:)` bytes in all.
  public func apply(_ budget: OutputBudget, inputBytes: Int64) {
    self.inputBytes.store(inputBytes, ordering: .relaxed)
    limit.store(budget.limit(inputBytes: inputBytes), ordering: .relaxed)
  }

  /// Counts `count` more bytes written to `path`; the error once the total passes the limit.
  func add(_ count: Int, path: String) throws(OutputError) {
    let total = staged.add(Int64(count), ordering: .relaxed).newValue
    let limit = self.limit.load(ordering: .relaxed)
    if total > limit {
      throw .overBudget(path: path, bytes: total, limit: limit, inputBytes: inputBytes.load(ordering: .relaxed))
    }
  }
}
