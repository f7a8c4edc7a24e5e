import Foundation
import Synchronization

/// The one owner of a run's threads, so how many there are follows the machine, never the
/// number of tables, and who runs what is decided in one place.
///
/// Two kinds of work:
/// - `startDedicated`: a job that must never wait behind others and lasts a phase of the run —
///   the libxml2 parse, the read-ahead of the input, the input's SHA-256, the workbook, the
///   database, two readers of the files beside the export (routes, ECG files, clinical records)
///   during the parse. At most `dedicatedSlots` of them at once: the parse's two end before the
///   workbook and the database start.
/// - `submit`: short jobs on a bounded pool of workers, started as work arrives and kept for
///   the next run (a table's rows to encode and append, `RowEncodingLane`). A job never waits
///   for another job, so the pool always makes progress.
///
/// With the caller's own thread, a run has at most `maximumThreads` threads whatever it writes.
public final class RunExecutor: Sendable {
  /// The most threads of a run at once, its main thread included.
  public static let maximumThreads = 8
  /// Dedicated threads at once: parse, read-ahead, SHA-256 and two readers of files beside the
  /// export; then SHA-256, those readers, workbook, database.
  public static let dedicatedSlots = 5

  /// An executor for this machine: as many pool workers as it has cores, within
  /// `maximumThreads`. A process makes one and hands it to every run (its idle workers are kept
  /// for the next).
  public static func forThisMachine() -> RunExecutor {
    RunExecutor(
      workers: Swift.max(
        1, Swift.min(ProcessInfo.processInfo.activeProcessorCount, maximumThreads - 1 - dedicatedSlots)))
  }

  /// Pool workers at most.
  public let workerLimit: Int

  private struct State {
    var queue: [@Sendable () -> Void] = []
    var workers = 0
    var idle = 0
    var dedicated = 0
    var peak = 0

    var threads: Int { workers + dedicated }

    mutating func notePeak() { peak = Swift.max(peak, threads) }
  }

  private let state = Mutex(State())
  /// One signal per queued job.
  private let queued = DispatchSemaphore(value: 0)

  public init(workers: Int) { workerLimit = Swift.max(1, workers) }

  /// Runs `job` on a pool worker, starting one when all are busy and the pool is not full.
  public func submit(_ job: @escaping @Sendable () -> Void) {
    let startWorker = state.withLock { state in
      state.queue.append(job)
      guard state.idle < state.queue.count, state.workers < workerLimit else { return false }
      state.workers += 1
      state.notePeak()
      return true
    }
    if startWorker {
      let thread = Thread { [self] in
        Self.nameSystemThread("pool")
        work()
      }
      thread.name = "healthetl pool"
      thread.start()
    }
    queued.signal()
  }

  /// Runs `body` on a thread of its own, for work that must not queue behind the pool.
  public func startDedicated(
    name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void
  ) {
    state.withLock { state in
      state.dedicated += 1
      state.notePeak()
    }
    let thread = Thread { [self] in
      Self.nameSystemThread(name)
      body()
      state.withLock { $0.dedicated -= 1 }
    }
    thread.name = "healthetl " + name
    if let stackSize { thread.stackSize = stackSize }
    thread.start()
  }

  /// Names the calling thread for the system, so that `top -H`, `perf` and
  /// `Tests/Tools/thread_cpu.py` tell the parse from the database: Foundation's `Thread.name`
  /// stays inside the process on Linux, and Swift's Glibc module leaves out
  /// `pthread_setname_np`, so the name is written where the kernel keeps it (15 bytes of it).
  /// Only a name: where /proc is not there, nothing happens.
  private static func nameSystemThread(_ name: String) {
    let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
  }

  /// Threads this executor runs now (pool workers, idle ones included, and dedicated threads).
  public var threads: Int { state.withLock { $0.threads } }

  /// The most threads it ran at once since the last `resetPeak`.
  public var peakThreads: Int { state.withLock { $0.peak } }

  public func resetPeak() { state.withLock { $0.peak = $0.threads } }

  private func work() {
    while true {
      state.withLock { $0.idle += 1 }
      queued.wait()
      let job = state.withLock { state in
        state.idle -= 1
        return state.queue.removeFirst()
      }
      job()
    }
  }
}
