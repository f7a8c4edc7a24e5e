import Foundation

/// Whole reads and writes at an offset of a scratch file. `pread` and `pwrite` may move fewer
/// bytes than asked, or none when a signal interrupts them (`EINTR`); every spill reader and
/// writer goes on through here until all bytes moved, so none of them can take a short read for
/// the end of its data.
enum ScratchFileIO {
  /// Fills `buffer` from `offset` on; 0 when it is full, else the `errno` (`EIO` when the file
  /// ends first).
  static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> Int32 {
    var done = 0
    while done < buffer.count {
      let got = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset + Int64(done)))
      if got < 0 && errno == EINTR { continue }
      if got <= 0 { return got < 0 ? errno : EIO }
      done += got
    }
    return 0
  }

  /// Writes all of `buffer` at `offset`; 0 when it is written, else the `errno`.
  static func write(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int64) -> Int32 {
    var done = 0
    while done < buffer.count {
      let put = pwrite(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset + Int64(done)))
      if put < 0 && errno == EINTR { continue }
      if put <= 0 { return put < 0 ? errno : EIO }
      done += put
    }
    return 0
  }
}
