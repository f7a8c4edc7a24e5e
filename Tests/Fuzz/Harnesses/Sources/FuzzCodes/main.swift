import FuzzSupport
import HealthETL

// The workout code table (its own strict JSON reader): `ConfigFileError` or a table,
// never a trap.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  _ = try? WorkoutCodeTable.parse(FuzzDriver.bytes(data, size), file: "fuzz-codes.json")
  return 0
}

FuzzDriver.run(testOneInput)
