import FuzzSupport
import HealthETL

// A clinical record's FHIR resource file (`FHIRResourceSummary.summarize`): the strict JSON
// reader, then the values a row takes from the resource. A file that is no resource is a problem
// of one line; a summary's values are never empty and hold no control character but tab, line
// feed and carriage return (the others, and DEL, become spaces), and as many were replaced as it
// says. A trap, a hang or a sanitizer report is a bug.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let summary: FHIRResourceSummary
  do {
    summary = try FHIRResourceSummary.summarize(FuzzDriver.bytes(data, size))
  } catch {
    if error.description.contains("\n") { fatalError("a problem of several lines: \(error.description)") }
    return 0
  }
  var spaces = 0
  for value in [summary.resourceType, summary.codeSystem, summary.code, summary.display, summary.effective] {
    guard let value else { continue }
    if value.isEmpty { fatalError("an empty value") }
    for scalar in value.unicodeScalars {
      if (scalar.value < 0x20 && ![0x09, 0x0A, 0x0D].contains(scalar.value)) || scalar.value == 0x7F {
        fatalError("a control character U+\(String(scalar.value, radix: 16)) in \(value.debugDescription)")
      }
      if scalar == " " { spaces += 1 }
    }
  }
  // Each replaced character became a space.
  if summary.replacedControlCharacters > spaces {
    fatalError("\(summary.replacedControlCharacters) replaced, but \(spaces) spaces in the values")
  }
  return 0
}

FuzzDriver.run(testOneInput)
