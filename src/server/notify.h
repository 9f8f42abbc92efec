/* notify.h -- keyspace notifications (notify.c): the sink that publishes
 * the events notifyKeyspaceEvent (core/server.h) lets through. */
#ifndef CAIRN_NOTIFY_H
#define CAIRN_NOTIFY_H

/* Installs the publishing sink.  Called once at start-up. */
void notifyInit(void);

/* Registers the keyspace notifications' directives (CONFIG GET/SET/REWRITE, the config
 * file).  Called once from main.c, before the defaults are applied. */
void notifyRegisterConfig(void);

#endif
