import Dispatch
import Synchronization

/// A bounded first-in, first-out hand-over of values from one thread to another: `put` waits
/// while `capacity` values wait, `take` waits for one. The threads of a run (the libxml2 reader,
/// the read-ahead, a table's encoder, the workbook's) pass everything they share through one.
public final class HandOffQueue<Element: Sendable>: Sendable {
  private let elements = Mutex<[Element]>([])
  private let available = DispatchSemaphore(value: 0)
  /// Created at 0 and raised: libdispatch traps when a semaphore is released below the value it
  /// was created with, as this one is when a reader stops with values still queued.
  private let room: DispatchSemaphore

  public init(capacity: Int) {
    room = DispatchSemaphore(value: 0)
    for _ in 0..<max(1, capacity) { room.signal() }
  }

  /// Waits for room, then queues `element`.
  public func put(_ element: Element) {
    room.wait()
    append(element)
  }

  /// Waits for room while `stopped()` is false (looking every 20 ms); false, with nothing queued,
  /// once it is true.
  public func put(_ element: Element, unless stopped: () -> Bool) -> Bool {
    while room.wait(timeout: .now() + .milliseconds(20)) == .timedOut {
      if stopped() { return false }
    }
    append(element)
    return true
  }

  /// Waits for the oldest element and takes it.
  public func take() -> Element {
    available.wait()
    let element = elements.withLock { $0.removeFirst() }
    room.signal()
    return element
  }

  private func append(_ element: Element) {
    elements.withLock { $0.append(element) }
    available.signal()
  }
}
