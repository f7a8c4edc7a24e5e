import Foundation

/// A borrowed view of one start tag's attributes, valid only during the handler call that
/// receives it. Values are the decoded UTF-8 bytes (entities replaced), not NUL-terminated.
///
/// Known attributes are filed into a slot table once per tag, so `value(_:)` is a single load
/// however many attributes the stages ask for.
public struct ElementAttributes {
  @usableFromInline let table: UnsafePointer<AttributeSlot>
  @usableFromInline let stamp: UInt32
  let records: UnsafeBufferPointer<EventBatch.Attribute>
  let bytes: UnsafeRawPointer
  /// The element's own name bytes (meaningful for `.other`).
  public let elementName: UnsafeRawBufferPointer

  init(
    table: UnsafePointer<AttributeSlot>, stamp: UInt32, records: UnsafeBufferPointer<EventBatch.Attribute>,
    bytes: UnsafeRawPointer, elementName: UnsafeRawBufferPointer
  ) {
    self.table = table
    self.stamp = stamp
    self.records = records
    self.bytes = bytes
    self.elementName = elementName
  }

  /// The value of `attribute`, or nil when the tag does not carry it.
  @inlinable
  public func value(_ attribute: ExportAttribute) -> UnsafeRawBufferPointer? {
    let slot = table[attribute.rawValue]
    guard slot.stamp == stamp else { return nil }
    return UnsafeRawBufferPointer(start: slot.start, count: slot.length)
  }

  /// Every attribute in document order, as (name, value) bytes.
  public func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) {
    for record in records {
      let value = UnsafeRawBufferPointer(start: bytes + Int(record.valueOffset), count: Int(record.valueLength))
      if record.known >= 0 {
        ExportAttribute.nameBytes[Int(record.known)].withUnsafeBytes { body($0, value) }
      } else {
        body(UnsafeRawBufferPointer(start: bytes + Int(record.nameOffset), count: Int(record.nameLength)), value)
      }
    }
  }

  /// Calls `known` with the raw value of every attribute HealthETL knows that `mask` sets no bit
  /// for (bit n stands for `ExportAttribute(rawValue: n)`), and `unknown` with the name of every
  /// other attribute.
  public func forEachAttribute(
    notIn mask: UInt64, known: (Int) -> Void, unknown: (UnsafeRawBufferPointer) -> Void
  ) {
    for record in records {
      if record.known < 0 {
        unknown(UnsafeRawBufferPointer(start: bytes + Int(record.nameOffset), count: Int(record.nameLength)))
      } else if mask & (1 << UInt64(record.known)) == 0 {
        known(Int(record.known))
      }
    }
  }

  /// Number of attributes on the tag.
  public var attributeCount: Int { records.count }
}

/// Where one known attribute's value lies for the tag stamped `stamp`.
public struct AttributeSlot {
  @usableFromInline var start: UnsafeRawPointer?
  @usableFromInline var length: Int
  @usableFromInline var stamp: UInt32
}

extension ExportAttribute {
  static let nameBytes: [[UInt8]] = allCases.map { Array($0.xmlName.utf8) }
}
