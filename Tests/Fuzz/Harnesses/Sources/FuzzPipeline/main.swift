import Foundation
import FuzzSupport
import HealthETL

// A pipeline file, then the plan of it: decoding must throw `PipelineError` for anything it cannot
// use, never trap. The file is named as if it lay in Pipelines/, so a relative `codes` reaches the
// shipped workout-codes.json and `timezone` the system's zone database, as in a real run.
let path = FuzzDriver.repository + "/Pipelines/fuzz-input.json"

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  guard let definition = try? PipelineDecoder.decode(Data(FuzzDriver.bytes(data, size)), path: path) else { return 0 }
  _ = try? RunPlanner.plan([definition])
  return 0
}

FuzzDriver.run(testOneInput)
