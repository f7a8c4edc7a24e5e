import Foundation

/// Why outputs could not be written.
public enum OutputError: Error, CustomStringConvertible {
  case cannotCreate(path: String, reason: String)
  case ioError(path: String, reason: String)

  public var description: String {
    switch self {
    case .cannotCreate(let path, let reason):
      return "cannot create output \(path): \(reason). Check that the folder is writable, or pass another --out."
    case .ioError(let path, let reason):
      return "I/O error writing \(path): \(reason)"
    }
  }
}

/// All files of one run, written under a private staging folder inside the output folder and
/// moved into place only by `commit()`: a run that fails or is killed leaves the previous
/// outputs untouched (the staging folder is removed on the next run).
public final class OutputTransaction {
  public let outputDirectory: String
  let stagingDirectory: String
  private var files: [(relativePath: String, stagedPath: String)] = []

  public static let stagingPrefix = ".healthetl-staging-"

  public init(outputDirectory: String) throws(OutputError) {
    self.outputDirectory = outputDirectory
    let fm = FileManager.default
    do {
      try fm.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
    } catch {
      throw .cannotCreate(path: outputDirectory, reason: Self.reason(error))
    }
    // Leftovers of killed runs.
    for name in (try? fm.contentsOfDirectory(atPath: outputDirectory)) ?? [] where name.hasPrefix(Self.stagingPrefix) {
      let pid = Int32(name.dropFirst(Self.stagingPrefix.count)) ?? 0
      if pid <= 0 || kill(pid, 0) != 0 { try? fm.removeItem(atPath: outputDirectory + "/" + name) }
    }
    stagingDirectory = outputDirectory + "/" + Self.stagingPrefix + String(getpid())
    do {
      try? fm.removeItem(atPath: stagingDirectory)
      try fm.createDirectory(atPath: stagingDirectory, withIntermediateDirectories: true)
    } catch {
      throw .cannotCreate(path: stagingDirectory, reason: Self.reason(error))
    }
  }

  /// A new staged file that will become `outputDirectory/relativePath` on commit.
  public func create(_ relativePath: String) throws(OutputError) -> OutputFile {
    let staged = stagingDirectory + "/" + relativePath
    let folder = (staged as NSString).deletingLastPathComponent
    do {
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    } catch {
      throw .cannotCreate(path: staged, reason: Self.reason(error))
    }
    let file = try OutputFile(path: staged)
    files.append((relativePath, staged))
    return file
  }

  /// Where a staged file sits until commit.
  public func stagedPath(_ relativePath: String) -> String { stagingDirectory + "/" + relativePath }

  /// A scratch file inside the staging folder that is never moved into place.
  public func createScratch(_ name: String) throws(OutputError) -> OutputFile {
    let folder = stagingDirectory + "/.scratch"
    do {
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    } catch {
      throw .cannotCreate(path: folder, reason: Self.reason(error))
    }
    return try OutputFile(path: folder + "/" + name)
  }

  /// Moves every staged file into place (each with an atomic `rename(2)`), then removes the
  /// staging folder.
  public func commit() throws(OutputError) -> [String] {
    var committed: [String] = []
    for (relative, staged) in files.sorted(by: { $0.relativePath < $1.relativePath }) {
      let target = outputDirectory + "/" + relative
      let folder = (target as NSString).deletingLastPathComponent
      do {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
      } catch {
        throw .cannotCreate(path: folder, reason: Self.reason(error))
      }
      guard rename(staged, target) == 0 else {
        throw .ioError(path: target, reason: String(cString: strerror(errno)))
      }
      committed.append(relative)
    }
    abandon()
    return committed
  }

  /// Removes the staging folder without touching the outputs.
  public func abandon() { try? FileManager.default.removeItem(atPath: stagingDirectory) }

  static func reason(_ error: any Error) -> String {
    (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
  }
}

/// A buffered, append-only output file.
public final class OutputFile {
  public let path: String
  private var descriptor: Int32
  private var buffer: [UInt8] = []
  public private(set) var bytesWritten: Int64 = 0
  static let flushThreshold = 1 << 20

  init(path: String) throws(OutputError) {
    self.path = path
    descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { throw .cannotCreate(path: path, reason: String(cString: strerror(errno))) }
    buffer.reserveCapacity(Self.flushThreshold + 4096)
  }

  deinit { if descriptor >= 0 { Glibc.close(descriptor) } }

  public func write(_ bytes: [UInt8]) throws(OutputError) {
    buffer.append(contentsOf: bytes)
    if buffer.count >= Self.flushThreshold { try flush() }
  }

  public func write(_ text: String) throws(OutputError) { try write(Array(text.utf8)) }

  /// Appends through `body` without an intermediate array.
  public func append(_ body: (inout [UInt8]) -> Void) throws(OutputError) {
    body(&buffer)
    if buffer.count >= Self.flushThreshold { try flush() }
  }

  public func flush() throws(OutputError) {
    var offset = 0
    while offset < buffer.count {
      let written = buffer.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
      if written < 0 {
        if errno == EINTR { continue }
        throw .ioError(path: path, reason: String(cString: strerror(errno)))
      }
      offset += written
    }
    bytesWritten += Int64(buffer.count)
    buffer.removeAll(keepingCapacity: true)
  }

  /// Flushes, syncs to disk and closes.
  public func close() throws(OutputError) {
    try flush()
    guard descriptor >= 0 else { return }
    if fsync(descriptor) != 0 { throw .ioError(path: path, reason: String(cString: strerror(errno))) }
    Glibc.close(descriptor)
    descriptor = -1
  }
}
