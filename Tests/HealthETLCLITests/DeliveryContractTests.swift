import Foundation
import Testing

/// The rule a file consumer follows (Pipelines/docs/nightly.md, "Runs and the nightly batch"): after
/// every nightly run, whatever its exit code, post `workout_records.new.json` if its `sequence` is
/// one not posted yet, keyed by `recordUuid`. Killed at every boundary of the syscalls that commit
/// a night (strace fault injection), a night followed by a normal rerun loses no workout, and no
/// final delta repeats a record of an earlier final delta.
@Suite(.serialized) struct DeliveryContractTests {
  /// The syscalls by which a night commits: folders made and removed, files carried over by hard
  /// links, synced (one syncfs for the staged files, an fsync for the folder changed), swapped into
  /// place (renameat2), and the exit after the last commit.
  static let commitSyscalls = [
    "mkdir", "link", "fsync", "syncfs", "renameat2", "rename", "unlink", "rmdir", "exit_group",
  ]

  static var strace: String? {
    ["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) }
  }

  /// What the consumer has done: the sequences it posted and every id the server holds.
  struct Consumer {
    var posted: Set<Int> = []
    var server: Set<String> = []
    var finalDeltas: [[String]] = []

    /// Applies the rule to the folder as it is now.
    mutating func look(at out: URL) throws {
      let file = out.appendingPathComponent("workout_records.new.json")
      guard FileManager.default.fileExists(atPath: file.path) else { return }
      let (sequence, final) = try NightlyTests.deltaHeader(file)
      guard posted.insert(sequence).inserted else { return }
      let ids = try NightlyTests.recordIDs(file)
      server.formUnion(ids)
      if final { finalDeltas.append(ids) }
    }
  }

  /// Runs `arguments` under strace, killing the process at the `n`-th call of `syscall`; returns
  /// whether the kill happened (false: the run had fewer such calls and finished).
  static func runKilled(_ arguments: [String], at syscall: String, call n: Int) throws -> Bool {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: strace!)
    process.arguments =
      ["-f", "-qq", "-o", "/dev/null", "-e", "trace=\(syscall)", "-e", "inject=\(syscall):signal=KILL:when=\(n)"]
      + [CLI.binary] + arguments
    process.standardError = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    let deadline = Date().addingTimeInterval(60)
    while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    return process.terminationReason == .uncaughtSignal
  }

  static func copy(_ from: URL, to: URL) throws {
    try? FileManager.default.removeItem(at: to)
    if FileManager.default.fileExists(atPath: from.path) { try FileManager.default.copyItem(at: from, to: to) }
  }

  @Test(.enabled(if: strace != nil, "strace is not installed (make deps installs it)"))
  func killedAtEveryCommitSyscallTheRuleDeliversEveryWorkout() throws {
    let (work, exports, inbox, out) = try NightlyTests.growingInbox()
    defer { try? FileManager.default.removeItem(at: work) }
    let arguments = NightlyTests.nightlyArguments(inbox, out)
    var consumer = Consumer()
    var trials = 0
    for (night, export) in exports.prefix(2).enumerated() {
      try NightlyTests.deliver(export, to: inbox, order: night)
      // Every trial starts from the folder and the consumer as they were before this night.
      let before = work.appendingPathComponent("before-\(night)")
      try Self.copy(out, to: before)
      let consumerBefore = consumer
      var expected = consumer.server
      do {
        #expect(try CLI.run(arguments).status == 0)
        expected.formUnion(try NightlyTests.recordIDs(out.appendingPathComponent("workout_records.json")))
      }
      for syscall in Self.commitSyscalls {
        var n = 1
        while n < 500 {
          try Self.copy(before, to: out)
          var trial = consumerBefore
          let killed = try Self.runKilled(arguments, at: syscall, call: n)
          try trial.look(at: out)
          let rerun = try CLI.run(arguments)
          #expect(rerun.status == 0, "rerun after a kill at \(syscall) #\(n): \(rerun.stderr)")
          try trial.look(at: out)
          trials += 1
          let lost = expected.subtracting(trial.server)
          #expect(lost.isEmpty, "killed at \(syscall) #\(n): \(lost.count) workouts never delivered")
          var seen = Set<String>()
          for delta in trial.finalDeltas {
            #expect(seen.isDisjoint(with: delta), "killed at \(syscall) #\(n): a final delta repeats a record")
            seen.formUnion(delta)
          }
          if !killed { break }
          n += 1
        }
      }
      // The night as it really happened, for the next one.
      try Self.copy(before, to: out)
      consumer = consumerBefore
      #expect(try CLI.run(arguments).status == 0)
      try consumer.look(at: out)
    }
    #expect(trials > 40, "too few kill points: \(trials)")
    #expect(consumer.server.count > 10)
  }
}
