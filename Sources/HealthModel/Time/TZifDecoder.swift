/// Decodes the binary TZif files of the tz database (RFC 8536) into a transition table, extending
/// it with the file's POSIX TZ footer rule up to the year 2100.
enum TZifDecoder {
  static let lastExpandedYear = 2100

  static func decode(_ bytes: [UInt8], identifier: String) -> ZoneRules? {
    var reader = ByteReader(bytes: bytes)
    guard let header = reader.header() else { return nil }
    var counts = header.counts
    var timeSize = 4
    if header.version >= 2 {
      // Skip the 32-bit block; the 64-bit one follows with its own header.
      reader.offset += counts.v1DataLength
      guard let second = reader.header() else { return nil }
      counts = second.counts
      timeSize = 8
    }
    guard reader.remaining >= counts.timecnt * (timeSize + 1) + counts.typecnt * 6 else { return nil }
    var times: [Int64] = []
    times.reserveCapacity(counts.timecnt)
    for _ in 0..<counts.timecnt { times.append(timeSize == 8 ? reader.int64() : Int64(reader.int32())) }
    var typeIndices: [Int] = []
    for _ in 0..<counts.timecnt { typeIndices.append(Int(reader.byte())) }
    var typeOffsets: [Int32] = []
    for _ in 0..<counts.typecnt {
      typeOffsets.append(reader.int32())
      reader.offset += 2
    }
    guard !typeOffsets.isEmpty, typeIndices.allSatisfy({ $0 < typeOffsets.count }) else { return nil }
    reader.offset += counts.charcnt + counts.leapcnt * (timeSize + 4) + counts.isstdcnt + counts.isutcnt

    var transitions: [Int64] = []
    var offsets: [Int32] = [typeOffsets[0]]
    for (time, type) in zip(times, typeIndices) where typeOffsets[type] != offsets.last {
      transitions.append(time)
      offsets.append(typeOffsets[type])
    }

    if header.version >= 2, let footer = reader.footer(), !footer.isEmpty {
      guard let rule = PosixTZRule(footer) else { return nil }
      let firstYear = transitions.last.map { CivilDate(daysSinceEpoch: floorDiv($0, 86_400)).year } ?? 1900
      if transitions.isEmpty { offsets = [rule.standardOffset] }
      for year in firstYear...lastExpandedYear {
        for (time, offset) in rule.transitions(in: year) where time > (transitions.last ?? Int64.min) {
          if offset != offsets.last {
            transitions.append(time)
            offsets.append(offset)
          }
        }
      }
    }
    return ZoneRules(identifier: identifier, transitions: transitions, offsets: offsets)
  }

  struct Counts {
    var isutcnt = 0, isstdcnt = 0, leapcnt = 0, timecnt = 0, typecnt = 0, charcnt = 0
    var v1DataLength: Int { timecnt * 5 + typecnt * 6 + charcnt + leapcnt * 8 + isstdcnt + isutcnt }
  }

  struct ByteReader {
    let bytes: [UInt8]
    var offset = 0
    var remaining: Int { bytes.count - offset }

    mutating func byte() -> UInt8 {
      defer { offset += 1 }
      return offset < bytes.count ? bytes[offset] : 0
    }

    mutating func int32() -> Int32 {
      var value: UInt32 = 0
      for _ in 0..<4 { value = value << 8 | UInt32(byte()) }
      return Int32(bitPattern: value)
    }

    mutating func int64() -> Int64 {
      var value: UInt64 = 0
      for _ in 0..<8 { value = value << 8 | UInt64(byte()) }
      return Int64(bitPattern: value)
    }

    mutating func header() -> (version: Int, counts: Counts)? {
      guard remaining >= 44, bytes[offset..<offset + 4].elementsEqual("TZif".utf8) else { return nil }
      let versionByte = bytes[offset + 4]
      offset += 20
      let version = versionByte == 0 ? 1 : Int(versionByte) - 48
      var counts = Counts()
      counts.isutcnt = Int(int32())
      counts.isstdcnt = Int(int32())
      counts.leapcnt = Int(int32())
      counts.timecnt = Int(int32())
      counts.typecnt = Int(int32())
      counts.charcnt = Int(int32())
      return (version, counts)
    }

    mutating func footer() -> String? {
      guard remaining >= 2, bytes[offset] == 0x0A else { return nil }
      guard let end = bytes[(offset + 1)...].firstIndex(of: 0x0A) else { return nil }
      return String(decoding: bytes[(offset + 1)..<end], as: UTF8.self)
    }
  }
}
