// libxml2's reader for CalDAV exports. Debian builds libxml2 with ICU, and <libxml/encoding.h> then includes ICU's
// headers, which clash with the ICU inside Foundation; calwatch touches no encoding handler (whose layout is the
// only thing that flag changes), so the ICU part of the headers is left out.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlreader.h>

// libxml2 prints some errors (its encoding layer's) to standard error itself, whatever the parser options say; its
// error handlers are per thread, so each parse silences them on the thread it runs on. The errors are still
// recorded for xmlGetLastError, which is where calwatch reads them from, with the file's name.
static void calwatch_xml_ignore(void *context, const char *message, ...) {
    (void)context;
    (void)message;
}
static void calwatch_xml_ignore_structured(void *context, xmlErrorPtr error) {
    (void)context;
    (void)error;
}
static inline void calwatch_xml_silence(void) {
    xmlSetGenericErrorFunc(NULL, calwatch_xml_ignore);
    xmlSetStructuredErrorFunc(NULL, calwatch_xml_ignore_structured);
}
