/// Name-based UUIDs (RFC 4122 section 4.3, version 5: SHA-1) in the URL namespace, the
/// deterministic ids of samples and workouts (Pipelines/docs/samples.md, "Sample id" and
/// "Workout identity").
public enum UUIDv5 {
  /// `6ba7b811-9dad-11d1-80b4-00c04fd430c8`.
  public static let urlNamespace: [UInt8] = [
    0x6B, 0xA7, 0xB8, 0x11, 0x9D, 0xAD, 0x11, 0xD1, 0x80, 0xB4, 0x00, 0xC0, 0x4F, 0xD4, 0x30, 0xC8,
  ]

  /// The UUID of `name` (its UTF-8 bytes) in the URL namespace, lower-case.
  public static func url(_ name: String, uppercase: Bool = false) -> String {
    var bytes = urlNamespace
    bytes.append(contentsOf: name.utf8)
    return make(bytes, uppercase: uppercase)
  }

  /// As `url(_:)` for a name already as bytes: namespace bytes followed by the name.
  public static func make(_ namespaceAndName: [UInt8], uppercase: Bool = false) -> String {
    var hash = namespaceAndName.withUnsafeBytes { Digest.sha1($0) }
    hash[6] = (hash[6] & 0x0F) | 0x50
    hash[8] = (hash[8] & 0x3F) | 0x80
    let hex = Array(Hex.encode(hash[0..<16], uppercase: uppercase).utf8)
    var out = [UInt8]()
    out.reserveCapacity(36)
    for (index, byte) in hex.enumerated() {
      if index == 8 || index == 12 || index == 16 || index == 20 { out.append(UInt8(ascii: "-")) }
      out.append(byte)
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// Appends UUIDs as text to byte buffers without allocating per call: for row ids.
  public final class Writer {
    private let sha1 = Digest.SHA1Context()
    private let digest = UnsafeMutablePointer<UInt8>.allocate(capacity: 20)
    private static let lower = Array("0123456789abcdef".utf8)
    private static let upper = Array("0123456789ABCDEF".utf8)

    public init() {}

    deinit { digest.deallocate() }

    /// Appends the UUID of `namespaceAndName` (namespace bytes followed by the name) to `out`.
    public func append(_ namespaceAndName: UnsafeRawBufferPointer, uppercase: Bool = false, to out: inout [UInt8]) {
      sha1.hash(namespaceAndName, into: digest)
      digest[6] = (digest[6] & 0x0F) | 0x50
      digest[8] = (digest[8] & 0x3F) | 0x80
      let digits = uppercase ? Self.upper : Self.lower
      for index in 0..<16 {
        if index == 4 || index == 6 || index == 8 || index == 10 { out.append(UInt8(ascii: "-")) }
        out.append(digits[Int(digest[index] >> 4)])
        out.append(digits[Int(digest[index] & 15)])
      }
    }
  }
}
