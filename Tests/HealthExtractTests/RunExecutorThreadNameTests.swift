import Foundation
import RunExecution
import Synchronization
import Testing

/// The executor names its threads for the system (`/proc/…/comm`, 15 bytes at most), so that
/// `top -H`, `perf` and `Tests/Tools/thread_cpu.py` tell them apart.
@Suite struct RunExecutorThreadNameTests {
  /// The system's name of the thread running `start`'s job.
  private func systemName(_ start: (@escaping @Sendable () -> Void) -> Void) -> String? {
    let seen = Mutex<String?>(nil)
    let done = DispatchSemaphore(value: 0)
    start {
      let name = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
      seen.withLock { $0 = name?.trimmingCharacters(in: .newlines) }
      done.signal()
    }
    guard done.wait(timeout: .now() + 30) == .success else { return "no answer in 30 s" }
    return seen.withLock { $0 }
  }

  @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/thread-self/comm")))
  func aDedicatedThreadCarriesItsNameCutTo15Bytes() {
    #expect(systemName { testExecutor.startDedicated(name: "read-ahead", $0) } == "read-ahead")
    #expect(systemName { testExecutor.startDedicated(name: "a-name-longer-than-15", $0) } == "a-name-longer-t")
  }

  @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/thread-self/comm")))
  func aPoolWorkerIsCalledPool() {
    #expect(systemName { testExecutor.submit($0) } == "pool")
  }
}
