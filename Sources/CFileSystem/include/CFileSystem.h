#ifndef HEALTHETL_CFILESYSTEM_H
#define HEALTHETL_CFILESYSTEM_H

/// Atomically exchanges two paths (Linux renameat2 with RENAME_EXCHANGE), which Swift's Glibc
/// module does not expose. Returns 0, or -1 with errno set (EINVAL where unsupported).
int healthetl_exchange_paths(const char *first, const char *second);

/// Writes back every dirty page and inode of the file system holding the open file `fd` and
/// waits for it (Linux syncfs): one call instead of an fsync per file. Returns 0, or -1 with
/// errno set (since Linux 5.8 also the write-back errors met on that file system since `fd` was
/// opened).
int healthetl_sync_file_system(int fd);

/// Asks the kernel to start writing the open file `fd`'s dirty pages to disk, without waiting
/// for them (Linux sync_file_range with SYNC_FILE_RANGE_WRITE): what a later sync waits for is
/// then mostly done. Makes nothing durable. Returns 0, or -1 with errno set.
int healthetl_start_writeback(int fd);

/// Whether `path` (not followed when a symbolic link) is immutable or append-only (`chattr +i`,
/// `+a`), which no one may rename or remove, nor add or remove entries in when a folder: 1 when
/// it is, 0 when not or when its file system does not say (Linux statx), -1 with errno set.
int healthetl_is_unremovable(const char *path);

#endif
