#ifndef HEALTHETL_CXLSXWRITER_SHIM_H
#define HEALTHETL_CXLSXWRITER_SHIM_H
/* libxlsxwriter (Debian libxlsxwriter-dev). Only Sources/HealthETL/Sinks/Workbook.swift calls it. */
#include <xlsxwriter.h>
#endif
