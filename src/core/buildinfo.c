/* buildinfo.c -- the build's commit, dirty flag and id (see buildinfo.h).
 * The only file compiled with the generated buildinfo_gen.h, so a new
 * commit recompiles this file alone. */
#include "core/buildinfo.h"

#include "buildinfo_gen.h"

const char *buildInfoGitSha1(void) {
    return CAIRN_GIT_SHA1;
}

int buildInfoGitDirty(void) {
    return CAIRN_GIT_DIRTY;
}

const char *buildInfoId(void) {
    return CAIRN_BUILD_ID;
}
