import Foundation
import HealthModel
import Synchronization

/// SHA-256 of the input file, computed on a second thread while the main one parses (the file is
/// read twice, but the second read comes from the page cache and costs no parse time).
final class InputDigest: Sendable {
  private let result = Mutex<String?>(nil)
  private let group = DispatchGroup()

  init(path: String) {
    group.enter()
    DispatchQueue.global().async { [self] in
      defer { group.leave() }
      guard let handle = FileHandle(forReadingAtPath: path) else { return }
      defer { try? handle.close() }
      let digest = Digest.SHA256Stream()
      while let chunk = try? handle.read(upToCount: 1 << 22), !chunk.isEmpty {
        chunk.withUnsafeBytes { digest.update($0) }
      }
      let hex = digest.finalizeHex()
      result.withLock { $0 = hex }
    }
  }

  /// Waits for the hash; nil when the file could not be read.
  func wait() -> String? {
    group.wait()
    return result.withLock { $0 }
  }
}
