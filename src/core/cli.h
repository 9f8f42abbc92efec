/* cli.h -- the command-line forms that answer and exit without starting a
 * server: -v/--version, -h/--help and --check-system, recognised (as Redis
 * does) only as the first argument. */
#ifndef CAIRN_CLI_H
#define CAIRN_CLI_H

/* If argv[1] is one of the forms above, print its answer and exit the
 * process (0 for the version, 1 for the help as redis-server does, and
 * for --check-system 1 when any setting needs attention).  Otherwise
 * return without doing anything. */
void cliHandleInfoArgs(int argc, char **argv);

#endif
