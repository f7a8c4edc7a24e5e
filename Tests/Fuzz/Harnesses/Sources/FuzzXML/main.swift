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
}

func read(_ source: InputSource) -> Outcome {
  let normalizer = RecordNormalizer(stages: [])
  var outcome = Outcome()
  do {
    var summary = try ExportStream(source: source, executor: executor).read(into: normalizer)
    summary.inputSHA256 = nil
    outcome.summary = summary
  } catch {
    // Messages name the input; the two reads name it differently.
    outcome.error = String(describing: error).replacingOccurrences(of: path, with: "fuzz.xml")
  }
  outcome.usable = normalizer.usableElements
  outcome.rejected = normalizer.rejections.total
  // What was not read, folded into names as run.json shows it.
  outcome.notRead = normalizer.notRead.summary()
  return outcome
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let bytes = FuzzDriver.bytes(data, size)
  let inMemory = read(.bytes(bytes, name: "fuzz.xml"))
  // A file that starts like a zip is opened as one; bytes in memory are always XML.
  guard !(bytes.count >= 4 && bytes[0] == 0x50 && bytes[1] == 0x4B && (bytes[2] == 3 || bytes[2] == 5)) else {
    return 0
  }
  FuzzDriver.write(bytes, to: path)
  let onDisk = read(.path(path))
  guard onDisk == inMemory else { fatalError("read from a file: \(onDisk)\nread from memory: \(inMemory)") }
  return 0
}

FuzzDriver.run(testOneInput)
