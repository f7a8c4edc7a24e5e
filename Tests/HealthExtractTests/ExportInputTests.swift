import Foundation
import HealthExtract
import Testing

@Suite struct ExportInputTests {
  static let document = Fixtures.minimalHeader + BadInputTests.body

  @Test func aMissingPathIsNotFound() {
    #expect(throws: ExtractError.notFound(path: "/nonexistent/export.zip")) {
      try ExportInput.open("/nonexistent/export.zip")
    }
  }

  @Test func aFolderIsSearchedByContentNotName() throws {
    let directory = try Fixtures.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let inner = directory.appendingPathComponent("apple_health_export")
    try FileManager.default.createDirectory(at: inner, withIntermediateDirectories: true)
    try "<?xml version=\"1.0\"?><ClinicalDocument/>".write(
      to: inner.appendingPathComponent("export_cda.xml"), atomically: true, encoding: .utf8)
    try "<?xml version=\"1.0\"?><gpx/>".write(
      to: inner.appendingPathComponent("a.xml"), atomically: true, encoding: .utf8)
    try Self.document.write(to: inner.appendingPathComponent("导出.xml"), atomically: true, encoding: .utf8)
    let input = try ExportInput.open(directory.path)
    #expect(input.memberName.hasSuffix("导出.xml"))
    let handler = CountingHandler()
    _ = try ExportXMLReader(handler: handler).read(input)
    #expect(handler.counts[.record] == 2)
  }

  /// A zip64 archive written by Python's zipfile (force_zip64), with the export under a
  /// localized name after a decoy member: found by content and stream-decompressed.
  @Test func readsZip64ArchivesWrittenByAnotherTool() throws {
    let directory = try Fixtures.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let xml = directory.appendingPathComponent("source.xml")
    try Self.document.write(to: xml, atomically: true, encoding: .utf8)
    let zip = directory.appendingPathComponent("exportar.zip").path
    _ = try Fixtures.python(
      """
      import sys, zipfile
      with zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED) as z:
          with z.open('apple_health_export/export_cda.xml', 'w', force_zip64=True) as f:
              f.write(b'<?xml version="1.0"?><ClinicalDocument/>')
          with z.open('apple_health_export/exportar.xml', 'w', force_zip64=True) as f:
              f.write(open(sys.argv[1], 'rb').read())
      """, [xml.path, zip])
    let input = try ExportInput.open(zip)
    #expect(input.form == .zip)
    #expect(input.memberName == "apple_health_export/exportar.xml")
    let handler = CountingHandler()
    _ = try ExportXMLReader(handler: handler).read(input)
    #expect(handler.counts[.record] == 2)
  }

  @Test func aZipWithoutAnExportSaysSo() throws {
    let directory = try Fixtures.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let zip = directory.appendingPathComponent("photos.zip").path
    _ = try Fixtures.python(
      "import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w') as z: z.writestr('a.txt', 'hello')", [zip])
    #expect {
      _ = try ExportInput.open(zip)
    } throws: { error in
      guard case ExtractError.notAnExport(_, let reason) = error else { return false }
      return reason.contains("holds no export XML")
    }
  }

  @Test func aZipCutShortIsTruncation() throws {
    let directory = try Fixtures.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let xml = directory.appendingPathComponent("export.xml")
    var big = Fixtures.minimalHeader + "<HealthData locale=\"en\">\n"
    for index in 0..<20_000 {
      big +=
        "<Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"S\" value=\"\(index)\" startDate=\"2024-01-01 10:00:00 +0100\" endDate=\"2024-01-01 10:05:00 +0100\"/>\n"
    }
    big += "</HealthData>\n"
    try big.write(to: xml, atomically: true, encoding: .utf8)
    let zip = directory.appendingPathComponent("export.zip").path
    _ = try Fixtures.python(
      """
      import sys, zipfile
      with zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED) as z:
          z.write(sys.argv[1], 'apple_health_export/export.xml')
      data = open(sys.argv[2], 'rb').read()
      open(sys.argv[2], 'wb').write(data[: len(data) // 2])
      """, [xml.path, zip])
    #expect {
      let input = try ExportInput.open(zip)
      _ = try ExportXMLReader(handler: CountingHandler()).read(input)
    } throws: { error in
      guard case ExtractError.truncated(_, let line, _) = error else { return false }
      return line > 10
    }
  }
}
