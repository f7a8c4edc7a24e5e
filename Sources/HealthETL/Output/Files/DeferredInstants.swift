import Foundation
import HealthModel

/// Rows whose instants are written before the run's time zone is known.
///
/// The zone (`--tz auto`) is decided by votes over the whole export, but rows stream out long
/// before the end. Rows are therefore staged (in `ScratchStreams`) with each instant as a 10-byte
/// token (0x01, the form, and the epoch seconds; 0x01 cannot occur in XML 1.0 text, so never in a
/// value), and `copy` writes the staged rows into the real output, formatting each token in the
/// resolved zone.
enum DeferredInstants {
  static let marker: UInt8 = 0x01
  static let tokenLength = 10

  /// - Parameter localTime: `YYYY-MM-DD HH:MM:SS` on the local clock instead of ISO 8601.
  static func appendToken(_ instant: Instant, localTime: Bool = false, to out: inout [UInt8]) {
    out.append(marker)
    out.append(localTime ? 1 : 0)
    withUnsafeBytes(of: instant.seconds.littleEndian) { out.append(contentsOf: $0) }
  }

  /// Writes `header`, the rows staged in `stream` with their tokens resolved in `zone`, and
  /// `footer` to `output`, and closes it.
  static func copy(
    _ stream: Int, of streams: ScratchStreams, into output: OutputFile, header: String, footer: String = "",
    zone: ZoneRules
  ) throws(OutputError) {
    try output.write(header)
    // A token cut by the end of a piece waits for the next one.
    var carry: [UInt8] = []
    var out: [UInt8] = []
    out.reserveCapacity(1 << 21)
    try streams.read(stream) { chunk throws(OutputError) in
      var bytes = carry
      bytes.append(contentsOf: chunk)
      carry = []
      bytes.withUnsafeBytes { raw in
        let base = raw.baseAddress!
        var i = 0
        while i < raw.count {
          // Copy up to the next token in one piece (memchr is vectorized).
          guard let hit = memchr(base + i, Int32(marker), raw.count - i) else {
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[i...]))
            break
          }
          let at = base.distance(to: UnsafeRawPointer(hit))
          out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[i..<at]))
          guard at + tokenLength <= raw.count else {
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
          i = at + tokenLength
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
  }
}
