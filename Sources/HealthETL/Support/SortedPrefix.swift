extension Sequence {
  /// The first `count` elements of `sorted(by:)`, in that order, without sorting the rest:
  /// O(n log count) through a heap of the best `count` so far, so listing the top few of a million
  /// costs little more than one look at each. `areInIncreasingOrder` must be a strict total order
  /// on the elements (ties would leave which of them is kept unspecified).
  func sortedPrefix(_ count: Int, by areInIncreasingOrder: (Element, Element) -> Bool) -> [Element] {
    guard count > 0 else { return [] }
    // A heap with the element that sorts last on top: the first to give way to a better one.
    var heap: [Element] = []
    heap.reserveCapacity(count)
    for element in self {
      if heap.count < count {
        heap.append(element)
        var child = heap.count - 1
        while child > 0 {
          let parent = (child - 1) / 2
          guard areInIncreasingOrder(heap[parent], heap[child]) else { break }
          heap.swapAt(child, parent)
          child = parent
        }
      } else if areInIncreasingOrder(element, heap[0]) {
        heap[0] = element
        var parent = 0
        while true {
          let left = 2 * parent + 1
          guard left < heap.count else { break }
          let right = left + 1
          let later = right < heap.count && areInIncreasingOrder(heap[left], heap[right]) ? right : left
          guard areInIncreasingOrder(heap[parent], heap[later]) else { break }
          heap.swapAt(later, parent)
          parent = later
        }
      }
    }
    return heap.sorted(by: areInIncreasingOrder)
  }
}
