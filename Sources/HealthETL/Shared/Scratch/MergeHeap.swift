/// A binary min-heap: the k-way merge of spilled runs and the statistics rows waiting for their
/// bucket to close both need "the smallest of a few" repeatedly. Storage is one array, so after it
/// has grown to its working size pushes and pops allocate nothing.
struct MergeHeap<Element: Comparable> {
  private var storage: [Element] = []

  init() {}

  var isEmpty: Bool { storage.isEmpty }
  var count: Int { storage.count }
  var min: Element? { storage.first }

  mutating func push(_ element: Element) {
    storage.append(element)
    var child = storage.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      guard storage[child] < storage[parent] else { break }
      storage.swapAt(child, parent)
      child = parent
    }
  }

  @discardableResult mutating func popMin() -> Element? {
    guard !storage.isEmpty else { return nil }
    if storage.count == 1 { return storage.removeLast() }
    let top = storage[0]
    storage[0] = storage.removeLast()
    siftDown(from: 0)
    return top
  }

  /// Replaces the minimum (cheaper than a pop and a push: one sift instead of two).
  mutating func replaceMin(with element: Element) {
    precondition(!storage.isEmpty)
    storage[0] = element
    siftDown(from: 0)
  }

  private mutating func siftDown(from start: Int) {
    var parent = start
    let count = storage.count
    while true {
      let left = 2 * parent + 1
      guard left < count else { return }
      let right = left + 1
      let smaller = right < count && storage[right] < storage[left] ? right : left
      guard storage[smaller] < storage[parent] else { return }
      storage.swapAt(smaller, parent)
      parent = smaller
    }
  }
}
