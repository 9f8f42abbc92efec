/* util.h -- number <-> text conversions with Redis's acceptance rules and
 * output formats, plus clocks.
 *
 * Parsers take (pointer, length) and never read past len; they return 1 on
 * success (storing *out) and 0 on rejection (leaving *out untouched).  The
 * formatters write a NUL-terminated string and return its length, or 0 when
 * it does not fit in dstlen (including the NUL). */
#ifndef CAIRN_UTIL_H
#define CAIRN_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Longest text any formatter here produces for an integer: 20 digits, sign,
 * NUL. */
#define UTIL_LONG_STR_SIZE 21
/* Buffer large enough for doubleToString / longDoubleToString results
 * (human-friendly long doubles can have ~4950 integer digits; callers pass
 * this size). */
#define UTIL_MAX_LONG_DOUBLE_CHARS (5 * 1024)
#define UTIL_MAX_DOUBLE_CHARS 128

/* Strict integer parse: optional '-', then "0" or [1-9][0-9]*.  Rejects
 * empty input, spaces, '+', leading zeros, "-0" and overflow.  This is the
 * rule Redis uses for every integer argument and for deciding whether a
 * string value is stored as an integer. */
int stringToLongLong(const char *s, size_t len, long long *out);
/* As stringToLongLong, also rejecting values outside long. */
int stringToLong(const char *s, size_t len, long *out);
/* Strict unsigned parse: "0" or [1-9][0-9]*, no sign, up to ULLONG_MAX. */
int stringToUnsignedLongLong(const char *s, size_t len, unsigned long long *out);

/* Double argument parse (ZADD scores, INCRBYFLOAT-free commands): the whole
 * string must be consumed by strtod; rejects empty input, leading
 * whitespace and NaN.  Accepts what strtod accepts otherwise: "inf",
 * "+inf", "-inf", "1e10", hex floats.  Values that overflow to +-inf are
 * accepted as inf; "1e-400" underflows to 0 and is accepted. */
int stringToDouble(const char *s, size_t len, double *out);
/* The fast case of the above: s is exactly [-]digits[.digits] with at most
 * 19 significant digits, a mantissa of at most 2^53 and at most 22 decimals; *out is
 * then what strtod returns (correctly rounded).  Returns 0, *out unset,
 * for any other text (the caller falls back to strtod). */
int decimalToDouble(const char *s, size_t len, double *out);
/* Long double parse for INCRBYFLOAT / HINCRBYFLOAT: strtold on the whole
 * string; rejects empty input, input longer than 5k characters, leading or
 * trailing whitespace, and NaN.  Infinity IS accepted here; the command
 * rejects an infinite result ("increment would produce NaN or Infinity"). */
int stringToLongDouble(const char *s, size_t len, long double *out);
/* The fast case of the above: s is exactly [-]digits[.digits] with at most
 * 19 significant digits and at most 27 decimals; *out is then what strtold
 * returns (correctly rounded; "-0" gives -0).  Returns 0, *out unset, for
 * any other text (the caller falls back to strtold). */
int decimalToLongDouble(const char *s, size_t len, long double *out);

/* Decimal text of v. */
int longLongToString(char *dst, size_t dstlen, long long v);
int unsignedLongLongToString(char *dst, size_t dstlen, unsigned long long v);
/* Text of a double as Redis 7.0 replies it (ZSCORE etc.): "inf", "-inf",
 * "nan", otherwise "%.17g" (so 1.1 gives "1.1000000000000001"). */
int doubleToString(char *buf, size_t len, double v);
/* Text of a long double.  humanfriendly (INCRBYFLOAT output): "%.17Lf" with
 * trailing zeros and a trailing '.' removed, never an exponent; otherwise
 * "%.17Lg".  Infinities give "inf"/"-inf"; NaN is returned as "nan".
 * Human-friendly values below 2^64 that are multiples of 2^-17 (integers,
 * halves, quarters ...) are printed without snprintf, to the same bytes. */
int longDoubleToString(char *buf, size_t len, long double v, int humanfriendly);

/* Number of decimal digits of v (1 for 0). */
uint32_t digits10(uint64_t v);

/* Wall clock in milliseconds / microseconds since the epoch. */
long long mstime(void);
long long ustime(void);
/* Monotonic clock in microseconds (arbitrary origin); for timeouts and
 * latency measurements. */
long long monotonicUs(void);
/* now + ms for a deadline, saturating at LLONG_MAX instead of overflowing
 * (a client may ask for a timeout near LLONG_MAX: that means "forever"). */
static inline long long deadlineAfter(long long now, long long ms) {
    return ms > 0x7fffffffffffffffLL - now ? 0x7fffffffffffffffLL : now + ms;
}

/* Starts fn(arg) on a detached thread; 0 on success, else the error
 * pthread_create returned (the caller decides what running without the
 * thread means). */
int startDetachedThread(void *(*fn)(void *), void *arg);
/* When not NULL (a cpu_set_t *, from bio_cpulist), the CPUs each thread
 * startDetachedThread starts is bound to; else it keeps its creator's. */
extern const void *detachedThreadCpuset;

/* Makes every page of p[0..len) resident and written, so that whoever uses
 * the memory next takes no page fault on it.  The kernel maps the pages a
 * few megabytes per call (MADV_POPULATE_WRITE, Linux 5.14), which costs
 * about a fifth of faulting them in one at a time (on this kind of VM 120
 * MB took 85 ms against 340-450 ms); then one write per page, which on a
 * shadow-paged VM also makes the mapping known to the host.  Without the
 * madvise the writes fault the pages in themselves. */
void prefaultRange(void *p, size_t len);

/* One read of each page of p[0..len) (p page-aligned), after
 * MADV_POPULATE_WRITE made them resident: on a shadow-paged VM (this
 * machine's kind) the populate makes only the guest's mapping, and the
 * first access to each page then takes a fault of ~5 us in the host that
 * the guest does not count; read by the thread that prefaults, the page
 * costs the thread that writes it next ~30 ns.  A read changes nothing, so
 * the range may be in use meanwhile.  Not instrumented (ASan): the range
 * may hold poisoned or freed blocks. */
void prefaultReadPages(const void *p, size_t len);

/* Asks for p[0..len)'s pages to be made resident soon on another thread
 * (prefaultLaterHook, set by the lazy-free thread's owner; NULL: nothing
 * is done), for memory the caller is about to fill over the next while
 * (a TTL index chunk).  Only MADV_POPULATE_WRITE and reads, which never
 * change the bytes: the caller may write the range meanwhile, or even free
 * it (the pages of a freed block may become resident; an unmapped range is
 * an error the thread ignores, and is read only when the allocator never
 * unmaps). */
extern void (*prefaultLaterHook)(void *p, size_t len);
static inline void prefaultLater(void *p, size_t len) {
    if (prefaultLaterHook) prefaultLaterHook(p, len);
}
/* prefaultLater's work, on the thread that runs it: MADV_POPULATE_WRITE on
 * every page p[0..len) touches (the partial ones at its ends too; they
 * hold other blocks or nothing, and populating changes no byte), then one
 * read of each page (see util.c); errors ignored. */
void prefaultPopulate(void *p, size_t len);

#endif
