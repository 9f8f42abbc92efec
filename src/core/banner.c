/* banner.c -- the start-up banner: Cairn's own ASCII logo (a cairn of
 * stones) with the version, mode, port and pid beside it, or the one line
 * `Running mode=standalone, port=N.` instead.
 *
 * As on Redis, the logo is shown when `always-show-logo yes`, or when the
 * log goes to a terminal (no logfile, no syslog, stdout a tty).  Its text
 * lines keep Redis's layout (" Port: N", " PID: N" after the art), which
 * test harnesses and supervisors read to learn that the server started. */
#include "core/banner.h"

#include <stdio.h>
#include <unistd.h>

#include "core/log.h"
#include "core/server.h"

/* The art, one row per line; the text goes after column ART_WIDTH. */
static const char *const art[] = {
    "                 _.-~~-._",
    "               (__________)",
    "            _.-~~~~~~~~~~~~-._",
    "          (____________________)",
    "        _.-~~~~~~~~~~~~~~~~~~~~~-._",
    "      (____________________________)",
    "    _.-~~~~~~~~~~~~~~~~~~~~~~~~~~~~~-._",
    "   (___________________________________)",
};
#define ART_ROWS (sizeof(art) / sizeof(art[0]))
#define ART_WIDTH 42

static int showLogo(void) {
    const char *logfile = server.cfg.logfile ? server.cfg.logfile : "";
    return server.cfg.alwaysShowLogo || (!server.cfg.syslogEnabled && logfile[0] == '\0' && isatty(STDOUT_FILENO));
}

void bannerShow(void) {
    if (!showLogo()) {
        serverLog(LL_NOTICE, "Running mode=standalone, port=%d.", server.cfg.port);
        return;
    }
    char text[ART_ROWS][96] = {{0}};
    snprintf(text[1], sizeof(text[1]), "Cairn %s (Redis %s compatible) %d bit", CAIRN_VERSION, REDIS_COMPAT_VERSION,
             (int)(sizeof(long) * 8));
    snprintf(text[3], sizeof(text[3]), "Running in standalone mode");
    snprintf(text[4], sizeof(text[4]), "Port: %d", server.cfg.port);
    snprintf(text[5], sizeof(text[5]), "PID: %ld", (long)getpid());
    char out[ART_ROWS * (ART_WIDTH + 100) + 8];
    size_t off = 0;
    for (size_t i = 0; i < ART_ROWS; i++)
        off += (size_t)snprintf(out + off, sizeof(out) - off, "%-*s%s\n", ART_WIDTH, art[i], text[i]);
    snprintf(out + off, sizeof(out) - off, "\n");
    serverLogVerbatim(LL_NOTICE, out);
}
