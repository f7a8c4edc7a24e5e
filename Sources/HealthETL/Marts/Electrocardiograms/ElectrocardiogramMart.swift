import HealthExtract
import HealthModel

/// What reading the ECG files found (`run.json`'s `electrocardiograms`).
public struct ElectrocardiogramReport: Sendable, Equatable {
  /// CSV files looked at (one folder below the main XML).
  public var files = 0
  /// Recording rows written.
  public var recordings = 0
  /// Sample rows written.
  public var samples = 0
  /// Files that look like an ECG but cannot be read as one, or that broke off part-way.
  public var malformed = 0
  /// CSV files whose header has neither a date nor a sample rate: not ECGs, not read further.
  public var notECG = 0
  /// Their names, in the order read (at most `listLimit`).
  public var notECGFiles: [String] = []
  /// Every malformed file with what was wrong, in the order read (at most `listLimit`).
  public var problems: [Problem] = []

  public struct Problem: Sendable, Equatable {
    public var file: String
    public var problem: String
  }

  static let listLimit = 20

  /// The one line `healthetl run` prints when files were malformed (a name from the export with
  /// its control characters made `?`, so it stays one line); nil when none was.
  public var summaryLine: String? {
    guard let first = problems.first else { return nil }
    return "\(malformed) ECG file\(malformed == 1 ? "" : "s") not read whole (first: "
      + "\(PrintableExcerpt.of(first.file, limit: 120)): \(PrintableExcerpt.of(first.problem, limit: 200))); see run.json"
  }

  public func jsonObject() -> [String: Any] {
    [
      "files": files, "recordings": recordings, "samples": samples, "malformedFiles": malformed,
      "notECGFiles": notECG, "notECG": Array(notECGFiles.prefix(Self.listLimit)),
      "problems": problems.prefix(Self.listLimit).map { ["file": $0.file, "problem": $0.problem] },
    ]
  }
}

/// The first seconds of one of the latest recordings, for the report page.
struct ElectrocardiogramPreview: Sendable, Equatable {
  var recorded: Instant
  var classification: String?
  var sampleRate: Double
  /// The first samples, µV.
  var microvolts: [Double]
}

/// Reads the export's ECG files after the parse (Pipelines/README.md, "Electrocardiograms") and
/// writes a row per recording and a row per sample. Files are streamed one after another; only
/// the current line of a file and, for the report, the first seconds of the latest few recordings
/// are held.
public final class ElectrocardiogramMart: OutputStage {
  public enum Table: String, MartTable {
    case recordings, samples

    public var schema: TableSchema {
      switch self {
      case .recordings: return ElectrocardiogramTables.recordings
      case .samples: return ElectrocardiogramTables.samples
      }
    }
  }
  public typealias Destination = TableDestination<Table>

  /// Recordings the report shows, and how much of each.
  static let previewRecordings = 3
  static let previewSeconds = 3.0
  static let previewSampleLimit = 2048

  private let transaction: OutputTransaction
  private let destinations: [Destination]
  /// Whether the report page wants `previews`.
  var wantsPreviews = false
  public private(set) var report = ElectrocardiogramReport()
  /// The latest `previewRecordings` recordings' first seconds, latest first.
  private(set) var previews: [ElectrocardiogramPreview] = []

  public init(transaction: OutputTransaction, destinations: [Destination]) {
    self.transaction = transaction
    self.destinations = destinations
  }

  /// Which files are looked at: every `.csv` file one folder below the main XML, whatever the
  /// folder is called (`electrocardiograms/` in English exports, localised in others); the
  /// header block then says whether it is an ECG.
  static func isCandidate(_ relativePath: String) -> Bool {
    relativePath.lowercased().hasSuffix(".csv")
  }

  public func finish(_ context: StageContext) throws(OutputError) -> [OutputSummary] {
    var recordingWriters: [TableWriter] = []
    var sampleWriters: [TableWriter] = []
    for destination in destinations {
      let writer = try TableWriter(
        transaction, path: destination.file, columns: destination.table.schema.columns, format: destination.format,
        zone: context.zone.rules,
        byteOrderMark: context.settings.csvByteOrderMark, encodeOnThread: destination.table == .samples)
      if destination.table == .recordings { recordingWriters.append(writer) } else { sampleWriters.append(writer) }
    }
    let companions =
      context.input.map(ExportInput.companions(of:))
      ?? .unavailable(reason: "the run was not told where the export is")
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
      addProblem(file: "electrocardiograms", error.description)
    }
    if let failure { throw failure }
    var written: [OutputSummary] = []
    for writer in recordingWriters + sampleWriters { written.append(try writer.close()) }
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
    _ stream: ExportFileStream, recordings: inout [TableWriter], samples: inout [TableWriter]
  ) throws(OutputError) {
    report.files += 1
    let file = stream.relativePath
    var recording: ElectrocardiogramHeader?
    var headerProblem: String?
    var preview: [Double]?
    var failure: OutputError?
    var index = 0
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
        index += 1
        if preview != nil, offset < Self.previewSeconds, preview!.count < Self.previewSampleLimit {
          preview!.append(microvolts)
        }
        do throws(OutputError) {
          for position in samples.indices {
            try samples[position].append([.text(file), .number(offset), .number(microvolts)])
          }
        } catch {
          failure = error
        }
      })
    if let failure { throw failure }
    guard let recording else {
      if !(result.header.map(ElectrocardiogramHeader.looksLikeECG) ?? false) {
        report.notECG += 1
        if report.notECGFiles.count < ElectrocardiogramReport.listLimit { report.notECGFiles.append(file) }
        return
      }
      addProblem(file: file, headerProblem ?? result.problem ?? "no header")
      return
    }
    if let problem = result.problem { addProblem(file: file, problem) }
    report.recordings += 1
    report.samples += result.samples
    let row: [Field] = [
      .instant(recording.recorded), .instant(recording.recorded), .text(file), .text(recording.classification),
      .text(recording.symptoms), .number(recording.sampleRate), .integer(result.samples),
      .number(Double(result.samples) / recording.sampleRate), .number(recording.averageHeartRate),
      .text(recording.device), .text(recording.softwareVersion), .text(recording.lead), .text(recording.unit),
      .text(result.problem),
    ]
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

/// The values of an ECG file's header block that a row needs, checked.
struct ElectrocardiogramHeader {
  var recorded: Instant
  var classification: String?
  var symptoms: String?
  var sampleRate: Double
  var averageHeartRate: Double?
  var device: String?
  var softwareVersion: String?
  var lead: String?
  var unit: String?

  struct Problem: Error, CustomStringConvertible {
    var description: String
  }

  /// Highest sample rate taken as true: the Watch records at 512 Hz, clinical ECGs at up to a few kHz.
  static let fastestSampleRate = 20_000.0

  /// Whether a header block is an ECG's, however broken: it has a date or a sample rate. Other
  /// CSV files that happen to lie one folder below the export are none of HealthETL's business.
  static func looksLikeECG(_ header: ECGHeader) -> Bool {
    header.recordedDate.flatMap { HealthDateParser.parse($0) } != nil || header.sampleRate.flatMap(leadingNumber) != nil
  }

  static func make(_ header: ECGHeader) -> Result<ElectrocardiogramHeader, Problem> {
    guard let date = header.recordedDate else {
      return .failure(Problem(description: "no Recorded Date line before the first sample; not an ECG file"))
    }
    guard let recorded = HealthDateParser.parse(date)?.instant else {
      return .failure(
        Problem(
          description: "Recorded Date '\(PrintableExcerpt.of(date))' is not a date like 2024-03-20 08:15:32 +0100"))
    }
    guard let rateText = header.sampleRate else {
      return .failure(Problem(description: "no Sample Rate line before the first sample; not an ECG file"))
    }
    guard let rate = leadingNumber(rateText), rate > 0, rate <= fastestSampleRate else {
      return .failure(
        Problem(
          description: "Sample Rate '\(PrintableExcerpt.of(rateText))' is not a rate such as 512 hertz (1 – 20,000 Hz)")
      )
    }
    if let unit = header.unit, !["µv", "μv", "uv"].contains(unit.lowercased()) {
      return .failure(Problem(description: "Unit '\(PrintableExcerpt.of(unit))': only samples in µV are read"))
    }
    return .success(
      ElectrocardiogramHeader(
        recorded: recorded, classification: header.classification, symptoms: header.symptoms, sampleRate: rate,
        averageHeartRate: header.averageHeartRate.flatMap(leadingNumber), device: header.device,
        softwareVersion: header.softwareVersion, lead: header.lead, unit: header.unit))
  }

  /// The number a value starts with (`512 hertz` → 512, `72,5 BPM` → 72.5); nil when it starts
  /// with none.
  static func leadingNumber(_ text: String) -> Double? {
    let number = text.prefix { $0.isASCII && ($0.isNumber || $0 == "." || $0 == ",") }
    guard !number.isEmpty else { return nil }
    return ECGReader.number(Array(number.utf8)[...])
  }

}
