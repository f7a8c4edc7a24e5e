#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include "CFileSystem.h"

int healthetl_exchange_paths(const char *first, const char *second) {
  return renameat2(AT_FDCWD, first, AT_FDCWD, second, RENAME_EXCHANGE);
}
