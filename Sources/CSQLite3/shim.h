#ifndef HEALTHETL_CSQLITE3_SHIM_H
#define HEALTHETL_CSQLITE3_SHIM_H
/* libsqlite3 (Debian libsqlite3-dev). Only Sources/HealthETL/Sinks/Database/SQLiteDatabase.swift calls it. */
#include <sqlite3.h>

/* sqlite3_config takes variable arguments, which Swift cannot call: this one setting, by name.
   Off, SQLite keeps no count of its memory, so no allocation takes its global mutex. Valid only
   before the library is first used (SQLITE_MISUSE after). */
static inline int healthetl_sqlite3_config_memstatus_off(void) {
  return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
#endif
