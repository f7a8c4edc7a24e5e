/// The order in which a run's marts finish, derived from what each reads rather than written
/// down: a mart finishes after every mart it reads, and marts that do not depend on each other
/// keep the order they were given (the jobs' order, as run.json lists their outputs).
public enum MartSchedule {
  /// Why no order exists: marts that read each other, in a circle. A defect of the code that
  /// built the marts, never of a pipeline or an export.
  public enum Failure: Error, Equatable, CustomStringConvertible {
    case cycle([String])

    public var description: String {
      switch self {
      case .cycle(let marts): return "marts read each other in a circle: " + marts.joined(separator: ", ")
      }
    }
  }

  /// The marts' positions, each after the positions it reads (`reads[i]`: the marts mart `i`
  /// reads); among the marts ready at once, the one listed first (Kahn's algorithm). `names` are
  /// for the message of a circle.
  public static func finishOrder(reads: [[Int]], names: [String]) throws(Failure) -> [Int] {
    var waitingFor = [Int](repeating: 0, count: reads.count)
    var readers = [[Int]](repeating: [], count: reads.count)
    for (index, read) in reads.enumerated() {
      // A mart named twice is one input; a mart reading itself waits for nothing.
      for source in Set(read) where source != index {
        waitingFor[index] += 1
        readers[source].append(index)
      }
    }
    var order: [Int] = []
    var finished = [Bool](repeating: false, count: reads.count)
    // Marts are few (one per job, and a handful more): a scan for the first ready one is enough.
    while order.count < reads.count {
      guard let next = reads.indices.first(where: { !finished[$0] && waitingFor[$0] == 0 }) else {
        throw .cycle(reads.indices.filter { !finished[$0] }.map { names[$0] })
      }
      finished[next] = true
      order.append(next)
      for reader in readers[next] { waitingFor[reader] -= 1 }
    }
    return order
  }
}
