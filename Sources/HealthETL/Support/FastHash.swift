/// A fast 64-bit hash for interning and duplicate detection (not cryptographic). Mixes eight
/// bytes at a time with a 128-bit multiply, in the style of wyhash.
enum FastHash {
  static let k0: UInt64 = 0xa076_1d64_78bd_642f
  static let k1: UInt64 = 0xe703_7ed1_a0b4_28db

  @inline(__always) static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
    let product = a.multipliedFullWidth(by: b)
    return product.high ^ product.low
  }

  static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
    var h = seed ^ k0 ^ UInt64(bytes.count)
    guard let base = bytes.baseAddress else { return mix(h, k1) }
    var i = 0
    let n = bytes.count
    while i + 8 <= n {
      h = mix(h ^ base.loadUnaligned(fromByteOffset: i, as: UInt64.self), k1)
      i += 8
    }
    if i < n {
      var tail: UInt64 = 0
      var shift: UInt64 = 0
      while i < n {
        tail |= UInt64(base.load(fromByteOffset: i, as: UInt8.self)) << shift
        shift += 8
        i += 1
      }
      h = mix(h ^ tail, k1)
    }
    return mix(h, k0)
  }

  @inline(__always) static func combine(_ h: UInt64, _ value: UInt64) -> UInt64 { mix(h ^ value, k1) }
}
