import Foundation
import HealthExtract
import HealthModel
import Testing

@testable import HealthETL

/// An output error as a failed system call makes it: the system's words and its error number.
private func system(_ path: String, _ code: Int32, creating: Bool = false) -> OutputError {
  let reason = String(cString: strerror(code))
  return creating
    ? .cannotCreate(path: path, reason: reason, code: code) : .ioError(path: path, reason: reason, code: code)
}

/// Whose fault a failed export of a night is (Pipelines/docs/nightly.md, "Runs and the nightly batch"),
/// and the count of nights an export failed, kept in the state.
@Suite struct NightlyFaultTests {
  @Test(arguments: [
    (ETLError.extract(.notAnExport(path: "a.zip", reason: "no export.xml")), NightlyBatch.Fault.export),
    (.extract(.truncated(path: "a.xml", line: 9, message: "cut")), .export),
    (.extract(.readFailed(path: "a.zip", reason: String(cString: strerror(EIO)))), .machine),
    (.output(system("out/x.csv", ENOSPC)), .machine),
    (.output(system("out/x.csv", EDQUOT)), .machine),
    (.output(system("out/x.csv", EACCES, creating: true)), .machine),
    (.output(system("out/x.csv", EROFS, creating: true)), .machine),
    (.output(.tooManyOpenFiles(path: "out/x.csv", limit: 1024)), .machine),
    (.output(.locked(path: "out")), .machine),
    (.zone(.databaseMissing(path: "/usr/share/zoneinfo")), .machine),
    // SQLite and libxlsxwriter say a full disk in words of their own; the number decides.
    (
      .output(
        .ioError(
          path: "health.sqlite", reason: "SQLite refused `COMMIT`: database or disk is full (code 13)", code: ENOSPC)),
      .machine
    ),
    // What an export's content could cause: a name too long, a file too large, a defect.
    (.output(system("out/x.csv", ENAMETOOLONG, creating: true)), .unclear),
    (.output(system("out/x.csv", EFBIG)), .unclear),
    (.output(.ioError(path: "out/.scratch/s", reason: "staged rows vanished")), .unclear),
    // Words alone never make a machine's fault: a message that quotes the system's is unclear.
    (.output(.ioError(path: "out/x.csv", reason: String(cString: strerror(ENOSPC)))), .unclear),
    // No descriptor left, whatever was being opened (issue 31.4): the export, a workbook sheet's
    // row file (libxlsxwriter's refusal, with the errno it left), a pipeline, a zone.
    (.extract(.tooManyOpenFiles(path: "inbox/a.zip", limit: 32)), .machine),
    (.output(.writing("health.xlsx", reason: "the sheet was refused", code: EMFILE)), .machine),
    (.output(.ioError(path: "health.xlsx", reason: "the sheet was refused", code: EMFILE)), .machine),
    (.output(.ioError(path: "health.xlsx", reason: "the sheet was refused", code: ENOMEM)), .machine),
    (.pipeline(.unreadable("Pipelines/report/report.html", code: EMFILE)), .machine),
    (.zone(.tooManyOpenFiles(path: "/usr/share/zoneinfo/UTC")), .machine),
    // Outputs past the budget for the export's size are the export's (issue 31.2).
    (
      .output(.overBudget(path: "out/ecg_samples.csv", bytes: 70_000_001, limit: 70_000_000, inputBytes: 75_000)),
      .export
    ),
  ])
  func eachFailureHasItsFault(error: ETLError, fault: NightlyBatch.Fault) {
    #expect(NightlyBatch.Fault.of(error) == fault, "\(error)")
  }

  /// Out of descriptors is said as such, with the limit's exit code (73), wherever it was met;
  /// before, a sheet's refusal was 74 without a number, a template "not readable" (64).
  @Test func runningOutOfDescriptorsIsSaidAsSuchEverywhere() {
    let errors: [ETLError] = [
      .extract(.openFailure(path: "inbox/a.zip", code: EMFILE)),
      .output(.writing("health.xlsx", reason: "the sheet was refused", code: EMFILE)),
      .output(.creating("out/x.csv", reason: "Too many open files", code: ENFILE)),
      .pipeline(.unreadable("Pipelines/report/report.html", code: EMFILE)),
      .state(.unreadable("out/.healthetl-state.json", code: EMFILE)),
      .zone(.tooManyOpenFiles(path: "/usr/share/zoneinfo/UTC")),
    ]
    for error in errors {
      #expect(error.exitCode == .cannotCreate, "\(error)")
      #expect(error.description.lowercased().contains("too many open files"), "\(error)")
      #expect(error.description.contains("ulimit -n"), "\(error)")
    }
    // Other codes keep their meaning.
    #expect(ETLError.extract(.openFailure(path: "a.zip", code: EACCES)).exitCode == .noInput)
    #expect(ETLError.pipeline(.unreadable("p.json", code: EACCES)).exitCode == .usage)
  }

  @Test func failingExportsAreKeptInAVersionFourState() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("failing-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    var state = DeliveryState()
    state.failing = [
      .init(
        export: .init(sha256: String(repeating: "ab", count: 32), name: "a.zip", bytes: 12), exitCode: 74,
        reason: "I/O error writing x: File too large", nights: 2)
    ]
    let transaction = try OutputTransaction(outputDirectory: folder.path)
    try state.write(to: transaction)
    try transaction.commit()
    let text = try String(contentsOf: folder.appendingPathComponent(ToolFiles.state), encoding: .utf8)
    #expect(text.hasPrefix("{\n  \"version\": 4,\n"))
    #expect(
      text.contains(
        #"{"sha256": "\#(String(repeating: "ab", count: 32))", "name": "a.zip", "bytes": 12, "exitCode": 74, "reason": "I/O error writing x: File too large", "nights": 2}"#
      ))
    #expect(try DeliveryState.load(from: folder.path) == state)
    // An earlier version has no such list: a state that says version 3 and has one is refused.
    let older = text.replacingOccurrences(of: "\"version\": 4", with: "\"version\": 3")
    #expect(throws: ConfigFileError.self) { try DeliveryState.decode(Array(older.utf8), path: "state") }
  }

  /// The export a night is running is kept (`attempt`), as version 6 while it is set, so that a
  /// night that finds it still set counts a run that died (issue 31.3).
  @Test func anAttemptIsKeptInAVersionSixState() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("attempt-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    var state = DeliveryState()
    state.attempt = .init(sha256: String(repeating: "cd", count: 32), name: "b.zip", bytes: 7)
    let transaction = try OutputTransaction(outputDirectory: folder.path)
    try state.write(to: transaction)
    try transaction.commit()
    let text = try String(contentsOf: folder.appendingPathComponent(ToolFiles.state), encoding: .utf8)
    #expect(text.hasPrefix("{\n  \"version\": 6,\n"))
    #expect(
      text.contains(#""attempt": {"sha256": "\#(String(repeating: "cd", count: 32))", "name": "b.zip", "bytes": 7},"#))
    #expect(try DeliveryState.load(from: folder.path) == state)
    let older = text.replacingOccurrences(of: "\"version\": 6", with: "\"version\": 5")
    #expect(throws: ConfigFileError.self) { try DeliveryState.decode(Array(older.utf8), path: "state") }
    // Cleared, the state is what an earlier healthetl reads.
    state.attempt = nil
    let again = try OutputTransaction(outputDirectory: folder.path)
    try state.write(to: again)
    try again.commit()
    let cleared = try String(contentsOf: folder.appendingPathComponent(ToolFiles.state), encoding: .utf8)
    #expect(cleared.hasPrefix("{\n  \"version\": 2,\n") && !cleared.contains("attempt"))
  }
}
