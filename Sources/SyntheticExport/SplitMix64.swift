/// A small, fast, well-mixed pseudo-random generator (Steele, Lea and Flood's SplitMix64).
///
/// Every stream is keyed by (seed, stream, index) so that any part of the export — one record type
/// on one day, one workout's laps — can be regenerated on its own, in any order, with the same
/// result. That is what lets the writer go type by type over all days with flat memory.
struct SplitMix64 {
  private var state: UInt64

  init(state: UInt64) { self.state = state }

  /// The stream for `stream` (a fixed tag per generator) and `index` (usually the day).
  init(seed: UInt64, stream: UInt64, index: Int) {
    var h = SplitMix64.mix(seed &+ 0x9E37_79B9_7F4A_7C15)
    h = SplitMix64.mix(h ^ (stream &* 0xD6E8_FEB8_6659_FD93))
    h = SplitMix64.mix(h ^ UInt64(bitPattern: Int64(index)) &* 0xA076_1D64_78BD_642F)
    state = h
  }

  @inline(__always) static func mix(_ value: UInt64) -> UInt64 {
    var z = value
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  @inline(__always) mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    return SplitMix64.mix(state)
  }

  /// Uniform in `0..<1`.
  @inline(__always) mutating func unit() -> Double {
    Double(next() >> 11) * (1.0 / 9_007_199_254_740_992.0)
  }

  /// Uniform integer in `range` (the tiny modulo bias does not matter for sample data).
  @inline(__always) mutating func int(_ range: ClosedRange<Int>) -> Int {
    let span = UInt64(range.upperBound - range.lowerBound + 1)
    return range.lowerBound + Int(next() % span)
  }

  /// Uniform integer seconds in `range`.
  @inline(__always) mutating func seconds(_ range: ClosedRange<Int64>) -> Int64 {
    let span = UInt64(range.upperBound - range.lowerBound + 1)
    return range.lowerBound + Int64(next() % span)
  }

  /// Uniform in `low..<high`.
  @inline(__always) mutating func double(_ low: Double, _ high: Double) -> Double {
    low + (high - low) * unit()
  }

  /// True with probability `p`.
  @inline(__always) mutating func chance(_ p: Double) -> Bool { unit() < p }

  /// Roughly normal (sum of four uniforms), mean 0, standard deviation about 1.
  @inline(__always) mutating func gaussian() -> Double {
    (unit() + unit() + unit() + unit() - 2.0) * 1.732_050_8
  }
}
