import Dispatch
import Foundation
import Synchronization
import Testing

@testable import HealthETL

/// A file's writer thread bounds what is in flight by the messages' weight, not their number: the
/// database's rows are weighed by their fields, so a wide table cannot pile up more memory than a
/// narrow one. The time limits catch a hang only: on two cores a test may wait minutes for its turn
/// among the suite's others, and that wait counts (a one-minute limit failed a run that way).
@Suite struct FileWriterThreadTests {
  enum Failure: Error { case never }
  typealias Writer = FileWriterThread<Int, [Int], Failure>

  /// A thread that takes nothing until `gate` is signalled, then every message until -1, and
  /// answers with what it took.
  static func start(budget: Int, gate: DispatchSemaphore) throws -> Writer {
    try Writer.start(on: testExecutor, name: "test-writer", budget: budget, close: -1, stop: -2) { inbox in
      inbox.ready()
      gate.wait()
      var taken: [Int] = []
      while true {
        let message = inbox.next()
        if message == -1 { return taken }
        if message == -2 { return nil }
        taken.append(message)
      }
    }
  }

  @Test(.timeLimit(.minutes(10))) func aMessageWaitsForRoomForItsWholeWeight() throws {
    let gate = DispatchSemaphore(value: 0)
    let thread = try Self.start(budget: 10, gate: gate)
    // 4 + 4 of 10 in flight: both go in at once.
    thread.post(1, weight: 4)
    thread.post(2, weight: 4)
    // 3 more would be 11: the post waits until the thread takes the first message, which it does
    // only once the gate opens, 0.2 s from now.
    let opened = Flag()
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) {
      opened.set()
      gate.signal()
    }
    thread.post(3, weight: 3)
    #expect(opened.isSet)
    thread.startClosing()
    #expect(try thread.closed() == [1, 2, 3])
  }

  /// A weight above the budget takes the whole budget rather than waiting for ever.
  @Test(.timeLimit(.minutes(10))) func aWeightAboveTheBudgetTakesAllOfIt() throws {
    // Created at 0 and raised: libdispatch traps when a semaphore ends below its first value.
    let gate = DispatchSemaphore(value: 0)
    gate.signal()
    let thread = try Self.start(budget: 4, gate: gate)
    for message in 1...5 { thread.post(message, weight: 100) }
    thread.startClosing()
    #expect(try thread.closed() == [1, 2, 3, 4, 5])
  }

  /// The database weighs a batch of rows by its fields, in whole units, at least one.
  @Test func theDatabaseWeighsRowsByTheirFields() {
    let unit = DatabaseThread.fieldsPerUnit
    #expect(DatabaseThread.weight(ofFields: 1) == 1)
    #expect(DatabaseThread.weight(ofFields: unit) == 1)
    #expect(DatabaseThread.weight(ofFields: unit + 1) == 2)
    // Heart rate per minute: 10 columns, 512 rows a batch.
    #expect(DatabaseThread.weight(ofFields: 5_120) == 5)
  }
}

private final class Flag: Sendable {
  private let value = Mutex(false)
  func set() { value.withLock { $0 = true } }
  var isSet: Bool { value.withLock { $0 } }
}
