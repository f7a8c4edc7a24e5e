import Foundation

/// The UTC offsets of one time zone over time, read once per run from the system tz database
/// (`/usr/share/zoneinfo`, or `$TZDIR`), so that per-record code asks a sorted table instead of
/// `TimeZone`/`Calendar`.
public struct ZoneRules: Sendable, Hashable {
  /// The IANA name (`Europe/Berlin`) or, for a fixed zone, `UTC+09:00`.
  public let identifier: String
  /// Instants (epoch seconds) at which `offsets[i + 1]` takes over.
  let transitions: [Int64]
  /// `offsets[0]` holds before the first transition.
  let offsets: [Int32]

  init(identifier: String, transitions: [Int64], offsets: [Int32]) {
    precondition(offsets.count == transitions.count + 1)
    self.identifier = identifier
    self.transitions = transitions
    self.offsets = offsets
  }

  /// Coordinated Universal Time.
  public static let utc = ZoneRules(identifier: "UTC", transitions: [], offsets: [0])

  /// A zone that is always `offsetSeconds` east of UTC.
  public static func fixed(offsetSeconds: Int32) -> ZoneRules {
    if offsetSeconds == 0 { return .utc }
    var text: [UInt8] = Array("UTC".utf8)
    LocalTimeFormatter.appendOffset(offsetSeconds, to: &text)
    return ZoneRules(
      identifier: String(decoding: text, as: UTF8.self), transitions: [], offsets: [offsetSeconds])
  }

  /// Whether the zone never changes its offset.
  public var isFixed: Bool { transitions.isEmpty }

  /// Seconds east of UTC in force at `instant`.
  @inlinable public func offset(at instant: Instant) -> Int32 {
    offsetsTable[indexOfInterval(containing: instant.seconds)]
  }

  @usableFromInline var offsetsTable: [Int32] { offsets }

  @usableFromInline func indexOfInterval(containing t: Int64) -> Int {
    var low = 0
    var high = transitions.count
    while low < high {
      let mid = (low + high) >> 1
      if transitions[mid] <= t { low = mid + 1 } else { high = mid }
    }
    return low
  }

  /// The wall-clock seconds (local epoch seconds) at `instant`.
  public func localSeconds(at instant: Instant) -> Int64 { instant.seconds + Int64(offset(at: instant)) }

  /// The local calendar date at `instant`.
  public func localDate(at instant: Instant) -> CivilDate {
    CivilDate(daysSinceEpoch: floorDiv(localSeconds(at: instant), 86_400))
  }

  /// The earliest instant whose wall clock reads `local` (local epoch seconds) or later.
  ///
  /// When `local` falls in a spring-forward gap, that is the instant of the transition; when it
  /// occurs twice (fall back), the first occurrence.
  public func firstInstant(atOrAfterLocal local: Int64) -> Instant {
    let window: Int64 = 30 * 3600
    let from = indexOfInterval(containing: local - window)
    let to = indexOfInterval(containing: local + window)
    var best: Int64?
    for index in from...to {
      let o = Int64(offsets[index])
      let t = local - o
      if indexOfInterval(containing: t) == index, best.map({ t < $0 }) ?? true { best = t }
    }
    if let best { return Instant(seconds: best) }
    // In a gap: the transition after which the wall clock has passed `local`.
    for index in max(from, 1)...to where transitions[index - 1] + Int64(offsets[index]) > local {
      return Instant(seconds: transitions[index - 1])
    }
    return Instant(seconds: local - Int64(offsets[to]))
  }
}

/// Why a zone could not be used.
public enum ZoneError: Error, Equatable, CustomStringConvertible {
  case unknown(String)
  case unreadable(String, path: String)
  /// The tz database folder is missing or holds no zones (a `TZDIR` pointing nowhere).
  case databaseMissing(path: String)
  /// The zone's file could not be opened for want of a file descriptor (`EMFILE`, `ENFILE`):
  /// the machine's limit, not an unknown zone.
  case tooManyOpenFiles(path: String)

  public var description: String {
    switch self {
    case .databaseMissing(let path):
      return
        "the time zone database \(path) is missing or holds no zones (no UTC in it), so no zone can be looked up and a fixed offset would shift every daylight-saving period by an hour. Install the tzdata package, or point TZDIR at a zoneinfo folder (or unset it for /usr/share/zoneinfo)."
    case .unknown(let name):
      // The name comes from a file or the command line and may be megabytes long.
      let excerpt = name.count <= 80 ? name : String(name.prefix(77)) + "…"
      return "unknown time zone '\(excerpt)': use an IANA name such as Europe/Berlin or America/New_York, or 'auto'"
    case .unreadable(let name, let path):
      return "time zone '\(name)' could not be read from \(path): is the tzdata package installed?"
    case .tooManyOpenFiles(let path):
      return
        "too many open files (opening \(path)): this process reached its limit of open files. Raise the limit (ulimit -n) and run again."
    }
  }
}

extension ZoneRules {
  /// The folder holding the system tz database.
  public static var databaseDirectory: String {
    ProcessInfo.processInfo.environment["TZDIR"] ?? "/usr/share/zoneinfo"
  }

  /// Whether the tz database folder holds zones at all: every tzdata ships `UTC`.
  public static var databaseIsUsable: Bool { access(databaseDirectory + "/UTC", R_OK) == 0 }

  /// Loads `name` (`Europe/Berlin`, `UTC`) from the system tz database.
  public static func load(_ name: String) throws(ZoneError) -> ZoneRules {
    let allowed = name.utf8.allSatisfy { byte in
      (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
        || byte == 0x2F || byte == 0x5F || byte == 0x2D || byte == 0x2B
    }
    guard !name.isEmpty, allowed, !name.hasPrefix("/"), !name.contains(".."), name.utf8.count < 100 else {
      throw .unknown(name)
    }
    let path = databaseDirectory + "/" + name
    let data: [UInt8]
    switch Self.contents(of: path) {
    case .success(let bytes): data = bytes
    case .failure(let failure):
      if failure.code == EMFILE || failure.code == ENFILE { throw .tooManyOpenFiles(path: path) }
      // A name is unknown only to a database that exists; otherwise every name would be.
      guard databaseIsUsable else { throw .databaseMissing(path: databaseDirectory) }
      throw .unknown(name)
    }
    guard let rules = TZifDecoder.decode(data, identifier: name) else {
      throw .unreadable(name, path: path)
    }
    return rules
  }

  /// A zone file's bytes (a few KB), or the errno of the open or read that failed.
  private static func contents(of path: String) -> Result<[UInt8], SystemCode> {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return .failure(SystemCode(errno)) }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let got = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if got < 0 && errno == EINTR { continue }
      guard got >= 0 else { return .failure(SystemCode(errno)) }
      if got == 0 { return .success(bytes) }
      bytes.append(contentsOf: chunk[..<got])
    }
  }

  /// An errno as an error.
  private struct SystemCode: Error {
    let code: Int32
    init(_ code: Int32) { self.code = code }
  }
}
