import Foundation
import HealthExtract
import Testing

/// Zips and documents that are not what the Health app writes each get their own sentence
/// (Pipelines/docs/input.md, "Bad input"): a password, damage, another encoding, two exports.
@Suite struct ArchiveProblemTests {
  /// 2,000 step records: big enough that a deflated member spans many reads.
  static let document: String = {
    var text = Fixtures.minimalHeader + "<HealthData locale=\"en\">\n"
    for index in 0..<2_000 {
      text +=
        "<Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"S\" value=\"\(1000 + index)\" startDate=\"2024-01-01 10:00:00 +0100\" endDate=\"2024-01-01 10:05:00 +0100\"/>\n"
    }
    return text + "</HealthData>\n"
  }()

  /// Writes `document` into a zip with Python's zipfile (an implementation independent of the
  /// reader), then runs `patch` (Python, `data` = the zip's bytes) over the archive.
  static func zip(compression: String, patch: String, in directory: URL) throws -> String {
    let xml = directory.appendingPathComponent("source.xml")
    try document.write(to: xml, atomically: true, encoding: .utf8)
    let zip = directory.appendingPathComponent("export.zip").path
    _ = try Fixtures.python(
      """
      import sys, zipfile
      with zipfile.ZipFile(sys.argv[2], 'w', zipfile.\(compression)) as z:
          z.write(sys.argv[1], 'apple_health_export/export.xml')
      data = bytearray(open(sys.argv[2], 'rb').read())
      \(patch)
      open(sys.argv[2], 'wb').write(data)
      """, [xml.path, zip])
    return zip
  }

  static func read(_ path: String, allowTruncated: Bool = false) throws -> ReadSummary {
    try ExportXMLReader(handler: CountingHandler(), allowTruncated: allowTruncated).read(try ExportInput.open(path))
  }

  /// Setting bit 0 of the general-purpose flags (local header offset 6, central directory entry
  /// offset 8) is what marks a member encrypted; before, the reader called it "cut short".
  @Test func anEncryptedMemberIsNamedAsSuch() throws {
    let directory = try Fixtures.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let zip = try Self.zip(
      compression: "ZIP_DEFLATED",
      patch: """
        data[6] |= 1
        central = data.rfind(b'PK\\x01\\x02')
        data[central + 8] |= 1
        """, in: directory)
    #expect(throws: ExtractError.encrypted(path: zip, member: "apple_health_export/export.xml")) {
      _ = try Self.read(zip, allowTruncated: true)
    }
    #expect(ExtractError.encrypted(path: zip, member: "m").description.contains("without adding a password"))
  }

  /// A stored member with one digit changed (`value="1500"` → `"2500"`) is still well-formed XML:
  /// only the CRC tells. Before, inspect accepted it as "truncated" and `--allow-truncated` ran on.
  @Test func aBadCRCIsDamageEvenWithAllowTruncated() throws {
    let directory = try Fixtures.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let zip = try Self.zip(
      compression: "ZIP_STORED",
      patch: """
        at = data.find(b'value="1500"')
        data[at + 7] = ord('2')
        """, in: directory)
    #expect {
      _ = try Self.read(zip, allowTruncated: true)
    } throws: { error in
      guard case ExtractError.damaged(_, let member, let message) = error else { return false }
      return member == "apple_health_export/export.xml" && message.contains("CRC")
    }
  }

  /// A flipped byte inside a deflate stream makes libxml2 fail first (broken XML); the rest of the
  /// member is then read so the archive's own check names the real cause.
  @Test func aFlippedDeflateByteIsDamageNotBrokenXML() throws {
    let directory = try Fixtures.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let zip = try Self.zip(
      compression: "ZIP_DEFLATED",
      patch: """
        start = 30 + len('apple_health_export/export.xml')
        end = data.rfind(b'PK\\x01\\x02')
        data[(start + end) // 2] ^= 0x55
        """, in: directory)
    #expect {
      _ = try Self.read(zip)
    } throws: { error in
      guard case ExtractError.damaged = error else { return false }
      return "\(error)".contains("the zip archive is damaged")
    }
  }

  /// `iconv -t UTF-16` of a real export: before, "it is not XML (Document is empty)".
  @Test(arguments: [
    (String.Encoding.utf16, "UTF-16LE"), (.utf16BigEndian, "UTF-16BE"), (.utf16LittleEndian, "UTF-16LE"),
  ])
  func aUTF16ExportIsRefusedByName(encoding: String.Encoding, name: String) throws {
    let directory = try Fixtures.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("export.xml")
    try #require(Self.document.data(using: encoding)).write(to: file)
    #expect(throws: ExtractError.unsupportedEncoding(path: file.path, encoding: name)) {
      _ = try Self.read(file.path)
    }
    // In a folder it is still found (by its UTF-16 `<HealthData`) and refused by name.
    #expect(throws: ExtractError.unsupportedEncoding(path: directory.path + ": " + file.path, encoding: name)) {
      _ = try Self.read(directory.path)
    }
  }

  /// libxml2 recognizes EBCDIC by its first bytes (`<?xm` is 4C 6F A7 94) and would decode it
  /// itself, DOCTYPE included, where the byte filter sees no `<` to blank.
  @Test func anEBCDICExportIsRefusedByName() throws {
    let directory = try Fixtures.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("export.xml")
    // `<?xml version="1.0"?><!DOCTYPE HealthData [<!ENTITY a "a">]><HealthData/>` in code page 037.
    let ebcdic = try Self.iconv(
      "<?xml version=\"1.0\"?><!DOCTYPE HealthData [<!ENTITY a \"a\">]><HealthData/>", to: "IBM037")
    #expect(ebcdic.starts(with: [0x4C, 0x6F, 0xA7, 0x94]))
    try Data(ebcdic).write(to: file)
    #expect(throws: ExtractError.unsupportedEncoding(path: file.path, encoding: "EBCDIC")) {
      _ = try Self.read(file.path)
    }
  }

  static func iconv(_ text: String, to encoding: String) throws -> [UInt8] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/iconv")
    process.arguments = ["-f", "UTF-8", "-t", encoding]
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    input.fileHandleForWriting.write(Data(text.utf8))
    try input.fileHandleForWriting.close()
    let bytes = output.fileHandleForReading.readToEndRetryingInterrupts()
    process.waitUntilExit()
    return Array(bytes)
  }

  @Test(arguments: ["EBCDIC-US", "ISO-8859-1", "x-unknown"])
  func anotherDeclaredEncodingIsRefusedByName(encoding: String) throws {
    let text = Self.document.replacingOccurrences(of: "encoding=\"UTF-8\"", with: "encoding = '\(encoding)'")
    #expect(throws: ExtractError.unsupportedEncoding(path: "test.xml", encoding: encoding)) {
      _ = try Fixtures.read(text)
    }
    // UTF-8 however it is spelled, and its subset US-ASCII, are read.
    for spelling in ["utf-8", "UTF8", "US-ASCII"] {
      let same = Self.document.replacingOccurrences(of: "encoding=\"UTF-8\"", with: "encoding=\"\(spelling)\"")
      #expect(try Fixtures.read(same).0.counts[.record] == 2_000)
    }
  }

  /// Two exports in one folder or zip: before, the first in name or archive order was read and
  /// the other ignored without a word.
  @Test func twoExportsInAFolderOrZipAreRefused() throws {
    let directory = try Fixtures.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let inner = directory.appendingPathComponent("apple_health_export")
    try FileManager.default.createDirectory(at: inner, withIntermediateDirectories: true)
    try Self.document.write(to: inner.appendingPathComponent("export.xml"), atomically: true, encoding: .utf8)
    try Self.document.write(to: inner.appendingPathComponent("exportar.xml"), atomically: true, encoding: .utf8)
    #expect(
      throws: ExtractError.severalExports(
        path: directory.path, first: inner.path + "/export.xml", second: inner.path + "/exportar.xml")
    ) { _ = try ExportInput.open(directory.path) }

    let zip = directory.appendingPathComponent("two.zip").path
    _ = try Fixtures.python(
      """
      import sys, zipfile
      with zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED) as z:
          z.write(sys.argv[1] + '/export.xml', 'apple_health_export/export.xml')
          z.writestr('apple_health_export/workout-routes/route_1.gpx', '<?xml version="1.0"?><gpx/>')
          z.write(sys.argv[1] + '/exportar.xml', 'apple_health_export/exportar.xml')
      """, [inner.path, zip])
    #expect(
      throws: ExtractError.severalExports(
        path: zip, first: "apple_health_export/export.xml", second: "apple_health_export/exportar.xml")
    ) { _ = try ExportInput.open(zip) }

    // One export plus other XML (the clinical document, a route) is fine.
    try FileManager.default.removeItem(at: inner.appendingPathComponent("exportar.xml"))
    try "<?xml version=\"1.0\"?><gpx/>".write(
      to: inner.appendingPathComponent("route.xml"), atomically: true, encoding: .utf8)
    #expect(try ExportInput.open(directory.path).memberName == inner.path + "/export.xml")
  }
}
