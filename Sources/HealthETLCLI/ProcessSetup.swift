import Foundation

/// What the process arranges before any command runs.
enum ProcessSetup {
  static func prepare() {
    keepStandardStreamNumbersTaken()
    // A reader that goes away (`healthetl inspect x | head`) makes the next write fail with
    // EPIPE, which is reported (exit 74) instead of killing the process without a word.
    signal(SIGPIPE, SIG_IGN)
    raiseOpenFileLimit()
  }

  /// A standard stream closed by the caller (`>&-`) would let the first file a run opens take its
  /// number, and `print` would then write into that file. Its number is taken by `/dev/null`
  /// opened the wrong way round, so every use of the stream still fails (EBADF) and is reported.
  static func keepStandardStreamNumbersTaken() {
    for number in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(number, F_GETFD) == -1 && errno == EBADF {
      // `open` returns the lowest free number: this one, the lower ones being open by now.
      let placeholder = open("/dev/null", (number == STDIN_FILENO ? O_WRONLY : O_RDONLY) | O_CLOEXEC)
      if placeholder >= 0, placeholder != number {
        dup2(placeholder, number)
        close(placeholder)
      }
    }
  }

  /// Every output file and statistics job keeps a file open; the soft limit (often 1,024) is
  /// raised to the hard one so that large plans run where the system allows them.
  static func raiseOpenFileLimit() {
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    var limit = rlimit()
    guard getrlimit(resource, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(resource, &limit)
  }
}
