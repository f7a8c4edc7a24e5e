import Foundation
import Testing

@testable import HealthExtract

/// The export read on a thread of its own: the same bytes in the same order, the same errors, and
/// a parse that stops early stops the thread.
///
/// The limit catches a hang, never slowness: on a busy 2-core machine a test can wait minutes for
/// one of the two threads Swift Testing runs tests on (one minute once failed every test here).
@Suite(.timeLimit(.minutes(10))) struct ReadAheadTests {
  /// An export of about 1.3 MB: five chunks and a short one, more than `ReadAhead.depth` ahead.
  static func export(in directory: URL) throws -> (URL, [UInt8]) {
    var text = Fixtures.minimalHeader
    for index in 0..<9000 {
      text +=
        "<Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"Phone\" unit=\"count\" value=\"\(index)\" startDate=\"2024-03-01 08:00:00 +0100\" endDate=\"2024-03-01 08:01:00 +0100\"/>\n"
    }
    text += "</HealthData>\n"
    let url = directory.appendingPathComponent("export.xml")
    try text.write(to: url, atomically: true, encoding: .utf8)
    return (url, Array(text.utf8))
  }

  @Test func chunksAreTheFileInOrder() throws {
    let directory = try Fixtures.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let (url, bytes) = try Self.export(in: directory)
    #expect(bytes.count > 5 * LibXML2Parser.chunkSize)
    let chunks = try ReadAhead.start(path: url.path, on: testExecutor)
    #expect(chunks.info.form == .xml && chunks.info.inputBytes == Int64(bytes.count))
    var read: [UInt8] = []
    var sizes: [Int] = []
    while try chunks.nextChunk({ chunk, _ in
      read.append(contentsOf: chunk)
      sizes.append(chunk.count)
    }) {}
    #expect(read == bytes)
    #expect(sizes.dropLast().allSatisfy { $0 == LibXML2Parser.chunkSize })
    #expect(chunks.progress.xmlBytes == Int64(bytes.count))
    #expect(try chunks.nextChunk { _, _ in } == false)
  }

  @Test func aParseThatStopsAfterOneChunkStopsTheThread() throws {
    let directory = try Fixtures.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let (url, bytes) = try Self.export(in: directory)
    do {
      let chunks = try ReadAhead.start(path: url.path, on: testExecutor)
      var first: [UInt8] = []
      _ = try chunks.nextChunk { chunk, _ in first = Array(chunk) }
      #expect(first == Array(bytes[0..<LibXML2Parser.chunkSize]))
      #expect(chunks.progress.xmlBytes == Int64(LibXML2Parser.chunkSize))
      // The reading thread has filled every slot by now and waits for room; dropping the reader
      // must end it (a hang would hold the suite).
      Thread.sleep(forTimeInterval: 0.1)
    }
    // A stop that asks for the damage of a plain file finds none.
    let chunks = try ReadAhead.start(path: url.path, on: testExecutor)
    _ = try chunks.nextChunk { _, _ in }
    #expect(chunks.damage() == nil)
    #expect(try chunks.nextChunk { _, _ in } == false)
  }

  @Test func openingErrorsAreTheInputsOwn() {
    #expect(throws: ExtractError.notFound(path: "/nonexistent/export.zip")) {
      try ReadAhead.start(path: "/nonexistent/export.zip", on: testExecutor)
    }
  }

  /// What the parse's own thread reads: standard input and pipes, whose reads can wait forever.
  @Test func pipesAndStandardInputAreReadOnTheParsesThread() throws {
    let directory = try Fixtures.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let (url, _) = try Self.export(in: directory)
    #expect(try InputSource.path(url.path).chunks(on: testExecutor) is ReadAhead)
    #expect(try InputSource.path(directory.path).chunks(on: testExecutor) is ReadAhead)
    let fifo = directory.appendingPathComponent("fifo").path
    #expect(mkfifo(fifo, 0o600) == 0)
    #expect(!ExportInput.isFileOrFolder(fifo))
    #expect(!ExportInput.isFileOrFolder("-"))
    #expect(
      try InputSource.bytes(Array(Fixtures.minimalHeader.utf8), name: "m").chunks(on: testExecutor) is DirectChunks)
  }

  /// Stands in for the run's SHA-256: it keeps what it is fed, so a test sees every byte the
  /// digest saw, in order (the real digest is checked against Python's hashlib end to end).
  final class FedBytes: InputHasher {
    var bytes: [UInt8] = []
    func update(_ chunk: UnsafeRawBufferPointer) { bytes.append(contentsOf: chunk) }
    func finalizeHex() -> String { String(decoding: bytes, as: UTF8.self) }
  }

  /// An export XML on disk, named or in a folder, is fed to the digest whole as it is read; a
  /// zip (hashed as given, not as its member inflates), a parse that stops early, and bytes in
  /// memory have no digest from the reader.
  @Test func anExportXMLOnDiskIsHashedWholeAsItIsRead() throws {
    let directory = try Fixtures.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let (url, bytes) = try Self.export(in: directory)
    for path in [url.path, directory.path] {
      let chunks = try ReadAhead.start(path: path, hasher: { FedBytes() }, on: testExecutor)
      while try chunks.nextChunk({ _, _ in }) {}
      #expect(chunks.inputSHA256 == String(decoding: bytes, as: UTF8.self), "\(path)")
    }
    let stopped = try ReadAhead.start(path: url.path, hasher: { FedBytes() }, on: testExecutor)
    _ = try stopped.nextChunk { _, _ in }
    #expect(stopped.inputSHA256 == nil)
    let unhashed = try ReadAhead.start(path: url.path, on: testExecutor)
    while try unhashed.nextChunk({ _, _ in }) {}
    #expect(unhashed.inputSHA256 == nil)

    let zip = directory.appendingPathComponent("export.zip").path
    _ = try Fixtures.python(
      "import sys, zipfile; zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED).write(sys.argv[1], 'apple_health_export/export.xml')",
      [url.path, zip])
    let zipped = try ReadAhead.start(path: zip, hasher: { FedBytes() }, on: testExecutor)
    var inflated: [UInt8] = []
    while try zipped.nextChunk({ chunk, _ in inflated.append(contentsOf: chunk) }) {}
    #expect(inflated == bytes)
    #expect(zipped.inputSHA256 == nil)
    #expect(try InputSource.bytes(bytes, name: "m").chunks(hasher: { FedBytes() }, on: testExecutor).inputSHA256 == nil)
  }

  /// Each chunk says whether the reader found a character the byte filter replaces in it: the
  /// parse scans only those again, and still replaces and counts every one.
  @Test func chunksSayWhetherTheyHoldForbiddenControlCharacters() throws {
    let directory = try Fixtures.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let (url, original) = try Self.export(in: directory)
    // The same records inside a root element, so that they also parse.
    let header = Array(Fixtures.minimalHeader.utf8)
    var bytes = header + Array("<HealthData locale=\"en\">\n".utf8) + original.dropFirst(header.count)
    // A vertical tab inside a source name in the third chunk, a form feed in the last one.
    let third = 2 * LibXML2Parser.chunkSize + 1000
    let inThird = Self.sourceNameStart(in: bytes, after: third)
    let inLast = Self.sourceNameStart(in: bytes, after: bytes.count - 2000)
    bytes[inThird] = 0x0B
    bytes[inLast] = 0x0C
    try Data(bytes).write(to: url)
    let chunks = try ReadAhead.start(path: url.path, on: testExecutor)
    var flags: [Bool] = []
    while try chunks.nextChunk({ _, clean in flags.append(clean) }) {}
    let last = (bytes.count - 1) / LibXML2Parser.chunkSize
    #expect(flags.count == last + 1)
    #expect(flags.indices.filter { !flags[$0] } == [2, last])

    let handler = CountingHandler()
    let summary = try ExportStream(source: .path(url.path), executor: testExecutor).read(into: handler)
    #expect(summary.replacedControlCharacters == 2)
    #expect(handler.counts[.record] == 9000)
    #expect(handler.sourceNames.filter { $0 == " hone" }.count == 2)
  }

  /// The offset of the first byte of the first `sourceName` value at or after `offset`.
  static func sourceNameStart(in bytes: [UInt8], after offset: Int) -> Int {
    let marker = Array("sourceName=\"".utf8)
    var index = offset
    while !bytes[index..<(index + marker.count)].elementsEqual(marker) { index += 1 }
    return index + marker.count
  }
}
