import Foundation

/// An exclusive lock on an output folder (`flock` on `<folder>/.healthetl.lock`), so two runs never
/// write one folder at once; the second fails at once instead of waiting. The kernel drops the
/// lock when the process dies, so a killed run never leaves a stale lock behind.
///
/// A folder the lock had to create is removed again on release (or on a signal, see
/// `InterruptCleanup`) when the run left nothing in it but the lock file: a failed run into a new
/// folder leaves no trace.
public final class OutputLock {
  private var descriptor: Int32
  private let path: String
  /// The folders this lock created, deepest first.
  private let created: [String]
  private var token: Int?

  /// - Throws: `OutputError.locked` when another process holds it.
  public init(directory: String) throws(OutputError) {
    var missing: [String] = []
    var folder = URL(fileURLWithPath: directory).standardizedFileURL
    while folder.path != "/", access(folder.path, F_OK) != 0 {
      missing.append(folder.path)
      folder = folder.deletingLastPathComponent()
    }
    do {
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    } catch {
      throw .cannotCreate(path: directory, reason: OutputTransaction.reason(error))
    }
    created = missing
    path = directory + "/" + ToolFiles.lock
    let token = InterruptCleanup.register(lockFile: path, created: missing)
    descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else {
      let failure = OutputError.openFailure(path: path, code: errno, creating: true)
      InterruptCleanup.unregister(lock: token)
      Self.removeEmpty(missing)
      throw failure
    }
    guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
      let busy = errno == EWOULDBLOCK
      let reason = String(cString: strerror(errno))
      Glibc.close(descriptor)
      descriptor = -1
      InterruptCleanup.unregister(lock: token)
      if busy { throw .locked(path: directory) }
      throw .ioError(path: path, reason: reason)
    }
    self.token = token
  }

  public func release() {
    guard descriptor >= 0 else { return }
    if let token { InterruptCleanup.unregister(lock: token) }
    InterruptCleanup.removeCreatedFolders(.init(lockFile: path, created: created))
    flock(descriptor, LOCK_UN)
    Glibc.close(descriptor)
    descriptor = -1
  }

  /// `rmdir` each folder, deepest first; a folder that is not empty stays.
  private static func removeEmpty(_ folders: [String]) {
    for folder in folders where rmdir(folder) != 0 { return }
  }

  deinit { release() }
}
