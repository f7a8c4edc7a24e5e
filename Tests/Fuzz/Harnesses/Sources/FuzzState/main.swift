import FuzzSupport
import HealthETL

// The delivery state of an output folder (`.healthetl-state.json`), which every run and night
// reads back strictly: a `ConfigFileError` or a state, never a trap.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  _ = try? DeliveryState.decode(FuzzDriver.bytes(data, size), path: "fuzz-state.json")
  return 0
}

FuzzDriver.run(testOneInput)
