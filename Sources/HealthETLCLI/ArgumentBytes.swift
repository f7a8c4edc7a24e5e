import Foundation

/// The process's arguments as `main` takes them. `CommandLine.arguments` repairs an argument that
/// is not valid UTF-8 (U+FFFD for each bad byte), so a file named with arbitrary bytes — a cohort
/// participant's export named on another system — could no longer be found (exit 66). Such an
/// argument that names something on disk is opened as it is written, bytes unchanged (`O_PATH`:
/// nothing is read, no FIFO waits), and handed on through `/proc/self/fd/N`, which the kernel
/// resolves to that very folder or file for as long as the process runs. The folder holding it is
/// what is opened when the name's last part is valid UTF-8 (`/proc/self/fd/N/export.xml`), so
/// that the files beside a bare `export.xml` are found too.
enum ArgumentBytes {
  /// `O_PATH` on Linux; Glibc does not export it to Swift.
  static let pathOnly: Int32 = 0o10000000

  static func arguments() -> [String] {
    var arguments: [String] = []
    for index in 1..<Int(CommandLine.argc) {
      guard let raw = CommandLine.unsafeArgv[index] else { continue }
      if let text = String(validatingCString: raw) {
        arguments.append(text)
      } else {
        arguments.append(opened(Array(UnsafeBufferPointer(start: raw, count: strlen(raw)))) ?? String(cString: raw))
      }
    }
    return arguments
  }

  /// `/proc/self/fd/N[/name]` for the path `bytes`, or nil when nothing is there to open.
  static func opened(_ bytes: [CChar]) -> String? {
    if let slash = bytes.lastIndex(of: CChar(UInt8(ascii: "/"))), slash > 0,
      let name = String(validating: bytes[(slash + 1)...].map { UInt8(bitPattern: $0) }, as: UTF8.self),
      !name.isEmpty, name != ".", name != ".."
    {
      let folder = open(Array(bytes[..<slash]) + [0], pathOnly | O_DIRECTORY | O_CLOEXEC)
      if folder >= 0 { return "/proc/self/fd/\(folder)/" + name }
    }
    let fd = open(bytes + [0], pathOnly | O_CLOEXEC)
    return fd >= 0 ? "/proc/self/fd/\(fd)" : nil
  }
}
