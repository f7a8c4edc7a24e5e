/// The export's XML bytes as a parse takes them: chunk after chunk, with how far the reading got.
protocol ExportChunks: AnyObject {
  /// What was opened, for messages and `run.json`.
  var info: InputInfo { get }
  /// Calls `body` with the next bytes, which it may change in place; false at the end.
  func nextChunk(_ body: (UnsafeMutableRawBufferPointer) throws(ExtractError) -> Void) throws(ExtractError) -> Bool
  /// The input read so far, up to the last chunk handed out.
  var progress: ReadProgress { get }
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

  func nextChunk(_ body: (UnsafeMutableRawBufferPointer) throws(ExtractError) -> Void) throws(ExtractError) -> Bool {
    let count = try input.read(into: buffer)
    guard count > 0 else { return false }
    try body(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
    return true
  }

  func damage() -> ExtractError? { input.damage() }
}
