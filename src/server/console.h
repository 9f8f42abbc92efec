/* console.h -- the web console's page (http-console), embedded in the
 * binary.
 *
 * The page is generated at build time by scripts/gen_console.sh from
 * src/server/console/ (index.html with console.css and console.js put
 * inline) into $(BUILD)/gen/console_gen.c: one self-contained HTML
 * document, no external resource.  server/http.c serves it for GET / when
 * http-console is yes.
 *
 * Invariant: consolePage holds consolePageLen bytes (plus a NUL, not
 * counted) and never changes while the server runs. */
#ifndef CAIRN_CONSOLE_H
#define CAIRN_CONSOLE_H

#include <stddef.h>

extern const unsigned char consolePage[];
extern const size_t consolePageLen;

#endif
