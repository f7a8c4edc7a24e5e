internal import CLibXML2
internal import Glibc

/// Drives libxml2's SAX2 push parser over an input and records every start and end tag, with
/// copies of its attribute bytes, into `EventBatch`es.
///
/// This is the only file that sees libxml2; every parse in it goes through `ProtectedPushParse`
/// (UTF-8 only, the document's DTD blanked, no network, no entity loaded). Only start and end
/// tags reach Swift: text, whitespace and comments stay inside libxml2.
final class LibXML2Parser {
  /// Bytes read from the input per `xmlParseChunk` call.
  static let chunkSize = 256 * 1024

  /// Parses all of `input`. `emit` receives each full batch and returns an empty one to reuse.
  func parse(
    _ input: any ExportChunks, allowTruncated: Bool, emit: (EventBatch) -> EventBatch
  ) throws(ExtractError) -> ReadSummary {
    let info = input.info
    let state = ParserState(path: info.path)
    var sax = xmlSAXHandler()
    sax.initialized = UInt32(XML_SAX2_MAGIC)
    sax.startElementNs = { context, localname, _, _, _, _, attributeCount, _, attributes in
      Unmanaged<ParserState>.fromOpaque(context!)._withUnsafeGuaranteedRef {
        $0.start(localname, attributeCount: Int(attributeCount), attributes: attributes)
      }
    }
    sax.endElementNs = { context, localname, _, _ in
      Unmanaged<ParserState>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.end(localname) }
    }
    sax.serror = { context, error in
      guard let context, let error else { return }
      Unmanaged<ParserState>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.record(error.pointee) }
    }
    let unmanaged = Unmanaged.passRetained(state)
    defer { unmanaged.release() }
    xmlSetStructuredErrorFunc(unmanaged.toOpaque()) { context, error in
      guard let context, let error else { return }
      Unmanaged<ParserState>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.record(error.pointee) }
    }
    defer { xmlSetStructuredErrorFunc(nil, nil) }
    guard let parse = ProtectedPushParse(sax: &sax, userData: unmanaged.toOpaque(), name: info.path) else {
      throw .unreadable(path: info.path, reason: "libxml2 could not create a parser")
    }
    state.attach(parse.context)
    var summary = ReadSummary()

    func flush(force: Bool) {
      guard force ? !state.batch.isEmpty : state.batch.isFull else { return }
      state.batch.progress = input.progress
      state.batch = emit(state.batch)
    }

    func parsed(_ status: Int32, atEnd: Bool) throws(ExtractError) {
      flush(force: false)
      if status != 0 || state.failure != nil || state.wrongRoot {
        try state.fail(atEnd: atEnd, emptyInput: parse.bytesFed == 0)
      }
    }

    let documentName = info.memberName == info.path ? info.path : info.path + ": " + info.memberName
    func refuse(_ encoding: String) -> ExtractError { .unsupportedEncoding(path: documentName, encoding: encoding) }

    do throws(ExtractError) {
      while try input.nextChunk({ bytes, scannedClean throws(ExtractError) in
        try parse.push(bytes, scannedClean: scannedClean, refuse: refuse) { status throws(ExtractError) in
          try parsed(status, atEnd: false)
        }
      }) {}
      try parse.finish(refuse: refuse) { status, atEnd throws(ExtractError) in try parsed(status, atEnd: atEnd) }
    } catch {
      var error = error
      if case .truncated(let path, 0, let message) = error {
        error = .truncated(path: path, line: state.currentLine, message: message)
      }
      if case .malformed = error, let damage = input.damage() { error = damage }
      guard allowTruncated, case .truncated(_, let line, let message) = error else {
        flush(force: true)
        throw error
      }
      summary.truncated = true
      summary.truncatedAtLine = line
      summary.truncationMessage = message
    }
    flush(force: true)
    summary.xmlBytes = input.progress.xmlBytes
    summary.replacedControlCharacters = parse.filter.replacedControlCharacters
    summary.repairedAttributeNames = parse.filter.repairedAttributeNames
    summary.exportVersion = parse.filter.exportVersion
    summary.inputSHA256 = input.inputSHA256
    return summary
  }
}

/// One libxml2 SAX2 push parse with the protections every parse here needs, whatever the
/// document: the bytes pass through `XMLByteFilter` (UTF-8 only, DOCTYPE blanked, forbidden
/// control characters replaced), `XML_PARSE_NONET` (never touch the network), an entity loader
/// that refuses everything, and `XML_PARSE_NOENT` (so `&amp;` arrives as `&`). Owns libxml2's
/// context and frees it, with anything libxml2 built on the side, when released.
final class ProtectedPushParse {
  let context: xmlParserCtxtPtr
  private(set) var filter = XMLByteFilter()
  /// Bytes handed to libxml2 so far (an empty document is reported as such).
  private(set) var bytesFed = 0

  init?(sax: inout xmlSAXHandler, userData: UnsafeMutableRawPointer, name: String) {
    xmlSetExternalEntityLoader { _, _, _ in nil }
    // Errors raised without a parser context (encoding conversion, for one) would otherwise be
    // printed to stderr by libxml2 itself; every parse reports its failures in its own words.
    healthetl_xml_silence_generic_errors()
    guard let context = xmlCreatePushParserCtxt(&sax, userData, nil, 0, name) else { return nil }
    xmlCtxtUseOptions(context, Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOENT.rawValue))
    self.context = context
  }

  deinit {
    // With entities substituted, libxml2 keeps the entities a document declares in a document of
    // its own ("SAX compatibility mode") and leaves it to the caller. The byte filter blanks every
    // DOCTYPE, so none should exist; if one ever does, it is not leaked.
    if let document = context.pointee.myDoc { xmlFreeDoc(document) }
    xmlFreeParserCtxt(context)
  }

  /// Feeds bytes as read from the input; `parsed` sees libxml2's status after each chunk it took.
  /// `scannedClean`: the reader found no forbidden control character in `chunk`.
  func push<E: Error>(
    _ chunk: UnsafeMutableRawBufferPointer, scannedClean: Bool = false, refuse: (_ encoding: String) -> E,
    parsed: (Int32) throws(E) -> Void
  ) throws(E) {
    try filter.filter(chunk, scannedClean: scannedClean, refuse: refuse) { bytes throws(E) in
      try parsed(parse(bytes, terminate: false))
    }
  }

  /// Ends the document: whatever the filter still holds, then libxml2's closing call; `parsed`
  /// is told which status is the closing call's (an error there means the input ended early).
  func finish<E: Error>(
    refuse: (_ encoding: String) -> E, parsed: (_ status: Int32, _ atEnd: Bool) throws(E) -> Void
  ) throws(E) {
    try filter.finish(refuse: refuse) { bytes throws(E) in try parsed(parse(bytes, terminate: false), false) }
    try parsed(parse(UnsafeRawBufferPointer(start: nil, count: 0), terminate: true), true)
  }

  private func parse(_ bytes: UnsafeRawBufferPointer, terminate: Bool) -> Int32 {
    bytesFed += bytes.count
    return xmlParseChunk(
      context, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), terminate ? 1 : 0)
  }
}

/// Per-parse state reached from the C callbacks through `Unmanaged`.
private final class ParserState {
  let path: String
  var context: xmlParserCtxtPtr?
  var batch = EventBatch()
  /// Interned element names, in `ExportElement` order (without `.other`).
  var elementNames: [UnsafeRawPointer?] = []
  /// Interned attribute name → `ExportAttribute` raw value, as a small open-addressing table keyed
  /// by the name pointer (libxml2 interns names, so equal names are equal pointers).
  static let nameTableSize = 128
  let nameKeys: UnsafeMutablePointer<UnsafeRawPointer?>
  let nameValues: UnsafeMutablePointer<Int16>
  var sawRoot = false
  var wrongRoot = false
  var rootName = ""
  var failure: (line: Int, column: Int, message: String, code: Int32)?

  init(path: String) {
    self.path = path
    nameKeys = .allocate(capacity: Self.nameTableSize)
    nameKeys.initialize(repeating: nil, count: Self.nameTableSize)
    nameValues = .allocate(capacity: Self.nameTableSize)
    nameValues.initialize(repeating: -1, count: Self.nameTableSize)
  }

  deinit {
    nameKeys.deallocate()
    nameValues.deallocate()
  }

  func attach(_ context: xmlParserCtxtPtr) {
    self.context = context
    let dict = context.pointee.dict
    elementNames = ExportElement.allCases.compactMap { element in
      element.xmlName.map { UnsafeRawPointer(xmlDictLookup(dict, $0, -1)) }
    }
    for attribute in ExportAttribute.allCases {
      guard let name = UnsafeRawPointer(xmlDictLookup(dict, attribute.xmlName, -1)) else { continue }
      var slot = Self.slot(for: name)
      while nameKeys[slot] != nil { slot = (slot + 1) & (Self.nameTableSize - 1) }
      nameKeys[slot] = name
      nameValues[slot] = Int16(attribute.rawValue)
    }
  }

  @inline(__always) static func slot(for pointer: UnsafeRawPointer) -> Int {
    let bits = UInt(bitPattern: pointer)
    return Int((bits >> 4 ^ bits >> 11) & UInt(nameTableSize - 1))
  }

  @inline(__always) func attributeIndex(_ name: UnsafeRawPointer) -> Int16 {
    var slot = Self.slot(for: name)
    while let key = nameKeys[slot] {
      if key == name { return nameValues[slot] }
      slot = (slot + 1) & (Self.nameTableSize - 1)
    }
    return -1
  }

  var currentLine: Int {
    guard let input = context?.pointee.input else { return 0 }
    return Int(input.pointee.line)
  }

  @inline(__always) func element(for localname: UnsafePointer<xmlChar>?) -> ExportElement {
    let name = UnsafeRawPointer(localname)
    // Records and their metadata are nearly every element: test them first.
    if name == elementNames[ExportElement.record.rawValue] { return .record }
    if name == elementNames[ExportElement.metadataEntry.rawValue] { return .metadataEntry }
    for index in elementNames.indices where elementNames[index] == name {
      return ExportElement(rawValue: index)!
    }
    return .other
  }

  func start(
    _ localname: UnsafePointer<xmlChar>?, attributeCount: Int,
    attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
  ) {
    let element = element(for: localname)
    if !sawRoot {
      sawRoot = true
      rootName = localname.map { String(String(cString: $0).prefix(80)) } ?? ""
      guard element == .healthData else {
        wrongRoot = true
        xmlStopParser(context)
        return
      }
    }
    let name = element == .other ? localname.map(UnsafeRawPointer.init) : nil
    // One access to the batch per element: each of its arrays is checked once, not per attribute.
    batch.appendStart(
      element: Int8(element.rawValue), line: Int32(truncatingIfNeeded: currentLine), otherName: name,
      attributes: UnsafeRawPointer(attributes)?.assumingMemoryBound(to: UnsafeRawPointer?.self),
      count: attributeCount, known: attributeIndex)
  }

  func end(_ localname: UnsafePointer<xmlChar>?) {
    batch.events.append(
      EventBatch.Event(
        element: Int8(element(for: localname).rawValue), isStart: false, line: 0, firstAttribute: 0,
        attributeCount: 0, nameOffset: 0, nameLength: 0))
  }

  func record(_ error: xmlError) {
    guard error.level.rawValue >= XML_ERR_ERROR.rawValue, failure == nil else { return }
    var message = error.message.map { String(cString: $0) } ?? "parse error"
    while message.last?.isWhitespace == true { message.removeLast() }
    // libxml2 quotes names and values from the input; a 10 MB one is not repeated whole.
    if message.count > 200 { message = String(message.prefix(199)) + "…" }
    failure = (Int(error.line), Int(error.int2), message, error.code)
  }

  /// Turns the first recorded error into the user-facing error.
  func fail(atEnd: Bool, emptyInput: Bool) throws(ExtractError) {
    if wrongRoot {
      throw .notAnExport(path: path, reason: "its root element is <\(rootName)>, not <HealthData>")
    }
    let failure = failure ?? (currentLine, 0, "parse error", 0)
    if !sawRoot {
      if emptyInput { throw .notAnExport(path: path, reason: "it is empty") }
      throw .notAnExport(path: path, reason: "it is not XML (line \(failure.line): \(failure.message))")
    }
    if atEnd {
      throw .truncated(path: path, line: failure.line, message: failure.message)
    }
    throw .malformed(path: path, line: failure.line, column: failure.column, message: failure.message)
  }
}

// MARK: - GPX route files

/// Drives libxml2's SAX2 push parser over one GPX file and hands every `<trkpt>` on as a
/// `GPXPoint`, with the protections of the export's parse (`ProtectedPushParse`). Text is
/// collected only inside the point fields.
final class LibXML2GPXParser {
  /// Bytes read per `xmlParseChunk` call.
  static let chunkSize = 64 * 1024

  func parse(
    name: String, read: (UnsafeMutableRawBufferPointer) throws(ExtractError) -> Int, point: (GPXPoint) -> Void
  ) -> GPXReadResult {
    withoutActuallyEscaping(point) { point in
      let state = GPXParserState(point: point)
      var sax = xmlSAXHandler()
      sax.initialized = UInt32(XML_SAX2_MAGIC)
      sax.startElementNs = { context, localname, _, _, _, _, attributeCount, _, attributes in
        Unmanaged<GPXParserState>.fromOpaque(context!)._withUnsafeGuaranteedRef {
          $0.start(localname, attributeCount: Int(attributeCount), attributes: attributes)
        }
      }
      sax.endElementNs = { context, localname, _, _ in
        Unmanaged<GPXParserState>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.end(localname) }
      }
      sax.characters = { context, characters, length in
        Unmanaged<GPXParserState>.fromOpaque(context!)._withUnsafeGuaranteedRef {
          $0.text(characters, Int(length))
        }
      }
      sax.serror = { context, error in
        guard let context, let error else { return }
        Unmanaged<GPXParserState>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.record(error.pointee) }
      }
      let unmanaged = Unmanaged.passRetained(state)
      defer { unmanaged.release() }
      guard let parse = ProtectedPushParse(sax: &sax, userData: unmanaged.toOpaque(), name: name) else {
        return GPXReadResult(problem: "libxml2 could not create a parser")
      }
      state.attach(parse.context)

      /// Why the parse stopped before the end of the file.
      enum Stop: Error {
        case unreadable(ExtractError)
        case notUTF8(encoding: String)
        /// libxml2 or the state reported a problem; `atEnd` when it came from the closing call.
        case failed(atEnd: Bool)
      }
      func parsed(_ status: Int32, atEnd: Bool) throws(Stop) {
        if status != 0 || state.failure != nil || state.wrongRoot { throw .failed(atEnd: atEnd) }
      }
      func refuse(_ encoding: String) -> Stop { .notUTF8(encoding: encoding) }
      let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 32)
      defer { buffer.deallocate() }
      do throws(Stop) {
        while true {
          let n: Int
          do throws(ExtractError) { n = try read(buffer) } catch { throw .unreadable(error) }
          if n == 0 { break }
          try parse.push(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<n]), refuse: refuse) {
            status throws(Stop) in try parsed(status, atEnd: false)
          }
        }
        try parse.finish(refuse: refuse) { status, atEnd throws(Stop) in try parsed(status, atEnd: atEnd) }
        return GPXReadResult(points: state.points)
      } catch {
        let problem: String
        switch error {
        case .unreadable(.unreadable(_, let reason)): problem = "cannot be read: \(reason)"
        case .unreadable(let other): problem = other.description
        case .notUTF8(let encoding):
          problem = "not UTF-8: the file is \(encoding) text (route files from the Health app are UTF-8)"
        case .failed(let atEnd):
          if state.wrongRoot {
            problem = "not a GPX file: its root element is <\(state.rootName)>"
          } else if parse.bytesFed == 0 {
            problem = "the file is empty"
          } else {
            let failure = state.failure ?? (state.currentLine, "parse error")
            let what = !state.sawRoot ? "not XML" : atEnd ? "cut short" : "broken XML"
            problem = "\(what) at line \(failure.line): \(failure.message)"
          }
        }
        return GPXReadResult(points: state.points, problem: problem)
      }
    }
  }
}

/// Per-file state of the GPX parse, reached from the C callbacks through `Unmanaged`.
private final class GPXParserState {
  /// The interned element names the parse reacts to, by role.
  enum Name: Int, CaseIterable {
    case gpx, trk, trkseg, trkpt, ele, time, speed, course, hAcc, vAcc
  }

  /// The point fields whose text is collected, in `Name` order from `ele`.
  static let firstField = Name.ele.rawValue

  let point: (GPXPoint) -> Void
  var context: xmlParserCtxtPtr?
  var names: [UnsafeRawPointer?] = []
  var latitudeName: UnsafeRawPointer?
  var longitudeName: UnsafeRawPointer?
  var sawRoot = false
  var wrongRoot = false
  var rootName = ""
  var failure: (line: Int, message: String)?
  var points = 0

  /// The open point's text: lat, lon, then the six fields, as ranges into `bytes`.
  var inPoint = false
  var pointLine = 0
  var newSegment = true
  var bytes: [UInt8] = []
  var ranges = [Range<Int>?](repeating: nil, count: 8)
  /// The field whose element is open (index into `ranges`), or -1.
  var collecting = -1
  var collectStart = 0

  init(point: @escaping (GPXPoint) -> Void) {
    self.point = point
    bytes.reserveCapacity(512)
  }

  func attach(_ context: xmlParserCtxtPtr) {
    self.context = context
    let dict = context.pointee.dict
    names = Name.allCases.map { UnsafeRawPointer(xmlDictLookup(dict, String(describing: $0), -1)) }
    latitudeName = UnsafeRawPointer(xmlDictLookup(dict, "lat", -1))
    longitudeName = UnsafeRawPointer(xmlDictLookup(dict, "lon", -1))
  }

  var currentLine: Int {
    guard let input = context?.pointee.input else { return 0 }
    return Int(input.pointee.line)
  }

  @inline(__always) func name(_ localname: UnsafePointer<xmlChar>?) -> Name? {
    let pointer = UnsafeRawPointer(localname)
    for index in names.indices where names[index] == pointer { return Name(rawValue: index) }
    return nil
  }

  func start(
    _ localname: UnsafePointer<xmlChar>?, attributeCount: Int,
    attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
  ) {
    let element = name(localname)
    if !sawRoot {
      sawRoot = true
      rootName = localname.map { String(String(cString: $0).prefix(80)) } ?? ""
      guard element == .gpx else {
        wrongRoot = true
        xmlStopParser(context)
        return
      }
    }
    guard let element else { return }
    switch element {
    case .trk, .trkseg:
      newSegment = true
    case .trkpt:
      inPoint = true
      pointLine = currentLine
      bytes.removeAll(keepingCapacity: true)
      for index in ranges.indices { ranges[index] = nil }
      guard let slots = UnsafeRawPointer(attributes)?.assumingMemoryBound(to: UnsafeRawPointer?.self) else { return }
      for index in 0..<attributeCount {
        let base = slots + index * 5
        guard let attribute = base[0], let start = base[3], let end = base[4] else { continue }
        let slot = attribute == latitudeName ? 0 : attribute == longitudeName ? 1 : -1
        guard slot >= 0 else { continue }
        let from = bytes.count
        bytes.append(contentsOf: UnsafeRawBufferPointer(start: start, count: end - start))
        ranges[slot] = from..<bytes.count
      }
    case .ele, .time, .speed, .course, .hAcc, .vAcc:
      guard inPoint else { return }
      collecting = 2 + element.rawValue - Self.firstField
      collectStart = bytes.count
    case .gpx:
      break
    }
  }

  func text(_ characters: UnsafePointer<xmlChar>?, _ length: Int) {
    guard collecting >= 0, let characters, length > 0 else { return }
    bytes.append(contentsOf: UnsafeBufferPointer(start: characters, count: length))
  }

  func end(_ localname: UnsafePointer<xmlChar>?) {
    guard inPoint, let element = name(localname) else { return }
    if element == .trkpt {
      emit()
      inPoint = false
      collecting = -1
      return
    }
    guard collecting >= 0, element.rawValue >= Self.firstField, collecting == 2 + element.rawValue - Self.firstField
    else { return }
    ranges[collecting] = collectStart..<bytes.count
    collecting = -1
  }

  private func emit() {
    bytes.withUnsafeBytes { all in
      func field(_ index: Int) -> UnsafeRawBufferPointer? {
        guard var range = ranges[index] else { return nil }
        // Pretty-printed files put white space around the values.
        while !range.isEmpty, Self.isSpace(all[range.lowerBound]) { range = (range.lowerBound + 1)..<range.upperBound }
        while !range.isEmpty, Self.isSpace(all[range.upperBound - 1]) {
          range = range.lowerBound..<(range.upperBound - 1)
        }
        guard !range.isEmpty else { return nil }
        return UnsafeRawBufferPointer(rebasing: all[range])
      }
      point(
        GPXPoint(
          latitude: field(0), longitude: field(1), elevation: field(2), time: field(3), speed: field(4),
          course: field(5), horizontalAccuracy: field(6), verticalAccuracy: field(7), startsSegment: newSegment,
          line: pointLine))
    }
    newSegment = false
    points += 1
  }

  @inline(__always) static func isSpace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
  }

  func record(_ error: xmlError) {
    guard error.level.rawValue >= XML_ERR_ERROR.rawValue, failure == nil else { return }
    var message = error.message.map { String(cString: $0) } ?? "parse error"
    while message.last?.isWhitespace == true { message.removeLast() }
    failure = (Int(error.line), message)
  }
}
