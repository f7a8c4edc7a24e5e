import FuzzSupport
import Glibc
import HealthExtract

// The zip reader (libarchive) as a path and as standard input: the seekable reader that trusts
// the central directory, and the streaming one that walks local headers; then the main member's
// bytes are read to the end. There is no in-memory zip entry point, so the input is written to a
// file in /dev/shm per execution. Thrown `ExtractError`s are expected; a trap is a bug.
let path = FuzzDriver.scratchDirectory + "/input.zip"

func drain(_ input: ExportInput) throws(ExtractError) {
  let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
  defer { buffer.deallocate() }
  while try input.read(into: buffer) > 0 {}
  input.close()
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  FuzzDriver.write(FuzzDriver.bytes(data, size), to: path)
  _ = try? drain(ExportInput.open(path))
  let fd = open(path, O_RDONLY)
  guard fd >= 0 else { fatalError("cannot reopen \(path)") }
  dup2(fd, 0)
  close(fd)
  _ = try? drain(ExportInput.open("-"))
  return 0
}

FuzzDriver.run(testOneInput)
