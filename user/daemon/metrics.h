/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The Prometheus metrics endpoint: everything weir counts, in the text
 * exposition format, served read-only over HTTP (GET /metrics) by
 * libmicrohttpd in a thread of its own.
 */
#ifndef WEIR_METRICS_H
#define WEIR_METRICS_H

#include <stddef.h>
#include <stdio.h>
#include "lib/libweir.h"

/* Where the endpoint listens unless told otherwise: loopback only. */
#define WR_METRICS_DEFAULT_LISTEN "127.0.0.1:9464"

/*
 * Render the Prometheus text exposition of everything weir counts into
 * *buf (malloc'd, free it; *len bytes, NUL-terminated). Returns 0 or -errno;
 * on error *buf is NULL. The wr_state entry count is cached for a few
 * seconds, so frequent calls stay cheap.
 */
/* Where a global counter (enum weir_global) is exported. */
struct wr_global_metric {
	const char *family;	/* its metric family */
	bool result;		/* one of several in it, labelled result="NAME" (wr_global_names) */
};
extern const struct wr_global_metric wr_global_metrics[WEIR_G_MAX];

int wr_metrics_render(const struct wr_maps *m, char **buf, size_t *len);

/*
 * Extra metrics the caller owns (reload counts, event counts, shedding
 * state): appended after weir's own, HELP and TYPE lines included. Called
 * from the server's thread, one scrape at a time: read shared state with
 * atomics or a lock of the caller's own.
 */
typedef void (*wr_metrics_extra_fn)(FILE *out, void *arg);

/* A family's HELP and TYPE lines, and its samples (label values escaped): for extras too. */
void wr_metric_family(FILE *out, const char *name, const char *type, const char *help);
void wr_metric_value(FILE *out, const char *name, __u64 v);
void wr_metric_labeled(FILE *out, const char *name, const char *label, const char *lv, __u64 v);

struct wr_metrics;

/*
 * Serve GET (and HEAD) /metrics on addr, "ADDR:PORT" or "[ADDR6]:PORT"
 * with numeric addresses only, bound to exactly that address. Any other
 * path is 404, any other method on /metrics 405. The server keeps
 * duplicates of the map fds in m, so the caller's struct may change or be
 * closed afterwards; re-opened maps need a new server. extra may be NULL.
 * Returns NULL with errno set after saying why.
 */
struct wr_metrics *wr_metrics_start(const char *addr, const struct wr_maps *m,
				    wr_metrics_extra_fn extra, void *arg);
/* Stop serving (waits for a scrape in progress), close the fds; NULL is fine. */
void wr_metrics_stop(struct wr_metrics *s);

#endif /* WEIR_METRICS_H */
