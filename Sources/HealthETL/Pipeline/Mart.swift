public import HealthExtract
public import RunExecution

/// A mart: one subject's computation. It takes samples as the export streams (`SampleStage`),
/// and once the whole export is read and the run's zone is known, computes its results and
/// writes its tables (`finish`).
///
/// Marts never hold each other. What one computes for others is a product (`MartProduct`): the
/// mart lists the products it publishes (`provides`) and the products it reads (`needs`), and
/// the run matches them by type, orders the finishes so that every provider finishes before its
/// readers (`MartSchedule`), and hands each provider, before the parse, what its readers ask of
/// it (`prepare(requests:)`). A producer never knows its consumers.
public protocol Mart: SampleStage {
  /// The products this mart publishes in its finish (`MartProducts.publish`).
  var provides: [ProductKey] { get }
  /// The products it reads in its finish, with what it asks of their providers.
  var needs: [ProductNeed] { get }
  /// Before the parse, once: what the marts that read this one's products ask of it, by
  /// product. Only the mart chosen as a product's provider gets its requests.
  func prepare(requests: ProductRequests)
  /// Once the export is open, before its first element: a mart that reads files beside the XML
  /// (route files, ECG files) starts reading them on a thread of the run while the export
  /// streams, on the core time the parse leaves idle, rather than in its finish.
  func exportOpened(_ export: OpenedExport)
  /// Computes, writes the mart's files through `context`, and publishes its products; returns
  /// what it wrote.
  func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary]
  /// The mart's section of `run.json`, once it has finished; nil when it has none.
  var runReportSection: RunReportSection? { get }
  /// What it did with the samples it received, once it has finished (Pipelines/README.md, "Every
  /// record accounted for"); nil for a mart whose outputs show no sample (the report's data
  /// quality counts samples, but shows none of them).
  var sampleUse: SampleUse? { get }
  /// What it found worth a look, once it has finished (Pipelines/docs/nightly.md, "Worth a look");
  /// nil when it looks for nothing.
  var oddities: Oddities? { get }
  /// Whether its finish writes tables (which `health.xlsx` and `health.sqlite` may take): the
  /// run starts closing those files once every mart that does has finished.
  var writesTables: Bool { get }
}

extension Mart {
  public var provides: [ProductKey] { [] }
  public var needs: [ProductNeed] { [] }
  public func prepare(requests: ProductRequests) {}
  public func exportOpened(_ export: OpenedExport) {}
  public var runReportSection: RunReportSection? { nil }
  public var sampleUse: SampleUse? { nil }
  public var oddities: Oddities? { nil }
  public var writesTables: Bool { true }
}

/// What a mart may start from once the export is open (`Mart.exportOpened`).
public struct OpenedExport {
  /// Where the files beside the export's XML are, the run's own output folder left out.
  public let companions: ExportInput.Companions
  /// The run's threads.
  public let executor: RunExecutor
  /// The run's outputs, whose scratch folder holds what is read ahead.
  public let transaction: OutputTransaction

  private let started = StartedReaders()

  public init(companions: ExportInput.Companions, executor: RunExecutor, transaction: OutputTransaction) {
    self.companions = companions
    self.executor = executor
    self.transaction = transaction
  }

  /// Reading threads started during the parse at most (route, ECG and clinical-record files):
  /// with the parse's two, the zip's hash and the pool, two keep a run within
  /// `RunExecutor.maximumThreads`.
  public static let readersDuringTheParse = 2

  /// Whether a mart may start the reading thread `name` now: the first to ask for a name may,
  /// while fewer than `readersDuringTheParse` have started; the others read in their finish. Two
  /// jobs of one kind (two workouts jobs) would otherwise add two threads during the parse.
  public func mayStart(_ name: String) -> Bool {
    guard started.names.count < Self.readersDuringTheParse else { return false }
    return started.names.insert(name).inserted
  }

  private final class StartedReaders {
    var names = Set<String>()
  }
}

/// A section of `run.json` a mart contributes: its key and a JSON value (`JSONSerialization`
/// types).
public struct RunReportSection {
  public var key: String
  public var value: Any
  /// A line for the end of `healthetl run` when something needs the user's eye (files that could
  /// not be read whole), without the `healthetl: ` prefix; nil when nothing does.
  public var summaryLine: String?

  public init(key: String, value: Any, summaryLine: String? = nil) {
    self.key = key
    self.value = value
    self.summaryLine = summaryLine
  }
}

/// What one mart computes for others: nights, workouts, a day's statistics. A type of the
/// subject that computes it; readers name the type.
public protocol MartProduct {
  /// What a reader asks the provider to compute; `NoRequest` when there is nothing to ask.
  associatedtype Request = NoRequest
}

/// The request of a product that takes none.
public struct NoRequest: Sendable {}

/// A product type, as marts list it.
public struct ProductKey: Hashable, Sendable, CustomStringConvertible {
  private let id: ObjectIdentifier
  public let description: String

  public init<Product: MartProduct>(_ type: Product.Type) {
    id = ObjectIdentifier(type)
    description = String(describing: type)
  }
}

/// A product a mart reads, and what it asks of the provider.
public struct ProductNeed {
  public let product: ProductKey
  let request: Any?
  /// Whether the run adds a provider when no job's mart provides the product (`JobKind.
  /// makeProvider`); an optional need is left unmet instead, and the reader reads nil.
  public let optional: Bool

  public init<Product: MartProduct>(_ type: Product.Type, optional: Bool = false) {
    product = ProductKey(type)
    request = nil
    self.optional = optional
  }

  public init<Product: MartProduct>(_ type: Product.Type, request: Product.Request, optional: Bool = false) {
    product = ProductKey(type)
    self.request = request
    self.optional = optional
  }
}

/// What a provider's readers ask of it, by product.
public struct ProductRequests {
  private var requests: [ProductKey: [Any]] = [:]

  public init() {}

  mutating func add(_ request: Any, for product: ProductKey) { requests[product, default: []].append(request) }

  /// The requests for `type`, in the order of the marts that asked.
  public func of<Product: MartProduct>(_ type: Product.Type) -> [Product.Request] {
    (requests[ProductKey(type)] ?? []).compactMap { $0 as? Product.Request }
  }

  /// Whether any mart reads `type`.
  public func isRead<Product: MartProduct>(_ type: Product.Type) -> Bool { requests[ProductKey(type)] != nil }
}

/// The products of one run, as the marts publish them in their finish.
public final class MartProducts {
  /// Per product, the mart chosen to provide it to its readers.
  private let providers: [ProductKey: ObjectIdentifier]
  private var published: [ProductKey: [(publisher: ObjectIdentifier, value: Any)]] = [:]

  public init(providers: [ProductKey: ObjectIdentifier] = [:]) { self.providers = providers }

  /// Publishes `product` as `publisher`'s.
  public func publish<Product: MartProduct>(_ product: Product, by publisher: any Mart) {
    published[ProductKey(Product.self), default: []].append((ObjectIdentifier(publisher), product))
  }

  /// The product of the mart chosen to provide it; nil when no mart provides it (an optional
  /// need) or it has not finished.
  public func read<Product: MartProduct>(_ type: Product.Type) -> Product? {
    let key = ProductKey(type)
    guard let entries = published[key] else { return nil }
    guard let provider = providers[key] else { return entries.first?.value as? Product }
    return entries.first { $0.publisher == provider }?.value as? Product
  }

  /// Every mart's `type` product, in the order they finished (the run reads every workouts
  /// job's server records).
  public func all<Product: MartProduct>(_ type: Product.Type) -> [Product] {
    (published[ProductKey(type)] ?? []).compactMap { $0.value as? Product }
  }
}

/// What marts are made with, before the parse.
public struct MartBuild {
  /// The run's output transaction: marts stage scratch files in it while the export streams.
  public let transaction: OutputTransaction
  /// Where tables go besides their own files (`health.sqlite`; the workbook joins after the
  /// parse).
  public let tableSinks: TableSinks
  /// The plan's pipeline files, for messages.
  public let pipelines: [String]

  public init(transaction: OutputTransaction, tableSinks: TableSinks, pipelines: [String] = []) {
    self.transaction = transaction
    self.tableSinks = tableSinks
    self.pipelines = pipelines
  }
}

/// What every mart needs at the end of a run.
public struct MartContext {
  /// The run's zone for local dates and buckets (Pipelines/docs/samples.md, "Time zone").
  public let zone: RunZone
  public let catalog: SampleCatalog
  public let transaction: OutputTransaction
  public let settings: RunSettings
  /// What was read, so a mart can read the export's other files (GPX routes) after the parse;
  /// nil when the caller has no export to point to.
  public let input: InputInfo?
  /// What the parse found about the export as a whole, for marts that show it (the report); nil
  /// when the caller has no inventory.
  public let export: ExportOverview?
  /// Where tables go besides their own files.
  public let tableSinks: TableSinks
  /// The run's threads: long tables are encoded on its pool.
  public let executor: RunExecutor
  /// The products of the marts that finished before.
  public let products: MartProducts

  public init(
    zone: RunZone, catalog: SampleCatalog, transaction: OutputTransaction, settings: RunSettings,
    input: InputInfo? = nil, export: ExportOverview? = nil, tableSinks: TableSinks = TableSinks(),
    executor: RunExecutor, products: MartProducts = MartProducts()
  ) {
    self.zone = zone
    self.catalog = catalog
    self.transaction = transaction
    self.settings = settings
    self.input = input
    self.export = export
    self.tableSinks = tableSinks
    self.executor = executor
    self.products = products
  }
}

extension MartContext {
  /// Where the export's files beside its main XML are, the run's own output folder left out
  /// (Pipelines/docs/input.md, "What was not read").
  public var exportCompanions: ExportInput.Companions {
    input.map { ExportInput.companions(of: $0, outputFolder: transaction.outputDirectory) }
      ?? .unavailable(reason: "the run was not told where the export is")
  }

  /// Reading the export's files beside its main XML (`exportCompanions`) stopped for want of a
  /// file descriptor: the machine's fault, which fails the run (`OutputError.tooManyOpenFiles`,
  /// exit 73) so that a night retries it, rather than a problem of one file that leaves the rest
  /// out of the outputs in silence. Nil for any other error.
  public static func machineFailure(_ error: ExtractError) -> OutputError? {
    guard case .tooManyOpenFiles(let path, let limit) = error else { return nil }
    return .tooManyOpenFiles(path: path, limit: limit)
  }

  /// A writer of `table` to `file` among the run's outputs, with the run's zone for its instants,
  /// the run's CSV settings and its table sinks: how every mart opens a table.
  /// - Parameter encodeOnThread: encode on a lane of the run's pool (long tables).
  public func writer<Row>(
    _ table: RowTable<Row>, file: String, format: TableFormat, encodeOnThread: Bool = false
  ) throws(OutputError) -> RowWriter<Row> {
    try RowWriter(
      transaction, path: file, table: table, format: format, zone: zone.rules,
      byteOrderMark: settings.csvByteOrderMark, sinks: tableSinks, lane: encodeOnThread ? executor : nil)
  }
}
