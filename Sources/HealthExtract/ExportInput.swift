internal import CArchive
import Foundation

/// An opened export, whatever form the user gave: `export.zip` (read in place, the main member
/// stream-decompressed by libarchive, zip64 included), the unpacked folder, a bare XML file, `-`
/// for standard input, or bytes in memory. The main XML file is found by its content
/// (`<HealthData` near the top), never by its localized name.
public final class ExportInput {
  /// How the export was given.
  public enum Form: String, Sendable {
    case zip, directory, xml, standardInput = "stdin", memory
  }

  /// What the user passed.
  public let path: String
  public let form: Form
  /// The main XML file: the zip member name or file path.
  public let memberName: String
  /// Size of what `path` names on disk (the zip file, the XML file); nil for stdin and folders.
  public let inputBytes: Int64?
  /// Uncompressed size of the main XML when known up front.
  public let xmlBytesExpected: Int64?

  private var source: Source
  private var pending: [UInt8]
  private var pendingOffset = 0
  /// Uncompressed XML bytes handed out so far.
  public private(set) var xmlBytesRead: Int64 = 0
  private var checkedRemainingMembers = false
  /// A zip whose central directory (its list of files, at its end) is missing was cut short,
  /// as after an interrupted download; it is read from its local headers, and its end is the
  /// end of the data (`ExtractError.truncated`).
  private var zipCutShort = false

  private enum Source {
    case file(Int32)
    case archive(OpaquePointer, StandardInputFeed?)
    case memory
    case closed
  }

  /// How many bytes at the top of a candidate are searched for the `HealthData` marker. The
  /// internal DTD (≈10 KB) comes before the root element.
  static let sniffLength = 256 * 1024

  private init(
    path: String, form: Form, memberName: String, inputBytes: Int64?, xmlBytesExpected: Int64?, source: Source,
    pending: [UInt8]
  ) {
    self.path = path
    self.form = form
    self.memberName = memberName
    self.inputBytes = inputBytes
    self.xmlBytesExpected = xmlBytesExpected
    self.source = source
    self.pending = pending
  }

  deinit { close() }

  /// The size of the file on disk whose bytes `read` hands out as they are (an export XML named
  /// directly or found in a folder), as it was when opened; nil when what is read is inflated
  /// from a zip, piped, or in memory.
  var plainFileSize: Int64? {
    guard case .file = source, form == .xml || form == .directory, pending.isEmpty else { return nil }
    return xmlBytesExpected
  }

  /// Whether `path` is a regular file or a folder (not a pipe, a device or a socket, whose reads
  /// may wait for a writer).
  static func isFileOrFolder(_ path: String) -> Bool {
    var info = stat()
    guard stat(path, &info) == 0 else { return false }
    let kind = info.st_mode & S_IFMT
    return kind == S_IFREG || kind == S_IFDIR
  }

  /// Opens `path` (`-` = standard input).
  public static func open(_ path: String) throws(ExtractError) -> ExportInput {
    if path == "-" { return try openStandardInput() }
    var info = stat()
    guard stat(path, &info) == 0 else {
      if errno == ENOENT || errno == ENOTDIR { throw .notFound(path: path) }
      throw .unreadable(path: path, reason: String(cString: strerror(errno)))
    }
    if (info.st_mode & S_IFMT) == S_IFDIR { return try openDirectory(path) }
    // A FIFO or a device the user names (`<(unzip -p …)`) is theirs to give. A regular file is
    // opened without waiting and checked again once open, so one swapped for a FIFO in between
    // (an inbox is written by others) cannot make the open hang.
    let isRegular = (info.st_mode & S_IFMT) == S_IFREG
    let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | (isRegular ? O_NONBLOCK : 0))
    guard fd >= 0 else { throw .openFailure(path: path, code: errno) }
    if isRegular {
      guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
        Glibc.close(fd)
        throw .unreadable(path: path, reason: "it changed while it was being opened and is no longer a regular file")
      }
      _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
    }
    var head = [UInt8](repeating: 0, count: 4)
    let got = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 4, 0) }
    if got == 4, isZipMagic(head) {
      Glibc.close(fd)
      return try openZip(path: path, fileSize: Int64(info.st_size))
    }
    // A file named like the phone's `export.zip` that is neither a zip nor XML (a PDF renamed,
    // a download that stopped after a byte) is said to be no zip, not "malformed XML".
    if path.lowercased().hasSuffix(".zip"), !looksLikeXMLStart(head.prefix(max(got, 0))) {
      Glibc.close(fd)
      let what =
        info.st_size < 4
        ? "it is only \(info.st_size) byte\(info.st_size == 1 ? "" : "s") long" : "it does not start like one"
      throw .notAnExport(
        path: path, reason: "its name ends in .zip, but it is not a zip archive (\(what)); export it again")
    }
    return ExportInput(
      path: path, form: .xml, memberName: path, inputBytes: Int64(info.st_size),
      xmlBytesExpected: Int64(info.st_size), source: .file(fd), pending: [])
  }

  /// An export held in memory (tests, fragments wrapped in a `HealthData` root).
  public static func memory(_ bytes: [UInt8], name: String = "<memory>") -> ExportInput {
    ExportInput(
      path: name, form: .memory, memberName: name, inputBytes: Int64(bytes.count),
      xmlBytesExpected: Int64(bytes.count), source: .memory, pending: bytes)
  }

  /// Whether `head` (a file's first bytes) can start XML: `<`, white space or a byte-order mark.
  static func looksLikeXMLStart(_ head: ArraySlice<UInt8>) -> Bool {
    guard let first = head.first else { return false }
    return [UInt8(ascii: "<"), 0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xFE, 0xFF, 0x00].contains(first)
  }

  static func isZipMagic(_ head: [UInt8]) -> Bool {
    head.count >= 4 && head[0] == 0x50 && head[1] == 0x4B && (head[2] == 3 || head[2] == 5)
      && (head[3] == 4 || head[3] == 6)
  }

  /// Whether `bytes` (the top of a file) look like the main export document. The UTF-16 forms
  /// count too, so that a converted export is picked and then refused by name (see
  /// `XMLByteFilter.encodingProblem`) rather than reported as missing.
  static func looksLikeExport(_ bytes: UnsafeRawBufferPointer) -> Bool {
    for marker in ["<HealthData", "<!DOCTYPE HealthData"] {
      let utf8 = Array(marker.utf8)
      if contains(bytes, utf8) || contains(bytes, utf8.flatMap { [$0, 0] })
        || contains(bytes, utf8.flatMap { [0, $0] })
      {
        return true
      }
    }
    return false
  }

  static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: String) -> Bool {
    contains(haystack, Array(needle.utf8))
  }

  static func contains(_ haystack: UnsafeRawBufferPointer, _ n: [UInt8]) -> Bool {
    guard haystack.count >= n.count else { return false }
    var i = 0
    while i + n.count <= haystack.count {
      if haystack[i] == n[0] && haystack[i..<(i + n.count)].elementsEqual(n) { return true }
      i += 1
    }
    return false
  }

  // MARK: - Reading

  /// Fills `buffer` with the next XML bytes; returns 0 at the end of the document's bytes.
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws(ExtractError) -> Int {
    if pendingOffset < pending.count {
      let n = min(buffer.count, pending.count - pendingOffset)
      pending.withUnsafeBytes { src in
        buffer.baseAddress!.copyMemory(from: src.baseAddress! + pendingOffset, byteCount: n)
      }
      pendingOffset += n
      if pendingOffset == pending.count {
        pending = []
        pendingOffset = 0
      }
      xmlBytesRead += Int64(n)
      return n
    }
    let n: Int
    switch source {
    case .file(let fd):
      var got: Int
      repeat { got = Glibc.read(fd, buffer.baseAddress, buffer.count) } while got < 0 && errno == EINTR
      guard got >= 0 else { throw .readFailed(path: path, reason: String(cString: strerror(errno))) }
      n = got
    case .archive(let archive, let feed):
      let got = archive_read_data(archive, buffer.baseAddress, buffer.count)
      guard got >= 0 else { throw Self.dataFailure(archive, path: path, member: memberName) }
      if got == 0, zipCutShort {
        throw .truncated(
          path: path, line: 0,
          message:
            "the zip archive is cut short: the list of its files, at its end, is missing (an interrupted download or copy)"
        )
      }
      // A stream cannot be rewound, so the rest of it is searched for a second export only
      // once the first has been read whole.
      if got == 0, feed != nil, !checkedRemainingMembers {
        checkedRemainingMembers = true
        var index = 0
        var seen: [String] = []
        var encrypted: String?
        if let second = try? Self.nextExportMember(
          archive, path: path, index: &index, seen: &seen, encrypted: &encrypted, onlyXMLNames: true)
        {
          throw .severalExports(path: path, first: memberName, second: second.name)
        }
      }
      n = got
    case .memory, .closed:
      n = 0
    }
    xmlBytesRead += Int64(n)
    return n
  }

  /// Raw bytes of `path` consumed so far (compressed bytes for a zip), for progress display.
  public var rawBytesConsumed: Int64 {
    switch source {
    case .archive(let archive, _): return archive_filter_bytes(archive, -1)
    default: return xmlBytesRead
    }
  }

  /// After the XML of a zip member turned out malformed: reads the rest of the member so that
  /// libarchive checks its CRC and sizes, and returns the damage it finds. A flipped bit in a
  /// deflated member usually shows as broken XML long before the checksum at its end.
  func damage() -> ExtractError? {
    guard case .archive(let archive, _) = source else { return nil }
    let scratch = UnsafeMutableRawPointer.allocate(byteCount: 1 << 16, alignment: 16)
    defer { scratch.deallocate() }
    while true {
      let got = archive_read_data(archive, scratch, 1 << 16)
      if got == 0 { return nil }
      if got < 0 {
        let failure = Self.dataFailure(archive, path: path, member: memberName)
        if case .damaged = failure { return failure }
        return nil
      }
    }
  }

  /// What a failed read of member data means: a password, damage, or a cut-short archive.
  /// The system's own error while libarchive read the file (the disk failed), not a fault in the
  /// archive's bytes; nil for anything else.
  static func systemFailure(_ archive: OpaquePointer, path: String) -> ExtractError? {
    let code = archive_errno(archive)
    if ExtractError.isOutOfDescriptors(code) { return .openFailure(path: path, code: code) }
    guard [EIO, ENXIO, ESTALE, ETIMEDOUT, EREMOTEIO].contains(code) else { return nil }
    return .readFailed(path: path, reason: String(cString: strerror(code)))
  }

  static func dataFailure(_ archive: OpaquePointer, path: String, member: String) -> ExtractError {
    if let failure = systemFailure(archive, path: path) { return failure }
    var message = archive_error_string(archive).map { String(cString: $0) } ?? "zip read error"
    while message.last?.isWhitespace == true { message.removeLast() }
    if message.contains("assphrase") || message.contains("ncrypt") { return .encrypted(path: path, member: member) }
    // libarchive says "Truncated ZIP file data" when the bytes run out, and zlib's Z_BUF_ERROR
    // (-5) is a deflate stream that stops early: both are a cut-short archive. Everything else
    // (a bad CRC, wrong sizes, an invalid deflate stream) is data that is there but wrong.
    if message.contains("runcated") || message.contains("(-5)") {
      return .truncated(path: path, line: 0, message: "zip member \(member): \(message)")
    }
    return .damaged(path: path, member: member, message: message)
  }

  public func close() {
    switch source {
    case .file(let fd): Glibc.close(fd)
    case .archive(let archive, _): archive_read_free(archive)
    case .memory, .closed: break
    }
    source = .closed
  }

  // MARK: - Opening each form

  /// The main XML of a folder: the `.xml` files of the folder and of its `apple_health_export/`
  /// subfolder, in name order, opened as `ExportFolderEntry` does (no link inside the folder is
  /// followed, nothing but a regular file is opened).
  private static func openDirectory(_ path: String) throws(ExtractError) -> ExportInput {
    let root: Int32
    switch ExportFolderEntry.openRoot(path) {
    case .success(let fd): root = fd
    case .failure(let refusal): throw refusal.stop(path) ?? .unreadable(path: path, reason: refusal.description)
    }
    var folders = [(path: path, fd: root)]
    /// Entries passed over that might have been the export, for the message when none is found.
    var notOpened: [String] = []
    switch ExportFolderEntry.openFolder("apple_health_export", in: root) {
    case .success(let fd): folders.append((path + "/apple_health_export", fd))
    case .failure(.symbolicLink): notOpened.append("apple_health_export/, \(ExportFolderEntry.Refusal.symbolicLink)")
    case .failure(.outOfDescriptors(let code)):
      Glibc.close(root)
      throw .openFailure(path: path + "/apple_health_export", code: code)
    case .failure: break
    }
    defer { for folder in folders { Glibc.close(folder.fd) } }
    var found: (path: String, fd: Int32, size: Int64, isZip: Bool)?
    for folder in folders {
      let names: [String]
      switch ExportFolderEntry.names(in: folder.fd) {
      case .success(let listed): names = listed
      case .failure(let refusal):
        if let first = found { Glibc.close(first.fd) }
        throw refusal.stop(folder.path) ?? .unreadable(path: folder.path, reason: "\(refusal)")
      }
      for name in names where name.lowercased().hasSuffix(".xml") && name != "export_cda.xml" {
        let candidate = folder.path + "/" + name
        let fd: Int32
        switch ExportFolderEntry.openFile(name, in: folder.fd) {
        case .success(let opened): fd = opened
        case .failure(.folder), .failure(.missing): continue
        case .failure(.outOfDescriptors(let code)):
          if let first = found { Glibc.close(first.fd) }
          throw .openFailure(path: candidate, code: code)
        case .failure(let refusal):
          notOpened.append("\(printable(name)), \(refusal)")
          continue
        }
        var head = [UInt8](repeating: 0, count: sniffLength)
        let got = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, sniffLength, 0) }
        guard got > 0, head[0..<got].withUnsafeBytes({ looksLikeExport($0) }) else {
          Glibc.close(fd)
          continue
        }
        if let first = found {
          Glibc.close(fd)
          Glibc.close(first.fd)
          throw .severalExports(path: path, first: first.path, second: candidate)
        }
        var info = stat()
        fstat(fd, &info)
        found = (candidate, fd, Int64(info.st_size), got >= 4 && isZipMagic(Array(head[0..<4])))
      }
    }
    guard let found else {
      var reason = "the folder holds no XML file that starts with <HealthData> (export_cda.xml is not the main file)"
      if !notOpened.isEmpty { reason += "; not opened: " + notOpened.prefix(3).joined(separator: "; ") }
      throw .notAnExport(path: path, reason: reason)
    }
    guard !found.isZip else {
      // A zip named `.xml` whose first member is stored uncompressed: read as the zip it is.
      Glibc.close(found.fd)
      let input = try openZip(path: found.path, fileSize: found.size)
      return ExportInput(
        path: path, form: .directory, memberName: found.path, inputBytes: nil,
        xmlBytesExpected: input.xmlBytesExpected, source: input.takeSource(), pending: [])
    }
    return ExportInput(
      path: path, form: .directory, memberName: found.path, inputBytes: nil, xmlBytesExpected: found.size,
      source: .file(found.fd), pending: [])
  }

  /// `name` for a one-line message: control characters (a newline in a file name) as `?`.
  static func printable(_ name: String) -> String {
    String(String.UnicodeScalarView(name.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : $0 }))
  }

  private func takeSource() -> Source {
    defer { source = .closed }
    return source
  }

  /// libarchive converts member names to the C library's locale, and the default "C" locale
  /// cannot hold `导出.xml`; a UTF-8 character type (and nothing else) is switched on.
  static func useUTF8MemberNames() {
    let current = setlocale(LC_CTYPE, nil).map { String(cString: $0) } ?? "C"
    if current == "C" || current == "POSIX" { setlocale(LC_CTYPE, "C.UTF-8") }
  }

  private static func openZip(path: String, fileSize: Int64) throws(ExtractError) -> ExportInput {
    useUTF8MemberNames()
    // First pass: which member is the export, and is it the only one. A file can be read
    // twice, so the second pass opens the chosen member from its start.
    let (scan, cutShort) = try openArchive(path)
    var index = 0
    var seen: [String] = []
    var encrypted: String?
    let found: ExportMember?
    let second: ExportMember?
    do {
      // Freed on every way out, a throw included (the fuzzer found the leak of a throw here).
      defer { archive_read_free(scan) }
      found = try nextExportMember(
        scan, path: path, index: &index, seen: &seen, encrypted: &encrypted, onlyXMLNames: false)
      // Errors past the export (a cut-short archive) are left to the read itself, which names the
      // line where the data ends. Without its central directory the reader cannot skip a member,
      // so looking past the export would inflate it whole a second time: a cut zip is not searched
      // for a second export (what follows the cut cannot be trusted anyway).
      second =
        found == nil || cutShort
        ? nil
        : try? nextExportMember(
          scan, path: path, index: &index, seen: &seen, encrypted: &encrypted, onlyXMLNames: true)
    }
    guard let found else { throw noExport(path: path, seen: seen, encrypted: encrypted) }
    if let second { throw .severalExports(path: path, first: found.name, second: second.name) }

    let (archive, _) = try openArchive(path)
    var entry: OpaquePointer?
    for _ in 0...found.index {
      let status = archive_read_next_header(archive, &entry)
      guard status == ARCHIVE_OK || status == ARCHIVE_WARN else {
        let message = archive_error_string(archive).map { String(cString: $0) } ?? "unknown error"
        let failure = systemFailure(archive, path: path)
        archive_read_free(archive)
        if let failure { throw failure }
        throw .unreadable(path: path, reason: "the zip archive changed while it was being read (\(message))")
      }
    }
    let input = ExportInput(
      path: path, form: .zip, memberName: found.name, inputBytes: fileSize, xmlBytesExpected: found.size,
      source: .archive(archive, nil), pending: [])
    input.zipCutShort = cutShort
    return input
  }

  /// Opens a zip file through its central directory (libarchive's seekable reader), or, when the
  /// directory is missing because the file was cut short, from its local headers (the
  /// streamable reader), saying so.
  private static func openArchive(_ path: String) throws(ExtractError) -> (OpaquePointer, cutShort: Bool) {
    var message = "unknown error"
    for seekable in [true, false] {
      guard let archive = archive_read_new() else { throw .unreadable(path: path, reason: "libarchive: out of memory") }
      if seekable {
        archive_read_support_format_zip_seekable(archive)
      } else {
        archive_read_support_format_zip_streamable(archive)
      }
      if archive_read_open_filename(archive, path, 1 << 20) == ARCHIVE_OK { return (archive, !seekable) }
      message = archive_error_string(archive).map { String(cString: $0) } ?? "unknown error"
      let failure = systemFailure(archive, path: path)
      archive_read_free(archive)
      if let failure { throw failure }
    }
    throw .notAnExport(path: path, reason: "it is not a readable zip archive (\(message))")
  }

  private static func openStandardInput() throws(ExtractError) -> ExportInput {
    let feed = StandardInputFeed()
    let head = feed.peek(4)
    if !isZipMagic(head) {
      return ExportInput(
        path: "-", form: .standardInput, memberName: "-", inputBytes: nil, xmlBytesExpected: nil,
        source: .file(0), pending: feed.drainPeeked())
    }
    useUTF8MemberNames()
    guard let archive = archive_read_new() else { throw .unreadable(path: "-", reason: "libarchive: out of memory") }
    archive_read_support_format_zip_streamable(archive)
    let opened = archive_read_open(
      archive, Unmanaged.passUnretained(feed).toOpaque(), nil,
      { _, client, buffer in
        let feed = Unmanaged<StandardInputFeed>.fromOpaque(client!).takeUnretainedValue()
        return feed.next(buffer)
      }, nil)
    guard opened == ARCHIVE_OK else {
      archive_read_free(archive)
      throw .notAnExport(path: "-", reason: "standard input is not a readable zip archive")
    }
    return try findMainMember(archive, path: "-", inputBytes: nil, feed: feed)
  }

  /// Standard input is read once: the first member that starts like an export becomes the byte
  /// stream, and the members after it are searched when it has been read (see `read(into:)`).
  private static func findMainMember(
    _ archive: OpaquePointer, path: String, inputBytes: Int64?, feed: StandardInputFeed?
  ) throws(ExtractError) -> ExportInput {
    var index = 0
    var seen: [String] = []
    var encrypted: String?
    let found: ExportMember?
    do {
      found = try nextExportMember(
        archive, path: path, index: &index, seen: &seen, encrypted: &encrypted, onlyXMLNames: false)
    } catch {
      archive_read_free(archive)
      throw error
    }
    guard let found else {
      archive_read_free(archive)
      throw noExport(path: path, seen: seen, encrypted: encrypted)
    }
    return ExportInput(
      path: path, form: .standardInput, memberName: found.name, inputBytes: inputBytes,
      xmlBytesExpected: found.size, source: .archive(archive, feed), pending: found.head)
  }

  /// A member that starts like an export, with the bytes of it already read.
  struct ExportMember {
    var index: Int
    var name: String
    var size: Int64?
    var head: [UInt8]
  }

  /// Walks the members from where `archive` stands until one starts like an export (nil at the
  /// end). `index` counts the members passed; `seen` collects their names; `encrypted` is the
  /// first password-protected candidate, which cannot be looked into. `onlyXMLNames` limits the
  /// search to `*.xml` members: a second export is looked for among those, so that the many
  /// workout routes (`.gpx`) of a real export are skipped without being decompressed.
  static func nextExportMember(
    _ archive: OpaquePointer, path: String, index: inout Int, seen: inout [String], encrypted: inout String?,
    onlyXMLNames: Bool
  ) throws(ExtractError) -> ExportMember? {
    var entry: OpaquePointer?
    while true {
      let status = archive_read_next_header(archive, &entry)
      if status == ARCHIVE_EOF { return nil }
      guard status == ARCHIVE_OK || status == ARCHIVE_WARN, let entry else {
        let message = archive_error_string(archive).map { String(cString: $0) } ?? "unknown error"
        if let failure = systemFailure(archive, path: path) { throw failure }
        if seen.isEmpty { throw .notAnExport(path: path, reason: "it is not a readable zip archive (\(message))") }
        throw .truncated(path: path, line: 0, message: "zip archive: \(message)")
      }
      let memberIndex = index
      index += 1
      let name = (archive_entry_pathname_utf8(entry) ?? archive_entry_pathname(entry)).map { String(cString: $0) } ?? ""
      seen.append(name)
      let base = name.split(separator: "/").last.map(String.init) ?? name
      let isCandidate =
        archive_entry_filetype(entry) == 0o100000 && !name.hasPrefix("__MACOSX/") && base != "export_cda.xml"
        && !base.hasPrefix("._") && (!onlyXMLNames || base.lowercased().hasSuffix(".xml"))
      guard isCandidate else { continue }
      if archive_entry_is_data_encrypted(entry) != 0 {
        if encrypted == nil { encrypted = name }
        continue
      }
      var head = [UInt8](repeating: 0, count: sniffLength)
      var filled = 0
      while filled < head.count {
        let got = head.withUnsafeMutableBytes {
          archive_read_data(archive, $0.baseAddress! + filled, $0.count - filled)
        }
        if got < 0 { throw dataFailure(archive, path: path, member: name) }
        if got == 0 { break }
        filled += got
      }
      head.removeSubrange(filled...)
      if head.withUnsafeBytes({ looksLikeExport($0) }) {
        let size: Int64? = archive_entry_size_is_set(entry) != 0 ? archive_entry_size(entry) : nil
        return ExportMember(index: memberIndex, name: name, size: size, head: head)
      }
    }
  }

  /// Why a zip holds no export to read.
  static func noExport(path: String, seen: [String], encrypted: String?) -> ExtractError {
    if let encrypted { return .encrypted(path: path, member: encrypted) }
    let listing = seen.isEmpty ? "it is empty" : "none of its \(seen.count) files starts with <HealthData>"
    return .notAnExport(path: path, reason: "the zip archive holds no export XML (\(listing))")
  }
}

/// Feeds standard input to libarchive after the bytes already peeked at.
final class StandardInputFeed {
  private var peeked: [UInt8] = []
  private let capacity = 1 << 20
  private let buffer: UnsafeMutableRawPointer

  init() { buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16) }

  deinit { buffer.deallocate() }

  func peek(_ count: Int) -> [UInt8] {
    while peeked.count < count {
      var byte: UInt8 = 0
      let got = Glibc.read(0, &byte, 1)
      if got < 0 && errno == EINTR { continue }
      if got <= 0 { break }
      peeked.append(byte)
    }
    return peeked
  }

  func drainPeeked() -> [UInt8] {
    defer { peeked = [] }
    return peeked
  }

  /// libarchive's read callback: points `out` at the next block; 0 at the end, -1 on error.
  func next(_ out: UnsafeMutablePointer<UnsafeRawPointer?>?) -> Int {
    out?.pointee = UnsafeRawPointer(buffer)
    if !peeked.isEmpty {
      let n = peeked.count
      peeked.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: n) }
      peeked = []
      return n
    }
    var got: Int
    repeat { got = Glibc.read(0, buffer, capacity) } while got < 0 && errno == EINTR
    return got
  }
}

extension ExportInput {
  /// The most files `forEachFilePath` lists, and the deepest folder it walks into: an export
  /// holds a few thousand route files in folders one deep.
  public static let filesListed = 200_000
  static let deepestFolder = 8

  /// Calls `body` with the path of every regular file of the export, relative to the main XML's
  /// folder (the main XML itself included), so that what no reader takes can be counted: a zip's
  /// members from its central directory, never inflated; a folder's files below it, links never
  /// followed. `__MACOSX/` members and `._*` resource forks are not files of the export.
  ///
  /// - Returns: false when not every file was listed (more than `filesListed`, folders deeper
  ///   than `deepestFolder`, or a zip whose list of members breaks off).
  public static func forEachFilePath(of companions: Companions, _ body: (String) -> Void) throws(ExtractError)
    -> Bool
  {
    var listed = 0
    switch companions {
    case .unavailable:
      return false
    case .zip(let path, let prefix):
      useUTF8MemberNames()
      let (archive, cutShort) = try openArchive(path)
      defer { archive_read_free(archive) }
      var entry: OpaquePointer?
      while true {
        let status = archive_read_next_header(archive, &entry)
        if status == ARCHIVE_EOF { return !cutShort }
        guard status == ARCHIVE_OK || status == ARCHIVE_WARN, let entry else { return false }
        guard archive_entry_filetype(entry) == 0o100000 else { continue }
        let name =
          (archive_entry_pathname_utf8(entry) ?? archive_entry_pathname(entry)).map { String(cString: $0) } ?? ""
        let base = name.split(separator: "/").last ?? ""
        guard !name.hasPrefix("__MACOSX/"), !base.hasPrefix("._") else { continue }
        listed += 1
        guard listed <= filesListed else { return false }
        body(name.hasPrefix(prefix) ? String(name.dropFirst(prefix.count)) : name)
      }
    case .folder(let base):
      let root: Int32
      switch ExportFolderEntry.openRoot(base) {
      case .success(let opened): root = opened
      case .failure(let refusal):
        if let stop = refusal.stop(base) { throw stop }
        return true
      }
      defer { Glibc.close(root) }
      var whole = true
      var stopped: ExtractError?
      func walk(_ folder: Int32, _ prefix: String, depth: Int) {
        guard stopped == nil else { return }
        let names: [String]
        switch ExportFolderEntry.names(in: folder) {
        case .success(let listed): names = listed
        case .failure(let refusal):
          stopped = refusal.stop(prefix.isEmpty ? base : prefix)
          return
        }
        for name in names where !name.hasPrefix("._") && name != "__MACOSX" {
          guard stopped == nil else { return }
          guard listed < filesListed else {
            whole = false
            return
          }
          var info = stat()
          guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
          switch info.st_mode & S_IFMT {
          case S_IFREG:
            listed += 1
            body(prefix + name)
          case S_IFDIR:
            guard depth < deepestFolder else {
              whole = false
              continue
            }
            let inner: Int32
            switch ExportFolderEntry.openFolder(name, in: folder) {
            case .success(let opened): inner = opened
            case .failure(let refusal):
              stopped = refusal.stop(prefix + name)
              continue
            }
            walk(inner, prefix + name + "/", depth: depth + 1)
            Glibc.close(inner)
          default:
            continue
          }
        }
      }
      walk(root, "", depth: 0)
      if let stopped { throw stopped }
      return whole
    }
  }
}

// MARK: - Files beside the main XML

/// One file of the export beside its main XML (a GPX route under `workout-routes/`), streamed:
/// a zip member is decompressed as it is read, never unpacked to disk.
public final class ExportFileStream {
  /// The file's path relative to the main XML's folder (`workout-routes/route_….gpx`).
  public let relativePath: String
  private let source: Source

  private enum Source {
    case file(Int32)
    case archive(OpaquePointer)
    case failed(String)
  }

  fileprivate init(relativePath: String, fileDescriptor: Int32) {
    self.relativePath = relativePath
    source = .file(fileDescriptor)
  }

  fileprivate init(relativePath: String, failure: String) {
    self.relativePath = relativePath
    source = .failed(failure)
  }

  fileprivate init(relativePath: String, archive: OpaquePointer) {
    self.relativePath = relativePath
    source = .archive(archive)
  }

  /// Fills `buffer` with the file's next bytes; 0 at its end.
  ///
  /// - Throws: `ExtractError.unreadable` when the bytes cannot be read (an I/O error, a damaged
  ///   zip member).
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws(ExtractError) -> Int {
    switch source {
    case .file(let fd):
      var got: Int
      repeat { got = Glibc.read(fd, buffer.baseAddress, buffer.count) } while got < 0 && errno == EINTR
      guard got >= 0 else { throw .unreadable(path: relativePath, reason: String(cString: strerror(errno))) }
      return got
    case .archive(let archive):
      let got = archive_read_data(archive, buffer.baseAddress, buffer.count)
      guard got >= 0 else {
        let message = archive_error_string(archive).map { String(cString: $0) } ?? "zip read error"
        throw .unreadable(path: relativePath, reason: message)
      }
      return got
    case .failed(let reason):
      throw .unreadable(path: relativePath, reason: reason)
    }
  }
}

extension ExportInput {
  /// Where the files beside an export's main XML are, as far as the input form lets them be read
  /// again after the main parse.
  public enum Companions: Sendable, Equatable {
    /// Members of this zip whose names start with `prefix` (the main member's folder).
    case zip(path: String, prefix: String)
    /// Files below this folder (the main XML file's folder).
    case folder(String)
    /// They cannot be read: standard input is consumed by the main parse, bytes in memory have
    /// no files beside them.
    case unavailable(reason: String)
  }

  /// Where the files beside the main XML of `info` are.
  public static func companions(of info: InputInfo) -> Companions {
    switch info.form {
    case .zip:
      let member = info.memberName
      let prefix = member.lastIndex(of: "/").map { String(member[...$0]) } ?? ""
      return .zip(path: info.path, prefix: prefix)
    case .directory, .xml:
      let file = info.memberName
      guard let slash = file.lastIndex(of: "/") else { return .folder(".") }
      return .folder(slash == file.startIndex ? "/" : String(file[..<slash]))
    case .standardInput:
      return .unavailable(reason: "an export read from standard input cannot be read a second time")
    case .memory:
      return .unavailable(reason: "an export held in memory has no files beside it")
    }
  }

  /// Streams every regular file of `folder` (relative to the main XML's folder, such as
  /// `workout-routes`) in one pass: zip members in archive order, read sequentially and never
  /// unpacked; files of a folder in name order. `__MACOSX/` members and `._*` resource forks are
  /// not files of the export and are skipped. `body` gets each file's relative path and stream.
  /// In a folder, a symbolic link, a FIFO, a socket or a device is never opened
  /// (`ExportFolderEntry`): it is handed to `body` as a stream whose first read says why.
  ///
  /// - Throws: `ExtractError.unreadable` when the zip cannot be opened or its list of members
  ///   breaks off part-way (files already handed to `body` stay handed), or when `folder` is a
  ///   symbolic link; a folder that is missing or unreadable is simply empty.
  public static func forEachFile(
    of companions: Companions, in folder: String, _ body: (ExportFileStream) -> Void
  ) throws(ExtractError) {
    let folder = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
    switch companions {
    case .unavailable:
      return
    case .folder(let base):
      let root: Int32
      switch ExportFolderEntry.openRoot(base) {
      case .success(let opened): root = opened
      case .failure(let refusal):
        if let stop = refusal.stop(base) { throw stop }
        return
      }
      defer { Glibc.close(root) }
      var directory = root
      defer { if directory != root { Glibc.close(directory) } }
      var walked = ""
      for component in folder.split(separator: "/").map(String.init) {
        walked += (walked.isEmpty ? "" : "/") + component
        switch ExportFolderEntry.openFolder(component, in: directory) {
        case .success(let next):
          if directory != root { Glibc.close(directory) }
          directory = next
        case .failure(.symbolicLink):
          throw .unreadable(path: walked, reason: ExportFolderEntry.Refusal.symbolicLink.description)
        case .failure(let refusal):
          if let stop = refusal.stop(walked) { throw stop }
          return
        }
      }
      try forEachFile(in: directory, relativeFolder: folder, where: { _ in true }, body)
    case .zip(let path, let prefix):
      // Direct members only, as in a folder.
      try forEachMember(
        ofZip: path, prefix: prefix,
        where: { $0.hasPrefix(folder + "/") && !$0.dropFirst(folder.count + 1).contains("/") }, body)
    }
  }

  /// Streams every regular file one folder below the main XML's folder (`anyname/file`) whose
  /// relative path `include` accepts: files whose folder name is not known in advance (Apple
  /// localises some folder names), recognised by the caller from their content. Zip members in
  /// archive order; in a folder, subfolders and their files in name order. Symbolic links to
  /// folders are not followed; everything else is as in `forEachFile(of:in:)`.
  ///
  /// - Throws: `ExtractError.unreadable` when the zip cannot be opened or its list of members
  ///   breaks off part-way.
  public static func forEachFileInSubfolders(
    of companions: Companions, where include: (String) -> Bool, _ body: (ExportFileStream) -> Void
  ) throws(ExtractError) {
    switch companions {
    case .unavailable:
      return
    case .folder(let base):
      let root: Int32
      switch ExportFolderEntry.openRoot(base) {
      case .success(let opened): root = opened
      case .failure(let refusal):
        if let stop = refusal.stop(base) { throw stop }
        return
      }
      defer { Glibc.close(root) }
      let names: [String]
      switch ExportFolderEntry.names(in: root) {
      case .success(let listed): names = listed
      case .failure(let refusal): throw refusal.stop(base) ?? .unreadable(path: base, reason: "\(refusal)")
      }
      for name in names where !name.hasPrefix("._") && name != "__MACOSX" {
        let directory: Int32
        switch ExportFolderEntry.openFolder(name, in: root) {
        case .success(let opened): directory = opened
        case .failure(let refusal):
          if let stop = refusal.stop(name) { throw stop }
          continue
        }
        defer { Glibc.close(directory) }
        try forEachFile(in: directory, relativeFolder: name, where: include, body)
      }
    case .zip(let path, let prefix):
      try forEachMember(
        ofZip: path, prefix: prefix,
        where: { relative in
          relative.split(separator: "/", omittingEmptySubsequences: false).count == 2 && include(relative)
        },
        body)
    }
  }

  /// The regular files of the open folder `directory` (named `relativeFolder` from the main XML's
  /// folder) that `include` accepts, in name order. Running out of descriptors stops it: a file
  /// passed over for that would be missing from the outputs without a word.
  private static func forEachFile(
    in directory: Int32, relativeFolder: String, where include: (String) -> Bool, _ body: (ExportFileStream) -> Void
  ) throws(ExtractError) {
    let names: [String]
    switch ExportFolderEntry.names(in: directory) {
    case .success(let listed): names = listed
    case .failure(let refusal):
      throw refusal.stop(relativeFolder) ?? .unreadable(path: relativeFolder, reason: "\(refusal)")
    }
    for name in names where !name.hasPrefix("._") {
      let relative = relativeFolder + "/" + name
      guard include(relative) else { continue }
      switch ExportFolderEntry.openFile(name, in: directory) {
      case .success(let fd):
        body(ExportFileStream(relativePath: relative, fileDescriptor: fd))
        Glibc.close(fd)
      case .failure(.folder), .failure(.missing):
        continue
      case .failure(.outOfDescriptors(let code)):
        throw .openFailure(path: relative, code: code)
      case .failure(let refusal):
        // Handed on all the same: the stream reports why on its first read.
        body(ExportFileStream(relativePath: relative, failure: refusal.description))
      }
    }
  }

  /// The regular members of the zip at `path` below `prefix` (the main member's folder) whose
  /// path relative to it `include` accepts, in archive order.
  private static func forEachMember(
    ofZip path: String, prefix: String, where include: (String) -> Bool, _ body: (ExportFileStream) -> Void
  ) throws(ExtractError) {
    useUTF8MemberNames()
    guard let archive = archive_read_new() else { throw .unreadable(path: path, reason: "libarchive: out of memory") }
    defer { archive_read_free(archive) }
    archive_read_support_format_zip(archive)
    guard archive_read_open_filename(archive, path, 1 << 20) == ARCHIVE_OK else {
      if let failure = systemFailure(archive, path: path) { throw failure }
      let message = archive_error_string(archive).map { String(cString: $0) } ?? "unknown error"
      throw .unreadable(path: path, reason: message)
    }
    var entry: OpaquePointer?
    while true {
      let status = archive_read_next_header(archive, &entry)
      if status == ARCHIVE_EOF { return }
      guard status == ARCHIVE_OK || status == ARCHIVE_WARN, let entry else {
        let message = archive_error_string(archive).map { String(cString: $0) } ?? "unknown error"
        throw .unreadable(path: path, reason: "the zip's list of files breaks off: \(message)")
      }
      let name =
        (archive_entry_pathname_utf8(entry) ?? archive_entry_pathname(entry)).map { String(cString: $0) } ?? ""
      guard name.hasPrefix(prefix), archive_entry_filetype(entry) == 0o100000, !name.hasPrefix("__MACOSX/") else {
        continue
      }
      let relative = String(name.dropFirst(prefix.count))
      let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
      guard parts.count >= 2, let base = parts.last, !base.isEmpty, !base.hasPrefix("._"), include(relative) else {
        continue
      }
      body(ExportFileStream(relativePath: relative, archive: archive))
    }
  }
}
