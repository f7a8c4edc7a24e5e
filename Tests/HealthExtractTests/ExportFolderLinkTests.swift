import Foundation
import HealthExtract
import Testing

/// An unpacked export folder is read without following links out of it and without opening
/// anything but regular files (Pipelines/docs/input.md, "Input"; Pipelines/docs/workouts.md, "Routes"). A FIFO opened for reading
/// waits for a writer, so a test that regresses hangs: the time limit (minutes) only turns that
/// hang into a failure.
@Suite(.timeLimit(.minutes(3))) struct ExportFolderLinkTests {
  static let gpx = "<?xml version=\"1.0\"?><gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"/></trkseg></trk></gpx>\n"
  static let linkRefusal = "a symbolic link (links inside an export folder are not followed)"

  /// `work/export/` (the export folder) and `work/outside/` beside it.
  static func folders() throws -> (work: URL, export: URL, outside: URL) {
    let work = try Fixtures.temporaryDirectory()
    let export = work.appendingPathComponent("export")
    let outside = work.appendingPathComponent("outside")
    try FileManager.default.createDirectory(
      at: export.appendingPathComponent("workout-routes"), withIntermediateDirectories: true)
    try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
    return (work, export, outside)
  }

  static func link(_ path: URL, to target: String) throws {
    try FileManager.default.createSymbolicLink(atPath: path.path, withDestinationPath: target)
  }

  static func fifo(_ path: URL) throws {
    #expect(mkfifo(path.path, 0o644) == 0)
  }

  /// What `forEachFile` hands on: each file's first bytes, or why it cannot be read.
  static func routeFiles(_ export: URL) throws -> [String: String] {
    var seen: [String: String] = [:]
    try ExportInput.forEachFile(of: .folder(export.path), in: "workout-routes") { stream in
      var buffer = [UInt8](repeating: 0, count: 256)
      do {
        let count = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
        seen[stream.relativePath] = String(decoding: buffer[0..<count], as: UTF8.self)
      } catch let error as ExtractError {
        if case .unreadable(_, let reason) = error { seen[stream.relativePath] = "refused: " + reason }
      } catch {
        seen[stream.relativePath] = "\(error)"
      }
    }
    return seen
  }

  /// Links to a GPX file beside the export, to `/dev/zero`, to a FIFO outside, to `/etc/passwd`
  /// and to `/proc/self/environ`, a link to a file of the same folder, and a FIFO in the folder:
  /// none opened, each handed on as a file that cannot be read, with the reason. The one regular
  /// file is read.
  @Test func routeFilesAreNeverOpenedThroughLinksOrAsDevices() throws {
    let (work, export, outside) = try Self.folders()
    defer { try? FileManager.default.removeItem(at: work) }
    let routes = export.appendingPathComponent("workout-routes")
    try Self.gpx.write(to: routes.appendingPathComponent("real.gpx"), atomically: true, encoding: .utf8)
    try Self.gpx.replacingOccurrences(of: "lat=\"1\"", with: "lat=\"66\"").write(
      to: outside.appendingPathComponent("secret.gpx"), atomically: true, encoding: .utf8)
    try Self.fifo(outside.appendingPathComponent("fifo"))
    try Self.link(routes.appendingPathComponent("outside.gpx"), to: outside.appendingPathComponent("secret.gpx").path)
    try Self.link(routes.appendingPathComponent("relative.gpx"), to: "../../outside/secret.gpx")
    try Self.link(routes.appendingPathComponent("zero.gpx"), to: "/dev/zero")
    try Self.link(routes.appendingPathComponent("fifo.gpx"), to: outside.appendingPathComponent("fifo").path)
    try Self.link(routes.appendingPathComponent("passwd.gpx"), to: "/etc/passwd")
    try Self.link(routes.appendingPathComponent("environ.gpx"), to: "/proc/self/environ")
    try Self.link(routes.appendingPathComponent("inside.gpx"), to: "real.gpx")
    try Self.fifo(routes.appendingPathComponent("pipe.gpx"))
    let seen = try Self.routeFiles(export)
    let refused = "refused: " + Self.linkRefusal
    #expect(
      seen == [
        "workout-routes/real.gpx": Self.gpx, "workout-routes/outside.gpx": refused,
        "workout-routes/relative.gpx": refused, "workout-routes/zero.gpx": refused,
        "workout-routes/fifo.gpx": refused, "workout-routes/passwd.gpx": refused,
        "workout-routes/environ.gpx": refused, "workout-routes/inside.gpx": refused,
        "workout-routes/pipe.gpx": "refused: a FIFO, not a file (never opened)",
      ])
  }

  /// `workout-routes` itself a link to a folder outside: not followed; the listing fails with the
  /// reason (every file a workout names is then missing, "not reached").
  @Test func aLinkedRoutesFolderIsNotFollowed() throws {
    let (work, export, outside) = try Self.folders()
    defer { try? FileManager.default.removeItem(at: work) }
    try Self.gpx.write(to: outside.appendingPathComponent("route.gpx"), atomically: true, encoding: .utf8)
    let routes = export.appendingPathComponent("workout-routes")
    try FileManager.default.removeItem(at: routes)
    try Self.link(routes, to: outside.path)
    #expect(throws: ExtractError.unreadable(path: "workout-routes", reason: Self.linkRefusal)) {
      try Self.routeFiles(export)
    }
  }

  /// The main XML of a folder is looked for the same way: a link named `export.xml` (to a real
  /// export outside, or to `/dev/zero`) or a FIFO named so is not opened, and the refusal says so.
  /// The folder itself may be a link, and a link the user names as the export is theirs: both
  /// are followed.
  @Test func theMainFileIsNeverReachedThroughALinkInsideTheFolder() throws {
    let (work, export, outside) = try Self.folders()
    defer { try? FileManager.default.removeItem(at: work) }
    let document = ExportInputTests.document
    try document.write(to: outside.appendingPathComponent("export.xml"), atomically: true, encoding: .utf8)
    try Self.link(export.appendingPathComponent("export.xml"), to: outside.appendingPathComponent("export.xml").path)
    let expected = { (what: String) in
      ExtractError.notAnExport(
        path: export.path,
        reason:
          "the folder holds no XML file that starts with <HealthData> (export_cda.xml is not the main file); "
          + "not opened: export.xml, \(what)")
    }
    #expect(throws: expected(Self.linkRefusal)) { try ExportInput.open(export.path) }
    try FileManager.default.removeItem(at: export.appendingPathComponent("export.xml"))
    try Self.fifo(export.appendingPathComponent("export.xml"))
    #expect(throws: expected("a FIFO, not a file (never opened)")) { try ExportInput.open(export.path) }

    // A link to the folder, and a link given as the export: the user's own.
    let linkedFolder = work.appendingPathComponent("linked-folder")
    try Self.link(linkedFolder, to: outside.path)
    #expect(try ExportInput.open(linkedFolder.path).memberName == linkedFolder.path + "/export.xml")
    let linkedFile = work.appendingPathComponent("linked.xml")
    try Self.link(linkedFile, to: outside.appendingPathComponent("export.xml").path)
    #expect(try ExportInput.open(linkedFile.path).form == .xml)
  }
}
