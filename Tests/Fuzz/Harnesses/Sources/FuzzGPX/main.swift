import FuzzSupport
import HealthETL
import HealthExtract

// The GPX route reader on bytes: the DTD-blanking byte filter and libxml2's push parser, every
// track point turned into a `RoutePoint` (numbers and ISO 8601 times parsed). A bad file is a
// `GPXReadResult.problem`; a trap, a hang or a sanitizer report is a bug.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  var points = 0
  let result = GPXReader.read(bytes: FuzzDriver.bytes(data, size), name: "fuzz.gpx") { point in
    _ = RoutePoint(gpx: point)
    points += 1
  }
  // The count the reader reports is the count it handed on, whatever the file.
  if result.points != points { fatalError("GPXReader reported \(result.points) points, handed on \(points)") }
  return 0
}

FuzzDriver.run(testOneInput)
