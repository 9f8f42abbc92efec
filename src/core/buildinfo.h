/* buildinfo.h -- what this binary says about its own build, in
 * `cairn-server --version` and INFO server: the git commit the tree was
 * built from, whether it had uncommitted changes, and a build id.  The
 * values come from a header scripts/buildinfo.sh generates at build time
 * (rewritten only when the commit or the dirty state change). */
#ifndef CAIRN_BUILDINFO_H
#define CAIRN_BUILDINFO_H

/* The first 8 hex digits of the commit; "00000000" outside a git checkout. */
const char *buildInfoGitSha1(void);
/* 1 when the tree differed from that commit, else 0. */
int buildInfoGitDirty(void);
/* 16 hex digits that differ between builds of different trees. */
const char *buildInfoId(void);

#endif
