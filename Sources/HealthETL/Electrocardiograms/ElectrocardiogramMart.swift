import HealthExtract
public import HealthModel

/// The first seconds of one of the latest recordings, for the report page.
public struct ElectrocardiogramPreview: Sendable, Equatable {
  public var recorded: Instant
  public var classification: String?
  public var sampleRate: Double
  /// The first samples, µV.
  public var microvolts: [Double]
}

/// Reads the export's ECG files after the parse (Pipelines/docs/electrocardiograms.md, "Electrocardiograms") and
/// writes a row per recording and a row per sample. Files are streamed one after another; only
/// the current line of a file and, for the report, the first seconds of the latest few recordings
/// are held.
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

  /// - Parameter wantsPreviews: whether to keep the latest recordings' first seconds, for the
  ///   report's chart.
  public init(destinations: [Destination], wantsPreviews: Bool = false) {
    self.destinations = destinations
    self.wantsPreviews = wantsPreviews
  }

  public var provides: [ProductKey] { [ProductKey(ElectrocardiogramPreviews.self)] }

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
    var failure: OutputError?
    do {
      try ExportInput.forEachFileInSubfolders(of: companions, where: Self.isCandidate) { stream in
        guard failure == nil else { return }
        do throws(OutputError) {
          try read(stream, recordings: &recordingWriters, samples: &sampleWriters)
        } catch {
          failure = error
        }
      }
    } catch {
      if let machine = MartContext.machineFailure(error) { throw machine }
      addProblem(file: "electrocardiograms", error.description)
    }
    if let failure { throw failure }
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

  /// One file: its samples as they stream, then its row.
  private func read(
    _ stream: ExportFileStream, recordings: inout [RowWriter<ElectrocardiogramRecordingRow>],
    samples: inout [RowWriter<ElectrocardiogramSampleRow>]
  ) throws(OutputError) {
    report.files += 1
    let file = stream.relativePath
    var recording: ElectrocardiogramHeader?
    var headerProblem: String?
    var preview: [Double]?
    var failure: OutputError?
    var index = 0
    var cutSamples = 0
    let result = ECGReader.read(
      stream,
      header: { header in
        switch ElectrocardiogramHeader.make(header) {
        case .success(let made):
          recording = made
          if wantsPreviews, isAmongLatest(made.recorded) { preview = [] }
          return true
        case .failure(let problem):
          headerProblem = problem.description
          return false
        }
      },
      sample: { microvolts in
        guard failure == nil, let recording else { return }
        let offset = Double(index) / recording.sampleRate
        guard offset < Self.longestRecordingSeconds else {
          cutSamples += 1
          return
        }
        index += 1
        if preview != nil, offset < Self.previewSeconds, preview!.count < Self.previewSampleLimit {
          preview!.append(microvolts)
        }
        do throws(OutputError) {
          let row = ElectrocardiogramSampleRow(recording: file, offset: offset, microvolts: microvolts)
          for position in samples.indices { try samples[position].append(row) }
        } catch {
          failure = error
        }
      })
    if let failure { throw failure }
    report.controlCharactersReplaced += result.replacedControlCharacters
    guard let recording else {
      if !(result.header.map(ElectrocardiogramHeader.looksLikeECG) ?? false) {
        report.notECG += 1
        if report.notECGFiles.count < ElectrocardiogramReport.listLimit { report.notECGFiles.append(file) }
        return
      }
      addProblem(file: file, headerProblem ?? result.problem ?? "no header")
      return
    }
    var problem = result.problem
    if cutSamples > 0 {
      let rate = recording.sampleRate
      let hertz = rate == rate.rounded() ? String(Int(rate)) : String(rate)
      problem =
        "cut at \(Int(Self.longestRecordingSeconds)) s (\(index) samples at \(hertz) Hz): longer "
        + "than any ECG a device records; \(cutSamples) samples after it not written"
        + (result.problem.map { "; then \($0)" } ?? "")
    }
    if let problem { addProblem(file: file, problem) }
    report.recordings += 1
    report.samples += index
    let row = ElectrocardiogramRecordingRow(file: file, header: recording, samples: index, problem: problem)
    for position in recordings.indices { try recordings[position].append(row) }
    if let preview {
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
