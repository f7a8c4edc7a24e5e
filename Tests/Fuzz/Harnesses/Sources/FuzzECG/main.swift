import FuzzSupport
import HealthExtract

// The ECG reader on bytes: header lines (CSV quoting, localised keys), samples with a decimal
// point or comma. A bad file is an `ECGReadResult.problem`; a trap, a hang or a sanitizer report
// is a bug.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  var samples = 0
  let result = ECGReader.read(
    bytes: FuzzDriver.bytes(data, size),
    header: { header in
      // Some inputs stop at the header, like a file the job does not want.
      header.recordedDate != nil || size % 7 != 0
    },
    sample: { microvolts in
      if !microvolts.isFinite { fatalError("a sample that is not finite: \(microvolts)") }
      samples += 1
    })
  // The count the reader reports is the count it handed on, whatever the file.
  if result.samples != samples { fatalError("ECGReader reported \(result.samples) samples, handed on \(samples)") }
  // A problem is one line.
  if let problem = result.problem, problem.contains("\n") { fatalError("a problem of several lines: \(problem)") }
  return 0
}

FuzzDriver.run(testOneInput)
