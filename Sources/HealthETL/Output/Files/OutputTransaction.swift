import CFileSystem
import Foundation
import HealthExtract

/// Why outputs could not be written.
///
/// `code` is the system's error number (`errno`) behind a failure, when one is known — from a
/// system call, a Foundation error, SQLite or libxlsxwriter: the nightly batch tells a machine's
/// fault (a full disk, a failing one, no permission) from one an export might cause by it, never
/// by the words of a message.
public enum OutputError: Error, Sendable, CustomStringConvertible {
  case cannotCreate(path: String, reason: String, code: Int32? = nil)
  case ioError(path: String, reason: String, code: Int32? = nil)
  /// Another process holds the folder's lock.
  case locked(path: String)
  /// The process reached its limit of open files (EMFILE) or the system its own (ENFILE).
  case tooManyOpenFiles(path: String, limit: Int?)
  /// An output folder no run may write into (`/`, the folder holding the input, …): a usage error.
  case unsuitable(path: String, reason: String)
  /// The run's output files passed its budget (`OutputBudget`): the export's fault.
  case overBudget(path: String, bytes: Int64, limit: Int64, inputBytes: Int64)

  public var description: String {
    switch self {
    case .cannotCreate(let path, let reason, _):
      // Reasons of HealthETL's own say what to do; the system's ("Permission denied") do not.
      let hint = reason.contains("--out") ? "" : " Check that the folder is writable, or pass another --out."
      return "cannot create output \(path): \(Self.sentence(reason)).\(hint)"
    case .ioError(let path, let reason, _):
      return "I/O error writing \(path): \(Self.sentence(reason))"
    case .locked(let path):
      return "another healthetl run is writing \(path); try again when it has finished (this run changed nothing)"
    case .tooManyOpenFiles(let path, let limit):
      return
        "too many open files (opening \(path)): a run keeps one file open per output file and statistics job\(limit.map { ", and this process may open \($0)" } ?? ""). Raise the limit (ulimit -n) or run fewer jobs per pipeline."
    case .unsuitable(let path, let reason):
      return "--out \(path.isEmpty ? "\"\"" : path): \(reason)"
    case .overBudget(let path, let bytes, let limit, let inputBytes):
      return
        "the outputs grew past \(limit) bytes (\(bytes) staged, the last to \(path)) for an export of \(inputBytes) bytes: "
        + "more than its content can plausibly need, so nothing was written. If the export is right, raise "
        + "--output-budget (Pipelines/README.md, \"Output budget\")"
    }
  }

  /// A reason as the middle of a sentence: Foundation's reasons end with a period of their own.
  static func sentence(_ reason: String) -> String {
    var text = reason
    while text.last == "." || text.last?.isWhitespace == true { text.removeLast() }
    return text
  }

  /// The error for an `open` of `path` that failed with `code`: running out of descriptors is
  /// said as such, never as a folder that is not writable.
  static func openFailure(path: String, code: Int32, creating: Bool) -> OutputError {
    let reason = String(cString: strerror(code))
    return creating ? .creating(path, reason: reason, code: code) : .writing(path, reason: reason, code: code)
  }

  /// `path` could not be created, for `reason`; with `code`, the system's error number behind it,
  /// when one is known. Running out of descriptors is said as such, whoever met it: a system
  /// call, Foundation, SQLite, libxlsxwriter.
  static func creating(_ path: String, reason: String, code: Int32?) -> OutputError {
    if let code, ExtractError.isOutOfDescriptors(code) {
      return .tooManyOpenFiles(path: path, limit: ExtractError.descriptorLimit(for: code))
    }
    return .cannotCreate(path: path, reason: reason, code: code)
  }

  /// Writing `path` failed, for `reason`; see `creating`.
  static func writing(_ path: String, reason: String, code: Int32?) -> OutputError {
    if let code, ExtractError.isOutOfDescriptors(code) {
      return .tooManyOpenFiles(path: path, limit: ExtractError.descriptorLimit(for: code))
    }
    return .ioError(path: path, reason: reason, code: code)
  }

  /// Creating `path` failed with a Foundation error: its words and the system's number behind it.
  static func cannotCreate(path: String, failure: any Error) -> OutputError {
    .creating(path, reason: reason(of: failure), code: systemCode(of: failure))
  }

  /// Writing `path` failed with a Foundation error: its words and the system's number behind it.
  static func ioError(path: String, failure: any Error) -> OutputError {
    .writing(path, reason: reason(of: failure), code: systemCode(of: failure))
  }

  static func reason(of error: any Error) -> String {
    (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
  }

  /// The system's error number behind a Foundation error: its own when it is a POSIX one, else
  /// that of the POSIX error underlying it, else the one its file-error code stands for.
  static func systemCode(of error: any Error) -> Int32? {
    let error = error as NSError
    if error.domain == NSPOSIXErrorDomain { return Int32(truncatingIfNeeded: error.code) }
    // On Linux the underlying error is a Swift `POSIXError`, which `as? NSError` does not find.
    if let underlying = error.userInfo[NSUnderlyingErrorKey] as? any Error,
      (underlying as NSError).domain == NSPOSIXErrorDomain
    {
      return Int32(truncatingIfNeeded: (underlying as NSError).code)
    }
    guard error.domain == NSCocoaErrorDomain else { return nil }
    switch CocoaError.Code(rawValue: error.code) {
    case .fileWriteOutOfSpace: return ENOSPC
    case .fileWriteVolumeReadOnly: return EROFS
    case .fileWriteNoPermission, .fileReadNoPermission: return EACCES
    case .fileWriteFileExists: return EEXIST
    case .fileNoSuchFile, .fileReadNoSuchFile: return ENOENT
    default: return nil
    }
  }

  /// Reading `path`, a file of the output folder a step amends, failed with `code`: out of
  /// descriptors is the machine's (`tooManyOpenFiles`), anything else an I/O error with its errno.
  static func reading(_ path: String, code: Int32) -> OutputError {
    if ExtractError.isOutOfDescriptors(code) {
      return .tooManyOpenFiles(path: path, limit: ExtractError.descriptorLimit(for: code))
    }
    return .ioError(path: path, reason: "cannot read it: " + String(cString: strerror(code)), code: code)
  }

  /// The error for a read or write of `path` that failed with `code`.
  static func system(path: String, code: Int32) -> OutputError {
    .writing(path, reason: String(cString: strerror(code)), code: code)
  }

  /// The error for a rename or an exchange of `path` that failed with `code`: a folder or file
  /// the run may not change (no permission, immutable, read-only) is one it cannot create (73),
  /// never a failure part-way (74).
  static func placingFailure(path: String, code: Int32) -> OutputError {
    let reason = String(cString: strerror(code))
    switch code {
    case EACCES, EPERM, EROFS: return .cannotCreate(path: path, reason: reason, code: code)
    default: return .writing(path, reason: reason, code: code)
    }
  }
}

/// All files of one run, written into a staging folder beside the output folder and swapped into
/// place only by `commit()`, in one atomic step: a run that fails or is killed at any moment,
/// SIGKILL included, leaves the previous outputs exactly as they were.
///
/// The staging folder is a sibling (`.<name>.healthetl-staging-<pid>`) so both sit on one file
/// system. On commit, files of the output folder that this run does not rewrite are hard-linked
/// into the staging folder, which then changes places with the output folder through
/// `renameat2(RENAME_EXCHANGE)`; the old contents are removed afterwards. Where the file system
/// cannot exchange (EINVAL), files are renamed one by one instead (still each atomic).
/// Leftovers of killed runs are removed by the next run into the same folder.
///
/// A file another program keeps side files for (SQLite's `health.sqlite-journal`, `-wal` and
/// `-shm`) is staged with their suffixes (`reserve(_:sideFileSuffixes:)`): those side files belong
/// to the file being replaced, so the commit never carries them over beside the new one, where
/// the next opener would apply another database's journal to it.
public final class OutputTransaction {
  public let outputDirectory: String
  let stagingDirectory: String
  private var files: Set<String> = []
  /// Side files of the output folder left with the file they belong to, which this run replaces.
  private var replacedSideFiles: Set<String> = []
  private var finished = false
  /// The bytes the staged files hold, against the run's budget.
  public let meter = OutputMeter()
  /// The staging folder's registration with `InterruptCleanup`, until it is gone.
  private var cleanupToken: Int?
  /// The staging folder, open since the run began: the commit's `syncfs` through it reports the
  /// write-back errors of the file system since then (Linux 5.8 and later), those of the
  /// writeback the files started as they grew (`OutputFile`) included.
  private var syncDescriptor: Int32 = -1

  public convenience init(outputDirectory: String) throws(OutputError) {
    try self.init(OutputFolder(outputDirectory))
  }

  public init(_ output: OutputFolder) throws(OutputError) {
    let fm = FileManager.default
    let trimmed = output.path
    self.outputDirectory = trimmed
    let url = URL(fileURLWithPath: trimmed)
    let parent = url.deletingLastPathComponent().path
    let prefix = "." + url.lastPathComponent + ".healthetl-staging-"
    do {
      try fm.createDirectory(atPath: parent, withIntermediateDirectories: true)
    } catch {
      throw .cannotCreate(path: trimmed, failure: error)
    }
    for name in (try? fm.contentsOfDirectory(atPath: parent)) ?? [] where name.hasPrefix(prefix) {
      let pid = Int32(name.dropFirst(prefix.count)) ?? 0
      if pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH) { try? fm.removeItem(atPath: parent + "/" + name) }
    }
    stagingDirectory = parent + "/" + prefix + String(getpid())
    try? fm.removeItem(atPath: stagingDirectory)
    cleanupToken = InterruptCleanup.register(staging: stagingDirectory)
    guard mkdir(stagingDirectory, 0o755) == 0 else {
      if let cleanupToken { InterruptCleanup.unregister(staging: cleanupToken) }
      throw .openFailure(path: trimmed, code: errno, creating: true)
    }
    syncDescriptor = open(stagingDirectory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard syncDescriptor >= 0 else {
      let code = errno
      abandon()
      throw .openFailure(path: stagingDirectory, code: code, creating: false)
    }
  }

  deinit {
    if !finished { abandon() }
    if syncDescriptor >= 0 { Glibc.close(syncDescriptor) }
  }

  /// A new staged file that becomes `outputDirectory/relativePath` on commit.
  ///
  /// Files and folders are created while a signal's clean-up is held off (`InterruptCleanup`):
  /// a clean-up that removed the staging folder while this thread re-created part of it would
  /// leave that part behind.
  ///
  /// - Parameter ownerOnly: mode 0600 instead of 0644 (less what the umask removes), for files
  ///   that quote what a server answered.
  public func create(_ relativePath: String, ownerOnly: Bool = false) throws(OutputError) -> OutputFile {
    let staged = stagingDirectory + "/" + relativePath
    let folder = (staged as NSString).deletingLastPathComponent
    let file = try InterruptCleanup.whileNotInterrupted { () throws(OutputError) in
      do {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
      } catch {
        throw .cannotCreate(path: outputDirectory + "/" + relativePath, failure: error)
      }
      return try OutputFile(path: staged, ownerOnly: ownerOnly, meter: meter, writesBack: true)
    }
    files.insert(relativePath)
    return file
  }

  /// A staged file another library writes itself (the workbook, the database): its staged path,
  /// and the file becomes `outputDirectory/relativePath` on commit.
  ///
  /// - Parameter sideFileSuffixes: the file's side files (`relativePath` + suffix) belong to the
  ///   file it replaces: they stay with it, and none is left beside the new file.
  func reserve(_ relativePath: String, sideFileSuffixes: [String] = []) -> String {
    files.insert(relativePath)
    for suffix in sideFileSuffixes { replacedSideFiles.insert(relativePath + suffix) }
    return stagedPath(relativePath)
  }

  /// The staging folder's scratch folder (never moved into place), created when missing.
  func scratchDirectory() throws(OutputError) -> String {
    let folder = stagingDirectory + "/" + ToolFiles.scratch
    do {
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    } catch {
      throw .cannotCreate(path: folder, failure: error)
    }
    return folder
  }

  /// Where a staged file sits until commit.
  public func stagedPath(_ relativePath: String) -> String { stagingDirectory + "/" + relativePath }

  /// Where an already committed output lives (to read state of earlier runs).
  public func committedPath(_ relativePath: String) -> String { outputDirectory + "/" + relativePath }

  /// A scratch file inside the staging folder that is never moved into place.
  public func createScratch(_ name: String) throws(OutputError) -> OutputFile {
    let folder = stagingDirectory + "/" + ToolFiles.scratch
    return try InterruptCleanup.whileNotInterrupted { () throws(OutputError) in
      do {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
      } catch {
        throw .cannotCreate(path: folder, failure: error)
      }
      return try OutputFile(path: folder + "/" + name)
    }
  }

  /// Puts every staged file in place at once, keeping the output folder's other files.
  ///
  /// Durable once it returns: the staged files are not synced one by one as they close (an
  /// fsync each cost 3,000 sample types 4 of their 5 seconds) but all at once here, by one
  /// `syncfs` of the file system the staging folder and the output folder share, before anything
  /// is moved; the move is then made durable by syncing the folder it changed. A crash before the
  /// move leaves the previous outputs; after it, the new ones, whole (Pipelines/README.md, "Runs
  /// and the nightly batch").
  public func commit() throws(OutputError) {
    let fm = FileManager.default
    removeScratch()
    let parent = (outputDirectory as NSString).deletingLastPathComponent
    var isDirectory: ObjCBool = false
    guard fm.fileExists(atPath: outputDirectory, isDirectory: &isDirectory) else {
      try syncFileSystem()
      try InterruptCleanup.whileNotInterrupted { () throws(OutputError) in
        guard rename(stagingDirectory, outputDirectory) == 0 else {
          throw OutputError.placingFailure(path: outputDirectory, code: errno)
        }
      }
      // Outside the held-off section: its lock is not re-entrant. A signal in between finds no
      // staging folder left to remove.
      finished = true
      if let cleanupToken { InterruptCleanup.unregister(staging: cleanupToken) }
      cleanupToken = nil
      try syncFolder(parent)
      return
    }
    guard isDirectory.boolValue else {
      throw .cannotCreate(path: outputDirectory, reason: "it exists and is not a folder")
    }
    try refuseUnremovable("")
    // Swapping the folder a shell sits in would leave that shell in a deleted folder: when the
    // output folder is (or contains) the current one, files are renamed into it instead.
    let current = URL(fileURLWithPath: fm.currentDirectoryPath).resolvingSymlinksInPath().path
    if current == outputDirectory || current.hasPrefix(outputDirectory + "/") {
      try placeOneByOne()
      return
    }
    try linkUnchangedFiles()
    try syncFileSystem()
    OutputLock.lockReplacement(stagingDirectory, for: outputDirectory)
    // After the exchange the staging path holds the previous outputs; a signal removes them
    // just as the commit would.
    let exchanged = InterruptCleanup.whileNotInterrupted {
      healthetl_exchange_paths(stagingDirectory, outputDirectory) == 0 ? 0 : errno
    }
    if exchanged == 0 {
      finished = true
      abandon()  // now the previous outputs
      try syncFolder(parent)
      return
    }
    guard exchanged == EINVAL || exchanged == ENOSYS || exchanged == EOPNOTSUPP else {
      throw OutputError.placingFailure(path: outputDirectory, code: exchanged)
    }
    try placeOneByOne()
  }

  /// Renames each staged file into the output folder (each rename atomic), the files synced
  /// before and the renames after.
  private func placeOneByOne() throws(OutputError) {
    try syncFileSystem()
    try InterruptCleanup.whileNotInterrupted { () throws(OutputError) in try renameOneByOne() }
    finished = true
    abandon()
    // The renames changed folders all over the output folder: one more sync of the file system.
    try syncFileSystem(of: outputDirectory)
  }

  /// Empties every scratch file, then removes the scratch folder. A scratch file some mart still
  /// holds open outlives its name, and the commit's `syncfs` wrote its pages to disk for nothing:
  /// the statistics' spill and the workouts' heart rate, 120 MB and a quarter of a second on the
  /// bench file. Emptied first, they have nothing left to write.
  private func removeScratch() {
    let folder = stagingDirectory + "/" + ToolFiles.scratch
    let fm = FileManager.default
    if let names = fm.enumerator(atPath: folder) {
      for case let name as String in names { _ = truncate(folder + "/" + name, 0) }
    }
    try? fm.removeItem(atPath: folder)
  }

  /// Removes the staging folder without touching the outputs.
  public func abandon() {
    finished = true
    try? FileManager.default.removeItem(atPath: stagingDirectory)
    if let cleanupToken { InterruptCleanup.unregister(staging: cleanupToken) }
    cleanupToken = nil
  }

  /// Hard-links every file of the output folder this run does not rewrite into the staging folder.
  ///
  /// After the swap every entry of the previous folder is removed: an immutable or append-only
  /// one (`chattr +i`, `+a`) would stay, and with it the staging folder, so the commit is refused
  /// first, before anything changed (`refuseUnremovable`).
  private func linkUnchangedFiles() throws(OutputError) {
    let fm = FileManager.default
    guard let walker = fm.enumerator(atPath: outputDirectory) else { return }
    for case let relative as String in walker {
      let source = outputDirectory + "/" + relative
      var info = stat()
      guard lstat(source, &info) == 0 else { continue }
      try refuseUnremovable(relative)
      let target = stagingDirectory + "/" + relative
      if (info.st_mode & S_IFMT) == S_IFDIR {
        try? fm.createDirectory(atPath: target, withIntermediateDirectories: true)
        continue
      }
      if files.contains(relative) || replacedSideFiles.contains(relative) || fm.fileExists(atPath: target) {
        continue
      }
      if link(source, target) != 0 {
        // Another file system below the folder, or links not allowed: copy instead.
        do { try fm.copyItem(atPath: source, toPath: target) } catch {
          throw .ioError(path: source, failure: error)
        }
      }
    }
  }

  private func renameOneByOne() throws(OutputError) {
    // Every file to be replaced, and every folder a file is renamed into, checked first: a
    // rename refused part-way would leave a mix.
    var checked: Set<String> = []
    for relative in files.union(replacedSideFiles).sorted() {
      var path = Substring(relative)
      while checked.insert(String(path)).inserted {
        if access(outputDirectory + "/" + path, F_OK) == 0 { try refuseUnremovable(String(path)) }
        guard let slash = path.lastIndex(of: "/") else { break }
        path = path[..<slash]
      }
    }
    // Before the files they belong to are replaced: a new file must never sit beside them.
    for relative in replacedSideFiles.sorted() {
      let path = outputDirectory + "/" + relative
      guard unlink(path) == 0 || errno == ENOENT else { throw OutputError.placingFailure(path: path, code: errno) }
    }
    for relative in files.sorted() {
      let target = outputDirectory + "/" + relative
      try? FileManager.default.createDirectory(
        atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
      guard rename(stagingDirectory + "/" + relative, target) == 0 else {
        throw OutputError.placingFailure(path: target, code: errno)
      }
    }
  }

  /// Refuses the commit when `relative`, in the output folder, is immutable or append-only: the
  /// commit would have to replace or remove it and cannot. Said before anything changed, with
  /// what to do (exit 73); the staging folder goes with the failed run.
  private func refuseUnremovable(_ relative: String) throws(OutputError) {
    let path = relative.isEmpty ? outputDirectory : outputDirectory + "/" + relative
    guard healthetl_is_unremovable(path) == 1 else { return }
    throw .cannotCreate(
      path: path,
      reason:
        "it is immutable or append-only (chattr +i or +a), and a run replaces the folder's files, so nothing was changed; clear the flag (chattr -i) or move it out of the folder, or pass another --out",
      code: EPERM)
  }

  /// Writes every staged file, and the folders holding them, to the disk, and waits for it:
  /// one `syncfs` of the file system that holds `path` (the staging folder by default, through
  /// the descriptor opened with it) instead of an fsync per file. It writes back whatever else is
  /// waiting on that file system too, which on a busy disk costs that much more, never less
  /// safety. A failure (a disk error, a full disk found while writing back) fails the commit
  /// before anything is moved.
  private func syncFileSystem(of path: String? = nil) throws(OutputError) {
    guard let path else {
      guard healthetl_sync_file_system(syncDescriptor) == 0 else { throw .system(path: outputDirectory, code: errno) }
      return
    }
    let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else { throw .openFailure(path: path, code: errno, creating: false) }
    defer { Glibc.close(descriptor) }
    guard healthetl_sync_file_system(descriptor) == 0 else { throw .system(path: outputDirectory, code: errno) }
  }

  /// Makes a rename in `path` durable: the folder's own entries, synced.
  private func syncFolder(_ path: String) throws(OutputError) {
    let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else { throw .openFailure(path: path, code: errno, creating: false) }
    defer { Glibc.close(descriptor) }
    guard fsync(descriptor) == 0 else { throw .system(path: path, code: errno) }
  }
}

/// A buffered, append-only output file.
public final class OutputFile {
  public let path: String
  private var descriptor: Int32
  private var buffer: [UInt8] = []
  public private(set) var bytesWritten: Int64 = 0
  /// Counts what is written against the run's budget (outputs; never scratch files).
  let meter: OutputMeter?
  static let flushThreshold = 1 << 20
  /// Whether the kernel is asked to start writing the file to disk as it grows: an output, which
  /// the commit syncs. Left to the commit, 160 MB of outputs kept the run waiting half a second
  /// at its end, both cores idle; started as the file grows, the disk writes while the run
  /// computes. Never a scratch file, which is removed unwritten.
  private let writesBack: Bool
  /// Bytes written since the last writeback was started.
  private var notWrittenBack = 0
  /// How many times writeback was started (tests watch the rule).
  private(set) var writebacksStarted = 0
  /// Writeback is started every this many bytes, and at close for the rest of a file of
  /// `flushThreshold` or more; smaller ones, often thousands, go in the commit's one sync.
  static let writebackStep = 8 << 20

  /// - Parameter appending: open a file the run already created and write after its end (a
  ///   second writer of the same file, on another thread), instead of creating it empty.
  /// - Parameter ownerOnly: a new file readable and writable by its owner only (0600, even
  ///   where a file of that name was staged before).
  /// - Parameter writesBack: start writing the file to disk as it grows (`writesBack`).
  init(
    path: String, appending: Bool = false, ownerOnly: Bool = false, meter: OutputMeter? = nil, writesBack: Bool = false
  ) throws(OutputError) {
    self.path = path
    self.meter = meter
    self.writesBack = writesBack
    descriptor =
      appending
      ? open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
      : open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, ownerOnly ? 0o600 : 0o644)
    guard descriptor >= 0 else { throw .openFailure(path: path, code: errno, creating: !appending) }
    if ownerOnly, !appending, fchmod(descriptor, 0o600) != 0 {
      throw .openFailure(path: path, code: errno, creating: true)
    }
    buffer.reserveCapacity(Self.flushThreshold + 4096)
  }

  deinit { if descriptor >= 0 { Glibc.close(descriptor) } }

  public func write(_ bytes: [UInt8]) throws(OutputError) {
    buffer.append(contentsOf: bytes)
    if buffer.count >= Self.flushThreshold { try flush() }
  }

  public func write(_ text: String) throws(OutputError) { try write(Array(text.utf8)) }

  /// Appends through `body` without an intermediate array.
  public func append(_ body: (inout [UInt8]) -> Void) throws(OutputError) {
    body(&buffer)
    if buffer.count >= Self.flushThreshold { try flush() }
  }

  public func flush() throws(OutputError) {
    // Counted before it is written: past the budget, nothing more reaches the disk.
    if !buffer.isEmpty { try meter?.add(buffer.count, path: path) }
    var offset = 0
    while offset < buffer.count {
      let written = buffer.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
      if written < 0 {
        if errno == EINTR { continue }
        throw .system(path: path, code: errno)
      }
      offset += written
    }
    bytesWritten += Int64(buffer.count)
    notWrittenBack += buffer.count
    buffer.removeAll(keepingCapacity: true)
    if writesBack && notWrittenBack >= Self.writebackStep { startWriteback() }
  }

  /// Hands what the file holds to the kernel's writeback, without waiting. Advice only: an
  /// error shows in the commit's sync.
  private func startWriteback() {
    notWrittenBack = 0
    writebacksStarted += 1
    _ = healthetl_start_writeback(descriptor)
  }

  /// Flushes and closes. Not synced here: the commit syncs every staged file at once
  /// (`OutputTransaction.commit`).
  public func close() throws(OutputError) {
    try flush()
    guard descriptor >= 0 else { return }
    if writesBack && notWrittenBack > 0 && bytesWritten >= Int64(Self.flushThreshold) { startWriteback() }
    // A close that fails (EIO from a network file system) loses what was written.
    let closed = Glibc.close(descriptor)
    descriptor = -1
    if closed != 0 && errno != EINTR { throw .system(path: path, code: errno) }
  }
}
