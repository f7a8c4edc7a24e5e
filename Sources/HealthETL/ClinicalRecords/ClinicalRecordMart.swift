import HealthExtract
import HealthModel
import RunExecution

/// One row per `ClinicalRecord` element with a summary of its FHIR resource file
/// (Pipelines/docs/clinical-records.md, "Clinical records"). While the export streams, each element's attributes
/// go to a scratch file — 100,000 records with long URLs held as elements took 320 MB — and only
/// the distinct resource paths they name stay in memory. Meanwhile, from when the export is
/// opened, the files of `clinical-records/` are read on a thread of their own
/// (`CompanionFileReadAhead`), each whole up to `largestResource` bytes and summarized there, its
/// bytes spooled only when copies are asked for. Which of them the records name is known only at
/// the end, so the finish takes each named file's summary (the first of a name), copies it into
/// the output folder when asked, and writes the rows last, the records read back in order.
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
  /// The resource files, read since the export was opened (`exportOpened`); nil before, and
  /// after the finish took them.
  private var files: CompanionFileReadAhead<UInt8, ResourceNote>?
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

  /// The resource files are read from now on, on a thread of their own; a spool file that
  /// cannot be made now is tried again, and reported, in the finish.
  public func exportOpened(_ export: OpenedExport) {
    guard files == nil, export.mayStart("clinical") else { return }
    files = try? Self.startReading(
      export.companions, spoolingBytes: copyResources, executor: export.executor, transaction: export.transaction)
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
    var listingProblem: String?
    let companions = context.exportCompanions
    // Taken only when a record names a file; else the reader stops unread (`deinit`).
    let started = files
    files = nil
    if !wanted.isEmpty {
      let files: CompanionFileReadAhead<UInt8, ResourceNote>
      if let started {
        files = started
      } else {
        files = try Self.startReading(
          companions, spoolingBytes: copyResources, executor: context.executor, transaction: context.transaction)
      }
      /// The named files no file of that name has come for yet: the first one is taken.
      var notYetTaken = wanted
      /// The file being taken, when a record names it.
      var taken: (path: String, resource: ClinicalRecordResource, copy: String?, bytes: [UInt8])?
      reading: while true {
        switch try files.next() {
        case .file(let path):
          taken = notYetTaken.remove(path) == nil ? nil : (path, ClinicalRecordResource(), nil, [])
        case .note(.unread(let problem)):
          guard let file = taken else { continue }
          resources[file.path] = ClinicalRecordResource(problem: problem.description)
          taken = nil
        case .note(.read(let summarized)):
          guard var file = taken else { continue }
          switch summarized {
          case .success(let summary):
            file.resource.summary = summary
            report.resourcesRead += 1
            report.controlCharactersReplaced += summary.replacedControlCharacters
          case .failure(let problem):
            file.resource.problem = problem.description
          }
          file.copy = copies[Self.copyName(of: file.path)]
          resources[file.path] = file.resource
          taken = file
        case .records(let bytes):
          if taken?.copy != nil { taken!.bytes += bytes }
        case .note(.end):
          if let file = taken, let copy = file.copy {
            // Medical records: readable by their owner only.
            let output = try transaction.create(copy, ownerOnly: true)
            try output.write(file.bytes)
            try output.close()
            resources[file.path]!.copy = copy
            report.resourcesCopied += 1
          }
          taken = nil
        case .listingFailed(let error):
          if let machine = MartContext.machineFailure(error) { throw machine }
          listingProblem = error.description
        case .end:
          break reading
        }
      }
    }
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

  /// What the reading thread notes of a resource file; its bytes follow `read` as records when
  /// they are spooled, and `end` closes a file that was read.
  enum ResourceNote: Sendable {
    case unread(FHIRResourceProblem)
    case read(Result<FHIRResourceSummary, FHIRResourceProblem>)
    case end

    /// Its strings' bytes: a summary's values are as long as the resource wrote them (up to
    /// `largestResource`), so thousands waiting must be weighed, not counted.
    var bytesInMemory: Int {
      switch self {
      case .unread(let problem), .read(.failure(let problem)): return problem.description.utf8.count
      case .read(.success(let summary)):
        return [summary.resourceType, summary.codeSystem, summary.code, summary.display, summary.effective]
          .reduce(0) { $0 + ($1?.utf8.count ?? 0) }
      case .end: return 0
      }
    }
  }

  /// Starts reading every file directly in `clinical-records/` on a dedicated thread of
  /// `executor`: each is summarized there, and its bytes spooled when `spoolingBytes` (copies).
  static func startReading(
    _ companions: ExportInput.Companions, spoolingBytes: Bool, executor: RunExecutor, transaction: OutputTransaction
  ) throws(OutputError) -> CompanionFileReadAhead<UInt8, ResourceNote> {
    try .start(
      .inFolder(resourceFolder), of: companions, chunkRecords: 64 << 10,
      scratchFolder: try transaction.scratchDirectory(), meter: transaction.meter, name: "clinical",
      noteBytes: \.bytesInMemory, on: executor
    ) { stream, note, record in
      switch readWhole(stream) {
      case .failure(let problem):
        note(.unread(problem))
      case .success(let bytes):
        note(.read(Result { () throws(FHIRResourceProblem) in try FHIRResourceSummary.summarize(bytes) }))
        if spoolingBytes {
          for byte in bytes where !record(byte) { return }
        }
        note(.end)
      }
    }
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
