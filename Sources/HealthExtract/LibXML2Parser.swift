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
  /// `recover`: read past what is not well-formed with libxml2's recovery, leaving out what it
  /// cannot trust (`OpenElements`, `Recovery`); implies `allowTruncated`.
  func parse(
    _ input: any ExportChunks, allowTruncated: Bool, recover: Bool = false, emit: (EventBatch) -> EventBatch
  ) throws(ExtractError) -> ReadSummary {
    let info = input.info
    let state = ParserState(path: info.path, recovering: recover)
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
    guard
      let parse = ProtectedPushParse(sax: &sax, userData: unmanaged.toOpaque(), name: info.path, recover: recover)
    else {
      throw .unreadable(path: info.path, reason: "libxml2 could not create a parser")
    }
    state.attach(parse.context)
    var summary = ReadSummary()
    let open = state.open

    func flush(force: Bool) {
      guard force ? !state.batch.isEmpty : state.batch.isFull else { return }
      state.batch.progress = input.progress
      // A recovering read holds back the element it may still drop (`OpenElements`).
      if recover, !force, let cut = open.heldBack() {
        if cut == EventBatch.Mark() {
          let batch = state.batch
          guard batch.events.count >= OpenElements.holdEvents || batch.used >= OpenElements.holdBytes else { return }
        } else {
          let tail = state.batch.takeTail(from: cut)
          state.batch = emit(state.batch)
          state.batch.append(tail)
          open.handedOn(upTo: cut)
          return
        }
      }
      state.batch = emit(state.batch)
      if recover { open.handedOn(upTo: nil) }
    }

    /// Errors libxml2 reported before its closing call.
    var errorsBeforeEnd = 0
    /// Where libxml2 stopped for good before the end of the input (recovering only).
    var stop: ParserState.Failure?

    func parsed(_ status: Int32, atEnd: Bool) throws(ExtractError) {
      flush(force: false)
      if !atEnd { errorsBeforeEnd = state.errors }
      if recover {
        // Only what is no export at all stops a recovering read.
        if state.wrongRoot {
          try state.fail(atEnd: atEnd, emptyInput: parse.bytesFed == 0, lastMarkup: parse.lastMarkup)
        }
        if !atEnd, stop == nil, parse.stopped { stop = state.lastError }
        return
      }
      if status != 0 || state.failure != nil || state.wrongRoot {
        try state.fail(atEnd: atEnd, emptyInput: parse.bytesFed == 0, lastMarkup: parse.lastMarkup)
      }
    }

    /// A recovering read's account of what it left out, once the input has ended.
    func finishRecovering(cutShort: Bool) throws(ExtractError) {
      if !state.sawRoot { try state.fail(atEnd: true, emptyInput: parse.bytesFed == 0, lastMarkup: parse.lastMarkup) }
      let lastLine = parse.lines
      let reason: String
      if let stop {
        reason = "libxml2 stopped reading inside it at line \(stop.line)"
      } else {
        reason = "the input ends inside it"
      }
      open.finish(reason: reason, lastLine: lastLine, batch: &state.batch)
      if let stop {
        open.stopped(
          line: stop.line, lastLine: lastLine, bytes: Int64(max(0, parse.bytesFed - stop.offset)), words: stop.words)
      }
      // Errors before the input ended, or an element that ended without its end tag: the damage
      // is not (only) the end of the file.
      let inMiddle =
        errorsBeforeEnd > 0 || open.misnesting.map { $0.offset < parse.lastMarkup } == true
        || state.failure.map { $0.offset >= 0 && $0.offset < parse.lastMarkup } == true
      let recovery = open.result(inMiddle: inMiddle)
      summary.recovery = recovery
      if !inMiddle, cutShort || state.errors > errorsBeforeEnd {
        let failure =
          state.failure ?? ParserState.Failure(line: state.currentLine, column: 0, words: "the input ends early")
        summary.truncated = true
        summary.truncatedAtLine = failure.line
        summary.truncationMessage = failure.words
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
      if recover { try finishRecovering(cutShort: false) }
    } catch {
      var error = error
      if case .truncated(let path, 0, let message) = error {
        error = .truncated(path: path, line: state.currentLine, message: message)
      }
      if case .malformed = error, let damage = input.damage() { error = damage }
      guard allowTruncated || recover, case .truncated(_, let line, let message) = error else {
        flush(force: true)
        throw error
      }
      if recover { try finishRecovering(cutShort: true) }
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
  /// Where the last '<' handed to libxml2 is (exports write no '<' in text or values): an input
  /// cut short ends inside or after that markup, and libxml2's error for it is there, however
  /// far back it stands in a tag cut in half (Pipelines/docs/input.md, "Bad input").
  private(set) var lastMarkup = 0

  /// `recover`: libxml2's `XML_PARSE_RECOVER`, which goes on after an error where it can; the
  /// line feeds fed are counted then, for the lines a stop leaves unread.
  init?(sax: inout xmlSAXHandler, userData: UnsafeMutableRawPointer, name: String, recover: Bool = false) {
    xmlSetExternalEntityLoader { _, _, _ in nil }
    // Errors raised without a parser context (encoding conversion, for one) would otherwise be
    // printed to stderr by libxml2 itself; every parse reports its failures in its own words.
    healthetl_xml_silence_generic_errors()
    guard let context = xmlCreatePushParserCtxt(&sax, userData, nil, 0, name) else { return nil }
    xmlCtxtUseOptions(
      context, Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOENT.rawValue | (recover ? XML_PARSE_RECOVER.rawValue : 0)))
    self.context = context
    countsLines = recover
  }

  private let countsLines: Bool
  private var lineFeeds = 0
  private var endsWithLineFeed = true

  /// Lines fed so far (a last line without a line feed counted); only when recovering.
  var lines: Int { lineFeeds + (endsWithLineFeed ? 0 : 1) }

  /// libxml2 stopped for good (`xmlHaltParser`: an error even its recovery does not go past, or
  /// the end of the document); it takes no more bytes.
  var stopped: Bool { context.pointee.instate == XML_PARSER_EOF }

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
    if let index = bytes.lastIndex(of: 0x3C) { lastMarkup = bytesFed + index }
    bytesFed += bytes.count
    if countsLines, let base = bytes.baseAddress, bytes.count > 0 {
      var from = base
      let end = base + bytes.count
      while let found = memchr(from, 0x0A, end - from) {
        lineFeeds += 1
        from = UnsafeRawPointer(found) + 1
      }
      endsWithLineFeed = bytes[bytes.count - 1] == 0x0A
    }
    return xmlParseChunk(
      context, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), terminate ? 1 : 0)
  }
}

/// Per-parse state reached from the C callbacks through `Unmanaged`.
final class ParserState {
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
  /// An error libxml2 reported, in words.
  struct Failure {
    var line: Int
    var column: Int
    var words: String
    /// libxml2's own message, one line.
    var message = ""
    var code: Int32 = 0
    /// For an element never closed (a mismatched end tag, the end inside it): where it opened.
    var openedAt: Int?
    /// The byte of the input libxml2 had reached.
    var offset = 0
  }

  /// The first error.
  var failure: Failure?
  /// The latest error.
  var lastError: Failure?
  /// Errors reported (only the first is looked at unless recovering).
  var errors = 0
  /// Recovering: the first error since the last start or end tag (`OpenElements`).
  var pending: Recovery.Problem?
  /// Recovering: the last callback was a start tag's.
  var afterStart = false
  let open: OpenElements

  init(path: String, recovering: Bool) {
    self.path = path
    open = OpenElements(recovering: recovering)
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

  /// The byte of the input libxml2 has reached.
  var byteOffset: Int {
    guard let context else { return 0 }
    return Int(xmlByteConsumed(context))
  }

  var currentColumn: Int {
    guard let input = context?.pointee.input else { return 0 }
    return Int(input.pointee.col)
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
    let line = currentLine
    if open.recovering {
      afterStart = true
      let problem = pending
      pending = nil
      guard
        open.start(
          element, name: name, line: line, column: currentColumn, offset: byteOffset, pending: problem, batch: &batch)
      else { return }
    } else {
      open.push(element, name: name, line: line, column: currentColumn, offset: byteOffset)
    }
    // One access to the batch per element: each of its arrays is checked once, not per attribute.
    batch.appendStart(
      element: Int8(element.rawValue), line: Int32(truncatingIfNeeded: line), otherName: name,
      attributes: UnsafeRawPointer(attributes)?.assumingMemoryBound(to: UnsafeRawPointer?.self),
      count: attributeCount, known: attributeIndex)
  }

  func end(_ localname: UnsafePointer<xmlChar>?) {
    if open.recovering {
      afterStart = false
      let problem = pending
      pending = nil
      guard open.end(line: currentLine, pending: problem, batch: &batch) else { return }
    } else {
      open.pop()
    }
    batch.appendEnd(element: Int8(element(for: localname).rawValue))
  }

  func record(_ error: xmlError) {
    guard error.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
    errors += 1
    guard failure == nil || open.recovering else { return }
    let message = Self.oneLine(error.message.map { String(cString: $0) } ?? "parse error")
    let str1 = error.str1.map { Self.excerpt(String(cString: $0)) }
    let str2 = error.str2.map { Self.excerpt(String(cString: $0)) }
    let code = Int32(error.code)
    var failure = Failure(
      line: Int(error.line), column: Int(error.int2),
      words: Self.words(code: code, message: message, str1: str1, str2: str2, int1: Int(error.int1), open: open),
      message: message, code: code,
      openedAt: [XML_ERR_TAG_NAME_MISMATCH.rawValue, XML_ERR_TAG_NOT_FINISHED.rawValue].contains(
        UInt32(bitPattern: code)) ? Int(error.int1) : nil)
    if let context { failure.offset = Int(xmlByteConsumed(context)) }
    if self.failure == nil { self.failure = failure }
    lastError = failure
    guard open.recovering else { return }
    let problem = Recovery.Problem(line: failure.line, column: failure.column, words: failure.words, message: message)
    open.noteError(problem)
    // Reported after the start tag was handed to the callback: the damage is that tag's, not the
    // next element's.
    if afterStart, UInt32(bitPattern: code) == XML_ERR_GT_REQUIRED.rawValue {
      open.damagedStart(problem, batch: &batch)
    } else if pending == nil {
      pending = problem
    }
  }

  /// libxml2's message on one line, at most 200 characters: it quotes names and values from the
  /// input, and a 10 MB one is not repeated whole.
  static func oneLine(_ text: String) -> String {
    var message = text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    if message.count > 200 { message = String(message.prefix(199)) + "…" }
    return message
  }

  static func excerpt(_ name: String) -> String {
    name.count > 80 ? String(name.prefix(79)) + "…" : name
  }

  /// What libxml2's error means, in words a user can act on (Pipelines/docs/input.md, "Bad input");
  /// libxml2's message itself for an error not listed here.
  static func words(
    code: Int32, message: String, str1: String?, str2: String?, int1: Int, open: OpenElements
  ) -> String {
    let name = str1 ?? "?"
    switch UInt32(bitPattern: code) {
    case XML_ERR_TAG_NAME_MISMATCH.rawValue:
      return "the <\(name)> opened at line \(int1) is never closed: </\(str2 ?? "?")> comes where </\(name)> was due"
    case XML_ERR_TAG_NOT_FINISHED.rawValue:
      return "the input ends inside the <\(name)> opened at line \(int1)"
    case XML_ERR_DOCUMENT_END.rawValue:
      guard let inner = open.innermostOpen else { return "something follows the end of the document" }
      if inner.element == .healthData, open.entries.count == 1 {
        return "</HealthData> is missing at the end (or libxml2 took it to close another element)"
      }
      return "the input ends inside the <\(OpenElements.name(inner.element, inner.name))> opened at line \(inner.line)"
    case XML_ERR_NAME_REQUIRED.rawValue where message.hasPrefix("StartTag"):
      return "a '<' that starts no element (text writes it as &lt;)"
    case XML_ERR_NAME_REQUIRED.rawValue where message.contains("EntityRef"):
      return "a stray '&' (text writes it as &amp;)"
    case XML_ERR_ENTITYREF_SEMICOL_MISSING.rawValue:
      return "an '&' without the ';' that ends an entity (text writes & as &amp;)"
    case XML_ERR_UNDECLARED_ENTITY.rawValue:
      return "an entity &\(name); that is not defined (text writes & as &amp;)"
    case XML_ERR_LT_IN_ATTRIBUTE.rawValue:
      return "a '<' inside an attribute value (an attribute's closing quote is missing before it)"
    case XML_ERR_ATTRIBUTE_NOT_STARTED.rawValue:
      return "an attribute value without quotes"
    case XML_ERR_ATTRIBUTE_NOT_FINISHED.rawValue:
      return "an attribute value whose closing quote is missing"
    case XML_ERR_ATTRIBUTE_WITHOUT_VALUE.rawValue:
      return "the attribute \(name) has no value"
    case XML_ERR_ATTRIBUTE_REDEFINED.rawValue:
      return "the attribute \(name) is written twice in one tag"
    case XML_ERR_GT_REQUIRED.rawValue:
      return "the start tag of <\(name)> does not end with '>' or '/>'"
    case XML_ERR_SPACE_REQUIRED.rawValue where message.hasPrefix("attributes construct error"):
      return "an attribute that cannot be read (a quote, '=' or space missing)"
    case XML_ERR_INVALID_CHAR.rawValue where message.contains("UTF-8"):
      return "bytes that are not UTF-8"
    case XML_ERR_INVALID_CHAR.rawValue:
      return "a character XML does not allow"
    case XML_ERR_INVALID_CHARREF.rawValue:
      return "a character reference (&#…;) to a character XML does not allow"
    default:
      return message
    }
  }

  /// Turns the first recorded error into the user-facing error. `atEnd`: it came from libxml2's
  /// closing call; `lastMarkup`: where the input's last '<' is.
  func fail(atEnd: Bool, emptyInput: Bool, lastMarkup: Int) throws(ExtractError) {
    if wrongRoot {
      throw .notAnExport(path: path, reason: "its root element is <\(rootName)>, not <HealthData>")
    }
    let failure = failure ?? Failure(line: currentLine, column: 0, words: "parse error", message: "parse error")
    if !sawRoot {
      if emptyInput { throw .notAnExport(path: path, reason: "it is empty") }
      throw .notAnExport(path: path, reason: "it is not XML (line \(failure.line): \(failure.message))")
    }
    // An element that ended without its end tag, shown by one that cannot be its child: the damage
    // is there, even where libxml2 notices it only at the end (Pipelines/docs/input.md, "Bad input").
    // An input cut inside an element name ("<Workout" of "<WorkoutStatistics") hands on an element
    // that may not fit: only one before the last markup shows damage.
    if let misnesting = open.misnesting, misnesting.offset < lastMarkup,
      failure.openedAt == misnesting.parentLine
        || (atEnd && open.entries.contains { $0.line == misnesting.parentLine && $0.element == misnesting.parent })
    {
      throw .malformed(path: path, line: misnesting.line, column: misnesting.column, message: misnesting.words)
    }
    // libxml2 reports some errors in the middle only once the input ends (a stray '&' between
    // tags waits for its ';'): the input ended early only where the error is in its last markup.
    if atEnd, failure.offset >= lastMarkup || failure.offset < 0 {
      throw .truncated(path: path, line: failure.line, message: failure.words)
    }
    throw .malformed(path: path, line: failure.line, column: failure.column, message: failure.words)
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
