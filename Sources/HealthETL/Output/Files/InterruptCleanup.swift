public import Dispatch
import Foundation
import Synchronization

/// What a run must undo when it is stopped by SIGTERM, SIGINT or SIGHUP: its staging folders and
/// a output folder its lock created. The signals are received by Dispatch sources, so the
/// clean-up runs on an ordinary thread (no async-signal-unsafe work in a signal handler); it
/// removes what is registered, prints one line and exits with 128 + the signal number
/// (Pipelines/docs/nightly.md, "Runs and the nightly batch").
///
/// The swap of a finished staging folder into place runs inside `whileNotInterrupted`, under the
/// same lock as the clean-up: a signal either comes before the swap (the previous outputs stay)
/// or waits for it to finish (the new ones stay), never in between.
public enum InterruptCleanup {
  struct LockEntry: Sendable {
    var lockFile: String
    /// Folders the lock created, deepest first.
    var created: [String]
  }

  struct State: Sendable {
    var next = 0
    var staging: [Int: String] = [:]
    var locks: [Int: LockEntry] = [:]
  }

  private static let state = Mutex(State())

  /// The signals that stop a run cleanly.
  public static let signals: [Int32] = [SIGTERM, SIGINT, SIGHUP]

  /// Starts listening for `signals`; keep the returned sources alive for as long as the program
  /// runs (a released source stops listening).
  public static func install() -> [any DispatchSourceSignal] {
    signals.map { number in
      // The default action would kill the process before Dispatch sees the signal.
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
      source.setEventHandler { stop(signal: number) }
      source.resume()
      return source
    }
  }

  /// Registers a staging folder to remove if the run is stopped; returns its token.
  static func register(staging folder: String) -> Int {
    state.withLock { state in
      state.next += 1
      state.staging[state.next] = folder
      return state.next
    }
  }

  static func unregister(staging token: Int) {
    _ = state.withLock { $0.staging.removeValue(forKey: token) }
  }

  /// Registers an output lock whose created folders go if the run is stopped.
  static func register(lockFile: String, created: [String]) -> Int {
    state.withLock { state in
      state.next += 1
      state.locks[state.next] = LockEntry(lockFile: lockFile, created: created)
      return state.next
    }
  }

  static func unregister(lock token: Int) {
    _ = state.withLock { $0.locks.removeValue(forKey: token) }
  }

  /// Runs `body` with the clean-up held off: a signal arriving meanwhile is handled after it.
  static func whileNotInterrupted<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    let result: Result<T, E> = state.withLock { _ in
      do throws(E) { return .success(try body()) } catch { return .failure(error) }
    }
    return try result.get()
  }

  /// Removes what the run staged and created, says so on stderr and exits `128 + signal`.
  static func stop(signal number: Int32) {
    state.withLock { state in
      for folder in state.staging.values { try? FileManager.default.removeItem(atPath: folder) }
      for lock in state.locks.values { removeCreatedFolders(lock) }
      let name = [SIGTERM: "SIGTERM", SIGINT: "SIGINT", SIGHUP: "SIGHUP"][number] ?? "signal \(number)"
      var line = "healthetl: stopped by \(name)"
      if !state.staging.isEmpty {
        line += "; this run's unfinished outputs were removed, earlier outputs are untouched"
      }
      line += "\n"
      _ = line.utf8CString.withUnsafeBufferPointer { write(STDERR_FILENO, $0.baseAddress, $0.count - 1) }
      // Nothing else may run: the main thread could be half-way through writing a file.
      _exit(128 + number)
    }
  }

  /// When the folders were made for this run and hold nothing but the lock file, they go.
  static func removeCreatedFolders(_ lock: LockEntry) {
    guard let innermost = lock.created.first,
      (try? FileManager.default.contentsOfDirectory(atPath: innermost)) == [ToolFiles.lock]
    else { return }
    unlink(lock.lockFile)
    for folder in lock.created where rmdir(folder) != 0 { return }
  }
}
