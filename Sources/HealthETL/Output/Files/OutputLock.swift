import Foundation
import Synchronization

/// An exclusive lock on an output folder, so two runs never write one folder at once; the second
/// fails at once instead of waiting. The kernel drops the lock when the process dies, so a killed
/// run never leaves a stale lock behind.
///
/// Two `flock`s: on `<folder>/.healthetl.lock`, the file people see, and on the folder itself,
/// which cannot be deleted from under a run the way a file can (a second run once got in after
/// the lock file was removed). A commit puts a new folder at the output folder's name
/// (`RENAME_EXCHANGE`), so the transaction locks its staging folder through `lockReplacement`
/// before the exchange: the folder at that name is locked at every moment.
///
/// A folder the lock had to create is removed again on release (or on a signal, see
/// `InterruptCleanup`) when the run left nothing in it but the lock file: a failed run into a new
/// folder leaves no trace.
public final class OutputLock {
  private var descriptor: Int32
  private let path: String
  /// The folders this lock created, deepest first.
  private let created: [String]
  private var token: Int?
  /// The locked folder's identity, the key of its descriptors in `heldFolders`.
  private var lockedFolder: FolderIdentity?

  private struct FolderIdentity: Hashable {
    var device: UInt64
    var inode: UInt64
  }

  /// The folders locked for one lock: the one it opened (its identity is the lock's key, so its
  /// descriptor stays open and the inode cannot be reused), the one at the name now and, just
  /// before a commit, the replacement. Closed on release.
  private struct HeldFolders {
    var folders: [(identity: FolderIdentity, descriptor: Int32)]
  }

  /// Per lock, keyed by the identity of the folder it opened.
  private static let heldFolders = Mutex([FolderIdentity: HeldFolders]())

  /// - Throws: `OutputError.locked` when another process holds it.
  public convenience init(directory: String) throws(OutputError) { try self.init(OutputFolder(directory)) }

  public init(_ output: OutputFolder) throws(OutputError) {
    let directory = output.path
    var missing: [String] = []
    var folder = URL(fileURLWithPath: directory)
    while folder.path != "/", access(folder.path, F_OK) != 0 {
      missing.append(folder.path)
      folder = folder.deletingLastPathComponent()
    }
    do {
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    } catch {
      throw .cannotCreate(path: output.given, failure: error)
    }
    created = missing
    path = directory + "/" + ToolFiles.lock
    // Messages name the folder as the user wrote it.
    let shownPath = output.given + "/" + ToolFiles.lock
    let token = InterruptCleanup.register(lockFile: path, created: missing)
    descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else {
      let failure = OutputError.openFailure(path: shownPath, code: errno, creating: true)
      InterruptCleanup.unregister(lock: token)
      Self.removeEmpty(missing)
      throw failure
    }
    guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
      let code = errno
      Glibc.close(descriptor)
      descriptor = -1
      InterruptCleanup.unregister(lock: token)
      if code == EWOULDBLOCK { throw .locked(path: output.given) }
      throw .system(path: shownPath, code: code)
    }
    let folderDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    var info = stat()
    guard folderDescriptor >= 0, fstat(folderDescriptor, &info) == 0,
      flock(folderDescriptor, LOCK_EX | LOCK_NB) == 0
    else {
      let code = errno
      if folderDescriptor >= 0 { Glibc.close(folderDescriptor) }
      InterruptCleanup.unregister(lock: token)
      // Still holding the lock file's lock: a folder this lock created a moment ago holds only
      // that file, so both go (without listing it, which takes a descriptor that may be the one
      // missing), unless another run holds the folder.
      if code != EWOULDBLOCK, !missing.isEmpty {
        unlink(path)
        Self.removeEmpty(missing)
      }
      Glibc.close(descriptor)
      descriptor = -1
      if code == EWOULDBLOCK { throw .locked(path: output.given) }
      throw .system(path: output.given, code: code)
    }
    let identity = FolderIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    Self.heldFolders.withLock { $0[identity] = HeldFolders(folders: [(identity, folderDescriptor)]) }
    lockedFolder = identity
    self.token = token
  }

  /// Locks `replacement`, about to be exchanged with the locked folder `directory`, for the lock
  /// held on `directory` by this process; nothing when this process holds no lock on it.
  static func lockReplacement(_ replacement: String, for directory: String) {
    var info = stat()
    guard stat(directory, &info) == 0 else { return }
    let identity = FolderIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    heldFolders.withLock { held in
      guard let key = held.first(where: { $0.value.folders.contains { $0.identity == identity } })?.key else {
        return
      }
      let descriptor = open(replacement, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
      var replaced = stat()
      guard descriptor >= 0, fstat(descriptor, &replaced) == 0 else {
        if descriptor >= 0 { Glibc.close(descriptor) }
        return
      }
      // Nobody else knows the staging folder, so the lock is free.
      flock(descriptor, LOCK_EX | LOCK_NB)
      // Folders replaced by earlier commits are deleted: their descriptors go, so a night of a
      // thousand commits under one lock holds three, not a thousand.
      var folders = held[key]!.folders
      for index in folders.indices.reversed() where index > 0 && folders[index].identity != identity {
        Glibc.close(folders[index].descriptor)
        folders.remove(at: index)
      }
      folders.append((FolderIdentity(device: UInt64(replaced.st_dev), inode: UInt64(replaced.st_ino)), descriptor))
      held[key]!.folders = folders
    }
  }

  public func release() {
    guard descriptor >= 0 else { return }
    if let token { InterruptCleanup.unregister(lock: token) }
    // The folders' descriptors go first: removing a folder the run created lists it, which takes
    // a descriptor, and a run that failed for want of one has none to spare. The lock file's
    // lock, held to the end, keeps another run out meanwhile.
    if let lockedFolder {
      for held in Self.heldFolders.withLock({ $0.removeValue(forKey: lockedFolder) })?.folders ?? [] {
        Glibc.close(held.descriptor)
      }
      self.lockedFolder = nil
    }
    InterruptCleanup.removeCreatedFolders(.init(lockFile: path, created: created))
    flock(descriptor, LOCK_UN)
    Glibc.close(descriptor)
    descriptor = -1
  }

  /// `rmdir` each folder, deepest first; a folder that is not empty stays.
  private static func removeEmpty(_ folders: [String]) {
    for folder in folders where rmdir(folder) != 0 { return }
  }

  deinit { release() }
}
