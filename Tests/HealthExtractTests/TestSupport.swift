import Foundation
import HealthExtract

/// Counts every element the reader delivers and keeps the attributes of a few for assertions.
final class CountingHandler: ExportEventHandler {
  var counts: [ExportElement: Int] = [:]
  var otherNames: [String: Int] = [:]
  var recordLines: [Int] = []
  var sourceNames: [String] = []
  var values: [String] = []

  func didStart(_ element: ExportElement, attributes: ElementAttributes, line: Int) {
    counts[element, default: 0] += 1
    if element == .other { otherNames[String(decoding: attributes.elementName, as: UTF8.self), default: 0] += 1 }
    if element == .record {
      recordLines.append(line)
      if let source = attributes.value(.sourceName) { sourceNames.append(String(decoding: source, as: UTF8.self)) }
      if let value = attributes.value(.value) { values.append(String(decoding: value, as: UTF8.self)) }
    }
  }

  func didEnd(_ element: ExportElement) {}
}

enum Fixtures {
  /// `../shared/fixtures/real` beside the project; absent in a user's fresh clone.
  static let realRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("shared/fixtures/real")

  static var realAvailable: Bool { FileManager.default.fileExists(atPath: realRoot.path) }

  static let skipMessage =
    "../shared/fixtures/real is not beside this checkout (it exists in CI); skipping real-export tests"

  static func read(_ text: String, allowTruncated: Bool = false) throws -> (CountingHandler, ReadSummary) {
    let handler = CountingHandler()
    let input = ExportInput.memory(Array(text.utf8), name: "test.xml")
    let summary = try ExportXMLReader(handler: handler, allowTruncated: allowTruncated).read(input)
    return (handler, summary)
  }

  static func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("healthetl-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }

  /// Runs python3 (present on the CI image) — an implementation independent of the reader.
  static func python(_ script: String, _ arguments: [String] = []) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", script] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readToEndRetryingInterrupts()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
  }

  static let minimalHeader = """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE HealthData [
    <!-- HealthKit Export Version: 14 -->
    <!ELEMENT HealthData (ExportDate,Me,(Record)*)>
    <!ATTLIST Record
      type CDATA #REQUIRED
      value CDATA #IMPLIED
    >
    ]>

    """
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
