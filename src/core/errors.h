/* errors.h -- Redis 7.0's exact error texts, in one place.  Clients match
 * on these strings; never reword them.  Pass them to replyError(). */
#ifndef CAIRN_ERRORS_H
#define CAIRN_ERRORS_H

#define ERR_SYNTAX "ERR syntax error"
#define ERR_WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"
#define ERR_NOT_INT "ERR value is not an integer or out of range"
#define ERR_NOT_FLOAT "ERR value is not a valid float"
#define ERR_NO_SUCH_KEY "ERR no such key"
#define ERR_OUT_OF_RANGE "ERR index out of range"
#define ERR_DB_INDEX "ERR DB index is out of range"
#define ERR_SAME_OBJECT "ERR source and destination objects are the same"
#define ERR_INCR_OVERFLOW "ERR increment or decrement would overflow"
#define ERR_NAN_OR_INF "ERR increment would produce NaN or Infinity"
#define ERR_NOAUTH "NOAUTH Authentication required."
#define ERR_WRONGPASS "WRONGPASS invalid username-password pair or user is disabled."
#define ERR_NOPASS "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
#define ERR_MAXCLIENTS "ERR max number of clients reached"
#define ERR_STRING_TOO_LONG "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
#define ERR_BIT_OFFSET "ERR bit offset is not an integer or out of range"
#define ERR_BIT_VALUE "ERR bit is not an integer or out of range"
#define ERR_TIMEOUT_NEG "ERR timeout is negative"
#define ERR_OOM "OOM command not allowed when used memory > 'maxmemory'."
#define ERR_EXECABORT "EXECABORT Transaction discarded because of previous errors."
#define ERR_NOSCRIPT "NOSCRIPT No matching script. Please use EVAL."

/* Sent to non-loopback connections in protected mode, then closed. */
#define ERR_DENIED_PROTECTED \
    "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n"

#endif
