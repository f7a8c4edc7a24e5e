/// Rejected elements, counted per reason with the first few examples (Pipelines/README.md,
/// "Bad input").
public struct RejectionLog: Sendable {
  public struct Example: Sendable, Equatable {
    public var line: Int
    public var element: String
    public var detail: String
  }

  public static let examplesPerReason = 5
  public private(set) var counts: [String: Int] = [:]
  public private(set) var examples: [String: [Example]] = [:]

  public init() {}

  public var total: Int { counts.values.reduce(0, +) }

  /// Counts a rejection; `detail` is only built for the first few of each reason.
  mutating func reject(reason: String, line: Int, element: String, detail: @autoclosure () -> String) {
    counts[reason, default: 0] += 1
    if examples[reason, default: []].count < Self.examplesPerReason {
      examples[reason, default: []].append(Example(line: line, element: element, detail: detail()))
    }
  }
}
