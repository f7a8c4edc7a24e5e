import Foundation
import HealthExtract

extension ExportRun {
  /// What a run checks before it creates anything: the export exists, and the output folder is
  /// one a run may write (`OutputFolderCheck`). A run that fails here leaves no folder, lock or
  /// staging behind.
  static func checkBeforeWriting(_ options: RunOptions) throws(ETLError) {
    var inputPath: String?
    if case .path(let path) = options.input, path != "-" {
      var info = stat()
      guard stat(path, &info) == 0 else {
        if errno == ENOENT || errno == ENOTDIR { throw .extract(.notFound(path: path)) }
        throw .extract(.unreadable(path: path, reason: String(cString: strerror(errno))))
      }
      inputPath = path
    }
    // The nightly batch reads from its inbox, which may sit inside its output folder.
    do {
      try OutputFolderCheck.check(options.output, input: options.nightlyEntry == nil ? inputPath : nil)
    } catch {
      throw .output(error)
    }
  }
}
