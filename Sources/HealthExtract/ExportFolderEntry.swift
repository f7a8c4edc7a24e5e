import Foundation

/// Opens what lies inside an unpacked export folder (Pipelines/docs/input.md, "Input"): nothing in it
/// is followed out of it, and nothing but a regular file is ever opened.
///
/// The folder the user names may itself be a symbolic link, or lie below one: that is where they
/// keep their export. A link *inside* it is not something the Health app writes, and it may point
/// anywhere (`/etc/shadow`, `/proc/self/environ`, another user's file), so it is never followed:
/// entries are opened relative to their folder with `O_NOFOLLOW`. A FIFO, a socket or a device is
/// never opened either — opening a FIFO waits for a writer, reading `/dev/zero` never ends — and
/// the type is checked again on the opened descriptor (`O_NONBLOCK`, so even a FIFO swapped in
/// between cannot make the open wait).
enum ExportFolderEntry {
  /// Why an entry was not opened.
  enum Refusal: Error, Equatable, CustomStringConvertible {
    case missing
    case folder
    case symbolicLink
    /// A FIFO, a socket or a device: what it is.
    case notAFile(String)
    case failed(String)
    /// No file descriptor was left (`EMFILE`, `ENFILE`): the machine's limit, which stops the
    /// read rather than pass a file over.
    case outOfDescriptors(Int32)

    /// The refusal for an open that failed with `code`.
    init(code: Int32) {
      if ExtractError.isOutOfDescriptors(code) {
        self = .outOfDescriptors(code)
      } else {
        self = code == ENOENT ? .missing : .failed(String(cString: strerror(code)))
      }
    }

    /// The error for `path`, relative to the export, that this refusal stops the read with.
    func stop(_ path: String) -> ExtractError? {
      guard case .outOfDescriptors(let code) = self else { return nil }
      return .openFailure(path: path, code: code)
    }

    /// One clause for a message: `a symbolic link (links inside an export folder are not followed)`.
    var description: String {
      switch self {
      case .missing: return "no such file"
      case .folder: return "a folder"
      case .symbolicLink: return "a symbolic link (links inside an export folder are not followed)"
      case .notAFile(let kind): return "\(kind), not a file (never opened)"
      case .failed(let reason): return reason
      case .outOfDescriptors(let code): return String(cString: strerror(code))
      }
    }
  }

  /// What `mode` is, for a message.
  static func kind(_ mode: mode_t) -> String {
    switch mode & S_IFMT {
    case S_IFIFO: return "a FIFO"
    case S_IFSOCK: return "a socket"
    case S_IFCHR: return "a character device"
    case S_IFBLK: return "a block device"
    case S_IFDIR: return "a folder"
    case S_IFLNK: return "a symbolic link"
    default: return "not a regular file"
    }
  }

  /// Opens the folder the user named (following links in its own path: it is theirs).
  static func openRoot(_ path: String) -> Result<Int32, Refusal> {
    let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { return .failure(Refusal(code: errno)) }
    return .success(fd)
  }

  /// Opens the folder `name` inside the folder `parent` without following a link.
  static func openFolder(_ name: String, in parent: Int32) -> Result<Int32, Refusal> {
    let fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else {
      let code = errno
      if ExtractError.isOutOfDescriptors(code) { return .failure(.outOfDescriptors(code)) }
      var info = stat()
      if fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 {
        if (info.st_mode & S_IFMT) == S_IFLNK { return .failure(.symbolicLink) }
        if (info.st_mode & S_IFMT) != S_IFDIR { return .failure(.notAFile(kind(info.st_mode))) }
      }
      return .failure(Refusal(code: code))
    }
    return .success(fd)
  }

  /// Opens the regular file `name` inside the folder `parent` for reading, without following a
  /// link and without opening anything else.
  static func openFile(_ name: String, in parent: Int32) -> Result<Int32, Refusal> {
    var info = stat()
    guard fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return .failure(Refusal(code: errno)) }
    switch info.st_mode & S_IFMT {
    case S_IFREG: break
    case S_IFDIR: return .failure(.folder)
    case S_IFLNK: return .failure(.symbolicLink)
    default: return .failure(.notAFile(kind(info.st_mode)))
    }
    let fd = openat(parent, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
    guard fd >= 0 else { return .failure(errno == ELOOP ? .symbolicLink : Refusal(code: errno)) }
    // It may have been swapped since it was looked at.
    guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
      let mode = info.st_mode
      Glibc.close(fd)
      return .failure(.notAFile(kind(mode)))
    }
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
    return .success(fd)
  }

  /// The names in the folder `fd` (not `.` and `..`), in byte order; none when it cannot be
  /// listed, except for want of a descriptor, which is the failure.
  static func names(in fd: Int32) -> Result<[String], Refusal> {
    let copy = dup(fd)
    guard copy >= 0, let directory = fdopendir(copy) else {
      let code = errno
      if copy >= 0 { Glibc.close(copy) }
      return ExtractError.isOutOfDescriptors(code) ? .failure(.outOfDescriptors(code)) : .success([])
    }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return .success(names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
  }
}
