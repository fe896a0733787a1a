// libxml2's reader for CalDAV exports. Debian builds libxml2 with ICU, and <libxml/encoding.h> then includes ICU's
// headers, which clash with the ICU inside Foundation; calwatch touches no encoding handler (whose layout is the
// only thing that flag changes), so the ICU part of the headers is left out.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlreader.h>
