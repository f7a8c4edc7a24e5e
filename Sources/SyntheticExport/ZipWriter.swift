internal import CArchive
internal import Glibc

/// A zip archive written with libarchive: deflate, fixed modification times (so the same input
/// makes the same bytes), zip64 whenever a member passes 4 GiB.
final class ZipWriter {
  private let archive: OpaquePointer
  private let path: String
  private let modified: Int64
  private var closed = false

  init(path: String, modified: Int64) throws(SampleExportError) {
    guard let archive = archive_write_new() else {
      throw .cannotCreate(path: path, reason: "libarchive: out of memory")
    }
    self.archive = archive
    self.path = path
    self.modified = modified
    guard archive_write_set_format_zip(archive) == ARCHIVE_OK,
      archive_write_zip_set_compression_deflate(archive) == ARCHIVE_OK,
      archive_write_open_filename(archive, path) == ARCHIVE_OK
    else {
      let reason = ZipWriter.message(archive)
      archive_write_free(archive)
      closed = true
      throw .cannotCreate(path: path, reason: reason)
    }
  }

  deinit {
    if !closed { archive_write_free(archive) }
  }

  private static func message(_ archive: OpaquePointer) -> String {
    archive_error_string(archive).map { String(cString: $0) } ?? "libarchive error"
  }

  private func header(_ name: String, size: Int64) throws(SampleExportError) {
    guard let entry = archive_entry_new() else { throw .writeFailed(path: path, reason: "libarchive: out of memory") }
    defer { archive_entry_free(entry) }
    archive_entry_set_pathname(entry, name)
    archive_entry_set_size(entry, size)
    archive_entry_set_filetype(entry, 0o100000)
    archive_entry_set_perm(entry, 0o644)
    archive_entry_set_mtime(entry, time_t(modified), 0)
    guard archive_write_header(archive, entry) == ARCHIVE_OK else {
      throw .writeFailed(path: path, reason: ZipWriter.message(archive))
    }
  }

  private func data(_ bytes: UnsafeRawBufferPointer) throws(SampleExportError) {
    var offset = 0
    while offset < bytes.count {
      let written = archive_write_data(archive, bytes.baseAddress! + offset, bytes.count - offset)
      guard written > 0 else { throw .writeFailed(path: path, reason: ZipWriter.message(archive)) }
      offset += written
    }
  }

  /// Adds `name` holding `bytes`.
  func add(_ name: String, bytes: UnsafeRawBufferPointer) throws(SampleExportError) {
    try header(name, size: Int64(bytes.count))
    try data(bytes)
  }

  /// Adds `name` holding the whole of the file at `source`, streamed a megabyte at a time.
  func add(_ name: String, contentsOf source: String) throws(SampleExportError) {
    let fd = open(source, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw .writeFailed(path: source, reason: String(cString: strerror(errno))) }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw .writeFailed(path: source, reason: String(cString: strerror(errno))) }
    try header(name, size: Int64(info.st_size))
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
    defer { buffer.deallocate() }
    while true {
      let got = read(fd, buffer.baseAddress, buffer.count)
      if got < 0 && errno == EINTR { continue }
      guard got >= 0 else { throw .writeFailed(path: source, reason: String(cString: strerror(errno))) }
      if got == 0 { break }
      try data(UnsafeRawBufferPointer(rebasing: buffer[0..<got]))
    }
  }

  /// Writes the central directory and closes the file.
  func finish() throws(SampleExportError) {
    guard !closed else { return }
    closed = true
    let status = archive_write_close(archive)
    let reason = ZipWriter.message(archive)
    archive_write_free(archive)
    guard status == ARCHIVE_OK else { throw .writeFailed(path: path, reason: reason) }
  }
}
