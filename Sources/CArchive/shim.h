#ifndef HEALTHETL_CARCHIVE_SHIM_H
#define HEALTHETL_CARCHIVE_SHIM_H
#include <archive.h>
#include <archive_entry.h>
#endif
