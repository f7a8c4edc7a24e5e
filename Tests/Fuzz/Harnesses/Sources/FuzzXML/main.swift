import FuzzSupport
import HealthETL
import HealthExtract

// The export reader on bytes: libxml2 behind the byte filter (DTD blanked; attribute names with
// spaces repaired in a document without one), on its reader thread, feeding the staging layer
// (records, correlations, workouts, generic elements, what was not read). Thrown `ExtractError`s
// are expected; a trap, a hang or a sanitizer report is a bug.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let normalizer = RecordNormalizer(stages: [])
  _ = try? ExportStream(source: .bytes(FuzzDriver.bytes(data, size), name: "fuzz.xml")).read(into: normalizer)
  // What was not read, folded into names as run.json shows it.
  _ = normalizer.notRead.summary()
  return 0
}

FuzzDriver.run(testOneInput)
