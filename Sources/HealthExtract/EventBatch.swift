/// A run of element events with copies of their attribute bytes: what the libxml2 thread hands
/// to the thread that normalizes records. Plain values, so a batch can cross threads.
public struct EventBatch: Sendable {
  struct Event: Sendable {
    /// `ExportElement.rawValue`.
    var element: Int8
    var isStart: Bool
    var line: Int32
    var firstAttribute: Int32
    var attributeCount: Int32
    /// For `.other` start tags: the element name in `bytes`.
    var nameOffset: Int32
    var nameLength: Int32
  }

  struct Attribute: Sendable {
    /// `ExportAttribute.rawValue`, or -1 for a name HealthETL does not know (then `name*` is set).
    var known: Int16
    var nameOffset: Int32
    var nameLength: Int32
    var valueOffset: Int32
    var valueLength: Int32
  }

  /// Attribute bytes; only `bytes[0..<used]` is meaningful. Pre-sized so that appending is one
  /// bounds check and a memcpy.
  var bytes: [UInt8]
  var used = 0
  var events: [Event] = []
  var attributes: [Attribute] = []
  /// How far the reader had got when the batch was cut.
  public var progress = ReadProgress()

  static let byteBudget = 512 * 1024
  static let eventBudget = 8_192
  /// Room past the budget: the attribute bytes of one parse chunk never exceed the chunk.
  static let slack = LibXML2Parser.chunkSize + 64 * 1024

  init() {
    bytes = [UInt8](repeating: 0, count: Self.byteBudget + Self.slack)
    events.reserveCapacity(Self.eventBudget)
    attributes.reserveCapacity(Self.eventBudget * 4)
  }

  var isFull: Bool { used >= Self.byteBudget || events.count >= Self.eventBudget }
  var isEmpty: Bool { events.isEmpty }

  mutating func appendBytes(_ start: UnsafeRawPointer, _ count: Int) -> Int32 {
    let offset = used
    if offset + count > bytes.count {
      bytes.append(contentsOf: repeatElement(0, count: offset + count - bytes.count + Self.slack))
    }
    bytes.withUnsafeMutableBytes { $0.baseAddress!.advanced(by: offset).copyMemory(from: start, byteCount: count) }
    used = offset + count
    return Int32(offset)
  }
}

/// Bytes consumed so far, for progress display.
public struct ReadProgress: Sendable, Equatable {
  /// Bytes of the file as given (compressed bytes for a zip).
  public var rawBytes: Int64 = 0
  /// Size of the file as given, when known.
  public var rawTotal: Int64?
  /// Uncompressed XML bytes.
  public var xmlBytes: Int64 = 0

  public init(rawBytes: Int64 = 0, rawTotal: Int64? = nil, xmlBytes: Int64 = 0) {
    self.rawBytes = rawBytes
    self.rawTotal = rawTotal
    self.xmlBytes = xmlBytes
  }
}
