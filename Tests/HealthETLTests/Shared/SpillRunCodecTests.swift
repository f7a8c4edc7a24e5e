import Testing

@testable import HealthETL

/// The compact form of a spilled run must give every record back bit for bit, or the merged
/// stream — and every sum taken over it — would change.
@Suite struct SpillRunCodecTests {
  func roundTrip(_ records: [SpillRecord]) -> (back: [SpillRecord], bytes: Int) {
    var out: [UInt8] = []
    var state = SpillRunCodec.State()
    for record in records { SpillRunCodec.encode(record, after: &state, to: &out) }
    var back: [SpillRecord] = []
    var position = 0
    var readState = SpillRunCodec.State()
    out.withUnsafeBytes { bytes in
      while position < bytes.count { back.append(SpillRunCodec.decode(bytes, at: &position, after: &readState)) }
    }
    return (back, out.count)
  }

  func same(_ a: SpillRecord, _ b: SpillRecord) -> Bool {
    a.start == b.start && a.end == b.end && a.value.bitPattern == b.value.bitPattern && a.created == b.created
      && a.stream == b.stream && a.group == b.group
  }

  @Test func extremeFieldsComeBackBitForBit() {
    let values: [Double] = [
      0, -0.0, 1, -1, 55, 0.57, 0.1, 1e-300, -123.456789, 1e9, 999_999_999.5, 1e15, .infinity, -.infinity, .nan,
      Double(bitPattern: 0x7FF8_0000_DEAD_BEEF), .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.3333333333333333,
    ]
    let instants: [Int64] = [.min, .max, 0, -1, 1, 1_700_000_000, -62_135_596_800]
    var records: [SpillRecord] = []
    for (i, value) in values.enumerated() {
      for (j, start) in instants.enumerated() {
        let end = instants[(i + j) % instants.count]
        let created = (i + j) % 3 == 0 ? SpillRecord.missingCreation : instants[(i * 3 + j) % instants.count]
        records.append(
          SpillRecord(
            start: start, end: end, value: value, created: created, stream: Int32(j % 3) - 1,
            group: j % 2 == 0 ? .max : .min))
      }
    }
    let (back, bytes) = roundTrip(records)
    #expect(back.count == records.count)
    #expect(zip(back, records).allSatisfy(same))
    // No record, however odd, outgrows the bound the reader relies on.
    #expect(bytes <= records.count * SpillRunCodec.maximumRecordBytes)
  }

  @Test func oneRecordNeverExceedsTheBound() {
    let worst = SpillRecord(
      start: .min, end: .max, value: -.greatestFiniteMagnitude, created: .min + 1, stream: .min, group: .min)
    #expect(roundTrip([worst]).bytes <= SpillRunCodec.maximumRecordBytes)
  }

  /// A heart rate every five minutes, as a watch writes it: 5 bytes a record.
  @Test func aSortedHeartRateRunTakesFiveBytesARecord() {
    var records: [SpillRecord] = []
    for i in 0..<1000 {
      let start = 1_700_000_000 + Int64(i) * 300
      records.append(
        SpillRecord(start: start, end: start, value: Double(40 + i % 24), created: start + 20, stream: 2, group: 1))
    }
    let (back, bytes) = roundTrip(records)
    #expect(zip(back, records).allSatisfy(same))
    // Flags, start +300 (2 bytes), creation +20 (1), value (1); the first record also has its
    // stream and group (1 byte each) and its whole start (5 bytes, not 2).
    #expect(bytes == 1000 * 5 + 1 + 1 + 3)
  }

  /// Short decimals take their digits, not 8 bytes: 0.57 is 57 / 10^2.
  @Test func aShortDecimalIsStoredAsItsDigits() throws {
    let form = try #require(SpillRunCodec.decimalForm(of: 0.57))
    #expect(form.scaled == 57 && form.digits == 2)
    #expect(SpillRunCodec.decimalForm(of: 1.0 / 3.0) == nil)
    #expect(SpillRunCodec.decimalForm(of: -0.0) == nil)
    #expect(SpillRunCodec.decimalForm(of: -12.5)! == (-125, 1))
  }
}
