internal import CLibFuzzer
import Foundation

/// SwiftPM gives every executable a `main` (it renames the module's entry point and points
/// `main` at it), which wins over libFuzzer's own. So each harness's `main.swift` defines
/// `LLVMFuzzerTestOneInput` and hands it to libFuzzer's driver, which parses libFuzzer's usual
/// flags from the command line.
public enum FuzzDriver {
  public typealias TestOneInput = @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32

  public static func run(_ testOneInput: TestOneInput) -> Never {
    // Swift's own crash backtracer reads the crashed thread's stack in a way AddressSanitizer
    // reports as an overflow, which hides the real trap; libFuzzer's handler is enough. It is
    // set up before `main`, so the process starts over without it. The sanitizer options are
    // read at start too: the known leak inside Foundation is suppressed the same way.
    if getenv("SWIFT_BACKTRACE") == nil {
      setenv("SWIFT_BACKTRACE", "enable=no", 1)
      setenv("LSAN_OPTIONS", "suppressions=\(repository)/Tests/Fuzz/lsan-suppressions.txt:print_suppressions=0", 0)
      execv("/proc/self/exe", CommandLine.unsafeArgv)
      fatalError("cannot restart \(CommandLine.arguments[0]) without the Swift backtracer")
    }
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
  }

  /// The input as an array (libFuzzer passes a null pointer for the empty input).
  public static func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
  }

  /// A folder of this process for readers that only take paths, in memory (`/dev/shm`) when the
  /// machine has it: writing the input there per execution costs a few microseconds.
  /// Removed at exit; the folders of harnesses that crashed or were killed on a timeout are
  /// removed by the next harness that starts.
  public static let scratchDirectory: String = {
    let base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    let prefix = "healthetl-fuzz-"
    for name in (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [] where name.hasPrefix(prefix) {
      guard let pid = Int32(name.dropFirst(prefix.count)), kill(pid, 0) != 0, errno == ESRCH else { continue }
      removeTree(base + "/" + name)
    }
    let path = "\(base)/\(prefix)\(getpid())"
    mkdir(path, 0o700)
    atexit { FuzzDriver.removeTree(FuzzDriver.scratchDirectory) }
    return path
  }()

  /// Replaces `path` with `bytes`; a failure stops the fuzzer, since every later input would
  /// test nothing.
  public static func write(_ bytes: [UInt8], to path: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { fatalError("cannot write \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var offset = 0
    while offset < bytes.count {
      let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
      guard written > 0 else { fatalError("cannot write \(path): \(String(cString: strerror(errno)))") }
      offset += written
    }
  }

  /// Removes `path` and everything under it (outputs of a run).
  public static func removeTree(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
  }
}

extension FuzzDriver {
  /// The checkout this package lies in (`Tests/Fuzz/Harnesses/Sources/FuzzSupport/` below it),
  /// for the shipped pipelines whatever the working directory.
  public static let repository: String = {
    var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(6)
    return parts.joined(separator: "/")
  }()
}
