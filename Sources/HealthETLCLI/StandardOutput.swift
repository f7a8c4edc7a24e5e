import Foundation
import Synchronization

/// Standard output written straight to file descriptor 1, remembering the first failure: text
/// that never arrived (a full disk, `>&-`, a reader that went away) must not end in exit 0.
enum StandardOutput {
  private static let failure = Mutex<Int32?>(nil)

  /// The `errno` of the first write that failed, if any.
  static var firstFailure: Int32? { failure.withLock { $0 } }

  static func write(_ text: String) {
    guard failure.withLock({ $0 == nil }) else { return }
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
      let written = bytes.withUnsafeBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress! + offset, $0.count - offset) }
      if written < 0 {
        if errno == EINTR { continue }
        let code = errno
        failure.withLock { $0 = code }
        return
      }
      offset += written
    }
  }
}

/// Every command prints through `StandardOutput` (this shadows the standard library's `print`,
/// whose stdio buffer would swallow a write error).
func print(_ text: String, terminator: String = "\n") {
  StandardOutput.write(text + terminator)
}
