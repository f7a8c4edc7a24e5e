import Foundation
import HealthModel

/// Rows whose instants are written before the run's time zone is known.
///
/// The zone (`--tz auto`) is decided by votes over the whole export, but rows stream out long
/// before the end. Rows are therefore staged with each instant as a 9-byte token (0x01 and the
/// epoch seconds; 0x01 cannot occur in XML 1.0 text, so never in a value), and `finish` copies
/// the staged rows into the real output, formatting each token in the resolved zone.
final class DeferredInstantFile {
  static let marker: UInt8 = 0x01
  static let tokenLength = 10
  let scratch: OutputFile
  private(set) var rows = 0

  init(scratch: OutputFile) { self.scratch = scratch }

  /// - Parameter localTime: `YYYY-MM-DD HH:MM:SS` on the local clock instead of ISO 8601.
  static func appendToken(_ instant: Instant, localTime: Bool = false, to out: inout [UInt8]) {
    out.append(marker)
    out.append(localTime ? 1 : 0)
    withUnsafeBytes(of: instant.seconds.littleEndian) { out.append(contentsOf: $0) }
  }

  func appendRow(_ row: [UInt8]) throws(OutputError) {
    try scratch.write(row)
    rows += 1
  }

  /// Writes `header`, the staged rows and `footer` to `output`, resolving tokens in `zone`.
  func finish(into output: OutputFile, header: String, footer: String = "", zone: ZoneRules) throws(OutputError) {
    try scratch.close()
    try output.write(header)
    guard let handle = FileHandle(forReadingAtPath: scratch.path) else {
      throw .ioError(path: scratch.path, reason: "staged rows vanished")
    }
    defer { try? handle.close() }
    var carry: [UInt8] = []
    var out: [UInt8] = []
    out.reserveCapacity(1 << 21)
    while true {
      let chunk = (try? handle.read(upToCount: 1 << 20)) ?? Data()
      if chunk.isEmpty { break }
      var bytes = carry
      bytes.append(contentsOf: chunk)
      carry = []
      bytes.withUnsafeBytes { raw in
        let base = raw.baseAddress!
        var i = 0
        while i < raw.count {
          // Copy up to the next token in one piece (memchr is vectorized).
          guard let hit = memchr(base + i, Int32(Self.marker), raw.count - i) else {
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[i...]))
            break
          }
          let at = base.distance(to: UnsafeRawPointer(hit))
          out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[i..<at]))
          guard at + Self.tokenLength <= raw.count else {
            carry = Array(raw[at...])
            break
          }
          let seconds = Int64(littleEndian: base.loadUnaligned(fromByteOffset: at + 2, as: Int64.self))
          let instant = Instant(seconds: seconds)
          if raw[at + 1] == 1 {
            LocalTimeFormatter.appendLocal(instant, offsetSeconds: zone.offset(at: instant), to: &out)
          } else {
            LocalTimeFormatter.appendISO8601(instant, offsetSeconds: zone.offset(at: instant), to: &out)
          }
          i = at + Self.tokenLength
        }
      }
      if out.count >= 1 << 20 {
        try output.write(out)
        out.removeAll(keepingCapacity: true)
      }
    }
    try output.write(out)
    if !footer.isEmpty { try output.write(footer) }
    try output.close()
    try? FileManager.default.removeItem(atPath: scratch.path)
  }
}
