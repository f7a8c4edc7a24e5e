/// What a read with `recover` read past in a document that is not well-formed, and what it left
/// out (Pipelines/docs/input.md, "Bad input").
///
/// libxml2's recovery (`XML_PARSE_RECOVER`) goes on after an error, but what it hands on next is
/// not always what the file meant: a `<Workout>` left unclosed takes every element after it as
/// its children, and a start tag with a broken attribute arrives with the attribute cut or
/// merged into another. The read therefore drops an element rather than pass on one it cannot
/// trust, and lists each drop here.
public struct Recovery: Sendable, Equatable {
  /// One error libxml2 reported, in words.
  public struct Problem: Sendable, Equatable {
    public var line: Int
    public var column: Int
    /// What is wrong, in words ("the <Workout> opened at line 8 is never closed …").
    public var words: String
    /// libxml2's own message, as it wrote it (one line).
    public var message: String

    public init(line: Int, column: Int, words: String, message: String) {
      self.line = line
      self.column = column
      self.words = words
      self.message = message
    }
  }

  /// One run of the document the read did not pass on.
  public struct Skip: Sendable, Equatable {
    public enum Action: String, Sendable {
      /// The element and everything in it were left out.
      case dropped
      /// libxml2 stopped reading here: nothing after it was read.
      case notRead
      /// The element's events had already been handed on (it was larger than the read holds
      /// back), so it was closed where its end was found missing and kept.
      case keptUnclosed
    }

    public var action: Action
    /// The outermost element left out (`notRead`: empty).
    public var element: String
    public var firstLine: Int
    public var lastLine: Int
    /// Elements left out, the outermost included (`notRead`: 0, since nothing was parsed).
    public var elements: Int
    /// Bytes not read (`notRead` only).
    public var bytes: Int64
    /// Why, in words.
    public var reason: String

    public init(
      action: Action, element: String, firstLine: Int, lastLine: Int, elements: Int, bytes: Int64, reason: String
    ) {
      self.action = action
      self.element = element
      self.firstLine = firstLine
      self.lastLine = lastLine
      self.elements = elements
      self.bytes = bytes
      self.reason = reason
    }
  }

  /// How many problems and skips are listed; the rest are only counted, so that a file broken
  /// on every line keeps `run.json` small.
  public static let listed = 20

  /// Every error libxml2 reported, counted.
  public var errors = 0
  /// The first `listed` of them.
  public var problems: [Problem] = []
  /// The first `listed` runs left out, in the order they were decided.
  public var skipped: [Skip] = []
  /// Runs left out beyond `skipped`.
  public var skippedOmitted = 0
  /// Every element left out, by element name (names HealthETL does not know as `other`).
  public var dropped: [String: Int] = [:]
  /// Whether anything was read past or left out before the input ended: the outputs may lack
  /// what the damaged part held. A file whose only fault is its end is `ReadSummary.truncated`.
  public var recovered = false

  public init() {}

  /// Elements left out, in all.
  public var droppedTotal: Int { dropped.values.reduce(0, +) }

  /// One line for a run's stderr, `inspect` and the report: what was left out and where first,
  /// then what libxml2 reported; nil when nothing was read past.
  public func summary() -> String? {
    guard recovered else { return nil }
    var parts: [String] = []
    let total = droppedTotal
    if total > 0 {
      let kinds = dropped.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        .map { "\($0.value) \($0.key)" }.joined(separator: ", ")
      var part = "left out \(total) element\(total == 1 ? "" : "s") (\(kinds))"
      let drops = skipped.filter { $0.action == .dropped }
      if let first = drops.first {
        let more = drops.count - 1 + skippedOmitted
        part +=
          ", lines \(first.firstLine)–\(first.lastLine)"
          + (more > 0 ? " and \(more) more part\(more == 1 ? "" : "s")" : "")
      }
      parts.append(part)
    }
    if let stop = skipped.first(where: { $0.action == .notRead }) {
      parts.append("did not read lines \(stop.firstLine)–\(stop.lastLine) (\(stop.bytes) bytes) after libxml2 stopped")
    }
    let kept = skipped.filter { $0.action == .keptUnclosed }.count
    if kept > 0 { parts.append("kept \(kept) unclosed element\(kept == 1 ? "" : "s") whole") }
    var errorsPart = "read past \(errors) XML error\(errors == 1 ? "" : "s")"
    if let first = problems.first {
      errorsPart += " (the first at line \(first.line), column \(first.column): \(first.words))"
    }
    parts.append(errorsPart)
    return parts.joined(separator: "; ")
  }
}
