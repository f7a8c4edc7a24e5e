import HealthExtract
import HealthModel

/// One row per `ClinicalRecord` element with a summary of its FHIR resource file
/// (Pipelines/docs/clinical-records.md, "Clinical records"). While the export streams, each element's attributes
/// go to a scratch file — 100,000 records with long URLs held as elements took 320 MB — and only
/// the distinct resource paths they name stay in memory; the resource files are then streamed
/// once, each read whole up to `largestResource` bytes, and copied into the output folder only
/// when asked; the rows are written last, the records read back in order.
public final class ClinicalRecordMart: Mart {
  public enum Table: String, MartTable {
    case records

    public var schema: TableSchema { ClinicalRecordTables.records.schema }
  }
  public typealias Destination = TableDestination<Table>

  /// A resource file larger than this is not read: FHIR resources of an export are a few KB; a
  /// `DiagnosticReport` carrying a scanned document may reach a few MB.
  static let largestResource = 8 << 20
  /// Where resource files are, below the main XML's folder, and where copies go in the output folder.
  static let resourceFolder = "clinical-records"
  /// The files this mart reads, for "What was not read".
  static let filesRead = ExportFileClaim.folder(resourceFolder)

  private let transaction: OutputTransaction
  private let destinations: [Destination]
  private let copyResources: Bool
  /// The records' attributes (`ClinicalRecordFields.names`), in document order.
  private let records: ScratchStreams
  private var recordCount = 0
  /// The resource paths the records name (each once, directly in `clinical-records/`).
  private var wanted: Set<String> = []
  /// The first failure to write the scratch file, thrown at the end.
  private var scratchFailure: OutputError?
  /// The most bytes of records held in memory at once (tests read it).
  private(set) var mostRecordBytesInMemory = 0
  public private(set) var report = ClinicalRecordReport()

  public var runReportSection: RunReportSection? {
    RunReportSection(key: Self.runReportKey, value: report.jsonObject())
  }

  /// `run.json`'s `clinicalRecords`: what reading the clinical records found.
  public static let runReportKey = "clinicalRecords"

  public convenience init(transaction: OutputTransaction, destinations: [Destination], copyResources: Bool = false) {
    self.init(transaction: transaction, destinations: destinations, copyResources: copyResources, memoryLimit: 1 << 20)
  }

  /// `memoryLimit`: the most bytes of records held before they go to the scratch file.
  init(transaction: OutputTransaction, destinations: [Destination], copyResources: Bool, memoryLimit: Int) {
    self.transaction = transaction
    self.destinations = destinations
    self.copyResources = copyResources
    records = ScratchStreams(
      transaction: transaction, name: "clinical-records", memoryLimit: memoryLimit, streamChunk: memoryLimit,
      readChunk: 64 << 10)
    _ = records.addStream()
  }

  public func consume(_ element: GenericElement) {
    guard element.name == "ClinicalRecord" else { return }
    let fields = ClinicalRecordFields(element)
    recordCount += 1
    if case .success(let path) = Self.resourcePath(fields.value(of: .resourceFilePath)) { wanted.insert(path) }
    guard scratchFailure == nil else { return }
    do throws(OutputError) { try records.append(fields.encoded(), to: 0) } catch { scratchFailure = error }
    mostRecordBytesInMemory = max(mostRecordBytesInMemory, records.bytesInMemory)
  }

  public func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary] {
    if let scratchFailure { throw scratchFailure }
    defer { records.remove() }
    report.records = recordCount
    let copies =
      copyResources
      ? ContentFileNames.paths(
        for: wanted.map { Self.copyName(of: $0) }, in: Self.resourceFolder + "/{name}.json", placeholder: "{name}")
      : [:]
    var resources: [String: ClinicalRecordResource] = [:]
    var failure: OutputError?
    var listingProblem: String?
    let companions = context.exportCompanions
    if !wanted.isEmpty {
      do {
        try ExportInput.forEachFile(of: companions, in: Self.resourceFolder) { stream in
          guard failure == nil, wanted.contains(stream.relativePath), resources[stream.relativePath] == nil else {
            return
          }
          var resource = ClinicalRecordResource()
          switch Self.readWhole(stream) {
          case .failure(let problem):
            resource.problem = problem.description
          case .success(let bytes):
            do throws(FHIRResourceProblem) {
              let summary = try FHIRResourceSummary.summarize(bytes)
              resource.summary = summary
              report.resourcesRead += 1
              report.controlCharactersReplaced += summary.replacedControlCharacters
            } catch {
              resource.problem = error.description
            }
            if let copy = copies[Self.copyName(of: stream.relativePath)] {
              do throws(OutputError) {
                // Medical records: readable by their owner only.
                let file = try transaction.create(copy, ownerOnly: true)
                try file.write(bytes)
                try file.close()
                resource.copy = copy
                report.resourcesCopied += 1
              } catch {
                failure = error
              }
            }
          }
          resources[stream.relativePath] = resource
        }
      } catch {
        if let machine = MartContext.machineFailure(error) { throw machine }
        listingProblem = error.description
      }
    }
    if let failure { throw failure }
    var missing = "missing: the export holds no such file"
    if case .unavailable(let why) = companions { missing = "not read: \(why)" }
    if let listingProblem { missing = "not reached: \(listingProblem)" }

    var writers: [RowWriter<ClinicalRecordRow>] = []
    for destination in destinations {
      writers.append(
        try context.writer(ClinicalRecordTables.records, file: destination.file, format: destination.format))
    }
    var pending: [UInt8] = []
    try records.read(0) { (piece) throws(OutputError) in
      pending.append(contentsOf: piece)
      var start = 0
      while let (fields, end) = ClinicalRecordFields.decode(pending, from: start) {
        start = end
        let resource: ClinicalRecordResource
        switch Self.resourcePath(fields.value(of: .resourceFilePath)) {
        case .success(let relative): resource = resources[relative] ?? ClinicalRecordResource(problem: missing)
        case .failure(let problem): resource = ClinicalRecordResource(problem: problem.description)
        }
        if resource.problem != nil { report.resourceProblems += 1 }
        let row = ClinicalRecordRow(fields: fields, resource: resource)
        for index in writers.indices { try writers[index].append(row) }
      }
      pending.removeFirst(start)
    }
    var written: [OutputSummary] = []
    for writer in writers { written.append(try writer.close()) }
    return written
  }

  /// `resourceFilePath` (`/clinical-records/Observation-….json`) as a path relative to the main
  /// XML's folder. Only a file directly in `clinical-records/` is a resource: any other path
  /// (`../../x`, `/etc/passwd`, a subfolder) is never looked up, let alone opened or copied.
  static func resourcePath(_ written: String?) -> Result<String, FHIRResourceProblem> {
    guard let written, !written.isEmpty else {
      return .failure(FHIRResourceProblem(description: "no resourceFilePath"))
    }
    var path = Substring(written)
    if path.first == "/" { path = path.dropFirst() }
    let parts = path.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, parts[0] == Substring(resourceFolder), !parts[1].isEmpty, parts[1] != ".",
      parts[1] != "..", !parts[1].unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
    else {
      return .failure(
        FHIRResourceProblem(
          description: "resourceFilePath '\(PrintableExcerpt.of(written))' is not a file in "
            + "\(resourceFolder)/; not read"))
    }
    return .success(String(path))
  }

  /// The `{name}` of a resource's copy: its file name without `.json` (`Observation-1`); any
  /// other file name whole, with a `/` after it, which no file name holds, so that `A.json`, `A`
  /// and `A.JSON` are three names and get three copies (ContentFileNames hashes the last two).
  static func copyName(of relativePath: String) -> String {
    let base = relativePath.split(separator: "/").last.map(String.init) ?? relativePath
    return base.hasSuffix(".json") ? String(base.dropLast(5)) : base + "/"
  }

  /// The whole file, or why not: larger than `largestResource`, or unreadable.
  static func readWhole(_ stream: ExportFileStream) -> Result<[UInt8], FHIRResourceProblem> {
    var bytes: [UInt8] = []
    let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
    defer { chunk.deallocate() }
    while true {
      let got: Int
      do throws(ExtractError) { got = try stream.read(into: chunk) } catch {
        return .failure(FHIRResourceProblem(description: error.description))
      }
      if got == 0 { return .success(bytes) }
      guard bytes.count + got <= largestResource else {
        return .failure(
          FHIRResourceProblem(
            description: "larger than \(largestResource >> 20) MB, more than any FHIR resource; not read"))
      }
      bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<got]))
    }
  }
}
