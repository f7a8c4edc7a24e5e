/// The order in which a run's marts finish, derived from what each reads (`OutputStage.reads`)
/// rather than written down: a mart finishes after every mart it reads, and marts that do not
/// depend on each other keep the order they were given (the jobs' order, as run.json lists their
/// outputs).
enum MartSchedule {
  /// Why no order exists. Either is a defect of the code that built the marts, never of a
  /// pipeline or an export.
  enum Failure: Error, Equatable, CustomStringConvertible {
    /// A mart reads one that the run does not finish, so what it reads would be empty.
    case readsUnlisted(reader: String, read: String)
    /// Marts that read each other, in a circle.
    case cycle([String])

    var description: String {
      switch self {
      case .readsUnlisted(let reader, let read):
        return "\(reader) reads \(read), which the run does not finish"
      case .cycle(let marts): return "marts read each other in a circle: " + marts.joined(separator: ", ")
      }
    }
  }

  /// `marts`, each after the marts it reads; among the marts ready at once, the one listed
  /// first (Kahn's algorithm).
  static func finishOrder(_ marts: [any OutputStage]) throws(Failure) -> [any OutputStage] {
    var position: [ObjectIdentifier: Int] = [:]
    for (index, mart) in marts.enumerated() { position[ObjectIdentifier(mart)] = index }
    var waitingFor = [Int](repeating: 0, count: marts.count)
    var readers = [[Int]](repeating: [], count: marts.count)
    for (index, mart) in marts.enumerated() {
      // A mart named twice is one input.
      var seen = Set<Int>()
      for read in mart.reads {
        guard let source = position[ObjectIdentifier(read)] else {
          throw .readsUnlisted(reader: name(of: mart), read: name(of: read))
        }
        guard seen.insert(source).inserted else { continue }
        waitingFor[index] += 1
        readers[source].append(index)
      }
    }
    var order: [any OutputStage] = []
    var finished = [Bool](repeating: false, count: marts.count)
    // Marts are few (one per job, and a handful more): a scan for the first ready one is enough.
    while order.count < marts.count {
      guard let next = marts.indices.first(where: { !finished[$0] && waitingFor[$0] == 0 }) else {
        throw .cycle(marts.indices.filter { !finished[$0] }.map { name(of: marts[$0]) })
      }
      finished[next] = true
      order.append(marts[next])
      for reader in readers[next] { waitingFor[reader] -= 1 }
    }
    return order
  }

  private static func name(of mart: any OutputStage) -> String { String(describing: type(of: mart)) }
}
