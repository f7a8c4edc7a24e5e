import Foundation

/// An exclusive lock on an output folder (`flock` on `<folder>/.healthetl.lock`), so two runs never
/// write one folder at once; the second fails at once instead of waiting. The kernel drops the
/// lock when the process dies, so a killed run never leaves a stale lock behind.
public final class OutputLock {
  private var descriptor: Int32

  /// - Throws: `OutputError.locked` when another process holds it.
  public init(directory: String) throws(OutputError) {
    do {
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    } catch {
      throw .cannotCreate(path: directory, reason: OutputTransaction.reason(error))
    }
    let path = directory + "/" + ToolFiles.lock
    descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { throw .cannotCreate(path: path, reason: String(cString: strerror(errno))) }
    guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
      let busy = errno == EWOULDBLOCK
      Glibc.close(descriptor)
      descriptor = -1
      if busy { throw .locked(path: directory) }
      throw .ioError(path: path, reason: String(cString: strerror(errno)))
    }
  }

  public func release() {
    guard descriptor >= 0 else { return }
    flock(descriptor, LOCK_UN)
    Glibc.close(descriptor)
    descriptor = -1
  }

  deinit { release() }
}
