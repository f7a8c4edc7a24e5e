#ifndef HEALTHETL_CSQLITE3_SHIM_H
#define HEALTHETL_CSQLITE3_SHIM_H
/* libsqlite3 (Debian libsqlite3-dev). Only Sources/HealthETL/Sinks/Database/SQLiteDatabase.swift calls it. */
#include <sqlite3.h>
#endif
