import Foundation
import HealthETL
import HealthExtract
import HealthModel

/// Runs output stages over an export the way `healthetl run` does — one streaming parse, the
/// zone resolved at the end, outputs committed into a fresh folder — without the CLI.
enum StageHarness {
  struct Result {
    var directory: URL
    var outputs: [OutputSummary]
    var normalizer: RecordNormalizer
    var zone: RunZone

    func text(_ relativePath: String) throws -> String {
      try String(contentsOf: directory.appendingPathComponent(relativePath), encoding: .utf8)
    }

    /// CSV rows as dictionaries keyed by the header (simple split: for fields without quotes).
    func csvRows(_ relativePath: String) throws -> [[String: String]] {
      let lines = try text(relativePath).split(separator: "\n", omittingEmptySubsequences: true)
      guard let header = lines.first?.split(separator: ",", omittingEmptySubsequences: false).map(String.init) else {
        return []
      }
      return lines.dropFirst().map { line in
        let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        return Dictionary(uniqueKeysWithValues: zip(header, fields))
      }
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
  }

  /// - Parameters:
  ///   - makeStages: builds the stages for the run's transaction.
  ///   - source: the export (a path or bytes).
  ///   - zone: `.auto` or a named zone.
  ///   - finished: called after every finish, before the commit (products are read there).
  ///   - readsAhead: tells the marts when the export is open (`Mart.exportOpened`), as a run does,
  ///     so they read the files beside it during the parse; else they read them in their finish.
  static func run(
    _ source: InputSource, zone request: RunZone.Request = .auto, settings: RunSettings = RunSettings(),
    readsAhead: Bool = true, finished: (MartContext) throws -> Void = { _ in },
    makeStages: (OutputTransaction) -> [any Mart]
  ) throws -> Result {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "healthetl-stage-\(UUID().uuidString)")
    let transaction = try OutputTransaction(outputDirectory: directory.path)
    // Wired as a run wires its marts: providers of what they read added, requests handed over,
    // finishes ordered.
    let marts = try MartGraph.wire(
      makeStages(transaction), build: MartBuild(transaction: transaction, tableSinks: TableSinks()))
    let stages = marts.marts
    let normalizer = RecordNormalizer(stages: stages)
    var info: InputInfo?
    _ = try ExportStream(source: source, executor: testExecutor).read(
      into: normalizer,
      opened: { opened in
        info = opened
        guard readsAhead else { return }
        let export = OpenedExport(
          companions: ExportInput.companions(of: opened, outputFolder: directory.path), executor: testExecutor,
          transaction: transaction)
        for stage in stages { stage.exportOpened(export) }
      })
    let zone = try RunZone.resolve(request, facts: normalizer.facts)
    let context = MartContext(
      zone: zone, catalog: normalizer.catalog, transaction: transaction, settings: settings, input: info,
      executor: testExecutor, products: marts.products)
    var outputs: [OutputSummary] = []
    for stage in stages { outputs += try stage.finish(context) }
    try finished(context)
    try transaction.commit()
    return Result(directory: directory, outputs: outputs, normalizer: normalizer, zone: zone)
  }

  /// Wraps `body` (children of HealthData) into a complete export held in memory. The export date
  /// is after every date the tests use: a record that starts more than a day after it is rejected.
  static func export(_ body: String, exportDate: String = "2027-01-01 09:00:00 +0000") -> InputSource {
    let text = """
      <?xml version="1.0" encoding="UTF-8"?>
      <HealthData locale="en_US">
       <ExportDate value="\(exportDate)"/>
      \(body)
      </HealthData>

      """
    return .bytes(Array(text.utf8), name: "test-export.xml")
  }

  /// `../shared/fixtures/real` beside the checkout (absent in a user's fresh clone), or the
  /// folder `HEALTHETL_REAL_FIXTURES` names (a git worktree sits elsewhere).
  static let realRoot =
    ProcessInfo.processInfo.environment["HEALTHETL_REAL_FIXTURES"].map { URL(fileURLWithPath: $0) }
    ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/fixtures/real")
  static var realAvailable: Bool { FileManager.default.fileExists(atPath: realRoot.path) }
  /// The package's root: tests sit in sub-folders, so files of the repository are found from here.
  static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
  static let sampleExport = repository.appendingPathComponent("SampleData/export.zip").path
}
