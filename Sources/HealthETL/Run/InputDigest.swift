import Foundation
import HealthExtract
import HealthModel
import RunExecution
import Synchronization

/// SHA-256 of the input file, computed on a thread of its own while the main one parses, for
/// what the parse does not hash as it reads (`InputSHA256`): `export.zip` as given (the parse
/// reads its member inflated), and an export XML whose parse stopped before its end. The thread
/// runs at the lowest priority, so the hash takes only the cores' idle moments.
///
/// A run must not end while the thread still reads: exiting the process under a running thread
/// can crash in teardown. So every run either `wait()`s for the hash or `cancel()`s it, which
/// also waits, for at most one 1 MiB chunk.
final class InputDigest: Sendable {
  private let result = Mutex<String?>(nil)
  private let cancelled = Atomic<Bool>(false)
  private let group = DispatchGroup()

  private init() {}

  /// Starts hashing `path` on a dedicated thread of `executor` (not the pool: its nice value
  /// cannot be raised back without privileges, and it ends with the hash).
  static func start(path: String, on executor: RunExecutor) -> InputDigest {
    let digest = InputDigest()
    digest.hash(path: path, on: executor)
    return digest
  }

  private func hash(path: String, on executor: RunExecutor) {
    group.enter()
    executor.startDedicated(name: "sha256") { [self] in
      defer { group.leave() }
      // On Linux the nice value belongs to the thread, and `0` names the calling one.
      setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
      // Without waiting, and only a regular file: a pipe named as the input (`<(unzip -p …)`)
      // is the parse's to read, and read twice it would hand each reader part of the data.
      let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
      guard descriptor >= 0 else { return }
      defer { close(descriptor) }
      var info = stat()
      guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return }
      guard let hex = try? Self.sha256(reading: descriptor, unless: { cancelled.load(ordering: .relaxed) }) else {
        return
      }
      result.withLock { $0 = hex }
    }
  }

  /// Why a file could not be hashed: the `errno` of the failed read.
  struct ReadFailure: Error {
    var code: Int32
    var reason: String { String(cString: strerror(code)) }
  }

  /// Bytes per `read(2)`: few system calls, and one buffer that stays in the cache.
  static let chunkSize = 1 << 20

  /// SHA-256 (lower-case hex) of what `descriptor` reads to its end; nil once `cancelled()` says
  /// so. Plain `read(2)` into one reused buffer: `FileHandle.read(upToCount:)` read 4 KB per
  /// system call into a fresh 4 MiB `Data` per chunk, 35,563 calls for a 145 MB export (now 140).
  static func sha256(
    reading descriptor: Int32, unless cancelled: () -> Bool = { false }
  ) throws(ReadFailure) -> String? {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 64)
    defer { buffer.deallocate() }
    let digest = Digest.SHA256Stream()
    while !cancelled() {
      let count = read(descriptor, buffer.baseAddress, chunkSize)
      if count < 0 {
        if errno == EINTR { continue }
        throw ReadFailure(code: errno)
      }
      if count == 0 { return digest.finalizeHex() }
      digest.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }
    return nil
  }

  /// Waits for the hash; nil when the file could not be read or the hash was cancelled.
  func wait() -> String? {
    group.wait()
    return result.withLock { $0 }
  }

  /// Stops hashing and waits for the thread to finish.
  func cancel() {
    cancelled.store(true, ordering: .relaxed)
    group.wait()
  }
}

/// The run's SHA-256 of its input, fed by the parse's reader as it reads an export XML on disk
/// (`ExportStream`'s `hashingInput`), so that file is not read a second time.
final class InputSHA256: InputHasher {
  private let stream = Digest.SHA256Stream()

  func update(_ bytes: UnsafeRawBufferPointer) { stream.update(bytes) }

  func finalizeHex() -> String { stream.finalizeHex() }
}
