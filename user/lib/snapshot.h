/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every counter weir keeps, read at one moment: the one reader behind
 * `stats`, `top` and the metrics endpoint (user/snapshot.c).
 */
#ifndef WEIR_SNAPSHOT_H
#define WEIR_SNAPSHOT_H

#include <net/if.h>
#include "lib/libweir.h"

/* What a snapshot reads besides the counters, which it always reads. */
enum wr_snap_parts {
	WR_SNAP_KEYS = 1 << 0,	/* buckets in wr_state: reads all of it (64 MiB by default) */
	WR_SNAP_CONNS = 1 << 1,	/* established connections counted, per live rule */
	WR_SNAP_LISTS = 1 << 2,	/* entries of the deny and allow lists */
};

/* Attachments a snapshot reads the counters of. */
#define WR_SNAP_IFS	64

struct wr_snapshot {
	__u64 at;				/* wr_mono_ns() when read */
	struct weir_config cfg;
	struct weir_ruleset rs;		/* the live set the rule counters are of */
	__u64 global[WEIR_G_MAX];		/* enum weir_global */
	struct weir_rule_stats rule[WEIR_MAX_RULES];	/* per rule of rs */
	struct weir_shed shed;
	struct weir_fleet_status fleet;	/* the daemon's fleet sync; pid 0: none */
	struct weir_class_stats cls[WEIR_MAX_CLASS + 1];
	unsigned int parts;			/* enum wr_snap_parts read */
	__u64 conns[WEIR_MAX_RULES];		/* WR_SNAP_CONNS */
	__u64 keys, capacity;			/* WR_SNAP_KEYS: buckets used, and of */
	__u64 deny[2], allow[2];		/* WR_SNAP_LISTS: [0] IPv4, [1] IPv6 */
	__u64 verified;				/* sources verified within the TTL (always) */
	/* Each attachment's counters (always), by ifindex, at most WR_SNAP_IFS. */
	int nr_ifs;
	struct wr_snap_if {
		int ifindex;
		char name[IF_NAMESIZE + 16];	/* as attached if the interface is gone */
		bool counted;			/* it has a counter slot (ifstats.c) */
		struct weir_if_stats st;
	} ifs[WR_SNAP_IFS];
};

/* The global counters' names: stats' keys, and /metrics' result label values. */
extern const char *const wr_global_names[WEIR_G_MAX];

/*
 * Read every counter and the parts asked for. A bucket count is reused
 * for a few seconds in one process (the metrics endpoint's scrapes).
 * 0 or -errno.
 */
int wr_snapshot_read(const struct wr_maps *m, struct wr_snapshot *s, unsigned int parts);

/* Index in a's rule set of b's rule i (the same uid), or -1: for rates across reloads. */
int wr_snapshot_rule_in(const struct wr_snapshot *a, const struct wr_snapshot *b, __u32 i);

#endif /* WEIR_SNAPSHOT_H */
