import Foundation

/// The workout record ids an output folder has emitted in a final delta, kept in
/// `.healthetl-emitted` as sorted 16-byte UUIDs after an 8-byte magic: 2.6 million ids are 42 MB,
/// read in one piece and searched by bisection, where the same ids as JSON text were 100 MB and a
/// gigabyte of parsed strings.
struct EmittedRecords {
  static let magic = Array("HETLEM01".utf8)
  typealias ID = (UInt64, UInt64)

  /// Sorted, distinct.
  private(set) var ids: [UInt64] = []

  var count: Int { ids.count / 2 }

  init() {}

  /// The set in `directory`, empty when the folder has none yet.
  static func load(from directory: String) throws(ConfigFileError) -> EmittedRecords {
    let path = directory + "/" + ToolFiles.emitted
    var info = stat()
    guard lstat(path, &info) == 0 else {
      if errno == ENOENT { return EmittedRecords() }
      throw ConfigFileError(file: path, message: "cannot be read: \(String(cString: strerror(errno)))")
    }
    let bytes = try ConfigFile.read(path, limit: Int.max)
    return try decode(bytes, path: path)
  }

  static func decode(_ bytes: [UInt8], path: String) throws(ConfigFileError) -> EmittedRecords {
    guard bytes.count >= magic.count, Array(bytes[0..<magic.count]) == magic, (bytes.count - magic.count) % 16 == 0
    else {
      throw ConfigFileError(
        file: path, message: "is not a list of emitted workout ids (damaged or not HealthETL's); \(StateProblem.advice)"
      )
    }
    var set = EmittedRecords()
    set.ids.reserveCapacity((bytes.count - magic.count) / 8)
    bytes.withUnsafeBytes { raw in
      var offset = magic.count
      while offset < raw.count {
        set.ids.append(UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
        set.ids.append(UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
        offset += 16
      }
    }
    for index in stride(from: 2, to: set.ids.count, by: 2)
    where !Self.precedes((set.ids[index - 2], set.ids[index - 1]), (set.ids[index], set.ids[index + 1])) {
      throw ConfigFileError(file: path, message: "is not sorted (damaged); \(StateProblem.advice)")
    }
    return set
  }

  func encoded() -> [UInt8] {
    var bytes = Self.magic
    bytes.reserveCapacity(Self.magic.count + ids.count * 8)
    for word in ids { withUnsafeBytes(of: word.bigEndian) { bytes.append(contentsOf: $0) } }
    return bytes
  }

  func contains(_ id: ID) -> Bool {
    var low = 0
    var high = count
    while low < high {
      let mid = (low + high) / 2
      let probe = (ids[2 * mid], ids[2 * mid + 1])
      if probe == id { return true }
      if Self.precedes(probe, id) { low = mid + 1 } else { high = mid }
    }
    return false
  }

  /// Adds `new` ids (any order, duplicates and known ones allowed) in one merge.
  mutating func insert(_ new: [ID]) {
    var fresh: [ID] = []
    for id in new.filter({ !contains($0) }).sorted(by: Self.precedes) where fresh.last.map({ $0 != id }) ?? true {
      fresh.append(id)
    }
    guard !fresh.isEmpty else { return }
    var merged: [UInt64] = []
    merged.reserveCapacity(ids.count + fresh.count * 2)
    var old = 0
    for id in fresh {
      while old < ids.count, Self.precedes((ids[old], ids[old + 1]), id) {
        merged.append(ids[old])
        merged.append(ids[old + 1])
        old += 2
      }
      merged.append(id.0)
      merged.append(id.1)
    }
    merged.append(contentsOf: ids[old...])
    ids = merged
  }

  static func precedes(_ a: ID, _ b: ID) -> Bool { a.0 != b.0 ? a.0 < b.0 : a.1 < b.1 }

  /// The 128 bits of an upper- or lower-case UUID text; nil for anything else.
  static func id(_ uuid: String) -> ID? {
    var words: [UInt64] = [0, 0]
    var nibbles = 0
    for byte in uuid.utf8 {
      if byte == UInt8(ascii: "-") { continue }
      let value: UInt8
      switch byte {
      case 0x30...0x39: value = byte - 0x30
      case 0x41...0x46: value = byte - 0x41 + 10
      case 0x61...0x66: value = byte - 0x61 + 10
      default: return nil
      }
      guard nibbles < 32 else { return nil }
      words[nibbles / 16] = words[nibbles / 16] << 4 | UInt64(value)
      nibbles += 1
    }
    return nibbles == 32 ? (words[0], words[1]) : nil
  }
}
