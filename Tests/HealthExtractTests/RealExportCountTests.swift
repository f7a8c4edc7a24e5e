import Foundation
import HealthExtract
import Testing

/// Every real export in ../shared/fixtures/real parses completely: the reader's element counts
/// equal a plain byte count of the same XML, done by Python (zip members decompressed by
/// Python's zipfile), so neither libxml2 nor libarchive is trusted to check itself.
@Suite(.enabled(if: Fixtures.realAvailable, Comment(rawValue: Fixtures.skipMessage)))
struct RealExportCountTests {
  static let exports: [String] = {
    guard Fixtures.realAvailable,
      let walker = FileManager.default.enumerator(atPath: Fixtures.realRoot.path)
    else { return [] }
    var found: [String] = []
    for case let path as String in walker {
      let lower = path.lowercased()
      guard lower.hasSuffix(".xml") || lower.hasSuffix(".zip") else { continue }
      // Fragments (bare <Workout>/<Record> files) and the CDA document are not exports.
      if path.contains("NicolasReyrolle") || path.hasSuffix("export_cda.xml") { continue }
      found.append(path)
    }
    return found.sorted()
  }()

  static let countScript = """
    import re, sys, zipfile
    path = sys.argv[1]
    if path.endswith('.zip'):
        z = zipfile.ZipFile(path)
        data = None
        for name in z.namelist():
            if name.startswith('__MACOSX/') or name.endswith('export_cda.xml') or name.endswith('/'):
                continue
            head = z.open(name).read(300000)
            if b'<HealthData' in head:
                data = z.read(name); break
    else:
        data = open(path, 'rb').read()
    body = data[data.find(b'<HealthData'):]
    for name in ['Record', 'Workout', 'ActivitySummary', 'Correlation', 'MetadataEntry', 'WorkoutEvent',
                 'WorkoutStatistics', 'WorkoutActivity', 'ClinicalRecord', 'Audiogram', 'InstantaneousBeatsPerMinute']:
        print(name, len(re.findall(rb'<' + name.encode() + rb'[\\s/>]', body)))
    """

  @Test(arguments: exports)
  func countsMatchAByteScan(relativePath: String) throws {
    let path = Fixtures.realRoot.appendingPathComponent(relativePath).path
    var expected: [String: Int] = [:]
    for line in try Fixtures.python(Self.countScript, [path]).split(separator: "\n") {
      let parts = line.split(separator: " ")
      expected[String(parts[0])] = Int(parts[1])
    }
    #expect(expected["Record"] != nil, "python3 could not scan \(relativePath)")
    let handler = CountingHandler()
    let input = try ExportInput.open(path)
    let summary = try ExportXMLReader(handler: handler).read(input)
    #expect(!summary.truncated)
    let elements: [(String, ExportElement)] = [
      ("Record", .record), ("Workout", .workout), ("ActivitySummary", .activitySummary),
      ("Correlation", .correlation), ("MetadataEntry", .metadataEntry), ("WorkoutEvent", .workoutEvent),
      ("WorkoutStatistics", .workoutStatistics), ("WorkoutActivity", .workoutActivity),
      ("ClinicalRecord", .clinicalRecord), ("Audiogram", .audiogram),
      ("InstantaneousBeatsPerMinute", .instantaneousBeatsPerMinute),
    ]
    for (name, element) in elements {
      #expect(handler.counts[element, default: 0] == expected[name, default: -1], "\(relativePath): \(name)")
    }
  }

  @Test func theBrokenIOS16DTDParsesCompletely() throws {
    let path = Fixtures.realRoot.appendingPathComponent("jshrake__healthkit-to-sqlite/example/export.zip").path
    let handler = CountingHandler()
    let summary = try ExportXMLReader(handler: handler).read(try ExportInput.open(path))
    #expect(handler.counts[.workout] == 1)
    #expect(handler.counts[.activitySummary] == 10)
    #expect(handler.counts[.workoutStatistics] == 3)
    #expect(summary.exportVersion == 12)
  }

  @Test(arguments: ["test-export-cn.zip", "test-export2.zip", "test-export.zip"])
  func localizedMemberNamesAreFoundByContent(zip: String) throws {
    let path = Fixtures.realRoot.appendingPathComponent("k0rventen__apple-health-grafana/tests/" + zip).path
    let input = try ExportInput.open(path)
    #expect(input.form == .zip)
    #expect(input.memberName.hasSuffix(".xml"))
    #expect(!input.memberName.hasSuffix("export_cda.xml"))
    if zip == "test-export-cn.zip" { #expect(input.memberName.hasSuffix("导出.xml")) }
    if zip == "test-export2.zip" { #expect(input.memberName.hasSuffix("Export.xml")) }
  }

  @Test func anUnpackedFolderWithACapitalisedNameIsFound() throws {
    let folder = Fixtures.realRoot.appendingPathComponent("paulstaab__healthieR/inst/example_data/Export").path
    let input = try ExportInput.open(folder)
    #expect(input.form == .directory)
    #expect(input.memberName.hasSuffix("apple_health_export/Export.xml"))
  }
}
