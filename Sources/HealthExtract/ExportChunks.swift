/// The export's XML bytes as a parse takes them: chunk after chunk, with how far the reading got.
protocol ExportChunks: AnyObject {
  /// What was opened, for messages and `run.json`.
  var info: InputInfo { get }
  /// Calls `body` with the next bytes, which it may change in place, and whether the reader
  /// scanned them and found no forbidden control character (`XMLByteFilter`); false at the end.
  func nextChunk(
    _ body: (UnsafeMutableRawBufferPointer, _ scannedClean: Bool) throws(ExtractError) -> Void
  ) throws(ExtractError) -> Bool
  /// The input read so far, up to the last chunk handed out.
  var progress: ReadProgress { get }
  /// SHA-256 (lower-case hex) of the file as given, when the reader hashed it whole as it read
  /// it (`ReadAhead`, asked to, for an export XML on disk); nil otherwise or before the end.
  var inputSHA256: String? { get }
  /// After malformed XML: the damage the rest of a zip member shows (`ExportInput.damage()`). No
  /// chunk follows.
  func damage() -> ExtractError?
}

extension ExportInput {
  var info: InputInfo {
    InputInfo(
      path: path, form: form, memberName: memberName, inputBytes: inputBytes, xmlBytesExpected: xmlBytesExpected)
  }

  var progress: ReadProgress {
    ReadProgress(rawBytes: rawBytesConsumed, rawTotal: inputBytes, xmlBytes: xmlBytesRead)
  }
}

/// Chunks read on the parse's own thread: standard input, a pipe, bytes in memory.
final class DirectChunks: ExportChunks {
  private let input: ExportInput
  private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: LibXML2Parser.chunkSize, alignment: 32)

  init(_ input: ExportInput) { self.input = input }

  deinit { buffer.deallocate() }

  var info: InputInfo { input.info }
  var progress: ReadProgress { input.progress }

  func nextChunk(
    _ body: (UnsafeMutableRawBufferPointer, _ scannedClean: Bool) throws(ExtractError) -> Void
  ) throws(ExtractError) -> Bool {
    let count = try input.read(into: buffer)
    guard count > 0 else { return false }
    // Read on the parse's thread: the byte filter scans the chunk itself.
    try body(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]), false)
    return true
  }

  var inputSHA256: String? { nil }

  func damage() -> ExtractError? { input.damage() }
}
