/* sentinel_tilt.c -- Sentinel's time parameters (SENTINEL DEBUG), TILT
 * mode and failure simulation (SENTINEL SIMULATE-FAILURE), as
 * redis-sentinel 7.0.15 has them.
 *
 * TILT: Sentinel's decisions rest on elapsed times, so when its timer runs
 * late by more than tilt-trigger (a stall: the process was stopped, the
 * machine swapped) or the clock goes back, it enters TILT (+tilt): it
 * keeps monitoring (links, PING, INFO, hello) but stops acting (no
 * subjective/objective down, no failover, and IS-MASTER-DOWN-BY-ADDR says
 * "not down") until tilt-period has passed without a new trigger (-tilt).
 *
 * Invariants:
 *   - Every parameter is > 0 (SENTINEL DEBUG refuses others), in ms.
 *   - sentinel.tilt implies sentinel.tiltStart is the last trigger time. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/log.h"
#include "core/server.h"
#include "ds/sds.h"
#include "ds/util.h"
#include "server/sentinel_int.h"

SentinelTunables stun;

void sentinelTunablesInit(void) {
    stun.infoPeriod = 10000;
    stun.pingPeriod = 1000;
    stun.askPeriod = 1000;
    stun.publishPeriod = 2000;
    stun.defaultDownAfter = 30000;
    stun.defaultFailoverTimeout = 180000;
    stun.tiltTrigger = 2000;
    stun.tiltPeriod = 30000;
    stun.slaveReconfTimeout = 10000;
    stun.minLinkReconnectPeriod = 15000;
    stun.electionTimeout = 10000;
    stun.scriptMaxRuntime = 60000;
    stun.scriptRetryDelay = 30000;
}

int sentinelTiltCheck(long long now) {
    long long delta = now - sentinel.prevTimer;
    if (sentinel.prevTimer && (delta < 0 || delta > stun.tiltTrigger)) {
        sentinel.tilt = 1;
        sentinel.tiltStart = now;
        sentinelEvent(LL_WARNING, "+tilt", NULL, "#tilt mode entered");
    }
    sentinel.prevTimer = now;
    if (sentinel.tilt && now - sentinel.tiltStart >= stun.tiltPeriod) {
        sentinel.tilt = 0;
        sentinelEvent(LL_WARNING, "-tilt", NULL, "#tilt mode exited");
    }
    return sentinel.tilt;
}

static const struct {
    const char *name, *shown;
    long long *v;
} params[] = {
    {"info-period", "INFO-PERIOD", &stun.infoPeriod},
    {"ping-period", "PING-PERIOD", &stun.pingPeriod},
    {"ask-period", "ASK-PERIOD", &stun.askPeriod},
    {"publish-period", "PUBLISH-PERIOD", &stun.publishPeriod},
    {"default-down-after", "DEFAULT-DOWN-AFTER", &stun.defaultDownAfter},
    {"default-failover-timeout", "DEFAULT-FAILOVER-TIMEOUT", &stun.defaultFailoverTimeout},
    {"tilt-trigger", "TILT-TRIGGER", &stun.tiltTrigger},
    {"tilt-period", "TILT-PERIOD", &stun.tiltPeriod},
    {"slave-reconf-timeout", "SLAVE-RECONF-TIMEOUT", &stun.slaveReconfTimeout},
    {"min-link-reconnect-period", "MIN-LINK-RECONNECT-PERIOD", &stun.minLinkReconnectPeriod},
    {"election-timeout", "ELECTION-TIMEOUT", &stun.electionTimeout},
    {"script-max-runtime", "SCRIPT-MAX-RUNTIME", &stun.scriptMaxRuntime},
    {"script-retry-delay", "SCRIPT-RETRY-DELAY", &stun.scriptRetryDelay},
};
#define NPARAMS (int)(sizeof(params) / sizeof(params[0]))

sds sentinelDebugCommand(sds out, int resp, int argc, sds *argv) {
    if (argc == 2) {
        out = resp == 3 ? sdsCatPrintf(out, "%%%d\r\n", NPARAMS) : sdsCatPrintf(out, "*%d\r\n", NPARAMS * 2);
        for (int i = 0; i < NPARAMS; i++) {
            char b[32];
            snprintf(b, sizeof(b), "%lld", *params[i].v);
            out = sdsCatPrintf(out, "$%zu\r\n%s\r\n$%zu\r\n%s\r\n", strlen(params[i].shown), params[i].shown,
                               strlen(b), b);
        }
        return out;
    }
    /* name value pairs, applied in order up to the first bad one */
    for (int j = 2; j < argc; j++) {
        int i;
        for (i = 0; i < NPARAMS; i++)
            if (!strcasecmp(argv[j], params[i].name)) break;
        if (i == NPARAMS || j + 1 >= argc)
            return sdsCatPrintf(out, "-ERR Unknown option or number of arguments for SENTINEL DEBUG '%s'\r\n",
                                argv[j]);
        char *end;
        const char *val = argv[j + 1];
        errno = 0;
        long long ll = strtoll(val, &end, 10);
        if (!*val || *end || errno || ll <= 0)
            return sdsCatPrintf(out, "-ERR Invalid argument '%s' for SENTINEL DEBUG '%s'\r\n", val, argv[j]);
        *params[i].v = ll;
        j++;
    }
    return sdsCat(out, "+OK\r\n");
}

sds sentinelSimulateFailureCommand(sds out, int argc, sds *argv) {
    sentinel.simFailure = 0;
    for (int j = 2; j < argc; j++) {
        if (!strcasecmp(argv[j], "crash-after-election")) {
            sentinel.simFailure |= SIMFAIL_CRASH_AFTER_ELECTION;
            serverLog(LL_WARNING,
                      "Failure simulation: this Sentinel will crash after being successfully elected as failover "
                      "leader");
        } else if (!strcasecmp(argv[j], "crash-after-promotion")) {
            sentinel.simFailure |= SIMFAIL_CRASH_AFTER_PROMOTION;
            serverLog(LL_WARNING,
                      "Failure simulation: this Sentinel will crash after promoting the selected replica to "
                      "master");
        } else if (!strcasecmp(argv[j], "help")) {
            return sdsCat(out, "*2\r\n$20\r\ncrash-after-election\r\n$21\r\ncrash-after-promotion\r\n");
        } else {
            return sdsCat(out, "-ERR Unknown failure simulation specified\r\n");
        }
    }
    return sdsCat(out, "+OK\r\n");
}

void sentinelSimFailureMaybeCrash(int flag) {
    if (!(sentinel.simFailure & flag)) return;
    serverLog(LL_WARNING, "Sentinel CRASH because of SENTINEL simulate-failure");
    exit(99);
}
