import FuzzSupport
import HealthETL
import HealthExtract
import RunExecution

// The export reader on bytes: libxml2 behind the byte filter (DTD blanked; attribute names with
// spaces repaired in a document without one), on its reader thread, feeding the staging layer
// (records, correlations, workouts, generic elements, what was not read). Thrown `ExtractError`s
// are expected; a trap, a hang or a sanitizer report is a bug.
//
// The same bytes are then read again as a file in /dev/shm, the way a run reads an export on disk:
// on the read-ahead thread, which scans each chunk for control characters (a clean chunk is not
// scanned again by the byte filter) and hashes the file. Both reads must agree on everything they
// report; a difference is a bug of the read-ahead path.
//
// Both are done again with `recover` (libxml2's XML_PARSE_RECOVER, the read's own account of what
// it left out): a recovering read never fails on broken XML, agrees between memory and file, gives
// a consistent account (`Recovery`), and reads an input it found nothing wrong with exactly as the
// plain read does.
let path = FuzzDriver.scratchDirectory + "/export.xml"
/// The process's threads, as the command makes them once.
let executor = RunExecutor.forThisMachine()

/// What a read reports, in a form two reads of the same bytes can be compared by.
struct Outcome: Equatable {
  var summary: ReadSummary?
  var error: String?
  var usable = 0
  var rejected = 0
  var notRead: String?
  /// The read failed on broken XML (malformed or cut short).
  var brokenXML = false
}

func read(_ source: InputSource, recover: Bool = false) -> Outcome {
  let normalizer = RecordNormalizer(stages: [])
  var outcome = Outcome()
  do {
    var summary = try ExportStream(source: source, recover: recover, executor: executor).read(into: normalizer)
    summary.inputSHA256 = nil
    outcome.summary = summary
  } catch {
    // Messages name the input; the two reads name it differently.
    outcome.error = String(describing: error).replacingOccurrences(of: path, with: "fuzz.xml")
    switch error {
    case .malformed, .truncated: outcome.brokenXML = true
    default: break
    }
  }
  outcome.usable = normalizer.usableElements
  outcome.rejected = normalizer.rejections.total
  // What was not read, folded into names as run.json shows it.
  outcome.notRead = normalizer.notRead.summary()
  return outcome
}

/// What a recovering read must be, against the plain read of the same bytes.
func check(recovered: Outcome, plain: Outcome) {
  guard !recovered.brokenXML else { fatalError("a recovering read failed on broken XML: \(recovered)") }
  guard let summary = recovered.summary else { return }
  guard let recovery = summary.recovery else { fatalError("a recovering read without its account: \(recovered)") }
  guard recovery.problems.count == min(recovery.errors, Recovery.listed),
    recovery.skipped.count <= Recovery.listed,
    recovery.skipped.allSatisfy({ $0.firstLine <= $0.lastLine && $0.elements >= 0 && $0.bytes >= 0 }),
    recovery.skipped.filter({ $0.action == .dropped }).reduce(0, { $0 + $1.elements }) <= recovery.droppedTotal
      || recovery.skippedOmitted > 0
  else { fatalError("an inconsistent account: \(recovery)") }
  // Nothing wrong found: the same as the plain read.
  if recovery.errors == 0, recovery.skipped.isEmpty, var plainSummary = plain.summary {
    plainSummary.recovery = Recovery()
    var same = plain
    same.summary = plainSummary
    guard recovered == same else { fatalError("recovering: \(recovered)\nplain: \(plain)") }
  }
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let bytes = FuzzDriver.bytes(data, size)
  let inMemory = read(.bytes(bytes, name: "fuzz.xml"))
  let recoveredInMemory = read(.bytes(bytes, name: "fuzz.xml"), recover: true)
  check(recovered: recoveredInMemory, plain: inMemory)
  // A file that starts like a zip is opened as one; bytes in memory are always XML.
  guard !(bytes.count >= 4 && bytes[0] == 0x50 && bytes[1] == 0x4B && (bytes[2] == 3 || bytes[2] == 5)) else {
    return 0
  }
  FuzzDriver.write(bytes, to: path)
  let onDisk = read(.path(path))
  guard onDisk == inMemory else { fatalError("read from a file: \(onDisk)\nread from memory: \(inMemory)") }
  let recoveredOnDisk = read(.path(path), recover: true)
  guard recoveredOnDisk == recoveredInMemory else {
    fatalError("recovering from a file: \(recoveredOnDisk)\nrecovering from memory: \(recoveredInMemory)")
  }
  return 0
}

FuzzDriver.run(testOneInput)
