import FuzzSupport
import HealthETL

// The delivery state of an output folder (`.healthetl-state.json`), which the nightly batch
// reads back: `OutputError` or a state, never a trap. The reader only takes a folder today, so
// the input is written into one per execution; a bytes entry point replaces the two lines below.
let directory = FuzzDriver.scratchDirectory

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzDriver.write(FuzzDriver.bytes(data, size), to: directory + "/" + ToolFiles.state)
  _ = try? DeliveryState.load(from: directory)
  return 0
}

FuzzDriver.run(testOneInput)
