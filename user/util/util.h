/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * weir userspace utilities: options, logging, the one printing path (text or
 * JSON), strict argument parsing and the clock. Every layer may use them;
 * they use nothing of weir but the shared types of include/weir.h.
 */
#ifndef WEIR_UTIL_H
#define WEIR_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <linux/types.h>
#include "weir.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Global options, set once by main(). */
struct wr_opts {
	const char *root;	/* bpffs directory holding weir's pins */
	bool json;
	bool pretty;
	bool debug;
	bool help;		/* `weir OBJECT help`: usage is what was asked for */
};
extern struct wr_opts opts;
/* Where usage goes: stdout when help was asked for, else stderr (a mistake). */
static inline FILE *wr_usage_out(void)
{
	return opts.help ? stdout : stderr;
}

/* Logging: to stderr; an error in JSON mode is {"error": "..."} on stdout. */
void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One printing path for text and JSON (iproute2 style). */
void out_begin(void);
void out_end(void);
void open_object(const char *key);
void close_object(void);
void open_array(const char *key);
void close_array(void);
/* In JSON: "key": value. In text: printf(fmt, value); fmt NULL prints nothing. */
void print_str(const char *key, const char *fmt, const char *v);
void print_u64(const char *key, const char *fmt, uint64_t v);
void print_s64(const char *key, const char *fmt, int64_t v);
void print_bool(const char *key, const char *fmt, bool v);
void print_double(const char *key, const char *fmt, double v);
void print_null(const char *key, const char *text);
/* Text mode only. */
void print_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Strict argument parsing: 0 or -EINVAL/-ERANGE, with the bad word named by the caller. */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int parse_rate(const char *s, uint64_t *rate, int *cost);
int parse_rate_per(const char *s, uint64_t *rate, int *cost, uint32_t *period_ms);
void format_rate_per(uint64_t rate, int cost, uint32_t period_ms, char *buf, size_t len);
int parse_size(const char *s, uint64_t *out);
struct wr_cidr {
	int family;		/* 4 or 6 */
	__u32 addr[4];		/* network byte order, masked */
	unsigned int plen;
};
int parse_cidr(const char *s, struct wr_cidr *c);
/* A duration: 600 (seconds), 90s, 10m, 2h, 1d, 1h30m, 1.5s, 250ms; -EINVAL / -ERANGE. */
int wr_parse_duration_ns(const char *s, uint64_t *ns);
void wr_format_secs(__u64 secs, char *buf, size_t len);
int parse_port_range(const char *s, __u16 *lo, __u16 *hi);
int parse_proto(const char *s, __u8 *proto);
int parse_tcp_flags(const char *s, __u8 *value, __u8 *mask);
const char *proto_name(__u8 proto, char *buf, size_t len);
void format_cidr(int family, const __u32 *addr, unsigned int plen, char *buf, size_t len);
void format_rate(uint64_t rate, int cost, char *buf, size_t len);
void format_tcp_flags(__u8 value, __u8 mask, char *buf, size_t len);
bool is_prefix(const char *word, const char *full);
/* A second-level command table: `weir OBJECT NAME ARGS...`. */
struct wr_cmd {
	const char *name;
	int (*fn)(int argc, char **argv, void *ctx);	/* argv after NAME */
	bool exact;		/* the whole word only (on/off), not a prefix of it */
};
int wr_cmd_select(const struct wr_cmd *cmds, size_t n, const char *object, int argc,
		  char **argv, void *ctx, void (*usage)(void *ctx));


/* An error in a list of words: which word (-1: none in particular), and what. */
struct wr_perr {
	int word;
	char msg[256];
};

/*
 * CLOCK_MONOTONIC in ns: the data path's clock (bpf_ktime_get_ns), as
 * userspace reads it (see weir_config.clock_off). The one clock helper.
 */
static inline __u64 wr_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

#endif /* WEIR_UTIL_H */
