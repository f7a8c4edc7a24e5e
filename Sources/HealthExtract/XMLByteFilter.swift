/// Makes real exports acceptable to a strict XML parser without trusting their DTD, in place and
/// without shifting a single byte or line:
///
/// - the whole `<!DOCTYPE …>` declaration, internal subset included, is overwritten with spaces
///   (newlines kept). iOS 16.0/16.1 wrote a malformed subset that libxml2 rejects outright, and no
///   export needs it: Apple declares no entities. With no DTD left, no entity can be declared, so
///   no external entity is ever loaded and no expansion bomb can go off;
/// - characters XML 1.0 forbids (a vertical tab has been seen inside values) become spaces and
///   are counted;
/// - in a document without a DOCTYPE (iOS 8–9 wrote none; every later export has one), the spaces
///   inside attribute names are rewritten (`AttributeNameRepair`). A document with a DOCTYPE
///   never goes through that byte-by-byte walk, so a current export costs nothing more.
struct XMLByteFilter {
  /// Control characters replaced so far.
  private(set) var replacedControlCharacters = 0
  /// Whether a DOCTYPE was found and blanked.
  private(set) var blankedDoctype = false
  /// The `HealthKit Export Version: N` comment of the DTD, read before it is blanked.
  private(set) var exportVersion: Int?
  /// Set once the prolog is read, for a document without a DOCTYPE.
  private var nameRepair: AttributeNameRepair?
  /// Attribute names whose spaces were rewritten (iOS 8 metadata keys such as `Health Mate App Version`).
  var repairedAttributeNames: Int { nameRepair?.repairedNames ?? 0 }

  private enum State { case prolog, body }
  private var state = State.prolog
  /// Prolog bytes held back until the root element starts, so that a DOCTYPE split across reads
  /// is seen whole. The prolog of a real export is about 10 KB.
  private var prolog: [UInt8] = []
  static let prologLimit = 4 << 20

  /// Feeds `chunk` through the filter and returns what the parser should see now (possibly
  /// nothing, while the prolog is still being collected). A document that is not UTF-8 (see
  /// `encodingProblem`) is refused through `refuse` before libxml2 sees a byte of it: the blanking
  /// below only works on UTF-8, and libxml2 would otherwise switch to that encoding by itself.
  ///
  /// `scannedClean`: the reader already found no forbidden control character in `chunk`
  /// (`hasForbiddenControlCharacters`, on the read-ahead thread), so the body's scan is skipped
  /// on the parse's thread, the one every run waits for.
  mutating func filter<E: Error>(
    _ chunk: UnsafeMutableRawBufferPointer, scannedClean: Bool = false, refuse: (_ encoding: String) -> E,
    emit: (UnsafeRawBufferPointer) throws(E) -> Void
  ) throws(E) {
    switch state {
    case .body:
      if !scannedClean { replaceControlCharacters(chunk) }
      guard nameRepair != nil else { return try emit(UnsafeRawBufferPointer(chunk)) }
      try nameRepair!.filter(chunk, emit: emit)
    case .prolog:
      prolog.append(contentsOf: chunk)
      guard let rootStart = Self.rootElementStart(in: prolog) ?? (prolog.count > Self.prologLimit ? prolog.count : nil)
      else { return }
      if let encoding = prolog.withUnsafeBytes(Self.encodingProblem) { throw refuse(encoding) }
      blankDoctype(before: rootStart)
      try emitProlog(emit)
    }
  }

  /// Whatever is still held back at the end of the input.
  mutating func finish<E: Error>(
    refuse: (_ encoding: String) -> E, emit: (UnsafeRawBufferPointer) throws(E) -> Void
  ) throws(E) {
    guard state == .prolog, !prolog.isEmpty else {
      try nameRepair?.finish(emit: emit)
      return
    }
    if let encoding = prolog.withUnsafeBytes(Self.encodingProblem) { throw refuse(encoding) }
    blankDoctype(before: prolog.count)
    try emitProlog(emit)
    try nameRepair?.finish(emit: emit)
  }

  /// The held prolog, once blanked: from here on the document is body.
  private mutating func emitProlog<E: Error>(_ emit: (UnsafeRawBufferPointer) throws(E) -> Void) throws(E) {
    state = .body
    if !blankedDoctype { nameRepair = AttributeNameRepair() }
    let held = prolog
    prolog = []
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: held.count, alignment: 32)
    defer { scratch.deallocate() }
    held.withUnsafeBytes { scratch.copyMemory(from: $0) }
    replaceControlCharacters(scratch)
    guard nameRepair != nil else { return try emit(UnsafeRawBufferPointer(scratch)) }
    try nameRepair!.filter(scratch, emit: emit)
  }

  /// Index of the `<` that opens the root element, skipping the XML declaration, processing
  /// instructions, comments and the DOCTYPE (with its quoted strings and internal subset).
  static func rootElementStart(in bytes: [UInt8]) -> Int? { walkProlog(bytes) { _ in } }

  /// Walks the prolog's markup from the start as a parser does — processing instructions to
  /// their `?>`, comments to their `-->`, declarations to their end — calling `doctype` with the
  /// range of each `<!DOCTYPE` declaration (to the end of `bytes` when it does not end there).
  /// What a comment or an instruction holds is never taken for markup: a comment that mentions
  /// `<!DOCTYPE [` is a comment. Returns the index of the `<` that opens the root element, nil
  /// when `bytes` end first.
  static func walkProlog(_ bytes: [UInt8], doctype: (Range<Int>) -> Void) -> Int? {
    var i = 0
    let n = bytes.count
    while i < n {
      guard bytes[i] == UInt8(ascii: "<") else {
        i += 1
        continue
      }
      guard i + 1 < n else { return nil }
      let next = bytes[i + 1]
      if next == UInt8(ascii: "?") {
        guard let end = find(bytes, "?>", from: i + 2) else { return nil }
        i = end + 2
      } else if next == UInt8(ascii: "!") {
        if starts(bytes, "<!--", at: i) {
          guard let end = find(bytes, "-->", from: i + 4) else { return nil }
          i = end + 3
        } else if starts(bytes, "<![CDATA[", at: i) {
          // Not allowed before the root element (the parser refuses it), but never read as markup.
          guard let end = find(bytes, "]]>", from: i + 9) else { return nil }
          i = end + 3
        } else {
          let end = doctypeEnd(bytes, from: i)
          if starts(bytes, "<!DOCTYPE", at: i) { doctype(i..<(end ?? n)) }
          guard let end else { return nil }
          i = end
        }
      } else {
        return i
      }
    }
    return nil
  }

  /// One past the `>` that closes the declaration starting at `start`. The internal subset ends at
  /// the first `]` outside quotes, comments and processing instructions that is followed (after
  /// white space) by `>`; a stray
  /// `>` inside it (the iOS 16 bug) is therefore harmless.
  static func doctypeEnd(_ bytes: [UInt8], from start: Int) -> Int? {
    var i = start + 2
    let n = bytes.count
    var inSubset = false
    var quote: UInt8 = 0
    while i < n {
      let c = bytes[i]
      if quote != 0 {
        if c == quote { quote = 0 }
        i += 1
        continue
      }
      if inSubset && starts(bytes, "<!--", at: i) {
        guard let end = find(bytes, "-->", from: i + 4) else { return nil }
        i = end + 3
        continue
      }
      if inSubset && starts(bytes, "<?", at: i) {
        // An instruction of the subset may hold a quote or `]>` of its own.
        guard let end = find(bytes, "?>", from: i + 2) else { return nil }
        i = end + 2
        continue
      }
      switch c {
      case UInt8(ascii: "\""), UInt8(ascii: "'"): quote = c
      case UInt8(ascii: "["): inSubset = true
      case UInt8(ascii: "]") where inSubset:
        var j = i + 1
        while j < n, bytes[j] == 0x20 || bytes[j] == 0x09 || bytes[j] == 0x0A || bytes[j] == 0x0D { j += 1 }
        guard j < n else { return nil }
        if bytes[j] == UInt8(ascii: ">") { return j + 1 }
      case UInt8(ascii: ">") where !inSubset:
        return i + 1
      default: break
      }
      i += 1
    }
    return nil
  }

  private mutating func blankDoctype(before limit: Int) {
    // Only the prolog before the root element is searched: the first read of a small file (a GPX
    // route) holds all of it.
    if let marker = Self.find(prolog, "HealthKit Export Version:", from: 0, before: limit) {
      var k = marker + 25
      while k < limit, prolog[k] == 0x20 { k += 1 }
      var version = 0
      var digits = 0
      while k < limit, prolog[k] >= 0x30, prolog[k] <= 0x39, digits < 6 {
        version = version * 10 + Int(prolog[k] - 0x30)
        digits += 1
        k += 1
      }
      if digits > 0 { exportVersion = version }
    }
    // Only declarations the walk meets as markup: not the words `<!DOCTYPE` in a comment.
    // The walk stops at the root element, where `limit` is unless the prolog never ended.
    var doctypes: [Range<Int>] = []
    _ = Self.walkProlog(prolog) { doctypes.append($0.clamped(to: 0..<limit)) }
    for range in doctypes where !range.isEmpty {
      for k in range where prolog[k] != 0x0A && prolog[k] != 0x0D { prolog[k] = 0x20 }
      blankedDoctype = true
    }
  }

  /// Replaces C0 controls other than tab, LF and CR.
  private mutating func replaceControlCharacters(_ bytes: UnsafeMutableRawBufferPointer) {
    guard let base = bytes.baseAddress else { return }
    let p = base.assumingMemoryBound(to: UInt8.self)
    Self.visitLowBytes(UnsafeRawBufferPointer(bytes)) { from, to in
      for k in from..<to where Self.isForbidden(p[k]) {
        p[k] = 0x20
        replacedControlCharacters += 1
      }
      return true
    }
  }

  /// Whether `bytes` hold a C0 control other than tab, LF and CR: what the reader asks of each
  /// chunk before handing it over, so that a clean chunk is not scanned again.
  static func hasForbiddenControlCharacters(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard let base = bytes.baseAddress else { return false }
    let p = base.assumingMemoryBound(to: UInt8.self)
    var found = false
    visitLowBytes(bytes) { from, to in
      found = (from..<to).contains { isForbidden(p[$0]) }
      return !found
    }
    return found
  }

  @inline(__always) private static func isForbidden(_ byte: UInt8) -> Bool {
    byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D
  }

  /// Calls `visit(from, to)` for each span of `bytes` that may hold a byte below 0x20, until it
  /// returns false. Words of eight bytes are tested at once: `(x - 0x20…) & ~x & 0x80…` is
  /// non-zero exactly when some byte of `x` is below 0x20; only such words (about one per line,
  /// for its newline) are looked at byte by byte.
  @inline(__always) private static func visitLowBytes(
    _ bytes: UnsafeRawBufferPointer, _ visit: (_ from: Int, _ to: Int) -> Bool
  ) {
    guard let base = bytes.baseAddress else { return }
    let n = bytes.count
    var i = 0
    let low: UInt64 = 0x2020_2020_2020_2020
    let high: UInt64 = 0x8080_8080_8080_8080
    @inline(__always) func flagged(_ offset: Int) -> UInt64 {
      let word = base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
      return (word &- low) & ~word & high
    }
    // Four words per step, one branch: most 32-byte blocks hold no control byte at all.
    while i + 32 <= n {
      if flagged(i) | flagged(i + 8) | flagged(i + 16) | flagged(i + 24) != 0, !visit(i, i + 32) { return }
      i += 32
    }
    while i + 8 <= n {
      if flagged(i) != 0, !visit(i, i + 8) { return }
      i += 8
    }
    if i < n { _ = visit(i, n) }
  }

  /// The encoding of a document that is not UTF-8, from the first bytes read: a UTF-16 or UTF-32
  /// byte order (mark or `<?` pattern), EBCDIC, or an `encoding` in the XML declaration other than UTF-8
  /// or its subset US-ASCII. Nil for UTF-8 (with or without a byte-order mark or declaration).
  /// Exports are UTF-8; the byte filter works on UTF-8, and a file in another encoding was
  /// converted by some other program, so it is refused by name instead of half-read.
  static func encodingProblem(_ head: UnsafeRawBufferPointer) -> String? {
    let bytes = Array(head.prefix(512))
    func starts(_ prefix: [UInt8]) -> Bool { bytes.starts(with: prefix) }
    if starts([0x00, 0x00, 0xFE, 0xFF]) || starts([0x00, 0x00, 0x00, 0x3C]) { return "UTF-32BE" }
    if starts([0xFF, 0xFE, 0x00, 0x00]) || starts([0x3C, 0x00, 0x00, 0x00]) { return "UTF-32LE" }
    if starts([0xFE, 0xFF]) || starts([0x00, 0x3C]) { return "UTF-16BE" }
    if starts([0xFF, 0xFE]) || starts([0x3C, 0x00]) { return "UTF-16LE" }
    // `<?xm` in EBCDIC, which libxml2 recognizes by itself: no `<` byte would reach this filter,
    // so a DOCTYPE in it could not be blanked.
    if starts([0x4C, 0x6F, 0xA7, 0x94]) { return "EBCDIC" }
    var start = starts([0xEF, 0xBB, 0xBF]) ? 3 : 0
    guard Self.starts(bytes, "<?xml", at: start), let end = find(bytes, "?>", from: start) else { return nil }
    guard let key = find(Array(bytes[start..<end]), "encoding", from: 0) else { return nil }
    start += key + 8
    while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 || bytes[start] == 0x0A || bytes[start] == 0x0D {
      start += 1
    }
    guard start < end, bytes[start] == UInt8(ascii: "=") else { return nil }
    start += 1
    while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 || bytes[start] == 0x0A || bytes[start] == 0x0D {
      start += 1
    }
    guard start < end, bytes[start] == UInt8(ascii: "\"") || bytes[start] == UInt8(ascii: "'") else { return nil }
    let quote = bytes[start]
    guard let close = bytes[(start + 1)..<end].firstIndex(of: quote) else { return nil }
    let name = String(decoding: bytes[(start + 1)..<close].prefix(40), as: UTF8.self)
    return ["utf-8", "utf8", "us-ascii", "ascii"].contains(name.lowercased()) ? nil : name
  }

  static func starts(_ bytes: [UInt8], _ text: StaticString, at index: Int) -> Bool {
    let count = text.utf8CodeUnitCount
    guard index + count <= bytes.count else { return false }
    for k in 0..<count where bytes[index + k] != text.utf8Start[k] { return false }
    return true
  }

  /// The first `text` starting at or after `from` and before `before` (the end by default).
  static func find(_ bytes: [UInt8], _ text: StaticString, from: Int, before: Int = .max) -> Int? {
    var i = from
    while i < before, i + text.utf8CodeUnitCount <= bytes.count {
      if bytes[i] == text.utf8Start[0] && starts(bytes, text, at: i) { return i }
      i += 1
    }
    return nil
  }
}
