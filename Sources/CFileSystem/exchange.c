#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "CFileSystem.h"

int healthetl_exchange_paths(const char *first, const char *second) {
  return renameat2(AT_FDCWD, first, AT_FDCWD, second, RENAME_EXCHANGE);
}

int healthetl_sync_file_system(int fd) { return syncfs(fd); }

int healthetl_start_writeback(int fd) { return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE); }

int healthetl_is_unremovable(const char *path) {
  struct statx info;
  if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, 0, &info) != 0) return -1;
  unsigned long long flags = STATX_ATTR_IMMUTABLE | STATX_ATTR_APPEND;
  return (info.stx_attributes & info.stx_attributes_mask & flags) != 0 ? 1 : 0;
}
