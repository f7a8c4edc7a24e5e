import Foundation

/// An append-only scratch file of rows of fields (`ScratchRows`), read back one row by its place
/// or all rows in order a piece at a time: where a mart keeps what it holds of each item between
/// the moment it is built and the moment it is used, so that memory does not grow with the items.
/// The file lives in the run's scratch folder and is never an output.
final class RowScratch {
  /// Where one row's bytes lie in the file.
  struct Place {
    var offset: Int
    var length: Int
  }

  private let bytes: RecordScratch<UInt8>
  private var encoded: [UInt8] = []
  private var buffer: [UInt8] = []
  /// Rows appended so far.
  private(set) var count = 0

  /// Bytes read at a time by `forEach`.
  static let pieceBytes = 256 * 1024

  /// The file is named `prefix` and a UUID: two scratches of a run never share a file.
  init(transaction: OutputTransaction, prefix: String) {
    bytes = RecordScratch<UInt8>(transaction: transaction, name: prefix + "-" + UUID().uuidString)
  }

  /// Appends a row; where it went.
  @discardableResult
  func append(_ fields: [Field]) -> Place {
    encoded.removeAll(keepingCapacity: true)
    ScratchRows.append(fields, to: &encoded)
    let place = Place(offset: bytes.count, length: encoded.count)
    bytes.append(contentsOf: encoded)
    count += 1
    return place
  }

  /// The row appended at `place`.
  func read(_ place: Place) throws(OutputError) -> [Field] {
    try bytes.read(first: place.offset, count: place.length, into: &buffer)
    var reader = ScratchRows.Reader()
    var row: [Field] = []
    try Self.feed(buffer, to: &reader) { row = $0 }
    return row
  }

  /// Every row in the order appended, read `pieceBytes` at a time.
  func forEach(_ body: ([Field]) throws(OutputError) -> Void) throws(OutputError) {
    var reader = ScratchRows.Reader()
    var offset = 0
    while offset < bytes.count {
      let length = min(Self.pieceBytes, bytes.count - offset)
      try bytes.read(first: offset, count: length, into: &buffer)
      try Self.feed(buffer, to: &reader, body)
      offset += length
    }
  }

  private static func feed(
    _ piece: [UInt8], to reader: inout ScratchRows.Reader, _ body: ([Field]) throws(OutputError) -> Void
  ) throws(OutputError) {
    let failure = piece.withUnsafeBytes { part -> OutputError? in
      do throws(OutputError) { try reader.rows(in: part, body) } catch { return error }
      return nil
    }
    if let failure { throw failure }
  }
}
