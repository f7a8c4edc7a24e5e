/// The elements libxml2 holds open during a parse, outermost first: where an error happened in
/// words ("the <Workout> opened at line 8 …"), and in a recovering read what becomes of each
/// element (Pipelines/docs/input.md, "Bad input").
///
/// A recovering read hands an element on only once it can trust it. An element is dropped, with
/// everything in it, when
/// - libxml2 reported an error since the element before it (the error lies in its start tag or
///   just before it: an export has no text between tags, so either way the damage is its own),
///   or right after its start tag that the tag does not end where it should;
/// - an element starts inside it that it never holds but an element around it does
///   (`ExportElement.holds`): its end tag is missing, and libxml2 would take every element
///   after it as its children;
/// - libxml2 reported an error between its last child and its end (a mismatched end tag: libxml2
///   closes it with the next end tag, whoever's it is);
/// - the input ends, or libxml2 stops, while it is open.
/// The root is never dropped. To take back what was already written to the batch, the events of
/// the outermost open element are held back from `flush` (`heldBack`), up to `holdLimit`.
final class OpenElements {
  enum Fate {
    /// Handed on: `mark` is where its start event is in the batch of number `serial` (-1: in
    /// a batch already handed on, so it cannot be taken back).
    case kept(serial: Int, mark: EventBatch.Mark)
    /// Left out, as part of the drop of the entry at index `root`.
    case dropped(root: Int)
  }

  struct Entry {
    var element: ExportElement
    /// An unknown element's name, interned in libxml2's dictionary (alive as long as the parse).
    var name: UnsafeRawPointer?
    var line: Int
    var fate: Fate
    /// The recovering read decided that the element ended before libxml2 saw its end: nothing
    /// more goes into it, and its end event, when libxml2 sends one, is not handed on.
    var closed = false
  }

  /// The first element that started inside an open element that never holds it while an
  /// element around holds it: the sign of a missing end tag, in any read.
  struct Misnesting {
    var parent: ExportElement
    var parentName: UnsafeRawPointer?
    var parentLine: Int
    var child: ExportElement
    var childName: UnsafeRawPointer?
    var line: Int
    var column: Int
    /// The byte of the input libxml2 had reached.
    var offset: Int

    var words: String {
      "the <\(OpenElements.name(parent, parentName))> opened at line \(parentLine) is never closed: a "
        + "<\(OpenElements.name(child, childName))> starts inside it at line \(line)"
    }
  }

  /// Events and attribute bytes held back for one element before the hold is given up.
  static let holdEvents = 4 * EventBatch.eventBudget
  static let holdBytes = 4 * EventBatch.byteBudget

  private(set) var entries: [Entry] = []
  private(set) var misnesting: Misnesting?
  let recovering: Bool
  private(set) var recovery = Recovery()
  /// Number of the batch being filled.
  private(set) var serial = 0
  /// The skips of drops not finished yet, by the index of their root entry.
  private var openSkips: [Int: Recovery.Skip] = [:]
  /// Elements left out, by raw value.
  private var droppedCounts = [Int](repeating: 0, count: ExportElement.allCases.count)

  init(recovering: Bool) {
    self.recovering = recovering
    entries.reserveCapacity(64)
  }

  static func name(_ element: ExportElement, _ name: UnsafeRawPointer?) -> String {
    if let xmlName = element.xmlName { return xmlName }
    guard let name else { return "?" }
    return ElementName.excerpt(name)
  }

  /// The innermost element not closed by the recovering read.
  var innermostOpen: Entry? { entries.last { !$0.closed } }

  // MARK: - Every read

  /// A start tag in a read that does not recover.
  @inline(__always) func push(
    _ element: ExportElement, name: UnsafeRawPointer?, line: Int, column: @autoclosure () -> Int,
    offset: @autoclosure () -> Int
  ) {
    if let parent = entries.last, !parent.element.holds(element), misnesting == nil,
      entries.dropLast().contains(where: { $0.element.holds(element) })
    {
      misnesting = Misnesting(
        parent: parent.element, parentName: parent.name, parentLine: parent.line, child: element, childName: name,
        line: line, column: column(), offset: offset())
    }
    entries.append(Entry(element: element, name: name, line: line, fate: .kept(serial: -1, mark: .init())))
  }

  /// An end tag in a read that does not recover.
  @inline(__always) func pop() { _ = entries.popLast() }

  // MARK: - Recovering

  /// A start tag; true when it is to be handed on (the caller appends it to `batch`).
  /// `pending`: the first error libxml2 reported since the previous start or end tag.
  func start(
    _ element: ExportElement, name: UnsafeRawPointer?, line: Int, column: Int, offset: @autoclosure () -> Int,
    pending: Recovery.Problem?, batch: inout EventBatch
  ) -> Bool {
    var parent = entries.lastIndex { !$0.closed }
    if let inner = parent, !entries[inner].element.holds(element),
      let holder = entries[..<inner].lastIndex(where: { !$0.closed && $0.element.holds(element) })
    {
      if misnesting == nil {
        misnesting = Misnesting(
          parent: entries[inner].element, parentName: entries[inner].name, parentLine: entries[inner].line,
          child: element, childName: name, line: line, column: column, offset: offset())
      }
      close(
        above: holder, reason: "never closed: a <\(Self.name(element, name))> starts inside it at line \(line)",
        at: line, batch: &batch)
      parent = holder
    }
    if let parent, case .dropped(let root) = entries[parent].fate {
      count(element)
      openSkips[root]?.elements += 1
      openSkips[root]?.lastLine = line
      entries.append(Entry(element: element, name: name, line: line, fate: .dropped(root: root)))
      return false
    }
    // Not the root; nor anything after the root (libxml2 has ended it, or another root followed).
    let reason: String? =
      parent == nil
      ? (rootSeen ? "it follows the end of the document" : nil)
      : pending.map { "after \($0.words) (line \($0.line), column \($0.column))" }
    rootSeen = true
    if let reason {
      let index = entries.count
      count(element)
      openSkips[index] = Recovery.Skip(
        action: .dropped, element: Self.name(element, name), firstLine: line, lastLine: line, elements: 1, bytes: 0,
        reason: reason)
      entries.append(Entry(element: element, name: name, line: line, fate: .dropped(root: index)))
      return false
    }
    entries.append(Entry(element: element, name: name, line: line, fate: .kept(serial: serial, mark: batch.mark)))
    return true
  }

  /// An end tag; true when it is to be handed on.
  func end(line: Int, pending: Recovery.Problem?, batch: inout EventBatch) -> Bool {
    guard let index = entries.indices.last else { return false }
    defer { entries.removeLast() }
    let entry = entries[index]
    if entry.closed { return false }
    switch entry.fate {
    case .dropped(let root):
      if root == index { finishSkip(index, lastLine: line) }
      return false
    case .kept:
      guard let pending, index > 0 else { return true }
      let reason = "its end is not its own: \(pending.words) (line \(pending.line), column \(pending.column))"
      if drop(index, reason: reason, lastLine: line, batch: &batch) {
        finishSkip(index, lastLine: line)
        return false
      }
      append(keptUnclosed(index, reason: reason, lastLine: line))
      return true
    }
  }

  /// libxml2 reported, right after the start tag of the innermost element, that the tag does not
  /// end where it should: the tag is damaged, and libxml2 takes what follows as its content.
  func damagedStart(_ problem: Recovery.Problem, batch: inout EventBatch) {
    guard let index = entries.indices.last, index > 0, !entries[index].closed, case .kept = entries[index].fate
    else { return }
    let reason = "its start tag is damaged: \(problem.words) (line \(problem.line), column \(problem.column))"
    _ = drop(index, reason: reason, lastLine: nil, batch: &batch)
  }

  /// After the last chunk: what is still open below the root was cut off by the end of the
  /// input, or by libxml2 stopping.
  func finish(reason: String, lastLine: Int, batch: inout EventBatch) {
    if let outermost = entries.indices.dropFirst().first(where: { index in
      guard !entries[index].closed, case .kept = entries[index].fate else { return false }
      return true
    }), !drop(outermost, reason: reason, lastLine: lastLine, batch: &batch) {
      // Handed on already: the stages never see its end, and leave out an element cut off.
      count(entries[outermost].element)
      openSkips[outermost] = Recovery.Skip(
        action: .dropped, element: Self.name(entries[outermost].element, entries[outermost].name),
        firstLine: entries[outermost].line, lastLine: lastLine, elements: 1, bytes: 0, reason: reason)
    }
    for index in entries.indices where !entries[index].closed {
      entries[index].closed = true
      finishSkip(index, lastLine: lastLine)
    }
  }

  /// libxml2 stopped at `line` and read nothing after it, up to `lastLine`.
  func stopped(line: Int, lastLine: Int, bytes: Int64, words: String) {
    append(
      Recovery.Skip(
        action: .notRead, element: "", firstLine: line, lastLine: max(line, lastLine), elements: 0, bytes: bytes,
        reason: "libxml2 stopped at \(words) and read nothing after it"))
  }

  /// One more error libxml2 reported.
  func noteError(_ problem: Recovery.Problem) {
    recovery.errors += 1
    if recovery.problems.count < Recovery.listed { recovery.problems.append(problem) }
  }

  /// What the read recovered from; `inMiddle`: something was read past before the input ended.
  func result(inMiddle: Bool) -> Recovery {
    var result = recovery
    for element in ExportElement.allCases where droppedCounts[element.rawValue] > 0 {
      result.dropped[element.xmlName ?? "other"] = droppedCounts[element.rawValue]
    }
    result.recovered = inMiddle
    return result
  }

  // MARK: - Holding back

  /// Where the batch may be cut for `flush`: the start of the outermost open element that may
  /// still be dropped; nil when none is (flush it all).
  func heldBack() -> EventBatch.Mark? {
    for entry in entries.dropFirst() where !entry.closed {
      if case .kept(let batchSerial, let mark) = entry.fate, batchSerial == serial { return mark }
    }
    return nil
  }

  /// The batch was handed on up to `cut` (all of it when nil); what followed it is now at the
  /// start of the next one.
  func handedOn(upTo cut: EventBatch.Mark?) {
    let old = serial
    serial += 1
    for index in entries.indices {
      guard case .kept(let batchSerial, let mark) = entries[index].fate, batchSerial == old else { continue }
      guard let cut, mark.events >= cut.events else {
        entries[index].fate = .kept(serial: -1, mark: mark)
        continue
      }
      entries[index].fate = .kept(
        serial: serial,
        mark: .init(
          events: mark.events - cut.events, attributes: mark.attributes - cut.attributes,
          bytes: mark.bytes - cut.bytes))
    }
  }

  // MARK: - Private

  private var rootSeen = false

  private func count(_ element: ExportElement) { droppedCounts[element.rawValue] += 1 }

  private func keptUnclosed(_ index: Int, reason: String, lastLine: Int) -> Recovery.Skip {
    Recovery.Skip(
      action: .keptUnclosed, element: Self.name(entries[index].element, entries[index].name),
      firstLine: entries[index].line, lastLine: lastLine, elements: 0, bytes: 0,
      reason: reason + "; it was larger than the read holds back, so it was kept and closed there")
  }

  /// Closes every open entry above `holder`: the outermost one handed on is dropped (or, past
  /// its hold, closed for the handler and kept); the drops among them end where they were.
  private func close(above holder: Int, reason: String, at line: Int, batch: inout EventBatch) {
    let range = (holder + 1)..<entries.count
    if let outermost = range.first(where: { index in
      guard !entries[index].closed, case .kept = entries[index].fate else { return false }
      return true
    }), !drop(outermost, reason: reason, lastLine: nil, batch: &batch) {
      for index in range.reversed() where !entries[index].closed {
        guard case .kept = entries[index].fate else { continue }
        batch.appendEnd(element: Int8(entries[index].element.rawValue))
      }
      append(keptUnclosed(outermost, reason: reason, lastLine: line))
    }
    for index in range where !entries[index].closed {
      entries[index].closed = true
      finishSkip(index, lastLine: nil)
    }
  }

  /// Takes the entry at `index`, handed on in the batch being filled, and everything after it
  /// back out of the batch, and makes it the root of a drop ending at `lastLine` (nil: at the
  /// last start tag in it); false when it cannot be taken back.
  private func drop(_ index: Int, reason: String, lastLine: Int?, batch: inout EventBatch) -> Bool {
    guard case .kept(let batchSerial, let mark) = entries[index].fate, batchSerial == serial else { return false }
    var elements = 0
    var last = entries[index].line
    batch.forEachStart(after: mark) { raw, line in
      elements += 1
      last = max(last, line)
      droppedCounts[Int(raw)] += 1
    }
    batch.truncate(to: mark)
    for inner in index..<entries.count {
      if case .kept = entries[inner].fate { entries[inner].fate = .dropped(root: index) }
    }
    openSkips[index] = Recovery.Skip(
      action: .dropped, element: Self.name(entries[index].element, entries[index].name),
      firstLine: entries[index].line, lastLine: lastLine ?? last, elements: elements, bytes: 0, reason: reason)
    return true
  }

  /// Lists the skip of the drop rooted at `index`, if there is one, extended to `lastLine`.
  private func finishSkip(_ index: Int, lastLine: Int?) {
    guard var skip = openSkips.removeValue(forKey: index) else { return }
    if let lastLine { skip.lastLine = max(skip.lastLine, lastLine) }
    append(skip)
  }

  private func append(_ skip: Recovery.Skip) {
    if recovery.skipped.count < Recovery.listed {
      recovery.skipped.append(skip)
    } else {
      recovery.skippedOmitted += 1
    }
  }
}

/// Element names as messages quote them.
enum ElementName {
  /// A name from libxml2 (NUL-terminated UTF-8), at most 80 characters.
  static func excerpt(_ name: UnsafeRawPointer) -> String {
    let text = String(cString: name.assumingMemoryBound(to: CChar.self))
    return text.count > 80 ? String(text.prefix(79)) + "…" : text
  }
}
