import HealthExtract
public import HealthModel
import RunExecution

/// The first seconds of one of the latest recordings, for the report page.
public struct ElectrocardiogramPreview: Sendable, Equatable {
  public var recorded: Instant
  public var classification: String?
  public var sampleRate: Double
  /// The first samples, µV.
  public var microvolts: [Double]
}

/// Reads the export's ECG files (Pipelines/docs/electrocardiograms.md, "Electrocardiograms") while
/// the export is parsed, and writes a row per recording and a row per sample after it. Files are
/// streamed one after another on a thread of their own, their samples spooled
/// (`CompanionFileReadAhead`); only the current line of a file and, for the report, the first
/// seconds of the latest few recordings are held.
public final class ElectrocardiogramMart: Mart {
  public enum Table: String, MartTable {
    case recordings, samples

    public var schema: TableSchema {
      switch self {
      case .recordings: return ElectrocardiogramTables.recordings.schema
      case .samples: return ElectrocardiogramTables.samples.schema
      }
    }
  }
  public typealias Destination = TableDestination<Table>

  /// Recordings the report shows, and how much of each.
  static let previewRecordings = 3
  static let previewSeconds = 3.0
  static let previewSampleLimit = 2048
  /// The longest recording kept: 4 times the 30 s the Watch's ECG app records, so that a longer
  /// recording of a future device still fits, while a file of millions of sample lines (a 9 KB zip
  /// member can hold 3 million) writes at most this many seconds: 61,440 samples at the Watch's
  /// 512 Hz, 2,400,000 at the highest rate read (20,000 Hz). Pipelines/docs/electrocardiograms.md, "Electrocardiograms".
  static let longestRecordingSeconds = 120.0

  private let destinations: [Destination]
  /// Whether a reader wants `previews` (`ElectrocardiogramPreviews`).
  private(set) var wantsPreviews: Bool
  public private(set) var report = ElectrocardiogramReport()
  /// The latest `previewRecordings` recordings' first seconds, latest first.
  private(set) var previews: [ElectrocardiogramPreview] = []
  /// The files, read since the export was opened (`exportOpened`); nil before, and after the
  /// finish took them.
  private var files: CompanionFileReadAhead<Double, FileNote>?

  /// - Parameter wantsPreviews: whether to keep the latest recordings' first seconds, for the
  ///   report's chart.
  public init(destinations: [Destination], wantsPreviews: Bool = false) {
    self.destinations = destinations
    self.wantsPreviews = wantsPreviews
  }

  public var provides: [ProductKey] { [ProductKey(ElectrocardiogramPreviews.self)] }

  /// The ECG files are read from now on, on a thread of their own; a spool file that cannot be
  /// made now is tried again, and reported, in the finish.
  public func exportOpened(_ export: OpenedExport) {
    guard files == nil, export.mayStart("ecg") else { return }
    files = try? Self.startReading(export.companions, executor: export.executor, transaction: export.transaction)
  }

  public func prepare(requests: ProductRequests) {
    if requests.isRead(ElectrocardiogramPreviews.self) { wantsPreviews = true }
  }

  public var runReportSection: RunReportSection? {
    RunReportSection(key: Self.runReportKey, value: report.jsonObject(), summaryLine: report.summaryLine)
  }

  /// `run.json`'s `electrocardiograms`: what reading the ECG files found.
  public static let runReportKey = "electrocardiograms"

  /// Which files are looked at: every `.csv` file one folder below the main XML, whatever the
  /// folder is called (`electrocardiograms/` in English exports, localised in others); the
  /// header block then says whether it is an ECG.
  static func isCandidate(_ relativePath: String) -> Bool {
    relativePath.lowercased().hasSuffix(".csv")
  }

  /// The files this mart reads, for "What was not read": the candidates one folder below.
  static let filesRead = ExportFileClaim("*/*.csv") { path in
    path.split(separator: "/", omittingEmptySubsequences: false).count == 2 && isCandidate(path)
  }

  public func finish(_ context: MartContext) throws(OutputError) -> [OutputSummary] {
    var recordingWriters: [RowWriter<ElectrocardiogramRecordingRow>] = []
    var sampleWriters: [RowWriter<ElectrocardiogramSampleRow>] = []
    for destination in destinations {
      func writer<Row>(_ table: RowTable<Row>) throws(OutputError) -> RowWriter<Row> {
        try context.writer(
          table, file: destination.file, format: destination.format, encodeOnThread: destination.table == .samples)
      }
      switch destination.table {
      case .recordings: recordingWriters.append(try writer(ElectrocardiogramTables.recordings))
      case .samples: sampleWriters.append(try writer(ElectrocardiogramTables.samples))
      }
    }
    let companions = context.exportCompanions
    let files: CompanionFileReadAhead<Double, FileNote>
    if let started = self.files {
      files = started
    } else {
      files = try Self.startReading(companions, executor: context.executor, transaction: context.transaction)
    }
    self.files = nil
    var file: FileInProgress?
    reading: while true {
      switch try files.next() {
      case .file(let path):
        report.files += 1
        file = FileInProgress(path: path)
      case .note(.header(let made)):
        switch made {
        case .success(let recording):
          file?.recording = recording
          if wantsPreviews, isAmongLatest(recording.recorded) { file?.preview = [] }
        case .failure(let problem):
          file?.headerProblem = problem.description
        }
      case .records(let microvolts):
        guard file != nil else { continue }
        for sample in microvolts { try take(sample, in: &file!, samples: &sampleWriters) }
      case .note(.end(let result, let cut)):
        if var done = file {
          done.cutSamples += cut
          try finishFile(done, result: result, recordings: &recordingWriters)
        }
        file = nil
      case .listingFailed(let error):
        if let machine = MartContext.machineFailure(error) { throw machine }
        addProblem(file: "electrocardiograms", error.description)
      case .end:
        break reading
      }
    }
    var written: [OutputSummary] = []
    for writer in recordingWriters { written.append(try writer.close()) }
    for writer in sampleWriters { written.append(try writer.close()) }
    context.products.publish(ElectrocardiogramPreviews(recordings: previews), by: self)
    return written
  }

  private func addProblem(file: String, _ problem: String) {
    report.malformed += 1
    if report.problems.count < ElectrocardiogramReport.listLimit {
      report.problems.append(.init(file: file, problem: problem))
    }
  }

  /// What the reading thread notes of an ECG file besides its samples (µV, spooled).
  enum FileNote: Sendable {
    /// The header block, checked; reading stops after a header that is not an ECG's.
    case header(Result<ElectrocardiogramHeader, ElectrocardiogramHeader.Problem>)
    /// How reading ended, and the samples past `longestRecordingSeconds`, counted and not spooled.
    case end(ECGReadResult, cutSamples: Int)

    /// Its strings' bytes: a header's values are lines of up to `ECGReader.longestHeaderLine`.
    var bytesInMemory: Int {
      func count(_ texts: String?...) -> Int { texts.reduce(0) { $0 + ($1?.utf8.count ?? 0) } }
      switch self {
      case .header(.success(let header)):
        return count(
          header.classification, header.symptoms, header.device, header.softwareVersion, header.lead, header.unit)
      case .header(.failure(let problem)): return problem.description.utf8.count
      case .end(let result, _):
        let header = result.header
        return count(
          result.problem, header?.recordedDate, header?.classification, header?.symptoms, header?.softwareVersion,
          header?.device, header?.sampleRate, header?.averageHeartRate)
      }
    }
  }

  /// Whether the sample at `index` of a recording at `sampleRate` Hz is within its longest.
  static func isKept(index: Int, sampleRate: Double) -> Bool {
    Double(index) / sampleRate < longestRecordingSeconds
  }

  /// Starts reading the candidate files (`isCandidate`) on a dedicated thread of `executor`.
  static func startReading(
    _ companions: ExportInput.Companions, executor: RunExecutor, transaction: OutputTransaction
  ) throws(OutputError) -> CompanionFileReadAhead<Double, FileNote> {
    try .start(
      .inSubfolders(where: isCandidate), of: companions, chunkRecords: 8192,
      scratchFolder: try transaction.scratchDirectory(), meter: transaction.meter, name: "ecg",
      noteBytes: \.bytesInMemory, on: executor
    ) { stream, note, record in
      var going = true
      var sampleRate = 1.0
      var kept = 0
      var cut = 0
      let result = ECGReader.read(
        stream,
        header: { header in
          let made = ElectrocardiogramHeader.make(header)
          note(.header(made))
          guard case .success(let recording) = made else { return false }
          sampleRate = recording.sampleRate
          return true
        },
        sample: { microvolts in
          // Past the longest recording only counted: a file of millions of lines spools no more.
          guard isKept(index: kept, sampleRate: sampleRate) else {
            cut += 1
            return
          }
          kept += 1
          if going { going = record(microvolts) }
        })
      if going { note(.end(result, cutSamples: cut)) }
    }
  }

  /// The file being taken: what its header said, and its samples so far.
  private struct FileInProgress {
    var path: String
    var recording: ElectrocardiogramHeader?
    var headerProblem: String?
    var preview: [Double]?
    var index = 0
    var cutSamples = 0
  }

  /// One sample of `file`, in file order, within the recording's longest (`isKept`): its row.
  private func take(
    _ microvolts: Double, in file: inout FileInProgress, samples: inout [RowWriter<ElectrocardiogramSampleRow>]
  ) throws(OutputError) {
    guard let recording = file.recording else { return }
    let offset = Double(file.index) / recording.sampleRate
    file.index += 1
    if file.preview != nil, offset < Self.previewSeconds, file.preview!.count < Self.previewSampleLimit {
      file.preview!.append(microvolts)
    }
    let row = ElectrocardiogramSampleRow(recording: file.path, offset: offset, microvolts: microvolts)
    for position in samples.indices { try samples[position].append(row) }
  }

  /// The end of `file`: its row, its problem, its preview.
  private func finishFile(
    _ file: FileInProgress, result: ECGReadResult, recordings: inout [RowWriter<ElectrocardiogramRecordingRow>]
  ) throws(OutputError) {
    report.controlCharactersReplaced += result.replacedControlCharacters
    guard let recording = file.recording else {
      if !(result.header.map(ElectrocardiogramHeader.looksLikeECG) ?? false) {
        report.notECG += 1
        if report.notECGFiles.count < ElectrocardiogramReport.listLimit { report.notECGFiles.append(file.path) }
        return
      }
      addProblem(file: file.path, file.headerProblem ?? result.problem ?? "no header")
      return
    }
    var problem = result.problem
    if file.cutSamples > 0 {
      let rate = recording.sampleRate
      let hertz = rate == rate.rounded() ? String(Int(rate)) : String(rate)
      problem =
        "cut at \(Int(Self.longestRecordingSeconds)) s (\(file.index) samples at \(hertz) Hz): longer "
        + "than any ECG a device records; \(file.cutSamples) samples after it not written"
        + (result.problem.map { "; then \($0)" } ?? "")
    }
    if let problem { addProblem(file: file.path, problem) }
    report.recordings += 1
    report.samples += file.index
    let row = ElectrocardiogramRecordingRow(file: file.path, header: recording, samples: file.index, problem: problem)
    for position in recordings.indices { try recordings[position].append(row) }
    if let preview = file.preview {
      previews.append(
        ElectrocardiogramPreview(
          recorded: recording.recorded, classification: recording.classification, sampleRate: recording.sampleRate,
          microvolts: preview))
      previews.sort { $0.recorded > $1.recorded }
      if previews.count > Self.previewRecordings { previews.removeLast() }
    }
  }

  /// Whether a recording made at `recorded` would be among the latest kept for the report.
  private func isAmongLatest(_ recorded: Instant) -> Bool {
    previews.count < Self.previewRecordings || recorded > previews[previews.count - 1].recorded
  }
}

/// The first seconds of an ECG mart's latest recordings, latest first (the report's chart): kept
/// only when a mart reads them.
public struct ElectrocardiogramPreviews: MartProduct {
  public let recordings: [ElectrocardiogramPreview]
}
