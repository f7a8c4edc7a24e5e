import Foundation
import HealthExtract
import HealthModel
import Synchronization

/// SHA-256 of the input file, computed on a second thread while the main one parses (the file is
/// read twice, but the second read comes from the page cache). The thread runs at the lowest
/// priority: the parse keeps both cores of a small machine busy (libxml2 on one, the stages on
/// the other), so the hash takes only their idle moments and the finish's idle core.
///
/// A run must not end while the thread still reads: exiting the process under a running thread
/// can crash in teardown. So every run either `wait()`s for the hash or `cancel()`s it, which
/// also waits, for at most one 4 MiB chunk.
final class InputDigest: Sendable {
  private let result = Mutex<String?>(nil)
  private let cancelled = Atomic<Bool>(false)
  private let group = DispatchGroup()

  init(path: String) {
    group.enter()
    // A dedicated thread of the run (not the pool): its nice value cannot be raised back
    // without privileges, and it ends with the hash.
    RunExecutor.shared.startDedicated(name: "sha256") { [self] in
      defer { group.leave() }
      // On Linux the nice value belongs to the thread, and `0` names the calling one.
      setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
      guard let handle = FileHandle(forReadingAtPath: path) else { return }
      defer { try? handle.close() }
      let digest = Digest.SHA256Stream()
      while !cancelled.load(ordering: .relaxed), let chunk = try? handle.read(upToCount: 1 << 22), !chunk.isEmpty {
        chunk.withUnsafeBytes { digest.update($0) }
      }
      guard !cancelled.load(ordering: .relaxed) else { return }
      let hex = digest.finalizeHex()
      result.withLock { $0 = hex }
    }
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
