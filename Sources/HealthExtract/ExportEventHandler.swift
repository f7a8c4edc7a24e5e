/// Receives the elements of an export as the reader streams them.
///
/// Calls arrive in document order on the reading thread. `attributes` are borrowed: copy what you
/// keep before returning.
public protocol ExportEventHandler: AnyObject {
  /// A start tag. `line` is the line the tag ends on (libxml2's position), 1-based.
  func didStart(_ element: ExportElement, attributes: ElementAttributes, line: Int)
  /// The matching end tag (also sent for empty-element tags).
  func didEnd(_ element: ExportElement)
}

/// What the reader saw besides the elements themselves.
public struct ReadSummary: Sendable, Equatable {
  /// Uncompressed XML bytes parsed.
  public var xmlBytes: Int64 = 0
  /// Characters XML 1.0 forbids that were replaced by spaces.
  public var replacedControlCharacters = 0
  /// Attribute names whose spaces became `_` (some iOS 8 exports wrote such names).
  public var repairedAttributeNames = 0
  /// Whether the document ended before its root element closed (only with `allowTruncated` or
  /// `recover`).
  public var truncated = false
  /// The line where a truncated input ended.
  public var truncatedAtLine: Int?
  /// The message for a truncation that was tolerated.
  public var truncationMessage: String?
  /// The `HealthKit Export Version` written in the (blanked) DTD.
  public var exportVersion: Int?
  /// What a recovering read (`recover`) read past and left out; nil when the read did not
  /// recover.
  public var recovery: Recovery?
  /// SHA-256 of the file as given, when it was hashed as it was read (`ExportStream`'s
  /// `hashingInput`): an export XML on disk, read to its end.
  public var inputSHA256: String?

  public init() {}
}
