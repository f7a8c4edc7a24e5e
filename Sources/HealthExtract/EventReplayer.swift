/// Replays batches into a handler on the consuming thread.
final class EventReplayer {
  private let handler: any ExportEventHandler
  private let table: UnsafeMutablePointer<AttributeSlot>
  private var stamp: UInt32 = 0
  /// Each known element's name, for `ElementAttributes.elementName`.
  private let names: UnsafeMutableRawBufferPointer
  private let nameRanges: [Range<Int>]

  init(handler: any ExportEventHandler) {
    self.handler = handler
    var all: [UInt8] = []
    var ranges: [Range<Int>] = []
    for element in ExportElement.allCases {
      let start = all.count
      all.append(contentsOf: (element.xmlName ?? "").utf8)
      ranges.append(start..<all.count)
    }
    names = .allocate(byteCount: all.count, alignment: 1)
    names.copyBytes(from: all)
    nameRanges = ranges
    table = .allocate(capacity: ExportAttribute.allCases.count)
    table.initialize(repeating: AttributeSlot(start: nil, length: 0, stamp: 0), count: ExportAttribute.allCases.count)
  }

  deinit {
    table.deallocate()
    names.deallocate()
  }

  func replay(_ batch: EventBatch) {
    batch.bytes.withUnsafeBytes { bytes in
      batch.attributes.withUnsafeBufferPointer { attributes in
        let base = bytes.baseAddress ?? UnsafeRawPointer(table)
        for event in batch.events {
          guard let element = ExportElement(rawValue: Int(event.element)) else { continue }
          guard event.isStart else {
            handler.didEnd(element)
            continue
          }
          stamp &+= 1
          if stamp == 0 {
            for index in 0..<ExportAttribute.allCases.count { table[index].stamp = 0 }
            stamp = 1
          }
          let records = UnsafeBufferPointer(
            rebasing: attributes[Int(event.firstAttribute)..<Int(event.firstAttribute + event.attributeCount)])
          for record in records where record.known >= 0 {
            table[Int(record.known)] = AttributeSlot(
              start: base + Int(record.valueOffset), length: Int(record.valueLength), stamp: stamp)
          }
          let name: UnsafeRawBufferPointer =
            element == .other
            ? UnsafeRawBufferPointer(start: base + Int(event.nameOffset), count: Int(event.nameLength))
            : UnsafeRawBufferPointer(rebasing: names[nameRanges[element.rawValue]])
          let view = ElementAttributes(
            table: UnsafePointer(table), stamp: stamp, records: records, bytes: base, elementName: name)
          handler.didStart(element, attributes: view, line: Int(event.line))
        }
      }
    }
  }
}
