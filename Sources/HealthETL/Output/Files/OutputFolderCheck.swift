import Foundation

/// What an output folder must be before a run creates anything (Pipelines/README.md, "Output
/// files"): named, not the root of the file system, not a dangling link or a file, and not a
/// folder holding the export itself. The commit swaps the whole folder with a staging sibling,
/// carrying over every file it does not rewrite, so `--out /` or `--out ~` beside an export in
/// `~/Downloads` would move (or hard-link) a whole tree.
public enum OutputFolderCheck {
  /// - Parameter input: the export's path, when it is a file or folder (not stdin).
  public static func check(_ folder: OutputFolder, input: String?) throws(OutputError) {
    let directory = folder.given
    guard !directory.isEmpty else {
      throw .unsuitable(path: directory, reason: "is empty; name the folder to write into, e.g. --out health-out")
    }
    let fm = FileManager.default
    var info = stat()
    if lstat(directory, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK, stat(directory, &info) != 0 {
      let target = (try? fm.destinationOfSymbolicLink(atPath: directory)) ?? "?"
      throw .cannotCreate(
        path: directory,
        reason:
          "it is a symbolic link to \(target), which does not exist; create that folder, or pass another --out")
    }
    if stat(directory, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR {
      throw .cannotCreate(path: directory, reason: "it exists and is not a folder; pass a folder to --out")
    }
    let resolved = folder.realPath
    if resolved == "/" {
      throw .unsuitable(
        path: directory,
        reason:
          "is the root of the file system; outputs need a folder of their own, staged beside it and swapped in whole (e.g. --out health-out)"
      )
    }
    if let input {
      let source = OutputFolder.realPath(input)
      if source == resolved || source.hasPrefix(resolved + "/") {
        throw .unsuitable(
          path: directory,
          reason:
            "holds the export \(input); the output folder is swapped in whole when a run finishes, so it must not hold the input: pass a folder of its own"
        )
      }
    }
  }
}
