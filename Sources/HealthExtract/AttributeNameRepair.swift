/// Rewrites the spaces inside the attribute names some iOS 8 exports wrote
/// (`Health Mate App Version="2.6.2"`) into `_`, so the document becomes well-formed and the rest
/// of it can be read (Pipelines/docs/input.md, "Bad input").
///
/// A start tag is followed byte by byte, values and comments skipped. A run of spaces that sits
/// between two parts of an attribute name — a name, spaces, and then another name character
/// rather than `=` — never occurs in well-formed XML, so a well-formed document passes unchanged;
/// every other byte passes as it came. Only plain spaces are rewritten, one `_` for each, so no
/// byte or line moves. A run of spaces is decided only by the byte after it, which may lie in
/// the next chunk: such a run is held back (as a count, since it is only spaces) and emitted
/// with that chunk; a run longer than `longestHeldRun` is emitted as it is.
struct AttributeNameRepair {
  /// Attribute names whose spaces were rewritten.
  private(set) var repairedNames = 0

  private enum State: UInt8 {
    case text, markup, bang, commentOpening, comment, characterData, instruction, declaration, endTag
    case elementName, inTag, attributeName, spacesInName, spacesAfterName, beforeValue, value
  }
  private var state = State.text
  /// The quote that closes the open value; in a comment, the dashes seen in a row (in a CDATA
  /// section, the `]`); in an instruction, whether the last byte was `?`.
  private var pending: UInt8 = 0
  /// Spaces of the undecided run that lie before the current chunk (not emitted yet).
  private var heldSpaces = 0
  private var nameRepaired = false

  static let longestHeldRun = 256

  /// Passes `chunk` (changed in place) to `emit`, minus a trailing run of spaces that the next
  /// chunk decides.
  mutating func filter<E: Error>(
    _ chunk: UnsafeMutableRawBufferPointer, emit: (UnsafeRawBufferPointer) throws(E) -> Void
  ) throws(E) {
    guard let base = chunk.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
    let n = chunk.count
    // Where the undecided run of spaces starts in this chunk (0 when it began before it).
    var runStart = 0
    var i = 0
    while i < n {
      let c = base[i]
      switch state {
      case .text:
        // Text is most of a document's bytes outside tags: skip to the next `<`.
        while i < n, base[i] != 0x3C { i += 1 }
        if i < n { state = .markup }
      case .markup:
        switch c {
        case 0x21: state = .bang
        case 0x3F: state = .instruction; pending = 0
        case 0x2F: state = .endTag
        default: state = Self.isNameByte(c) ? .elementName : .text
        }
      case .bang:
        state = c == 0x2D ? .commentOpening : c == 0x5B ? .characterData : .declaration
        pending = 0
      case .characterData:
        if c == 0x3E && pending >= 2 { state = .text }
        pending = c == 0x5D ? min(pending + 1, 2) : 0
      case .commentOpening:
        state = c == 0x2D ? .comment : .declaration
      case .comment:
        if c == 0x3E && pending >= 2 { state = .text }
        pending = c == 0x2D ? min(pending + 1, 2) : 0
      case .instruction:
        if c == 0x3E && pending == 1 { state = .text }
        pending = c == 0x3F ? 1 : 0
      case .declaration, .endTag:
        if c == 0x3E { state = .text }
      case .elementName:
        if c == 0x3E { state = .text } else if !Self.isNameByte(c) { state = .inTag }
      case .inTag:
        if c == 0x3E {
          state = .text
        } else if Self.isNameByte(c) {
          state = .attributeName
          nameRepaired = false
        }
      case .attributeName:
        switch c {
        case 0x3D: state = .beforeValue
        case 0x20:
          state = .spacesInName
          runStart = i
        case 0x3E: state = .text
        default: if !Self.isNameByte(c) { state = .spacesAfterName }
        }
      case .spacesInName:
        if c == 0x20 { break }
        let run = (i - runStart) + heldSpaces
        if Self.isNameByte(c) && run <= Self.longestHeldRun {
          // A name, spaces, another name: the spaces belong to the name.
          for k in runStart..<i { base[k] = 0x5F }
          if heldSpaces > 0 { try Self.emitRun(heldSpaces, of: 0x5F, emit) }
          if !nameRepaired { repairedNames += 1 }
          nameRepaired = true
          state = .attributeName
        } else {
          if heldSpaces > 0 { try Self.emitRun(heldSpaces, of: 0x20, emit) }
          state = c == 0x3D ? .beforeValue : c == 0x3E ? .text : .spacesAfterName
        }
        heldSpaces = 0
      case .spacesAfterName:
        if c == 0x3D { state = .beforeValue } else if c == 0x3E { state = .text }
      case .beforeValue:
        if c == 0x22 || c == 0x27 {
          state = .value
          pending = c
        } else if c == 0x3E {
          state = .text
        }
      case .value:
        while i < n, base[i] != pending { i += 1 }
        if i < n { state = .inTag }
      }
      i += 1
    }
    guard state == .spacesInName else { return try emit(UnsafeRawBufferPointer(chunk)) }
    // The run goes on into the next chunk: emit what lies before it, hold its spaces.
    try emit(UnsafeRawBufferPointer(rebasing: chunk[0..<runStart]))
    heldSpaces += n - runStart
    if heldSpaces > Self.longestHeldRun {
      try Self.emitRun(heldSpaces, of: 0x20, emit)
      heldSpaces = 0
      state = .spacesAfterName
    }
  }

  /// Emits the spaces still held at the end of the input.
  mutating func finish<E: Error>(emit: (UnsafeRawBufferPointer) throws(E) -> Void) throws(E) {
    if heldSpaces > 0 { try Self.emitRun(heldSpaces, of: 0x20, emit) }
    heldSpaces = 0
  }

  /// ASCII letters, digits, `_ - . :` and every byte of a multi-byte UTF-8 character.
  @inline(__always) static func isNameByte(_ c: UInt8) -> Bool {
    (c | 0x20 >= 0x61 && c | 0x20 <= 0x7A) || (c >= 0x30 && c <= 0x3A) || c == 0x5F || c == 0x2D || c == 0x2E
      || c >= 0x80
  }

  private static func emitRun<E: Error>(
    _ count: Int, of byte: UInt8, _ emit: (UnsafeRawBufferPointer) throws(E) -> Void
  ) throws(E) {
    let run = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 1)
    defer { run.deallocate() }
    run.initializeMemory(as: UInt8.self, repeating: byte)
    try emit(UnsafeRawBufferPointer(run))
  }
}
