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
    let chunks = try ReadAhead(path: url.path)
    #expect(chunks.info.form == .xml && chunks.info.inputBytes == Int64(bytes.count))
    var read: [UInt8] = []
    var sizes: [Int] = []
    while try chunks.nextChunk({ chunk in
      read.append(contentsOf: chunk)
      sizes.append(chunk.count)
    }) {}
    #expect(read == bytes)
    #expect(sizes.dropLast().allSatisfy { $0 == LibXML2Parser.chunkSize })
    #expect(chunks.progress.xmlBytes == Int64(bytes.count))
    #expect(try chunks.nextChunk { _ in } == false)
  }

  @Test func aParseThatStopsAfterOneChunkStopsTheThread() throws {
    let directory = try Fixtures.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let (url, bytes) = try Self.export(in: directory)
    do {
      let chunks = try ReadAhead(path: url.path)
      var first: [UInt8] = []
      _ = try chunks.nextChunk { first = Array($0) }
      #expect(first == Array(bytes[0..<LibXML2Parser.chunkSize]))
      #expect(chunks.progress.xmlBytes == Int64(LibXML2Parser.chunkSize))
      // The reading thread has filled every slot by now and waits for room; dropping the reader
      // must end it (a hang would hold the suite).
      Thread.sleep(forTimeInterval: 0.1)
    }
    // A stop that asks for the damage of a plain file finds none.
    let chunks = try ReadAhead(path: url.path)
    _ = try chunks.nextChunk { _ in }
    #expect(chunks.damage() == nil)
    #expect(try chunks.nextChunk { _ in } == false)
  }

  @Test func openingErrorsAreTheInputsOwn() {
    #expect(throws: ExtractError.notFound(path: "/nonexistent/export.zip")) {
      try ReadAhead(path: "/nonexistent/export.zip")
    }
  }

  /// What the parse's own thread reads: standard input and pipes, whose reads can wait forever.
  @Test func pipesAndStandardInputAreReadOnTheParsesThread() throws {
    let directory = try Fixtures.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let (url, _) = try Self.export(in: directory)
    #expect(try InputSource.path(url.path).chunks() is ReadAhead)
    #expect(try InputSource.path(directory.path).chunks() is ReadAhead)
    let fifo = directory.appendingPathComponent("fifo").path
    #expect(mkfifo(fifo, 0o600) == 0)
    #expect(!ExportInput.isFileOrFolder(fifo))
    #expect(!ExportInput.isFileOrFolder("-"))
    #expect(try InputSource.bytes(Array(Fixtures.minimalHeader.utf8), name: "m").chunks() is DirectChunks)
  }
}
