/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What wrgen and wrsink share: messages and exit codes (2 for bad
 * arguments, 1 for runtime errors, {"error": ...} on stdout with --json),
 * number and address parsing, the options every tool takes the same way,
 * the monotonic clock and stopping on SIGINT / SIGTERM.
 *
 * Define TOOL_NAME, the name messages start with, before including this.
 */
#ifndef WEIR_TOOLUTIL_H
#define WEIR_TOOLUTIL_H

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#ifndef TOOL_NAME
#error "define TOOL_NAME before including toolutil.h"
#endif

#ifndef WEIR_VERSION
#define WEIR_VERSION "dev"
#endif

#define NSEC_PER_SEC		1000000000ULL

static const char *prog = TOOL_NAME;
/* Set by SIGINT / SIGTERM once catch_stop_signals() has run. */
static volatile sig_atomic_t stop;
/* fail() also prints {"error": ...} on stdout: set from --json. */
static bool json_errors;

/* An IPv4 or IPv6 address in network byte order. */
struct addr {
	int family;
	union {
		struct in_addr v4;
		struct in6_addr v6;
		uint8_t b[16];
	};
};

/* Bad arguments: the message on stderr, exit 2. */
static inline void __attribute__((format(printf, 1, 2))) invarg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static inline void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Runtime failure: text on stderr, and {"error": ...} on stdout with --json; exit 1. */
static inline void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", prog, msg);
	if (json_errors) {
		fputs("{\"error\": ", stdout);
		json_string(stdout, msg);
		fputs("}\n", stdout);
	}
	exit(1);
}

/* Plain decimal integer in [min, max]: no sign, no hex. 0, -EINVAL or -ERANGE. */
static inline int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!*s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* Plain decimal ("1000", "0.5"): no sign, exponent, hex, inf or nan. */
static inline int parse_decimal(const char *s, double min, double max, double *out)
{
	const char *p;
	int digits = 0, dots = 0;
	char *end;
	double v;

	for (p = s; *p; p++) {
		if (*p >= '0' && *p <= '9')
			digits++;
		else if (*p == '.' && !dots)
			dots++;
		else
			return -EINVAL;
	}
	if (!digits)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* The --duration argument: seconds, decimal, > 0 and at most max. */
static inline double duration_arg(const char *s, double max)
{
	double v;

	if (parse_decimal(s, 0, max, &v) || v <= 0)
		invarg("invalid --duration \"%s\" (seconds, > 0, at most %.0f)", s, max);
	return v;
}

/* An IPv4 or IPv6 address in text form. 0 or -EINVAL. */
static inline int parse_addr(const char *s, struct addr *a)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, &a->v4) == 1) {
		a->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, &a->v6) == 1) {
		a->family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

/* Bytes of the address proper: 4 or 16. */
static inline size_t addr_len(const struct addr *a)
{
	return a->family == AF_INET ? 4 : 16;
}

static inline bool addr_eq(const struct addr *a, const struct addr *b)
{
	return a->family == b->family && !memcmp(a->b, b->b, addr_len(a));
}

/* Refuse an option given twice; seen[] is indexed by getopt_long()'s value. */
static inline void option_once(bool *seen, int c, const char *name)
{
	if (seen[c])
		invarg("option \"--%s\" given twice", name);
	seen[c] = true;
}

/*
 * What getopt_long() returned that the tool's own options do not cover
 * (getopt_long() called with ":hV"): -h / --help, -V / --version, an
 * option without its argument, an unknown option. Never returns.
 */
static inline void common_opt(int c, char **argv, void (*usage)(FILE *f))
{
	switch (c) {
	case 'h':
		usage(stdout);
		exit(0);
	case 'V':
		printf("%s %s\n", prog, WEIR_VERSION);
		exit(0);
	case ':':
		invarg("option \"%s\" needs an argument", argv[optind - 1]);
		break;
	default:
		if (optopt)
			invarg("unknown option \"-%c\"", optopt);
		invarg("unknown or ambiguous option \"%s\"", argv[optind - 1]);
	}
}

static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static inline void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* SIGINT and SIGTERM set stop instead of ending the process. */
static inline void catch_stop_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* One's-complement sum of @len bytes, 16-bit big-endian words (RFC 1071). */
static inline uint64_t csum_add(uint64_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (; len > 1; p += 2, len -= 2)
		sum += (uint32_t)p[0] << 8 | p[1];
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

/* The sum folded to 16 bits and complemented: the checksum, host byte order. */
static inline uint16_t csum_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

#endif /* WEIR_TOOLUTIL_H */
