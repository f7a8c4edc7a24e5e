import Foundation
import Testing

/// Runs the real `healthetl` binary that `swift build` put in `.build/debug`.
enum CLI {
  static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
  static let binary = packageRoot.appendingPathComponent(".build/debug/healthetl").path
  static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
  static let sampleExport = packageRoot.appendingPathComponent("SampleData/export.zip").path
  static let samplesPipeline = packageRoot.appendingPathComponent("Pipelines/samples.json").path
  static func pipeline(_ name: String) -> String { packageRoot.appendingPathComponent("Pipelines/\(name).json").path }
  static let realRoot = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures/real")
  static var realAvailable: Bool { FileManager.default.fileExists(atPath: realRoot.path) }

  struct Result {
    var status: Int32
    var stdout: String
    var stderr: String
  }

  static func run(
    _ arguments: [String], stdin: Data? = nil, environment: [String: String]? = nil, in directory: URL? = nil
  ) throws -> Result {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    if let environment { process.environment = environment }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let input = Pipe()
    process.standardInput = input
    try process.run()
    if let stdin {
      // Feed stdin from another thread so a large input cannot deadlock against full pipes.
      let writer = input.fileHandleForWriting
      DispatchQueue.global().async {
        writer.write(stdin)
        try? writer.close()
      }
    } else {
      try input.fileHandleForWriting.close()
    }
    let stdoutData = out.fileHandleForReading.readToEndRetryingInterrupts()
    let stderrData = err.fileHandleForReading.readToEndRetryingInterrupts()
    process.waitUntilExit()
    return Result(
      status: process.terminationStatus, stdout: String(decoding: stdoutData, as: UTF8.self),
      stderr: String(decoding: stderrData, as: UTF8.self))
  }

  static func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("healthetl-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }

  /// Every file under `directory` with its bytes, by relative path.
  static func snapshot(_ directory: URL) throws -> [String: Data] {
    var files: [String: Data] = [:]
    guard let walker = FileManager.default.enumerator(atPath: directory.path) else { return files }
    for case let path as String in walker {
      var isDirectory: ObjCBool = false
      let full = directory.appendingPathComponent(path).path
      if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue {
        files[path] = try Data(contentsOf: URL(fileURLWithPath: full))
      }
    }
    return files
  }

  /// Runs `healthetl run <arguments> --out DIR` into two fresh folders and returns both folders'
  /// files, without `run.json` (its timings differ from run to run).
  static func runTwice(_ arguments: [String]) throws -> (first: [String: Data], second: [String: Data]) {
    var snapshots: [[String: Data]] = []
    for _ in 0..<2 {
      let out = try temporaryDirectory()
      defer { try? FileManager.default.removeItem(at: out) }
      let result = try run(["run", "--quiet", "--out", out.path] + arguments)
      #expect(result.status == 0, "\(result.stderr)")
      var files = try snapshot(out)
      #expect(files["run.json"] != nil)
      files["run.json"] = nil
      snapshots.append(files)
    }
    return (snapshots[0], snapshots[1])
  }
}

extension FileHandle {
  /// Everything up to the end of the file. Foundation's `readDataToEndOfFile` traps when a read
  /// is interrupted by a signal (EINTR), which on a busy machine took the whole test process
  /// down; an interrupted read is simply tried again.
  func readToEndRetryingInterrupts() -> Data {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let got = buffer.withUnsafeMutableBytes { Glibc.read(fileDescriptor, $0.baseAddress, $0.count) }
      if got > 0 {
        data.append(contentsOf: buffer[0..<got])
      } else if got < 0, errno == EINTR {
        continue
      } else {
        return data
      }
    }
  }
}
