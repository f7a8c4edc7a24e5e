/// The marts of one run and the order they finish in, derived from what they read.
///
/// The jobs' kinds make the marts (`JobKind.marts`: one per job, or one a kind's jobs share), in
/// plan order. Each product a mart reads (`Mart.needs`) is matched to the first mart in that order
/// that provides it (`Mart.provides`); a product no job's mart provides is computed by a mart its
/// kind makes for the purpose, which writes no file (`JobKind.makeProvider`: daily without a sleep
/// job still gets its nights). Every provider is then told, before the parse, what its readers
/// ask of it (`Mart.prepare`), and the finishes are ordered so that each mart finishes after the
/// marts it reads (`MartSchedule`). No mart is named here: a new subject needs no line in this
/// file.
public enum MartGraph {
  /// The marts `plan` asks for, for one run.
  ///
  /// - Throws: `ConfigFileError` for a file read now (a report's page); a product that no kind
  ///   provides, or marts that read each other in a circle, are defects of the code, reported
  ///   rather than trapped.
  public static func marts(
    for plan: RunPlan, build: MartBuild, kinds: [any JobKind] = JobKinds.all
  ) throws(ConfigFileError) -> RunMarts {
    let failure = { (message: String) in
      ConfigFileError(file: plan.pipelines.map(\.path).joined(separator: ", "), message: message)
    }
    var marts: [any Mart] = []
    var made = Set<String>()
    for job in plan.jobs where made.insert(job.kind.name).inserted {
      marts += try job.kind.marts(for: plan.jobs.filter { $0.kind.name == job.kind.name }, build: build)
    }
    do { return try wire(marts, build: build, kinds: kinds) } catch { throw failure(error.description) }
  }

  /// Why marts cannot be wired: a defect of the code that made them.
  public enum WiringError: Error, CustomStringConvertible {
    case noProvider(product: ProductKey, reader: String)
    case cycle(MartSchedule.Failure)

    public var description: String {
      switch self {
      case .noProvider(let product, let reader): return "no job kind provides \(product), which \(reader) reads"
      case .cycle(let failure): return failure.description
      }
    }
  }

  /// Wires `marts` (given in plan order): providers matched to readers, added where missing
  /// (`kinds`' `makeProvider`), prepared with their readers' requests, and ordered.
  public static func wire(_ marts: [any Mart], build: MartBuild, kinds: [any JobKind] = JobKinds.all)
    throws(WiringError) -> RunMarts
  {
    var marts = marts
    var providers: [ProductKey: Int] = [:]
    func register(_ index: Int) {
      for product in marts[index].provides where providers[product] == nil { providers[product] = index }
    }
    marts.indices.forEach(register)
    // Marts added as providers read products too: the list grows while it is walked.
    var reads: [[Int]] = []
    var index = 0
    while index < marts.count {
      var read: [Int] = []
      for need in marts[index].needs {
        if providers[need.product] == nil, !need.optional {
          guard let provider = kinds.lazy.compactMap({ $0.makeProvider(of: need.product, build: build) }).first,
            provider.provides.contains(need.product)
          else { throw .noProvider(product: need.product, reader: name(of: marts[index])) }
          marts.append(provider)
          register(marts.count - 1)
        }
        if let provider = providers[need.product] { read.append(provider) }
      }
      reads.append(read)
      index += 1
    }
    var requests = [ProductRequests](repeating: ProductRequests(), count: marts.count)
    for (reader, mart) in marts.enumerated() {
      for need in mart.needs {
        guard let provider = providers[need.product], provider != reader else { continue }
        requests[provider].add(need.request ?? NoRequest(), for: need.product)
      }
    }
    for (index, mart) in marts.enumerated() { mart.prepare(requests: requests[index]) }
    let order: [Int]
    do { order = try MartSchedule.finishOrder(reads: reads, names: marts.map(name(of:))) } catch {
      throw .cycle(error)
    }
    return RunMarts(
      marts: order.map { marts[$0] },
      products: MartProducts(providers: providers.mapValues { ObjectIdentifier(marts[$0]) }))
  }

  static func name(of mart: any Mart) -> String { String(describing: type(of: mart)) }
}

/// The marts of a run, in the order they finish, and the products they publish for each other.
public struct RunMarts {
  public let marts: [any Mart]
  public let products: MartProducts
}
