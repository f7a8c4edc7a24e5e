import FuzzSupport
import Glibc
import HealthETL
import HealthExtract
import RunExecution

// The whole run of the shipped default and samples pipelines and a beats job over an export given as bytes: parse,
// staging, every stage's consume and finish (sleep nights, workouts and server records, swim laps,
// the interval statistics, a file per sample type and element name, named from the export), zone
// resolution, the output transaction and the delivery state. Written to a fresh folder in memory
// per input. Thrown `ETLError`s are expected; a trap is a bug.
// Plus a beats job (beat-to-beat heart rate), which no shipped pipeline without statistics runs.
let plan: RunPlan = {
  do {
    let beats = try PipelineDecoder.decode(
      Array(#"{"version": 1, "name": "beats", "jobs": [{"name": "beats", "kind": "beats"}]}"#.utf8),
      path: FuzzDriver.repository + "/Pipelines/fuzz-beats.json")
    return try RunPlanner.plan(
      ["default", "samples"].map { try PipelineDecoder.load(FuzzDriver.repository + "/Pipelines/\($0).json") }
        + [beats])
  } catch {
    fatalError("the shipped default and samples pipelines do not load: \(error)")
  }
}()

/// The process's threads, as the command makes them once.
let executor = RunExecutor.forThisMachine()

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  // The run stages its outputs in a sibling of the output folder: both go when `run/` does.
  let folder = FuzzDriver.scratchDirectory + "/run"
  let out = folder + "/out"
  mkdir(folder, 0o700)
  var options = ExportRun.RunOptions(
    input: .bytes(FuzzDriver.bytes(data, size), name: "fuzz.xml"), plan: plan, executor: executor)
  options.outputDirectory = out
  options.quiet = true
  _ = try? ExportRun.run(options)
  FuzzDriver.removeTree(folder)
  return 0
}

FuzzDriver.run(testOneInput)
