internal import CCrypto

/// SHA-1 and SHA-256 through OpenSSL's libcrypto (the only file that imports it).
public enum Digest {
  public static func sha1(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
    oneShot(bytes, EVP_sha1(), length: 20)
  }

  static func oneShot(_ bytes: UnsafeRawBufferPointer, _ md: OpaquePointer?, length: Int) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: length)
    var written: UInt32 = 0
    let ok = out.withUnsafeMutableBufferPointer { buffer in
      EVP_Digest(bytes.baseAddress, bytes.count, buffer.baseAddress, &written, md, nil)
    }
    precondition(ok == 1 && Int(written) == length, "libcrypto digest failed")
    return out
  }

  /// A reusable SHA-1 context: one-shot `EVP_Digest` allocates a context per call, which shows
  /// when a row id is hashed for each of millions of records.
  public final class SHA1Context {
    private let context: OpaquePointer

    public init() {
      guard let context = EVP_MD_CTX_new() else { fatalError("libcrypto: out of memory") }
      self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    /// The 20-byte digest of `bytes`, written to `out` (which must hold 20 bytes).
    public func hash(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutablePointer<UInt8>) {
      var written: UInt32 = 0
      EVP_DigestInit_ex(context, EVP_sha1(), nil)
      EVP_DigestUpdate(context, bytes.baseAddress, bytes.count)
      EVP_DigestFinal_ex(context, out, &written)
    }
  }

  /// An incremental SHA-256, for hashing an input while it streams.
  public final class SHA256Stream {
    private let context: OpaquePointer

    public init() {
      guard let context = EVP_MD_CTX_new() else { fatalError("libcrypto: out of memory") }
      self.context = context
      EVP_DigestInit_ex(context, EVP_sha256(), nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) {
      EVP_DigestUpdate(context, bytes.baseAddress, bytes.count)
    }

    /// The digest as lower-case hex. Call once.
    public func finalizeHex() -> String {
      var out = [UInt8](repeating: 0, count: 32)
      var written: UInt32 = 0
      out.withUnsafeMutableBufferPointer { _ = EVP_DigestFinal_ex(context, $0.baseAddress, &written) }
      return Hex.encode(out)
    }
  }
}

public enum Hex {
  public static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false) -> String {
    let digits = Array((uppercase ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
    var out = [UInt8]()
    for byte in bytes {
      out.append(digits[Int(byte >> 4)])
      out.append(digits[Int(byte & 15)])
    }
    return String(decoding: out, as: UTF8.self)
  }
}
