/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every counter sluice keeps, read at one moment: the one reader behind
 * `stats`, `top` and the metrics endpoint (user/snapshot.c).
 */
#ifndef SLUICE_SNAPSHOT_H
#define SLUICE_SNAPSHOT_H

#include "sluice_user.h"

/* What a snapshot reads besides the counters, which it always reads. */
enum sl_snap_parts {
	SL_SNAP_KEYS = 1 << 0,	/* buckets in sl_state: reads all of it (64 MiB by default) */
	SL_SNAP_CONNS = 1 << 1,	/* established connections counted, per live rule */
	SL_SNAP_LISTS = 1 << 2,	/* entries of the deny and allow lists */
};

struct sl_snapshot {
	__u64 at;				/* sl_now_ns() when read */
	struct sluice_config cfg;
	struct sluice_ruleset rs;		/* the live set the rule counters are of */
	__u64 global[SLUICE_G_MAX];		/* enum sluice_global */
	struct sluice_rule_stats rule[SLUICE_MAX_RULES];	/* per rule of rs */
	struct sluice_shed shed;
	struct sluice_fleet_status fleet;	/* the daemon's fleet sync; pid 0: none */
	struct sluice_class_stats cls[SLUICE_MAX_CLASS + 1];
	unsigned int parts;			/* enum sl_snap_parts read */
	__u64 conns[SLUICE_MAX_RULES];		/* SL_SNAP_CONNS */
	__u64 keys, capacity;			/* SL_SNAP_KEYS: buckets used, and of */
	__u64 deny[2], allow[2];		/* SL_SNAP_LISTS: [0] IPv4, [1] IPv6 */
	__u64 verified;				/* sources verified within the TTL (always) */
};

/* The global counters' names: stats' keys, and /metrics' result label values. */
extern const char *const sl_global_names[SLUICE_G_MAX];

/*
 * Read every counter and the parts asked for. A bucket count is reused
 * for a few seconds in one process (the metrics endpoint's scrapes).
 * 0 or -errno.
 */
int sl_snapshot_read(const struct sl_maps *m, struct sl_snapshot *s, unsigned int parts);

/* Index in a's rule set of b's rule i (the same uid), or -1: for rates across reloads. */
int sl_snapshot_rule_in(const struct sl_snapshot *a, const struct sl_snapshot *b, __u32 i);

#endif /* SLUICE_SNAPSHOT_H */
