public import HealthModel

/// What `SyntheticExportGenerator.write` makes: how many days, from when, from which seed, and in what form.
public struct SyntheticExportOptions: Sendable {
  /// Days of data, each a local calendar day in Europe/Berlin starting at `start`.
  public var days: Int
  /// The first local day. The default range crosses Europe's 2024-03-31 spring-forward.
  public var start: CivilDate
  /// Same seed, same options: byte-identical output.
  public var seed: UInt64
  /// When set, the number of days is chosen so that export.xml comes to about this many
  /// megabytes (10^6 bytes, within ±10 %); overrides `days`.
  public var targetMegabytes: Int?
  /// Write `export.zip` (as the iPhone does) instead of a bare XML file.
  public var zip: Bool
  /// When set, the number of days is chosen so that the export holds exactly this many workout
  /// routes, and every route file holds a point a second, as the Watch records them (a long
  /// history of outdoor workouts); overrides `days` and `targetMegabytes`.
  public var routes: Int? = nil
  /// Whose export: the Watch user (the default) or another shape of real export.
  public var profile = SampleProfile.watch
  /// ECG recordings written beside the export (30 s at 512 Hz each, spread over the days), in
  /// the folder and language of `ecgLocale`. None by default, so the bundled sample stays as it is.
  public var ecgs = 0
  public var ecgLocale = ECGLocale.english

  /// The defaults make four weeks from Monday 2024-03-18 (crossing the 2024-03-31 spring-forward),
  /// seed 1, a bare XML file.
  public init(
    days: Int = 28, start: CivilDate = CivilDate(year: 2024, month: 3, day: 18), seed: UInt64 = 1,
    targetMegabytes: Int? = nil, zip: Bool = false
  ) {
    self.days = days
    self.start = start
    self.seed = seed
    self.targetMegabytes = targetMegabytes
    self.zip = zip
  }
}

/// What was written, counted while writing.
public struct SampleExportStats: Sendable, Equatable {
  /// Bytes of export.xml (uncompressed, also when zipped).
  public var xmlBytes: Int64
  /// Element name → occurrences written. Every occurrence counts: `Record` includes the records
  /// inside each `Correlation` as well as the top-level ones.
  public var elements: [String: Int]
  /// Record type short name (`StepCount`, `SleepAnalysis`) → top-level `Record` count.
  public var records: [String: Int]
  /// Days of data written.
  public var days: Int
  /// GPX route files written (one per `WorkoutRoute`).
  public var routeFiles: Int
  /// ECG CSV files written (`SyntheticExportOptions.ecgs`).
  public var ecgFiles = 0

  /// Stats as counted by the generator (public so that callers can build expected values).
  public init(xmlBytes: Int64, elements: [String: Int], records: [String: Int], days: Int, routeFiles: Int) {
    self.xmlBytes = xmlBytes
    self.elements = elements
    self.records = records
    self.days = days
    self.routeFiles = routeFiles
  }
}

/// Why a sample export could not be written.
public enum SampleExportError: Error, CustomStringConvertible, Equatable {
  /// The options make no export (for example zero days).
  case invalidOptions(String)
  /// A file or folder could not be created.
  case cannotCreate(path: String, reason: String)
  /// Writing failed part-way (disk full, I/O error).
  case writeFailed(path: String, reason: String)
  /// The Europe/Berlin rules could not be read from the system tz database.
  case timeZoneUnavailable(String)

  /// One sentence for the user, naming the path and the reason.
  public var description: String {
    switch self {
    case .invalidOptions(let reason): return "invalid sample options: \(reason)"
    case .cannotCreate(let path, let reason): return "cannot create \(path): \(reason)"
    case .writeFailed(let path, let reason): return "cannot write \(path): \(reason)"
    case .timeZoneUnavailable(let reason): return "cannot load the Europe/Berlin time zone: \(reason)"
    }
  }
}
