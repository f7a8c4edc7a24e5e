#ifndef HEALTHETL_CLIBXML2_SHIM_H
#define HEALTHETL_CLIBXML2_SHIM_H
#include <libxml/xmlversion.h>
/* Debian builds libxml2 with ICU, whose headers clash with the ICU module Foundation ships
   ('UErrorCode has different definitions'). HealthETL never touches libxml2's encoding
   handlers, so their ICU fields are hidden from Swift. */
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>
#endif
