import Foundation

/// The output folder (`--out`) as a run uses it, worked out once and handed to the check, the
/// lock and the transaction, so they cannot disagree on which folder is meant.
public struct OutputFolder: Sendable, Equatable, CustomStringConvertible {
  /// As the user wrote it: what messages name.
  public let given: String
  /// Absolute, without `.`, `..` or a trailing slash, so the folder has a name and a parent to
  /// stage beside; a folder that is itself a symbolic link is where it points, so the commit
  /// swaps the target and the link survives. What the lock opens and the commit replaces.
  public let path: String
  /// Every link of the part that exists resolved, the rest appended as written: for comparing
  /// with the export's path (a folder holding the export is refused).
  public let realPath: String

  public init(_ given: String) {
    self.given = given
    var path = given.count > 1 && given.hasSuffix("/") ? String(given.dropLast()) : given
    path = URL(fileURLWithPath: path).standardizedFileURL.path
    var info = stat()
    if lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK {
      path = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }
    self.path = path
    realPath = Self.realPath(given)
  }

  public var description: String { given }

  /// `path` absolute, with every symbolic link and `.`/`..` of its existing part resolved; the
  /// part that does not exist yet is appended as written.
  static func realPath(_ path: String) -> String {
    var existing = URL(fileURLWithPath: path).standardizedFileURL
    var missing: [String] = []
    while existing.path != "/", access(existing.path, F_OK) != 0 {
      missing.insert(existing.lastPathComponent, at: 0)
      existing = existing.deletingLastPathComponent()
    }
    guard let resolved = realpath(existing.path, nil) else { return existing.path }
    defer { free(resolved) }
    var result = String(cString: resolved)
    for part in missing { result += (result.hasSuffix("/") ? "" : "/") + part }
    return result
  }
}
