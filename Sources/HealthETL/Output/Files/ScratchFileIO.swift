import Foundation

/// Whole reads and writes at an offset of a scratch file. `pread` and `pwrite` may move fewer
/// bytes than asked, or none when a signal interrupts them (`EINTR`); every spill reader and
/// writer goes on through here until all bytes moved, so none of them can take a short read for
/// the end of its data.
enum ScratchFileIO {
  /// Fills `buffer` from `offset` on; 0 when it is full, else the `errno` (`EIO` when the file
  /// ends first).
  static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> Int32 {
    whole(buffer.count) { done in
      pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset + Int64(done)))
    }
  }

  /// Writes all of `buffer` at `offset`; 0 when it is written, else the `errno`.
  static func write(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int64) -> Int32 {
    whole(buffer.count) { done in
      pwrite(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset + Int64(done)))
    }
  }

  /// Calls `move` with the bytes moved so far until `count` have moved.
  private static func whole(_ count: Int, _ move: (_ done: Int) -> Int) -> Int32 {
    var done = 0
    while done < count {
      let moved = move(done)
      if moved < 0 && errno == EINTR { continue }
      if moved <= 0 { return moved < 0 ? errno : EIO }
      done += moved
    }
    return 0
  }
}
