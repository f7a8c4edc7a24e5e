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

/* libxml2 prints a few errors (an encoding that cannot be converted, for one) through its
   generic handler, straight to stderr, besides or instead of the parser's structured one.
   HealthETL reports every failure itself in one sentence, so that handler prints nothing. */
static inline void healthetl_xml_ignore_generic(void *context, const char *message, ...) {
  (void)context;
  (void)message;
}

/* For the calling thread: libxml2 keeps its error handlers per thread. */
static inline void healthetl_xml_silence_generic_errors(void) {
  xmlSetGenericErrorFunc(NULL, healthetl_xml_ignore_generic);
}
#endif
