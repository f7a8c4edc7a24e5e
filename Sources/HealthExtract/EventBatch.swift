internal import Glibc

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

  /// A start tag: its event, the copies of its attributes' bytes, and for `.other` its name.
  /// - Parameters:
  ///   - attributes: libxml2's SAX2 attribute slots, five per attribute (name, prefix, URI,
  ///     value start, value end).
  ///   - known: the `ExportAttribute` raw value of an interned attribute name, or -1.
  @inline(__always) mutating func appendStart(
    element: Int8, line: Int32, otherName: UnsafeRawPointer?, attributes: UnsafePointer<UnsafeRawPointer?>?,
    count: Int, known: (UnsafeRawPointer) -> Int16
  ) {
    var event = Event(
      element: element, isStart: true, line: line, firstAttribute: Int32(self.attributes.count),
      attributeCount: Int32(count), nameOffset: 0, nameLength: 0)
    if let otherName {
      let length = strlen(otherName.assumingMemoryBound(to: CChar.self))
      event.nameOffset = appendBytes(otherName, length)
      event.nameLength = Int32(length)
    }
    if let attributes, count > 0 {
      // Values first into the bytes, then the records in one append.
      withUnsafeTemporaryAllocation(of: Attribute.self, capacity: count) { records in
        var written = 0
        for index in 0..<count {
          let base = attributes + index * 5
          guard let name = base[0], let start = base[3], let end = base[4] else { continue }
          var record = Attribute(known: known(name), nameOffset: 0, nameLength: 0, valueOffset: 0, valueLength: 0)
          if record.known < 0 {
            let length = strlen(name.assumingMemoryBound(to: CChar.self))
            record.nameOffset = appendBytes(name, length)
            record.nameLength = Int32(length)
          }
          record.valueLength = Int32(end - start)
          record.valueOffset = appendBytes(start, end - start)
          records.initializeElement(at: written, to: record)
          written += 1
        }
        self.attributes.append(contentsOf: UnsafeBufferPointer(rebasing: records[0..<written]))
        records.baseAddress!.deinitialize(count: written)
        // The records appended, so an attribute libxml2 hands without a name or value (it never
        // has) cannot shift the next element's.
        event.attributeCount = Int32(written)
      }
    }
    events.append(event)
  }

  /// An end tag.
  @inline(__always) mutating func appendEnd(element: Int8) {
    events.append(
      Event(
        element: element, isStart: false, line: 0, firstAttribute: 0, attributeCount: 0, nameOffset: 0, nameLength: 0))
  }

  /// A place in the batch to take the events after it back from (`truncate(to:)`) or move them
  /// on to the next batch (`moveTail(from:to:)`): the recovering read's hold on an element it
  /// may still drop.
  struct Mark: Sendable, Equatable {
    var events = 0
    var attributes = 0
    var bytes = 0
  }

  var mark: Mark { Mark(events: events.count, attributes: attributes.count, bytes: used) }

  /// The start tags after `mark`: `ExportElement` raw value and line.
  func forEachStart(after mark: Mark, _ body: (_ element: Int8, _ line: Int) -> Void) {
    for event in events[mark.events...] where event.isStart { body(event.element, Int(event.line)) }
  }

  mutating func truncate(to mark: Mark) {
    events.removeSubrange(mark.events...)
    attributes.removeSubrange(mark.attributes...)
    used = mark.bytes
  }

  /// The events after a mark with their attributes and bytes, offsets counted from the mark:
  /// what a recovering read carries over to the next batch (`takeTail`, `append`).
  struct Tail {
    var events: [Event]
    var attributes: [Attribute]
    var bytes: [UInt8]
  }

  /// Removes the events after `mark`, with their attributes and bytes, and returns them.
  mutating func takeTail(from mark: Mark) -> Tail {
    let byteShift = Int32(mark.bytes)
    let attributeShift = Int32(mark.attributes)
    let tail = Tail(
      events: events[mark.events...].map { event in
        var event = event
        if event.isStart {
          event.firstAttribute -= attributeShift
          if event.nameLength > 0 { event.nameOffset -= byteShift }
        }
        return event
      },
      attributes: attributes[mark.attributes...].map { attribute in
        var attribute = attribute
        if attribute.nameLength > 0 { attribute.nameOffset -= byteShift }
        attribute.valueOffset -= byteShift
        return attribute
      },
      bytes: Array(bytes[mark.bytes..<used]))
    truncate(to: mark)
    return tail
  }

  /// Appends a tail taken from another batch.
  mutating func append(_ tail: Tail) {
    let byteShift = Int32(used)
    let attributeShift = Int32(attributes.count)
    tail.bytes.withUnsafeBytes { if let base = $0.baseAddress { _ = appendBytes(base, $0.count) } }
    for var attribute in tail.attributes {
      if attribute.nameLength > 0 { attribute.nameOffset += byteShift }
      attribute.valueOffset += byteShift
      attributes.append(attribute)
    }
    for var event in tail.events {
      if event.isStart {
        event.firstAttribute += attributeShift
        if event.nameLength > 0 { event.nameOffset += byteShift }
      }
      events.append(event)
    }
  }

  @inline(__always) mutating func appendBytes(_ start: UnsafeRawPointer, _ count: Int) -> Int32 {
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
