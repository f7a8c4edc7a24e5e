/// What a mart did with the distinct samples of each type, for the run's accounting
/// (Pipelines/docs/nightly.md, "Every record accounted for"): how many went into its outputs and, for
/// a type it shows whole, why each of the others did not.
///
/// A mart declares its own use, so a new subject needs no line anywhere else: the run compares
/// what every mart used with what the staging layer counted (`Mart.sampleUse`). Types are the
/// catalog's ids; reasons are the mart's own short phrases. Memory: a few numbers per type id.
public struct SampleUse: Sendable {
  /// Per type id: samples that went into an output.
  public private(set) var used: [Int] = []
  /// Per type id: whether the mart shows the type whole (`showsWhole`).
  public private(set) var whole: [Bool] = []
  /// Per type id with any: samples set aside, by reason.
  public private(set) var setAside: [Int32: [String: Int]] = [:]

  public init() {}

  /// The mart shows every sample of `type`: each it receives is used or set aside with a reason,
  /// so one it counted neither way is a defect the accounting reports.
  public mutating func showsWhole(_ type: Int32) {
    grow(to: type)
    whole[Int(type)] = true
  }

  /// `count` samples of `type` went into an output.
  @inline(__always) public mutating func use(_ type: Int32, count: Int = 1) {
    if Int(type) >= used.count { grow(to: type) }
    used[Int(type)] += count
  }

  /// `count` samples of `type` went into no output of the mart, for `reason` (a short phrase a
  /// user understands: "value is not a sleep stage").
  public mutating func setAside(_ type: Int32, reason: String, count: Int = 1) {
    grow(to: type)
    setAside[type, default: [:]][reason, default: 0] += count
  }

  /// Samples of `type` used.
  public func usedCount(_ type: Int32) -> Int { Int(type) < used.count ? used[Int(type)] : 0 }

  /// Whether the mart shows `type` whole.
  public func isShownWhole(_ type: Int32) -> Bool { Int(type) < whole.count && whole[Int(type)] }

  /// Samples of `type` set aside, by reason.
  public func reasons(_ type: Int32) -> [String: Int] { setAside[type] ?? [:] }

  private mutating func grow(to type: Int32) {
    let count = Int(type) + 1
    guard count > used.count else { return }
    used.append(contentsOf: repeatElement(0, count: count - used.count))
    whole.append(contentsOf: repeatElement(false, count: count - whole.count))
  }
}
