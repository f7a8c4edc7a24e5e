#ifndef HEALTHETL_CFILESYSTEM_H
#define HEALTHETL_CFILESYSTEM_H

/// Atomically exchanges two paths (Linux renameat2 with RENAME_EXCHANGE), which Swift's Glibc
/// module does not expose. Returns 0, or -1 with errno set (EINVAL where unsupported).
int healthetl_exchange_paths(const char *first, const char *second);

#endif
