/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Fleet-wide limits: what the files of the fleet's sync share (fleet.c the
 * sync's life and its thread, hotkeys.c the hot keys and the gather,
 * sync.c one sync's calls and answers, redis.c the transport, keys.c the
 * keys' names, fold.c the fleet's answers into the local buckets). Private
 * to user/fleet/; the interface is fleet/fleet.h.
 */
#ifndef WEIR_FLEET_INT_H
#define WEIR_FLEET_INT_H

#include <endian.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <hiredis/hiredis.h>
#include "fleet/fleet.h"
#include "weir_limiter.h"
#include "weir_state.h"

/* Hash-tag groups of keys (see key_group). */
#define FLEET_GROUPS		16
/* Keys per script call: the reply stays small and a slow call bounded. */
#define FLEET_BATCH		512
/* A key's numbers in a sync call: its kind and seven or ten little-endian doubles (sync_lua). */
#define FLEET_ARG_BYTES		88
/* The hot keys' table: twice as many slots as keys, or more (a power of 2). */
#define FLEET_TAB_MIN		1024
#define FLEET_TAB_MAX		(2 * WEIR_FLEET_KEYS)
/* A key name's tail (RULE:LIMIT:PARAMS:ADDR) and whole name are shorter than these. */
#define FLEET_TAIL_MAX		128
#define FLEET_NAME_MAX		160
/* Hot keys read from wr_fleet_use per system call. */
#define FLEET_READ_BATCH	4096
/* How many items ahead a pass over them fetches into the cache */
#define FLEET_AHEAD		8
/* Over-limit keys read per node and interval. */
#define FLEET_OVER_MAX		10000
/* After leaving the fallback, this many stale-afters in which one failed sync brings it back. */
#define FLEET_PROBATION		10
/* Seconds a live host counts towards the safe fallback's N after it was last seen. */
#define FLEET_HOSTS_MEMORY_S	60
/* A hot key neither charged nor refused for this many syncs, and spent, leaves wr_fleet_use. */
#define FLEET_COLD_SYNCS	8
/*
 * A tracked key is sent when its charge here since its last send, times the
 * live hosts, reaches FLEET_COOL_NUM / FLEET_COOL_DEN of the limit's rate over
 * that time (or it refuses, is over in the fleet, or is half spent here). The
 * keys left out add up to under that fraction f of the rate R fleet-wide: the
 * fleet admits at most f R t beyond its bound (README "Fleet-wide limits").
 */
#define FLEET_COOL_NUM	1
#define FLEET_COOL_DEN	8
/* Longest wait between two connection attempts to a node that is down. */
#define FLEET_BACKOFF_MAX_NS	(2 * 1000000000ULL)

struct node {
	char host[64];
	int port;
	redisContext *c;
	char sha_sync[48], sha_poll[48], sha_fp[48];
	__u64 last_ok;		/* CLOCK_MONOTONIC ns of the last good exchange */
	__u64 next_try;		/* no connection attempt before this */
	__u64 backoff;
	__u64 sent_at;		/* when this sync's calls went out */
	/* Redis's clock (TIME, us) less ours when it answered: one clock for the fleet */
	long long offset_us;
	bool offset_known;
};

/* A hot key as the thread follows it from sync to sync. */
struct trk {
	/* What a lookup reads first, together (trk_prefetch) */
	__u32 used;		/* the generation of the table it is in (0: never) */
	__u32 idle;		/* syncs without a charge */
	struct weir_key k;
	__u64 last;		/* weir_fleet_use.charged at the last sync */
	__u64 carry_ns;		/* charge under a microsecond (a window's: units), sent later */
	__u64 until;		/* the fleet's TAT in local time, as last heard */
	__u64 drops;		/* the local bucket's refusals at the last sync */
	__u64 sent;		/* when its charge was last sent (and answered) */
	/*
	 * A window's: the fleet's window it was last sent in (0: none yet),
	 * and what this host charged in it and in the one before.
	 */
	__u64 win;
	__u64 wfwin, wfmax;	/* the most the fleet told of window wfwin */
	__u64 wown, wown_prev;
	/*
	 * A token bucket's: all its charges sent in this run, that total as
	 * of its last answered call, and the run's number (sync_lua).
	 */
	__u64 tot_us, acked_us;
	__u64 run;
};

/* One key of this sync. */
struct item {
	struct weir_key k;
	struct weir_fleet_use use;
	const struct weir_rule *r;
	__u32 li;
	__u32 group;		/* key_group() of its name */
	__u64 prev_last, prev_carry;	/* struct trk's before this sync, if it must be resent */
	__u64 prev_win, prev_wown, prev_wown_prev, prev_tot;
	struct weir_way *way;	/* where the key was in wr_state, for the fold */
	size_t slot;		/* its place in the table of the next sync */
	__u64 charge_us, ahead_us;
	__u64 from_ns;		/* since when its charges were made (CLOCK_MONOTONIC) */
	/*
	 * A window's (win_of): the fleet's window index now, the charges made
	 * here in it and in the one before, all this host charged in the two
	 * (its floors in Redis), and the bucket's count here at the gather.
	 */
	__u64 widx, wc_cur, wc_prev, wown_cur, wown_prev, wgather;
	int refusing;		/* the local bucket refused packets since the last sync */
	struct trk t;
	__u32 name_len;
	const char *name;	/* in f->names */
};

struct wr_fleet {
	struct wr_cfg_fleet cfg;
	struct wr_maps maps;
	int notify_fd;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;	/* on CLOCK_MONOTONIC; signalled to stop */
	int stop;		/* under lock */
	unsigned int mult;	/* __atomic */
	/* Redis servers: as configured, or a cluster's primaries as found */
	struct node nodes[WEIR_FLEET_NODES];
	int nr_nodes;
	struct { char host[64]; int port; } seeds[WEIR_FLEET_NODES];	/* cluster: where to ask */
	int nr_seeds;
	int group_node[FLEET_GROUPS];	/* the node holding each group */
	__u64 group_ok[FLEET_GROUPS];	/* when each group was last in step */
	bool mapped;		/* group_node is known */
	bool refresh;		/* cluster: the slot map changed */
	__u32 hosts_seen;	/* the most live hosts a poll reported this sync */
	__u64 ok_since;		/* since when every sync had every group in step; 0: not now */
	__u64 left_at;		/* when the fallback last ended; 0: never */
	__u32 hosts_hi;		/* the most seen lately (the safe fallback's N) ... */
	__u64 hosts_hi_at;	/* ... and when it was seen last */
	/* This host's share of the fleet's use, decaying (the hold fallback's) */
	double use_local, use_fleet;
	unsigned int hold_mult;	/* 1 / that share, while Redis answered */
	__u64 started;		/* CLOCK_MONOTONIC when this sync began */
	struct wr_cfg_fleet orig;	/* the config as given, for wr_fleet_same */
	struct call *calls;
	char auth_user[512], auth_pass[512];
	bool auth;
	/* wr_state and wr_agg mapped, for the fold */
	struct weir_set *sets;
	size_t sets_len;
	__u32 nr_sets;
	struct weir_state *agg;
	size_t agg_len;
	/* hot keys: open addressing, rebuilt every sync */
	struct trk *tab, *tab_next;
	__u32 gen;		/* tab's generation; tab_next is filled as gen + 1 */
	struct item *by_group;	/* plan()'s: this sync's items in group order, then items */
	size_t tab_cap, next_cap;	/* their sizes, powers of 2: twice the keys or more */
	struct item *items;
	/* This sync's key names, one after another (FLEET_NAME_MAX each at most) */
	char *names;
	size_t names_used;
	/* Per rule and limit, made once a sync: its names' RULE:LIMIT:PARAMS: and their hash */
	struct name_part {
		__u32 gen;	/* the sync (f->gen) it was made for */
		__u32 len;	/* 0: too long, its keys have no name */
		__u64 hash;	/* fnv() of s, where its keys' hashes start */
		char s[FLEET_TAIL_MAX];
	} parts[WEIR_MAX_RULES][WEIR_MAX_LIMITS];
	struct weir_ruleset *rs;
	struct weir_fleet_status st;
	struct wr_fleet_hooks hooks;	/* a test's clocks; none in the daemon */
	/*
	 * The fleet's clock for windows: Redis's TIME less ours, in ns, as
	 * weir_config.fleet_win_off holds it (0: not known yet), measured on
	 * the node of group 0 (the same on every host), and the round trip of
	 * the measurement it was taken from.
	 */
	__u64 win_off;
	__u64 win_off_rtt;
	__u64 win_off_next, win_off_next_rtt;	/* one to take after this sync; 0: none */
	double host_id;		/* this host in Redis's records: a hash of its name */
	__u64 runs;		/* the last run number handed to a token bucket key (trk.run) */
	/* One call's arguments: command, sha, numkeys, keys, the over set, the numbers */
	const char **argv;
	size_t *argvlen;
	char *args;		/* a sync call's numbers, FLEET_ARG_BYTES a key */
	/*
	 * Fingerprints (fp.c): fp_lock guards fp_pub, nr_pub, fp_got, nr_got,
	 * got_gen; the rest is the fleet thread's own.
	 */
	pthread_mutex_t fp_lock;
	char (*fp_pub)[WR_FLEET_FP_WORDS];	/* what the daemon publishes now */
	size_t nr_pub;
	struct wr_fleet_fp *fp_got;	/* other hosts', as last read */
	size_t nr_got;
	__u64 got_gen;			/* good reads so far (0: none) */
	bool fp_on;			/* the daemon publishes (or reads): fp.c calls Redis */
	char (*fp_sent)[WR_FLEET_FP_WORDS];	/* what the last good call added */
	size_t nr_sent;
	/* One batched read of wr_fleet_use */
	struct weir_key batch_keys[FLEET_READ_BATCH];
	struct weir_fleet_use batch_vals[FLEET_READ_BATCH];
};

/* The sync's clock: CLOCK_MONOTONIC, the data path's, or a test's (hooks.clock). */
static inline __u64 fleet_now(const struct wr_fleet *f)
{
	return f->hooks.clock ? f->hooks.clock(f->hooks.ctx) : wr_mono_ns();
}

#define FNV_BASIS	0xcbf29ce484222325ULL

/* v as a little-endian double at p (Lua's struct '<d'); past it. */
static inline char *put_double(char *p, double v)
{
	__u64 b;

	memcpy(&b, &v, sizeof(b));
	b = htole64(b);
	memcpy(p, &b, sizeof(b));
	return p + sizeof(b);
}

static inline double get_double(const char *p)
{
	double v;
	__u64 b;

	memcpy(&b, p, sizeof(b));
	b = le64toh(b);
	memcpy(&v, &b, sizeof(v));
	return v;
}

/* Decimal of v into buf (24 bytes), NUL-terminated; the sync formats many. Its length. */
static inline size_t u64_str(char *buf, unsigned long long v)
{
	char t[24];
	int i = sizeof(t);

	do {
		t[--i] = '0' + v % 10;
		v /= 10;
	} while (v);
	memcpy(buf, t + i, sizeof(t) - i);
	buf[sizeof(t) - i] = '\0';
	return sizeof(t) - i;
}

/* What the fleet says of a key, to fold into its bucket here. */
struct fleet_view {
	__u64 floor;		/* a token bucket: its TAT (data-path clock) at least this */
	__u32 idx;		/* a window: the data path's index of the fleet's window */
	__u64 cnt, prev;	/* its count, and the window before's, at least these */
	/*
	 * set: the count becomes cnt plus what the bucket counted here since
	 * the gather (gather: its count then), up or down, and a sliding
	 * window's previous count prev; else at least cnt and prev.
	 */
	bool set;
	__u64 gather;
};

enum { CALL_SYNC, CALL_POLL };
/* One script call: a group's keys, f->items[first .. first + n), or its poll. */
struct call {
	int kind;
	int node;
	__u32 group;
	size_t first, n;
	bool done;		/* answered */
};

/* redis.c: the transport (connections, auth, scripts, the cluster's slots) */
int fleet_node_connect(struct wr_fleet *f, int i, __u64 now);
int fleet_node_find(struct wr_fleet *f, const char *host, int port);
int fleet_cluster_refresh(struct wr_fleet *f);
/* A node's connection closed, after a failure at now (0: retry at once). */
void fleet_node_drop(struct node *n, __u64 now);
void fleet_count_err(struct wr_fleet *f, int i, int kind, const char *what, const char *detail);
int fleet_read_auth(struct wr_fleet *f);

/* keys.c: the keys' names */
__u64 fleet_fnv(const void *p, size_t n, __u64 h);
int fleet_item_name(struct wr_fleet *f, struct item *it, __u32 ri);
int fleet_key_parse(struct wr_fleet *f, const char *name, struct weir_key *k,
		    const struct weir_rule **rp, __u32 *lip);

/* fold.c: the fleet's answers into the local buckets */
bool fleet_fold(struct wr_fleet *f, const struct weir_rule *r, __u32 li,
		const struct weir_key *k, const struct fleet_view *v,
		const struct weir_config *cfg, __u64 now, struct weir_way *hint);
double fleet_win_spent(const struct weir_limit *l, __u32 hosts);
bool fleet_win_ahead(const struct weir_limit *l, __u64 off, __u32 idx, __u64 now);

/* hotkeys.c: the hot keys of a sync */
size_t fleet_gather(struct wr_fleet *f, struct weir_config *cfg, unsigned int mult);

/* fp.c: fingerprints */
int fleet_fp_open(struct wr_fleet *f);
void fleet_fp_sync(struct wr_fleet *f);
void fleet_fp_close(struct wr_fleet *f);

/* sync.c: one sync's calls and answers */
void fleet_write_status(struct wr_fleet *f);

#endif /* WEIR_FLEET_INT_H */
