// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fleet-wide limits: one token bucket (or window) per key for a whole
 * fleet of hosts, enforced by each host's data path, kept in step through
 * Redis. Windows are counts, not rates: see sync_lua and take_win for how
 * they are shared out; what follows is said of token buckets.
 *
 * Redis is never on the packet path. The data path notes what it charges to
 * hot keys of fleet limits (wr_fleet_use); every interval the daemon's fleet
 * thread sends each hot key's growth to Redis, where a script adds it to
 * the fleet's bucket (GCRA charges add: tat = max(tat, now) + n x T) on
 * Redis's own clock, and folds the fleet's answer back into the local
 * bucket, which only ever moves toward "more consumed". Keys over their
 * limit fleet-wide go into a sorted set every host reads each interval, so
 * a host refuses them before it ever sees them. Cold keys never reach Redis.
 *
 * Time: every fleet time is Redis's (TIME inside the scripts); a host only
 * ever uses differences of it (how far a bucket runs ahead of Redis's now),
 * added to its own CLOCK_MONOTONIC at the moment it sent the request, so
 * hosts' clocks never meet and their skew does not matter.
 *
 * When Redis is slow or gone the data path goes on alone: after
 * stale-after, the safe fallback makes each fleet limit charge every packet
 * N times (N: the most live hosts the heartbeats showed over the last
 * FLEET_HOSTS_MEMORY_S), so each host enforces
 * its 1/N share; the local fallback keeps the full rate on each host.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
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
/* A sync this long after a fleet window turns (wr_fleet_turn_after): every data path has turned. */
#define FLEET_TURN_NS		(2 * 1000000ULL)
/* Longest wait between two connection attempts to a node that is down. */
#define FLEET_BACKOFF_MAX_NS	(2 * 1000000000ULL)

/*
 * KEYS[1..n]: buckets; KEYS[n+1]: the over-limit set. ARGV[1]: per bucket
 * its kind and its numbers, as little-endian doubles (one argument for the
 * call, not several a key: Redis and the sync each parse one string).
 *
 * Kind 1 and 2, a fixed or sliding window (fleet windows turn on Redis's
 * clock; each host cuts its own by it, wr_limit_wnow): the window's index
 * (Redis's now / period); the charges made here in the window before it
 * and in it; all this host has charged in those two windows (the fleet's
 * count is never less: a Redis that lost the key hands no one a fresh
 * window); the count at which the key is spent, as good as over its limit
 * (win_spent); the period in microseconds; the limit; this host's id (a
 * hash of its name) and the live hosts, N.
 *
 * The bucket holds the window's index, its count and the previous
 * window's, the sum of the hosts' allocations, and per host its
 * allocation: how much of the window it may admit in all, which is never
 * less than what it has used. Each call raises the caller's allocation to
 * its use if it is below, then adds 1/N of what no allocation holds (for
 * a sliding window, less the previous window's weight now; what a host
 * does not use stays its own until the window ends: handed back, it could
 * go to another host while its last charges were still on their way):
 * the allocations add up to no more than the limit (or what
 * the hosts used, where a host used more than it was allocated: what it
 * admitted between the window's turn and its first sync in it), so the
 * hosts together admit no more than it whatever each of them sees, and a
 * host the traffic moved to gains a third of what is left at each sync
 * (with N = 3). The bucket lives until the window after its own ends (the
 * sliding window still weighs it). A sender behind the bucket (its clock
 * turned a window later than another host's) adds its current window's
 * charge to what is now the previous one and gets no allocation (-1). A
 * key whose count reaches the spent count is over its limit until its
 * window ends. Returns the window's index, its two counts and the
 * caller's allocation. A window's count is not a rate: charges that
 * arrive late add to the window they name, and nothing carries over.
 *
 * Kind 0, a token bucket: seven numbers, in microseconds but the third
 * and fourth: all the sender has charged the key (TAT advance) since it
 * began following it, that total as of its last answered call, a number
 * naming that run (a new one each time the key is followed anew: a
 * restart, a key that went cold and came back), and the sender's id (a
 * hash of its name). The charge is the run's total less what the key's
 * record of it (per host: id, run and total, after the TAT in the
 * bucket's value) held: a call
 * whose answer was lost, or that was never run, is carried by the next,
 * and one run late or twice adds nothing (a total behind the record
 * charges nothing and leaves it where it was). Without a record of the
 * run (its first call, or a Redis that lost it), the total less the
 * answered one: what may not have reached the fleet. Then the threshold
 * over which the key is over its
 * limit: the tolerance, or below any TAT (-1e18) if the sender's bucket
 * refused packets since its last sync (a refused packet charges nothing,
 * so a key one host holds at its limit never runs over it; it is over its
 * limit all the same); how far the sender's own bucket runs ahead (what
 * Redis answers and publishes is never less: a Redis that lost the key
 * hands out no fresh burst; what it keeps is only the charges, so charges
 * that arrive late and spread over the same time from several hosts add
 * up as they happened); and since when its charges were made (the sender's
 * last send of it), in Redis's time as the sender reckons it from Redis's
 * earlier answers (0: not known yet, now): they are added from then, tat =
 * max(tat, from) + charge. Charged as if made now, a sync's worth would
 * refuse for a sync's length whatever the burst, and a backlog sent late
 * (Redis was away) for as long as the backlog was; and an absolute time,
 * unlike "so long ago", stays right when a call is run late (a stalled
 * Redis runs what was queued when it wakes). The bucket is stored even
 * when its TAT is behind Redis's now (kept a second past it), so the next
 * host's charge adds to it: were it dropped, each host's charge would
 * start again from its own "from", and hosts that each stay within the
 * rate would never add up (after a FLUSHALL or a stall the fleet admitted
 * N times the rate; tests/fleet_sim.c); it is stored as a little-endian
 * double, which takes no formatting and no parsing (a decimal one, as
 * earlier versions stored, is read too), and lives a second or two past
 * its TAT (whole seconds: few distinct TTLs to format), with its records.
 * Per bucket Redis runs one SET (and a ZADD when it is over); one MGET
 * reads them all. A bucket of a weir before the records (the TAT alone)
 * is read as one without records.
 * Returns Redis's now and, as one string of little-endian doubles, per
 * bucket how far the fleet's TAT runs ahead of it.
 *
 * Test hook: ARGV[2], if given, is Redis's now (us) in place of TIME, and
 * keys then live an hour longer (their expiry runs on the real clock,
 * which must not overtake a simulated one; an expired key reads as a full
 * bucket, as one whose TAT has passed does). Only a struct wr_fleet_hooks
 * with redis_us set makes the sync send it, and only C code that calls
 * wr_fleet_open() can set one: no config key or option reaches it, and a
 * production host never sends the extra argument. A client that sends it
 * anyway gains nothing it does not have already: whoever may call the
 * script may SET the buckets themselves.
 */
#include "fleet/sync.lua.h"	/* sync_lua[]: user/fleet/sync.lua, embedded by the Makefile */

/*
 * KEYS[1]: the fleet's hosts (score: when each heartbeat expires), KEYS[2]:
 * the over-limit set. ARGV: this host, its heartbeat's life and how many
 * over-limit keys to return, in microseconds; the test hook's optional
 * fourth, Redis's now (as sync_lua's). Returns Redis's now, the live hosts,
 * and the keys over their limit with their TATs.
 */
#include "fleet/poll.lua.h"	/* poll_lua[]: user/fleet/poll.lua */

struct node {
	char host[64];
	int port;
	redisContext *c;
	char sha_sync[48], sha_poll[48];
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
	/* One batched read of wr_fleet_use */
	struct weir_key batch_keys[FLEET_READ_BATCH];
	struct weir_fleet_use batch_vals[FLEET_READ_BATCH];
};

/* The sync's clock: CLOCK_MONOTONIC, the data path's, or a test's (hooks.clock). */
static __u64 fleet_now(const struct wr_fleet *f)
{
	return f->hooks.clock ? f->hooks.clock(f->hooks.ctx) : wr_mono_ns();
}

#define FNV_BASIS	0xcbf29ce484222325ULL

/* FNV-1a, for the limit's parameters in a key's name and for shards. */
static __u64 fnv(const void *p, size_t n, __u64 h)
{
	const unsigned char *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}

/*
 * A key's group: its name's hash tag, {FLEET#G}. Every key of a group, the
 * group's over-limit set and its heartbeat set share one Redis Cluster
 * slot, so one script call can touch them all; groups spread the keys over
 * the cluster's primaries (and, sharded, over the servers).
 */
static __u32 key_group(const char *tail)
{
	return fnv(tail, strlen(tail), FNV_BASIS) % FLEET_GROUPS;
}

static __u32 limit_params(const struct weir_limit *l)
{
	__u64 h = FNV_BASIS;

	h = fnv(&l->rate, sizeof(l->rate), h);
	h = fnv(&l->burst, sizeof(l->burst), h);
	h = fnv(&l->period_ms, sizeof(l->period_ms), h);
	h = fnv(&l->key, 1, h);
	h = fnv(&l->cost, 1, h);
	h = fnv(&l->plen4, 1, h);
	h = fnv(&l->plen6, 1, h);
	/* A window's bucket is not a token bucket's (token buckets' names kept as they were). */
	if (wr_limit_windowed(l))
		h = fnv(&l->algo, 1, h);
	return h ^ (h >> 32);
}

/* v as a little-endian double at p (Lua's struct '<d'); past it. */
static char *put_double(char *p, double v)
{
	__u64 b;

	memcpy(&b, &v, sizeof(b));
	b = htole64(b);
	memcpy(p, &b, sizeof(b));
	return p + sizeof(b);
}

static double get_double(const char *p)
{
	double v;
	__u64 b;

	memcpy(&b, p, sizeof(b));
	b = le64toh(b);
	memcpy(&v, &b, sizeof(v));
	return v;
}

/* Decimal of v into buf (24 bytes), NUL-terminated; the sync formats many. Its length. */
static size_t u64_str(char *buf, unsigned long long v)
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

/* A string builder that stops at its end and says so. */
struct sb {
	char *p, *end;
	bool over;
};

static void sb_mem(struct sb *b, const char *s, size_t n)
{
	if (b->over || n >= (size_t)(b->end - b->p)) {
		b->over = true;
		return;
	}
	memcpy(b->p, s, n);
	b->p += n;
	*b->p = '\0';
}

static void sb_str(struct sb *b, const char *s)
{
	sb_mem(b, s, strlen(s));
}

static void sb_u64(struct sb *b, unsigned long long v)
{
	char t[24];

	sb_mem(b, t, u64_str(t, v));
}

/* The hot keys' table: twice as many slots as keys, or more (a power of 2). */
#define FLEET_TAB_MIN		1024
#define FLEET_TAB_MAX		(2 * WEIR_FLEET_KEYS)
/* A key name's tail starts with its limit's part: "RULE:LIMIT:PARAMS:". */
static void name_limit(struct sb *b, const char *rule, __u32 li, const struct weir_limit *l)
{
	static const char hex[] = "0123456789abcdef";
	char params[9];
	__u32 v = limit_params(l);
	int i;

	for (i = 7; i >= 0; i--, v >>= 4)
		params[i] = hex[v & 15];
	params[8] = '\0';
	sb_str(b, rule);
	sb_mem(b, ":", 1);
	sb_u64(b, li);
	sb_mem(b, ":", 1);
	sb_str(b, params);
	sb_mem(b, ":", 1);
}

/* Decimal of v into p (3 bytes), not terminated; its length. */
static size_t dec_u8(char *p, unsigned int v)
{
	if (v >= 100) {
		p[0] = '0' + v / 100;
		p[1] = '0' + v / 10 % 10;
		p[2] = '0' + v % 10;
		return 3;
	}
	if (v >= 10) {
		p[0] = '0' + v / 10;
		p[1] = '0' + v % 10;
		return 2;
	}
	p[0] = '0' + v;
	return 1;
}

/* ... and ends with the key's: "all", or ADDR/PLEN. */
static void name_addr(struct sb *b, const struct weir_key *k)
{
	char addr[INET6_ADDRSTRLEN];
	int i;

	if (!k->family) {
		sb_str(b, "all");
		return;
	}
	if (k->family == 4) {
		const __u8 *a = (const __u8 *)k->addr;
		char *p = addr;

		/* Every sync names every key it sends: not through printf. */
		for (i = 0; i < 4; i++) {
			p += dec_u8(p, a[i]);
			*p++ = '.';
		}
		p[-1] = '/';
		p += dec_u8(p, k->plen);
		sb_mem(b, addr, p - addr);
		return;
	}
	if (inet_ntop(AF_INET6, k->addr, addr, sizeof(addr)))
		sb_str(b, addr);
	else
		b->over = true;
	sb_mem(b, "/", 1);
	sb_u64(b, k->plen);
}

/* The whole name: "weir:{FLEET#GROUP}:" and the tail, whose hash gives GROUP. */
static void name_whole(struct sb *b, const char *fleet, __u32 group, const char *tail,
		       size_t tail_len)
{
	sb_str(b, "weir:{");
	sb_str(b, fleet);
	sb_mem(b, "#", 1);
	sb_u64(b, group);
	sb_mem(b, "}:", 2);
	sb_mem(b, tail, tail_len);
}

int wr_fleet_key_name(const char *fleet, const char *rule, __u32 li, const struct weir_limit *l,
		      const struct weir_key *k, char *buf, size_t len)
{
	char tail[FLEET_TAIL_MAX];
	struct sb b = { tail, tail + sizeof(tail) };

	name_limit(&b, rule, li, l);
	name_addr(&b, k);
	if (b.over)
		return -ENAMETOOLONG;
	b = (struct sb){ buf, buf + len };
	name_whole(&b, fleet, key_group(tail), tail, strlen(tail));
	return b.over ? -ENAMETOOLONG : 0;
}

/*
 * What wr_fleet_key_name() makes of item it (of rule ri), into this sync's
 * names, and its group; the limit's part made once a sync. 0, or
 * -ENAMETOOLONG (that key is not synced).
 */
static int item_name(struct wr_fleet *f, struct item *it, __u32 ri)
{
	struct name_part *np = &f->parts[ri][it->li];
	char tail[FLEET_TAIL_MAX];
	struct sb b;
	size_t alen;

	if (np->gen != f->gen) {
		b = (struct sb){ np->s, np->s + sizeof(np->s) };
		name_limit(&b, f->rs->names[ri], it->li, &it->r->limits[it->li]);
		np->len = b.over ? 0 : b.p - np->s;
		np->hash = fnv(np->s, np->len, FNV_BASIS);
		np->gen = f->gen;
	}
	if (!np->len)
		return -ENAMETOOLONG;
	/* The tail, in one buffer as wr_fleet_key_name() has it, for the same bound. */
	memcpy(tail, np->s, np->len);
	b = (struct sb){ tail + np->len, tail + sizeof(tail) };
	name_addr(&b, &it->k);
	if (b.over)
		return -ENAMETOOLONG;
	alen = b.p - (tail + np->len);
	it->group = fnv(tail + np->len, alen, np->hash) % FLEET_GROUPS;
	b = (struct sb){ f->names + f->names_used, f->names + f->names_used + FLEET_NAME_MAX };
	name_whole(&b, f->cfg.name, it->group, tail, np->len + alen);
	if (b.over)
		return -ENAMETOOLONG;
	it->name = f->names + f->names_used;
	it->name_len = b.p - it->name;
	f->names_used += it->name_len + 1;
	return 0;
}

/* The rule and limit a Redis key names, in this host's live set; the key it is here. */
static int key_parse(struct wr_fleet *f, const char *name, struct weir_key *k,
		     const struct weir_rule **rp, __u32 *lip)
{
	char buf[160], *fields[6], *save = NULL, *p, *slash;
	const struct weir_limit *l;
	unsigned long li, params;
	__u32 i;
	int nf;

	if (strlen(name) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, name);
	/* weir, fleet, rule, limit, params: the address (IPv6 has colons) is the rest. */
	for (nf = 0, p = buf; nf < 5; nf++) {
		fields[nf] = strtok_r(nf ? NULL : p, ":", &save);
		if (!fields[nf])
			return -EINVAL;
	}
	fields[5] = save;
	if (!fields[5] || !*fields[5] || strcmp(fields[0], "weir") || fields[1][0] != '{' ||
	    strncmp(fields[1] + 1, f->cfg.name, strlen(f->cfg.name)) ||
	    fields[1][1 + strlen(f->cfg.name)] != '#')
		return -EINVAL;
	li = strtoul(fields[3], &p, 10);
	if (*p || li >= WEIR_MAX_LIMITS)
		return -EINVAL;
	params = strtoul(fields[4], &p, 16);
	if (*p)
		return -EINVAL;
	for (i = 0; i < f->rs->nr_rules && i < WEIR_MAX_RULES; i++)
		if (!strncmp(f->rs->names[i], fields[2], WEIR_NAME_LEN))
			break;
	if (i == f->rs->nr_rules || i == WEIR_MAX_RULES || li >= f->rs->rules[i].nr_limits)
		return -ENOENT;
	l = &f->rs->rules[i].limits[li];
	if (!l->fleet || limit_params(l) != params)
		return -ENOENT;
	memset(k, 0, sizeof(*k));
	k->uid = f->rs->rules[i].uid;
	k->limit = li;
	if (strcmp(fields[5], "all")) {
		unsigned long plen;

		slash = strchr(fields[5], '/');
		if (!slash || l->key != WEIR_KEY_SRC)
			return -EINVAL;
		*slash = '\0';
		plen = strtoul(slash + 1, &p, 10);
		if (*p)
			return -EINVAL;
		if (inet_pton(AF_INET, fields[5], k->addr) == 1 && plen == l->plen4)
			k->family = 4;
		else if (inet_pton(AF_INET6, fields[5], k->addr) == 1 && plen == l->plen6)
			k->family = 6;
		else
			return -EINVAL;
		k->plen = plen;
	} else if (l->key != WEIR_KEY_ALL) {
		return -EINVAL;
	}
	*rp = &f->rs->rules[i];
	*lip = li;
	return 0;
}

/* ---- the fold: the fleet's use into the local bucket ---- */

/* tat = max(tat, floor), with the data path's compare-and-swap on the same word. */
static bool fold_tat(__u64 *tat, __u64 floor)
{
	__u64 cur = __atomic_load_n(tat, __ATOMIC_ACQUIRE);

	while (cur < floor)
		if (__atomic_compare_exchange_n(tat, &cur, floor, false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			return true;
	return false;
}

/* x = max(x, v), with the data path's compare-and-swap on the same word. */
static void fold_max(__u64 *x, __u64 v)
{
	__u64 cur = __atomic_load_n(x, __ATOMIC_ACQUIRE);

	while (cur < v &&
	       !__atomic_compare_exchange_n(x, &cur, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
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

/*
 * A window bucket's counts from the fleet's: window v->idx's count to
 * v->cnt and what was counted here since the gather (v->set; see take_win
 * for what cnt is then), or to at least v->cnt, and a sliding window's
 * previous one to at least v->prev. A bucket still in an earlier window
 * moves to the fleet's (as the data path's own turn would, its count
 * becoming the previous one when they are adjacent); one already in a
 * later window keeps it, and a sliding one takes the fleet's count as its
 * previous window's when that is the one. The previous count is a plain
 * word next to the window's, as the data path keeps it: a fold racing a
 * turn can leave it the larger of the two candidates, which only refuses
 * sooner. way: st's, to move its idle_at.
 */
static bool fold_win(const struct weir_limit *l, struct weir_state *st,
		     struct weir_way *way, const struct fleet_view *v)
{
	int sliding = wr_win_life(l->algo) > 1;
	__u64 prev = v->prev < UINT32_MAX ? v->prev : UINT32_MAX;
	__u64 cur = __atomic_load_n(&st->tat, __ATOMIC_ACQUIRE), want, mine, cnt;
	__u32 wi;

	for (;;) {
		wi = cur >> 32;
		if ((__s32)(wi - v->idx) > 0) {
			/* This host has turned already: the fleet's is its previous window. */
			if (sliding && wi == v->idx + 1)
				fold_max(&st->aux, v->cnt < UINT32_MAX ? v->cnt : UINT32_MAX);
			return false;
		}
		cnt = v->cnt;
		if (wi == v->idx && v->set && (__u32)cur > v->gather)
			cnt += (__u32)cur - v->gather;
		if (cnt > UINT32_MAX)
			cnt = UINT32_MAX;
		if (wi == v->idx && (v->set ? (__u32)cur == cnt : (__u32)cur >= cnt)) {
			if (sliding && v->set)
				__atomic_store_n(&st->aux, prev, __ATOMIC_RELEASE);
			else if (sliding)
				fold_max(&st->aux, prev);
			return false;
		}
		want = wr_win_pack(v->idx, cnt);
		if (__atomic_compare_exchange_n(&st->tat, &cur, want, false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			break;
	}
	if (wi == v->idx) {
		if (sliding && v->set)
			__atomic_store_n(&st->aux, prev, __ATOMIC_RELEASE);
		else if (sliding)
			fold_max(&st->aux, prev);
		return true;
	}
	/*
	 * A turn: the previous window is ours, if it was the one before, or
	 * the fleet's; set, the fleet's (ours counts the others' allocations).
	 */
	mine = wi + 1 == v->idx && !v->set ? (__u32)cur : 0;
	if (sliding)
		__atomic_store_n(&st->aux, mine > prev ? mine : prev, __ATOMIC_RELEASE);
	if (way)
		__atomic_store_n(&way->idle_at, wr_idle_at(l, want), __ATOMIC_RELEASE);
	return true;
}

/*
 * The count at which a fleet window is published as spent (over its
 * limit: every host then counts it full until it ends, hosts that never
 * saw the key included). Not the limit itself: under the shares take_win
 * hands out, the hosts' own refusals say nothing of the fleet's (a host
 * refuses once its share is spent), and the fleet's count comes ever
 * closer to the limit without reaching it. So: within a quarter of one
 * host's share of the window of it, or, for a window too small to say so,
 * one short. What is left then goes unused: under 1/(4N) of the limit.
 */
static double win_spent(const struct weir_limit *l, __u32 hosts)
{
	__u64 slack = l->rate / (4ULL * (hosts ? hosts : 1));

	return (double)(l->rate - (slack ? slack : l->rate > 1 ? 1 : 0));
}

/*
 * Is window idx (the data path's index) later than the one this host's
 * clock is in at now? The data path takes any other window than its
 * current one for an old one, so a fold into a later window would be
 * lost at the next packet: a host whose clock is a little behind the
 * fleet's (the offset is measured to within a round trip) waits for it.
 */
static bool win_ahead(const struct weir_limit *l, __u64 off, __u32 idx, __u64 now)
{
	__u32 c = wr_limit_wnow(l, now, off) / wr_limit_period_ns(l);

	return (__s32)(idx - c) > 0;
}

/* The fleet's view into one bucket here: a token bucket's TAT, or a window's counts. */
static bool fold_state(const struct weir_limit *l, struct weir_state *st,
		       struct weir_way *way, const struct fleet_view *v)
{
	return wr_limit_windowed(l) ? fold_win(l, st, way, v) : fold_tat(&st->tat, v->floor);
}

/*
 * Move key k's bucket forward to what the fleet says of it (v). A key this
 * host has no bucket for gets one, claimed as the data path claims ways.
 */
static bool fold(struct wr_fleet *f, const struct weir_rule *r, __u32 li,
		 const struct weir_key *k, const struct fleet_view *v,
		 const struct weir_config *cfg, __u64 now, struct weir_way *hint)
{
	const struct weir_limit *l = &r->limits[li];
	int win = wr_limit_windowed(l);
	struct weir_way *way, *victim;
	struct weir_set *set;
	__u64 seen, word;
	int tries;

	/* The fleet's bucket is full again, or its windows empty: nothing to add. */
	if (win ? !v->cnt && !v->prev : v->floor <= now)
		return false;
	/* The way the sync found the key in, if it still holds the key. */
	if (hint && READ_ONCE(*way_word(hint, 0)) == key_word(k, 0) &&
	    *way_word(hint, 1) == key_word(k, 1) && *way_word(hint, 2) == key_word(k, 2))
		return fold_state(l, &hint->st, hint, v);
	if (l->key == WEIR_KEY_ALL) {
		if (!f->agg || (size_t)(l->agg_slot + 1) * sizeof(*f->agg) > f->agg_len)
			return false;
		return fold_state(l, &f->agg[l->agg_slot], NULL, v);
	}
	if (!f->sets || !cfg->state_sets || cfg->state_sets > f->nr_sets)
		return false;
	set = &f->sets[wr_state_set(wr_key_hash(k, cfg->state_seed), cfg->state_sets)];
	word = win ? wr_win_pack(v->idx, v->cnt < UINT32_MAX ? v->cnt : UINT32_MAX) : v->floor;
	for (tries = 0; tries < 4; tries++) {
		way = state_scan(set, k, &victim, &seen);
		if (way)
			return fold_state(l, &way->st, way, v);
		if (state_claim(set, victim, seen, k, word,
				win && wr_win_life(l->algo) > 1 ? v->prev : 0,
				wr_idle_at(l, word)))
			return true;
	}
	return false;
}

/* ---- Redis ---- */

static void node_drop(struct node *n, __u64 now)
{
	if (n->c)
		redisFree(n->c);
	n->c = NULL;
	n->backoff = n->backoff ? n->backoff * 2 : 100000000ULL;
	if (n->backoff > FLEET_BACKOFF_MAX_NS)
		n->backoff = FLEET_BACKOFF_MAX_NS;
	n->next_try = now + n->backoff;
}

static void count_err(struct wr_fleet *f, int i, int kind, const char *what, const char *detail)
{
	struct weir_fleet_node *sn = &f->st.node[i];

	sn->errors[kind]++;
	/* Once per failure of a node that was up, not once per interval. */
	if (sn->up)
		fprintf(stderr, "weir: fleet: Redis %s: %s%s%s\n", sn->addr, what,
			detail ? ": " : "", detail ? detail : "");
	sn->up = 0;
}

static struct timeval tv_ms(__u32 ms)
{
	return (struct timeval){ .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };
}

/* One command, its reply checked for an error; NULL (and the node dropped) on failure. */
static redisReply *command(struct wr_fleet *f, int i, int argc, const char **argv)
{
	struct node *n = &f->nodes[i];
	redisReply *rep = redisCommandArgv(n->c, argc, argv, NULL);

	if (!rep) {
		count_err(f, i, n->c->err == REDIS_ERR_IO && (errno == EAGAIN || errno == ETIMEDOUT)
				      ? WEIR_FE_TIMEOUT : WEIR_FE_CONNECT,
			  argv[0], n->c->errstr);
		node_drop(n, fleet_now(f));
		return NULL;
	}
	if (rep->type == REDIS_REPLY_ERROR) {
		count_err(f, i, WEIR_FE_CONNECT, argv[0], rep->str);
		freeReplyObject(rep);
		node_drop(n, fleet_now(f));
		return NULL;
	}
	return rep;
}

static int load_script(struct wr_fleet *f, int i, const char *lua, char *sha)
{
	const char *argv[] = { "SCRIPT", "LOAD", lua };
	redisReply *rep = command(f, i, 3, argv);

	if (!rep)
		return -EIO;
	if (rep->type != REDIS_REPLY_STRING || rep->len >= 48) {
		count_err(f, i, WEIR_FE_REPLY, "SCRIPT LOAD", "not a script id");
		freeReplyObject(rep);
		node_drop(&f->nodes[i], fleet_now(f));
		return -EPROTO;
	}
	memcpy(sha, rep->str, rep->len);
	sha[rep->len] = '\0';
	freeReplyObject(rep);
	return 0;
}

/* Connect, authenticate and load the scripts; 0 when the node is ready. */
static int node_connect(struct wr_fleet *f, int i, __u64 now)
{
	struct node *n = &f->nodes[i];
	__u32 ms = f->cfg.interval_ms < 500 ? 500 : f->cfg.interval_ms;

	if (n->c)
		return 0;
	if (now < n->next_try)
		return -EAGAIN;
	n->c = redisConnectWithTimeout(n->host, n->port, tv_ms(ms));
	if (!n->c || n->c->err) {
		count_err(f, i, WEIR_FE_CONNECT, "cannot connect",
			  n->c ? n->c->errstr : "out of memory");
		node_drop(n, now);
		return -ECONNREFUSED;
	}
	/* A stalled Redis holds the sync for at most an interval per node. */
	redisSetTimeout(n->c, tv_ms(f->cfg.interval_ms));
	if (f->auth) {
		const char *argv[] = { "AUTH", f->auth_user, f->auth_pass };
		redisReply *rep = f->auth_user[0] ? command(f, i, 3, argv)
						  : command(f, i, 2, (const char *[]){ "AUTH",
										  f->auth_pass });

		if (!rep)
			return -EACCES;
		freeReplyObject(rep);
	}
	if (load_script(f, i, sync_lua, n->sha_sync) || load_script(f, i, poll_lua, n->sha_poll))
		return -EIO;
	n->backoff = 0;
	return 0;
}

/* ---- the hot keys' table ---- */

/*
 * The slot of k in a table whose live entries carry generation gen (older
 * ones read as empty, so a table is emptied by moving on, not cleared).
 */
static size_t trk_slot(const struct trk *tab, size_t cap, __u32 gen, const struct weir_key *k)
{
	size_t i = wr_key_hash(k, 0x5eed) & (cap - 1);

	while (tab[i].used == gen && memcmp(&tab[i].k, k, sizeof(*k)))
		i = (i + 1) & (cap - 1);
	return i;
}

/* Fetch a table entry's first part, what trk_slot() reads, into the cache. */
static void trk_prefetch(const struct trk *t)
{
	__builtin_prefetch(t);
	__builtin_prefetch((const char *)&t->k + sizeof(t->k) - 1);
}

/* Every hot key and its use, in one pass of batched reads. */
static int read_use(struct wr_fleet *f, size_t *nr)
{
	struct weir_key *keys = f->batch_keys;
	struct weir_fleet_use *vals = f->batch_vals;
	__u32 count, j;
	bool first = true;
	struct weir_key in, out;
	int err;

	*nr = 0;
	for (;;) {
		LIBBPF_OPTS(bpf_map_batch_opts, o);

		count = FLEET_READ_BATCH;
		err = bpf_map_lookup_batch(f->maps.fleet_use, first ? NULL : &in, &out, keys, vals,
					   &count, &o);
		if (err && errno != ENOENT)
			return -errno;
		for (j = 0; j < count && *nr < WEIR_FLEET_KEYS; j++, (*nr)++) {
			f->items[*nr].k = keys[j];
			f->items[*nr].use = vals[j];
		}
		if (err)
			return 0;	/* ENOENT: that was the last batch */
		in = out;
		first = false;
	}
}

/* ---- Redis Cluster: which primary holds a group ---- */

/* CRC16/XMODEM, as Redis Cluster hashes keys to its 16384 slots. */
static __u16 crc16(const char *p, size_t n)
{
	__u16 crc = 0;
	int b;

	while (n--) {
		crc ^= (__u16)(unsigned char)*p++ << 8;
		for (b = 0; b < 8; b++)
			crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
	}
	return crc;
}

static __u16 group_slot(const struct wr_fleet *f, __u32 g)
{
	char tag[48];
	int n = snprintf(tag, sizeof(tag), "%s#%u", f->cfg.name, g);

	return crc16(tag, n) & 16383;
}

/* The node of host:port, added if new; -1 when the table is full. */
static int node_find(struct wr_fleet *f, const char *host, int port)
{
	int i;

	for (i = 0; i < f->nr_nodes; i++)
		if (f->nodes[i].port == port && !strcmp(f->nodes[i].host, host))
			return i;
	if (f->nr_nodes == WEIR_FLEET_NODES)
		return -1;
	i = f->nr_nodes++;
	memset(&f->nodes[i], 0, sizeof(f->nodes[i]));
	snprintf(f->nodes[i].host, sizeof(f->nodes[i].host), "%s", host);
	f->nodes[i].port = port;
	f->nodes[i].last_ok = fleet_now(f);
	memset(&f->st.node[i], 0, sizeof(f->st.node[i]));
	snprintf(f->st.node[i].addr, sizeof(f->st.node[i].addr), strchr(host, ':') ? "[%s]:%d"
		 : "%s:%d", host, port);
	f->st.node[i].up = 1;
	f->st.nr_nodes = f->nr_nodes;
	return i;
}

/*
 * The cluster's slot map (CLUSTER SLOTS) from the first node that answers,
 * known primaries first, then the configured ones: each group's primary.
 * 0, or -errno with the groups' nodes left as they were.
 */
static int cluster_refresh(struct wr_fleet *f)
{
	static const char *const argv[] = { "CLUSTER", "SLOTS" };
	int g, i, tries = f->nr_nodes + f->nr_seeds, node[FLEET_GROUPS];
	__u64 now = fleet_now(f);
	redisReply *rep = NULL;
	size_t r;

	for (i = 0; i < tries && !rep; i++) {
		int n = i < f->nr_nodes ? i : node_find(f, f->seeds[i - f->nr_nodes].host,
							 f->seeds[i - f->nr_nodes].port);

		if (n < 0 || node_connect(f, n, now))
			continue;
		rep = command(f, n, 2, (const char **)argv);
		if (rep && rep->type != REDIS_REPLY_ARRAY) {
			count_err(f, n, WEIR_FE_REPLY, "CLUSTER SLOTS", "not a cluster's answer");
			freeReplyObject(rep);
			rep = NULL;
		}
	}
	if (!rep)
		return -EHOSTUNREACH;
	for (g = 0; g < FLEET_GROUPS; g++) {
		__u16 slot = group_slot(f, g);

		node[g] = -1;
		for (r = 0; r < rep->elements; r++) {
			redisReply *e = rep->element[r], *pr;

			if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
			    e->element[0]->type != REDIS_REPLY_INTEGER ||
			    e->element[1]->type != REDIS_REPLY_INTEGER ||
			    slot < e->element[0]->integer || slot > e->element[1]->integer)
				continue;
			pr = e->element[2];
			if (pr->type == REDIS_REPLY_ARRAY && pr->elements >= 2 &&
			    pr->element[0]->type == REDIS_REPLY_STRING &&
			    pr->element[1]->type == REDIS_REPLY_INTEGER)
				node[g] = node_find(f, pr->element[0]->str, pr->element[1]->integer);
			break;
		}
	}
	freeReplyObject(rep);
	for (g = 0; g < FLEET_GROUPS; g++)
		if (node[g] >= 0)
			f->group_node[g] = node[g];
	f->refresh = false;
	return 0;
}

/* ---- one sync ---- */

enum { CALL_SYNC, CALL_POLL };
/* One script call: a group's keys, f->items[first .. first + n), or its poll. */
struct call {
	int kind;
	int node;
	__u32 group;
	size_t first, n;
	bool done;		/* answered */
};

/* The calls of this sync: each group's keys in batches, then its poll. */
static size_t plan(struct wr_fleet *f, size_t nr)
{
	size_t at[FLEET_GROUPS + 1] = {}, nc = 0, i;
	__u32 g;

	/*
	 * Items by group, in one counting pass: f->items[at[g] .. at[g + 1]),
	 * copied in that order, so that the passes over each call's keys
	 * (append, take) read them one after another.
	 */
	for (i = 0; i < nr; i++)
		at[f->items[i].group + 1]++;
	for (g = 0; g < FLEET_GROUPS; g++)
		at[g + 1] += at[g];
	{
		size_t fill[FLEET_GROUPS];
		struct item *t;

		memcpy(fill, at, sizeof(fill));
		for (i = 0; i < nr; i++)
			f->by_group[fill[f->items[i].group]++] = f->items[i];
		t = f->items;
		f->items = f->by_group;
		f->by_group = t;
	}
	for (g = 0; g < FLEET_GROUPS; g++) {
		for (i = at[g]; i < at[g + 1]; i += FLEET_BATCH) {
			size_t n = at[g + 1] - i < FLEET_BATCH ? at[g + 1] - i : FLEET_BATCH;

			f->calls[nc++] = (struct call){ CALL_SYNC, f->group_node[g], g, i, n };
		}
		f->calls[nc++] = (struct call){ CALL_POLL, f->group_node[g], g, 0, 0 };
	}
	return nc;
}

static void append(struct wr_fleet *f, struct call *c, const char **argv, size_t *argvlen,
		   char *args)
{
	struct node *n = &f->nodes[c->node];
	char hosts_key[96], over_key[96], ttl[24], maxn[24], rnow[24], numkeys[24];
	int argc = 0;
	size_t k;

	snprintf(over_key, sizeof(over_key), "weir:{%s#%u}:over", f->cfg.name, c->group);
	snprintf(hosts_key, sizeof(hosts_key), "weir:{%s#%u}:hosts", f->cfg.name, c->group);
	if (c->kind == CALL_POLL) {
		snprintf(ttl, sizeof(ttl), "%llu", (unsigned long long)f->cfg.stale_ms * 1000ULL);
		snprintf(maxn, sizeof(maxn), "%d", FLEET_OVER_MAX);
		argv[argc++] = "EVALSHA";
		argv[argc++] = n->sha_poll;
		argv[argc++] = "2";
		argv[argc++] = hosts_key;
		argv[argc++] = over_key;
		argv[argc++] = f->cfg.host;
		argv[argc++] = ttl;
		argv[argc++] = maxn;
		if (f->hooks.redis_us) {
			snprintf(rnow, sizeof(rnow), "%llu",
				 (unsigned long long)f->hooks.redis_us(f->hooks.ctx));
			argv[argc++] = rnow;
		}
	} else {
		char *p = args;

		argv[argc++] = "EVALSHA";
		argv[argc++] = n->sha_sync;
		snprintf(numkeys, sizeof(numkeys), "%zu", c->n + 1);
		argv[argc++] = numkeys;
		for (k = 0; k < c->n; k++) {
			const struct item *it = &f->items[c->first + k];
			const struct weir_limit *l;

			l = &it->r->limits[it->li];
			argvlen[argc] = it->name_len;
			argv[argc++] = it->name;
			if (wr_limit_windowed(l)) {
				p = put_double(p, wr_algo(l->algo)->fleet_kind);
				p = put_double(p, it->widx);
				p = put_double(p, it->wc_prev);
				p = put_double(p, it->wc_cur);
				p = put_double(p, it->wown_cur);
				p = put_double(p, it->wown_prev);
				p = put_double(p, win_spent(l, f->st.hosts));
				p = put_double(p, wr_limit_period_ns(l) / 1000);
				p = put_double(p, l->rate);
				p = put_double(p, f->host_id);
				p = put_double(p, f->st.hosts ? f->st.hosts : 1);
				continue;
			}
			p = put_double(p, wr_algo(l->algo)->fleet_kind);
			p = put_double(p, it->t.tot_us);
			p = put_double(p, it->t.acked_us);
			p = put_double(p, it->t.run);
			p = put_double(p, f->host_id);
			p = put_double(p, it->refusing ? -1e18 : (double)(l->tolerance / 1000));
			p = put_double(p, it->ahead_us);
			p = put_double(p, n->offset_known && it->from_ns / 1000 + n->offset_us > 0
					  ? (double)(it->from_ns / 1000 + n->offset_us) : 0);
		}
		argvlen[argc] = strlen(over_key);
		argv[argc++] = over_key;
		argvlen[argc] = p - args;
		argv[argc++] = args;
		if (f->hooks.redis_us) {
			argvlen[argc] = u64_str(rnow, f->hooks.redis_us(f->hooks.ctx));
			argv[argc++] = rnow;
		}
	}
	/* The sync's arguments have their lengths; the poll's and the head's are measured. */
	for (k = 0; k < (size_t)argc; k++)
		if (c->kind == CALL_POLL || k < 3)
			argvlen[k] = strlen(argv[k]);
	redisAppendCommandArgv(n->c, argc, argv, argvlen);
}

/*
 * A window key's answer (four doubles at p: the fleet's window, its count
 * and the one before's, this host's allocation in it) into v, for the
 * fold, and its table entry. Its window here is the fleet's less the
 * offset's whole periods.
 *
 * The bucket here is set so that it admits what the allocation leaves this
 * host (the allocation less what it has used), less what it charged since
 * the gather, and for a sliding window with no previous count (see
 * below). Never below the most the fleet has counted in the window (a
 * Redis that lost the key hands out nothing).
 * Without an allocation (this host's clock is behind the fleet's), at
 * least the fleet's count. -EPROTO on numbers no script sends.
 */
static int take_win(struct wr_fleet *f, struct item *it, const struct weir_limit *l,
		    const char *p, const struct weir_config *cfg, __u64 sent_at,
		    struct fleet_view *v)
{
	double si = get_double(p), sc = get_double(p + 8), sp = get_double(p + 16);
	double a = get_double(p + 24), cnt;
	__u64 period = wr_limit_period_ns(l), off = cfg->fleet_win_off, unit_ns, grew, fm;

	/* The script's window is the one sent, or a later one another host's clock turned to. */
	if (!(si >= 1 && si < 1.8e16 && sc >= 0 && sc < 1.8e19 && sp >= 0 && sp < 1.8e19 &&
	      a >= -1 && a < 1.8e19) || (__u64)si < it->widx)
		return -EPROTO;
	fm = it->t.wfwin == (__u64)si && it->t.wfmax > sc ? it->t.wfmax : (__u64)sc;
	v->idx = (__u64)si - off / period;
	v->prev = sp;
	v->cnt = fm;
	if (a >= 0 && (__u64)si == it->widx) {
		cnt = (double)l->rate - (a > it->wown_cur ? a - it->wown_cur : 0);
		if (cnt > fm)
			v->cnt = cnt;
		/*
		 * A sliding window's previous count is weighed into the
		 * allocations by the script; the bucket here holds none, so
		 * it admits its allocation and no more however long the next
		 * sync takes (the weight shrinks meanwhile: with it in the
		 * bucket, every host would take the room it frees, N times).
		 */
		v->prev = 0;
		v->set = true;
		v->gather = it->wgather;
	}
	/* Counted in the fleet until its window ends (the next one too, for a sliding window's weight). */
	it->t.until = sc || sp ? ((__u64)si + wr_win_life(l->algo)) * period - off : 0;
	/* This host's share of the fleet's use (the hold fallback), as time of the limit's rate. */
	unit_ns = l->rate ? period / l->rate : 0;
	grew = it->t.wfwin == (__u64)si ? fm - it->t.wfmax : fm;
	if (it->t.wfwin) {
		f->use_fleet += (double)grew * unit_ns;
		f->use_local += (double)it->charge_us * unit_ns;
	}
	it->t.wfwin = (__u64)si;
	it->t.wfmax = fm;
	if ((__u64)si != it->widx) {
		/* Another host turned first: what was sent as this window is the fleet's previous. */
		it->t.win = (__u64)si;
		it->t.wown = 0;
		it->t.wown_prev = it->wown_cur;
	}
	f->tab[it->slot].until = it->t.until;
	f->tab[it->slot].win = it->t.win;
	f->tab[it->slot].wfwin = it->t.wfwin;
	f->tab[it->slot].wfmax = it->t.wfmax;
	f->tab[it->slot].wown = it->t.wown;
	f->tab[it->slot].wown_prev = it->t.wown_prev;
	f->tab[it->slot].sent = sent_at;
	return 0;
}

/*
 * The fleet's clock for windows, from a poll of group 0's node: Redis's
 * TIME (now_r, us) against ours half way through the round trip. A new
 * offset is taken only when the one in force disagrees with this
 * measurement by more than the measurement can be off (half its round trip,
 * and as much again for the one in force) and a millisecond: windows turn
 * where they turned, unless Redis's clock really moved (a step, a failover
 * to a node with another clock). Written after the sync (sync_once): its
 * keys were reckoned with the one in force.
 */
static void win_clock(struct wr_fleet *f, __u64 now_r, __u64 sent, __u64 recv)
{
	__u64 rtt = recv > sent ? recv - sent : 0, mid = sent + rtt / 2, r_ns = now_r * 1000, d;

	if (r_ns <= mid)
		return;
	d = r_ns - mid;
	if (f->win_off && (d > f->win_off ? d - f->win_off : f->win_off - d) <=
				  rtt / 2 + f->win_off_rtt / 2 + 1000000)
		return;
	f->win_off_next = d;
	f->win_off_next_rtt = rtt;
}

/* One reply: 0, 1 when it was a redirect (the call was not run), or -errno. */
static int take(struct wr_fleet *f, struct call *c, redisReply *rep,
		const struct weir_config *cfg)
{
	struct node *n = &f->nodes[c->node];
	__u64 now_r, e;
	double d;
	size_t k;

	if (rep->type == REDIS_REPLY_ERROR) {
		if (!strncmp(rep->str, "MOVED ", 6) || !strncmp(rep->str, "ASK ", 4)) {
			/* The slot moved (a failover, a reshard): a new map next time. */
			f->refresh = true;
			return 1;
		}
		count_err(f, c->node, WEIR_FE_REPLY, "script", rep->str);
		return -EPROTO;
	}
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 1 ||
	    rep->element[0]->type != REDIS_REPLY_INTEGER)
		goto garbage;
	now_r = rep->element[0]->integer;
	/* Redis's time against ours, at the send (off by at most the round trip). */
	n->offset_us = (long long)now_r - (long long)(n->sent_at / 1000);
	n->offset_known = true;
	if (c->kind == CALL_POLL && c->group == 0)
		win_clock(f, now_r, n->sent_at, fleet_now(f));
	if (c->kind == CALL_SYNC) {
		const redisReply *ahead = rep->elements == 2 ? rep->element[1] : NULL;
		size_t want = 0, at = 0;

		for (k = 0; k < c->n; k++) {
			const struct item *it = &f->items[c->first + k];

			want += wr_algo(it->r->limits[it->li].algo)->fleet_answer;
		}
		if (!ahead || ahead->type != REDIS_REPLY_STRING ||
		    (size_t)ahead->len != want * sizeof(double))
			goto garbage;
		for (k = 0; k < c->n; k++) {
			struct item *it = &f->items[c->first + k];
			const struct weir_limit *l = &it->r->limits[it->li];
			struct fleet_view v = {};

			/* Its table slot and bucket are far apart in memory: fetch ahead. */
			if (k + FLEET_AHEAD < c->n) {
				const struct item *nx = it + FLEET_AHEAD;

				__builtin_prefetch(&f->tab[nx->slot]);
				if (nx->way)
					__builtin_prefetch(nx->way);
			}
			if (wr_limit_windowed(l)) {
				if (take_win(f, it, l, ahead->str + at, cfg, n->sent_at, &v))
					goto garbage;
				at += wr_algo(l->algo)->fleet_answer * sizeof(double);
				if (win_ahead(l, cfg->fleet_win_off, v.idx, fleet_now(f)))
					goto counted;
				goto folded;
			}
			d = get_double(ahead->str + at);
			at += wr_algo(l->algo)->fleet_answer * sizeof(double);
			/* From 0 up to what a __u64 of nanoseconds holds. */
			if (!(d >= 0 && d < 1.8e13))
				goto garbage;
			e = d;
			{
				/* How far the fleet moved this key since the last sync, and we. */
				__u64 until = n->sent_at + e * 1000ULL;
				__u64 base = n->sent_at - f->cfg.interval_ms * 1000000ULL;

				if (it->t.until > base)
					base = it->t.until;
				/* A key's first answer has nothing to measure from. */
				if (it->t.until) {
					f->use_fleet += until > base ? until - base : 0;
					f->use_local += it->charge_us * 1000ULL;
				}
				it->t.until = until;
				/* The table holds what the next sync starts from. */
				f->tab[it->slot].until = until;
				f->tab[it->slot].sent = n->sent_at;
				f->tab[it->slot].acked_us = it->t.tot_us;
			}
			v.floor = it->t.until;
folded:
			if (fold(f, it->r, it->li, &it->k, &v, cfg, n->sent_at, it->way))
				f->st.floors++;
counted:
			f->st.keys_synced++;
			f->st.node[c->node].keys++;
		}
	} else {
		redisReply *over;

		if (rep->elements != 3 || rep->element[1]->type != REDIS_REPLY_INTEGER ||
		    rep->element[2]->type != REDIS_REPLY_ARRAY)
			goto garbage;
		if ((__u32)rep->element[1]->integer > f->hosts_seen)
			f->hosts_seen = rep->element[1]->integer;
		over = rep->element[2];
		for (k = 0; k + 1 < over->elements; k += 2) {
			const struct weir_limit *l;
			const struct weir_rule *r;
			struct fleet_view v = {};
			struct weir_key key;
			double score;
			__u32 li;

			if (over->element[k]->type != REDIS_REPLY_STRING ||
			    over->element[k + 1]->type != REDIS_REPLY_STRING)
				goto garbage;
			f->st.over_keys++;
			if (key_parse(f, over->element[k]->str, &key, &r, &li))
				continue;	/* a limit this host does not have */
			score = strtod(over->element[k + 1]->str, NULL);
			if (!(score > now_r && score < 1.8e16))
				continue;
			l = &r->limits[li];
			if (wr_limit_windowed(l)) {
				/* Over until its window ends: that window, at its count. */
				__u64 period = wr_limit_period_ns(l), off = cfg->fleet_win_off;

				if (!off)
					continue;
				v.idx = (__u64)score * 1000 / period - 1 - off / period;
				v.cnt = l->rate;
				v.prev = 0;
				if (win_ahead(l, off, v.idx, fleet_now(f)))
					continue;
			} else {
				v.floor = n->sent_at + (__u64)((score - now_r) * 1000);
			}
			if (fold(f, r, li, &key, &v, cfg, n->sent_at, NULL)) {
				struct weir_fleet_use u = { .charged = 0, .since = n->sent_at };

				f->st.floors++;
				/*
				 * The bucket now holds the fleet's use. Followed from
				 * here, a key the data path turns hot later adds its
				 * own charges to this entry, instead of reporting the
				 * whole bucket, the fleet's use included, as its
				 * first charge (the fleet would count that twice).
				 */
				bpf_map_update_elem(f->maps.fleet_use, &key, &u, BPF_NOEXIST);
			}
		}
	}
	return 0;
garbage:
	count_err(f, c->node, WEIR_FE_REPLY, "unexpected reply", NULL);
	return -EPROTO;
}

/* Keys whose charge did not reach the fleet: send it again next time. */
static void unsend(struct wr_fleet *f, const struct call *c)
{
	size_t k;

	for (k = 0; c->kind == CALL_SYNC && k < c->n; k++) {
		const struct item *it = &f->items[c->first + k];

		f->tab[it->slot].last = it->prev_last;
		f->tab[it->slot].carry_ns = it->prev_carry;
		f->tab[it->slot].win = it->prev_win;
		f->tab[it->slot].wown = it->prev_wown;
		f->tab[it->slot].wown_prev = it->prev_wown_prev;
		f->tab[it->slot].tot_us = it->prev_tot;
	}
}

/* Send every call of node i, pipelined, and take the replies in order. */
static void node_exchange(struct wr_fleet *f, int i, size_t nc, const char **argv,
			  size_t *argvlen, char *args, const struct weir_config *cfg)
{
	struct node *n = &f->nodes[i];
	redisReply *rep;
	size_t j;
	bool ok = true;

	n->sent_at = fleet_now(f);
	for (j = 0; j < nc; j++)
		if (f->calls[j].node == i)
			append(f, &f->calls[j], argv, argvlen, args);
	if (f->hooks.in_flight && n->c) {
		int done = 0;

		/* Sent before the hook runs (the round trip), as redisGetReply would. */
		while (!done && redisBufferWrite(n->c, &done) == REDIS_OK)
			;
		f->hooks.in_flight(f->hooks.ctx);
	}
	for (j = 0; j < nc; j++) {
		struct call *c = &f->calls[j];
		int r;

		if (c->node != i)
			continue;
		if (!n->c)
			continue;	/* sent before the connection failed: it may have run */
		rep = NULL;
		if (redisGetReply(n->c, (void **)&rep) != REDIS_OK || !rep) {
			count_err(f, i, n->c->err == REDIS_ERR_IO ? WEIR_FE_TIMEOUT
								  : WEIR_FE_REPLY,
				  "no reply", n->c->errstr);
			/*
			 * Not taken back: a stalled Redis may still run it. A
			 * token bucket's next call carries its charge anyway
			 * (its run's total), and Redis counts it once; a
			 * window's next floors do.
			 */
			node_drop(n, fleet_now(f));
			if (f->cfg.mode == WR_FLEET_CLUSTER)
				f->refresh = true;
			ok = false;
			continue;
		}
		r = take(f, c, rep, cfg);
		freeReplyObject(rep);
		if (r) {
			/* A redirect was not run; anything else may have been. */
			if (r == 1)
				unsend(f, c);
			ok = false;
			if (r < 0) {
				/* NOSCRIPT (a restarted Redis) or garbage: a new connection. */
				node_drop(n, 0);
			}
			continue;
		}
		c->done = true;
	}
	if (ok && n->c) {
		n->last_ok = fleet_now(f);
		f->st.node[i].up = 1;
		f->st.node[i].last_ok_ns = n->last_ok;
		f->st.node[i].rtt_us = (n->last_ok - n->sent_at) / 1000;
	}
}

/*
 * A window key's part of gather: its charges for the sync (struct item's
 * w* fields), from units, what was charged here since its last send, and
 * its bucket here (word, aux). Those charges went into the window current
 * at that send and the ones after: all into this one when the key was sent
 * in it already; else this one holds what this host's bucket counts in it
 * (the fleet's count of a window reaches a bucket only through a sync that
 * sent in it, or the over set's, which is the limit: then all went into
 * this one, which errs towards refusing) and the rest went into the one
 * before. false: not sent now, only followed, its units carried: no fleet
 * clock yet (its windows would not be the fleet's), or nothing charged and
 * nothing refused, or cool as gather says of token buckets (not refusing,
 * not counted in the fleet's current window, its count here at most half
 * the limit, and units times the live hosts under FLEET_COOL of the limit
 * over the time since its last send).
 */
static bool win_of(struct wr_fleet *f, struct item *it, const struct weir_limit *l, __u64 word,
		   __u64 now, __u64 units, __u64 off)
{
	__u64 period = wr_limit_period_ns(l), elapsed;
	__u32 c = wr_limit_wnow(l, now, off) / period, wi = word >> 32;

	units += it->t.carry_ns;
	it->t.carry_ns = 0;
	it->from_ns = it->t.sent ? it->t.sent : it->use.since;
	it->widx = (now + off) / period;
	it->wgather = wi == c ? (__u32)word : 0;
	elapsed = now > it->from_ns ? now - it->from_ns : 0;
	if (!off || (!units && !it->refusing) ||
	    (!it->refusing && it->t.until < now && it->wgather * 2 <= l->rate &&
	     (double)units * (f->st.hosts ? f->st.hosts : 1) * FLEET_COOL_DEN * period <
		     (double)l->rate * elapsed * FLEET_COOL_NUM)) {
		it->t.carry_ns = units;
		return false;
	}
	if (it->t.win == it->widx) {
		it->wc_cur = units;
		it->wc_prev = 0;
	} else {
		it->wc_cur = units < it->wgather ? units : it->wgather;
		it->wc_prev = units - it->wc_cur;
	}
	/* This host's own counts of the two windows, sent and answered before and now. */
	if (it->t.win == it->widx) {
		it->wown_cur = it->t.wown + it->wc_cur;
		it->wown_prev = it->t.wown_prev;
	} else if (it->t.win + 1 == it->widx) {
		it->wown_cur = it->wc_cur;
		it->wown_prev = it->t.wown + it->wc_prev;
	} else {
		it->wown_cur = it->wc_cur;
		it->wown_prev = it->wc_prev;
	}
	/*
	 * This host's own counts are what it charged, whether or not this
	 * sync's answer comes back: one that is lost may have run or not, and
	 * is not sent again, but the next sync's floors carry it (unsend()
	 * takes them back for a call that was never run, which is sent again).
	 */
	it->t.win = it->widx;
	it->t.wown = it->wown_cur;
	it->t.wown_prev = it->wown_prev;
	it->charge_us = units;	/* what this host's share of the fleet's use counts */
	return true;
}

/* The live rule set and the switches; the hot keys with what they grew by. */
static size_t gather(struct wr_fleet *f, struct weir_config *cfg, unsigned int mult)
{
	const struct weir_rule *last_r = NULL;
	size_t nr = 0, i, out = 0, s;
	__u64 now = fleet_now(f), h;

	f->names_used = 0;
	if (wr_read_live(&f->maps, f->rs) || wr_config_read(&f->maps, cfg) ||
	    read_use(f, &nr))
		return 0;
	/* The next table as small as the keys allow: fewer cache misses. */
	for (f->next_cap = FLEET_TAB_MIN; f->next_cap < 2 * nr; f->next_cap *= 2)
		;
	for (i = 0; i < nr; i++) {
		struct item *it = &f->items[out];
		const struct weir_rule *r = NULL;
		__u64 delta, ahead = 0, drops = 0;
		const struct weir_limit *l;
		__u32 j;

		/* The buckets' sets and the table are far apart in memory: fetch ahead. */
		if (i + FLEET_AHEAD < nr) {
			const struct weir_key *nk = &f->items[i + FLEET_AHEAD].k;

			if (nk->family && f->sets && cfg->state_sets && cfg->state_sets <= f->nr_sets) {
				const char *p = (const char *)&f->sets[wr_state_set(
					wr_key_hash(nk, cfg->state_seed), cfg->state_sets)];
				size_t o;

				for (o = 0; o < sizeof(struct weir_set); o += 64)
					__builtin_prefetch(p + o);
			}
			h = wr_key_hash(nk, 0x5eed);
			trk_prefetch(&f->tab[h & (f->tab_cap - 1)]);
			trk_prefetch(&f->tab_next[h & (f->next_cap - 1)]);
		}

		*it = f->items[i];
		it->way = NULL;
		if (last_r && last_r->uid == it->k.uid)
			r = last_r;
		for (j = 0; !r && j < f->rs->nr_rules && j < WEIR_MAX_RULES; j++)
			if (f->rs->rules[j].uid == it->k.uid)
				r = &f->rs->rules[j];
		last_r = r;
		if (!r || it->k.limit >= r->nr_limits || !r->limits[it->k.limit].fleet) {
			/* The rule or its limit is gone (a reload): forget the key. */
			bpf_map_delete_elem(f->maps.fleet_use, &it->k);
			continue;
		}
		it->r = r;
		it->li = it->k.limit;
		l = &r->limits[it->li];
		s = trk_slot(f->tab, f->tab_cap, f->gen, &it->k);
		if (f->tab[s].used == f->gen) {
			it->t = f->tab[s];
		} else {
			memset(&it->t, 0, sizeof(it->t));
			/* A new run of the key here: 48 bits, which a double holds. */
			it->t.run = ++f->runs & ((1ULL << 48) - 1);
			/*
			 * Hot before this sync started (a restart, a reload that
			 * changed the fleet): what it was charged then was sent by
			 * the sync before, or is spent. From now on.
			 */
			if (it->use.since < f->started)
				it->t.last = it->use.charged;
		}
		it->t.k = it->k;
		it->t.used = f->gen + 1;
		it->prev_last = it->t.last;
		it->prev_carry = it->t.carry_ns;
		it->prev_win = it->t.win;
		it->prev_wown = it->t.wown;
		it->prev_wown_prev = it->t.wown_prev;
		it->prev_tot = it->t.tot_us;
		delta = it->use.charged - it->t.last;
		it->t.last = it->use.charged;
		if (it->k.family) {
			struct weir_set *set;
			struct weir_way *w, *victim;
			__u64 seen;

			if (f->sets && cfg->state_sets && cfg->state_sets <= f->nr_sets) {
				set = &f->sets[wr_state_set(wr_key_hash(&it->k, cfg->state_seed),
							    cfg->state_sets)];
				w = state_scan(set, &it->k, &victim, &seen);
				ahead = w ? READ_ONCE(w->st.tat) : 0;
				drops = w ? READ_ONCE(w->st.drops) : 0;
				it->way = w;
			}
		} else if (f->agg) {
			ahead = READ_ONCE(f->agg[l->agg_slot].tat);
			drops = READ_ONCE(f->agg[l->agg_slot].drops);
		}
		it->refusing = drops > it->t.drops;
		it->t.drops = drops;
		/*
		 * Idle: nothing charged and nothing refused here since the last
		 * sync. A fleet window's key that spent its allocation refuses
		 * and charges nothing until its window turns; cold by its
		 * charges alone, it left wr_fleet_use at the turn and began the
		 * next window untracked.
		 */
		it->t.idle = delta || it->refusing ? 0 : it->t.idle + 1;
		if (it->t.idle >= FLEET_COLD_SYNCS && it->t.until < now) {
			/* Cold: its bucket is full here and in the fleet. */
			bpf_map_delete_elem(f->maps.fleet_use, &it->k);
			continue;
		}
		if (wr_limit_windowed(l)) {
			/* ahead: the bucket's word, (window, count). */
			if (!win_of(f, it, l, ahead, now, delta / (mult ? mult : 1),
				    cfg->fleet_win_off)) {
				f->tab_next[trk_slot(f->tab_next, f->next_cap, f->gen + 1,
						     &it->k)] = it->t;
				continue;
			}
			goto send;
		}
		ahead = ahead > now ? (ahead - now) / (mult ? mult : 1) : 0;
		it->ahead_us = ahead / 1000;
		/* Under the safe fallback charges were multiplied: the fleet gets real ones. */
		delta = delta / (mult ? mult : 1) + it->t.carry_ns;
		/* Since when these charges were made: the last send, or the key turning hot. */
		it->from_ns = it->t.sent ? it->t.sent : it->use.since;
		it->charge_us = delta / 1000;
		it->t.carry_ns = delta % 1000;
		if ((!it->charge_us && !it->refusing) ||
		    (!it->refusing && it->t.until < now && ahead * 2 <= r->limits[it->li].tolerance &&
		     now > it->from_ns &&
		     delta * (f->st.hosts ? f->st.hosts : 1) * FLEET_COOL_DEN <
			     (now - it->from_ns) * FLEET_COOL_NUM)) {
			/*
			 * Nothing charged here since the last sync and nothing
			 * refused (or a key entered by the poll's fold, not yet
			 * charged here), or a cool key: not refusing, not over in
			 * the fleet, its bucket here under half spent, and what it
			 * was charged since it was last sent, times the live
			 * hosts, under FLEET_COOL of the limit's rate over that
			 * time. Its charge is kept (carried) and it is followed,
			 * not sent; the fleet's view of it can wait.
			 */
			it->t.carry_ns = delta;
			f->tab_next[trk_slot(f->tab_next, f->next_cap, f->gen + 1, &it->k)] = it->t;
			continue;
		}
send:
		if (item_name(f, it, r - f->rs->rules))
			continue;
		/* A token bucket sends its run's total (sync_lua): a lost answer loses no charge. */
		if (!wr_limit_windowed(l))
			it->t.tot_us += it->charge_us;
		it->slot = trk_slot(f->tab_next, f->next_cap, f->gen + 1, &it->k);
		f->tab_next[it->slot] = it->t;
		out++;
	}
	{
		struct trk *t = f->tab;

		f->tab = f->tab_next;
		f->tab_next = t;
		f->tab_cap = f->next_cap;
		f->gen++;
	}
	return out;
}

/*
 * The fleet's clock offset into weir_config, for the data path (and
 * f->win_off), under the root's writer lock that every writer of the
 * config takes (the daemon's main thread included), taken without waiting:
 * held by another writer, it is tried again after the next sync. A root
 * that cannot be opened has no other writer (a test's maps).
 */
static void win_off_store(struct wr_fleet *f, __u64 off, __u64 rtt)
{
	struct weir_config cfg;
	int fd = open(opts.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB)) {
		close(fd);
		return;
	}
	if (!wr_config_read(&f->maps, &cfg)) {
		cfg.fleet_win_off = off;
		if (!wr_config_write(&f->maps, &cfg)) {
			f->win_off = off;
			f->win_off_rtt = rtt;
			f->win_off_next = 0;
		}
	}
	if (fd >= 0)
		close(fd);
}

static void write_status(struct wr_fleet *f)
{
	__u32 zero = 0;

	f->st.updated_ns = fleet_now(f);
	bpf_map_update_elem(f->maps.fleet_status, &zero, &f->st, BPF_ANY);
}

/* One sync: every node's calls, pipelined, then the replies. */
static void sync_once(struct wr_fleet *f, const char **argv, size_t *argvlen, char *args)
{
	struct weir_config cfg = {};
	unsigned int mult = __atomic_load_n(&f->mult, __ATOMIC_RELAXED), want;
	__u64 t0 = fleet_now(f), dt, now;
	bool all_ok = true, stale = false;
	size_t nr, nc, j;
	int i;
	__u32 g;

	if (f->cfg.mode == WR_FLEET_CLUSTER && (f->refresh || !f->mapped)) {
		if (!cluster_refresh(f))
			f->mapped = true;
	}
	nr = gather(f, &cfg, mult);
	f->st.hot_keys = nr;
	f->st.over_keys = 0;
	f->hosts_seen = 0;
	nc = f->mapped ? plan(f, nr) : 0;
	for (i = 0; i < f->nr_nodes; i++) {
		bool used = false;

		for (j = 0; j < nc && !used; j++)
			used = f->calls[j].node == i;
		if (!used)
			continue;
		if (node_connect(f, i, t0)) {
			for (j = 0; j < nc; j++)
				if (f->calls[j].node == i)
					unsend(f, &f->calls[j]);
			if (f->cfg.mode == WR_FLEET_CLUSTER)
				f->refresh = true;
			continue;
		}
		node_exchange(f, i, nc, argv, argvlen, args, &cfg);
	}
	/* A group is in step when its poll (and so every sync before it) was answered. */
	now = fleet_now(f);
	for (j = 0; j < nc; j++)
		if (f->calls[j].kind == CALL_POLL && f->calls[j].done)
			f->group_ok[f->calls[j].group] = now;
	for (g = 0; g < FLEET_GROUPS; g++) {
		if (!nc || f->group_ok[g] != now)
			all_ok = false;
		if (now - f->group_ok[g] > f->cfg.stale_ms * 1000000ULL)
			stale = true;
	}
	/*
	 * Out of the fallback only once Redis has answered every sync for
	 * stale-after: a path that fails now and then (lossy, flapping) would
	 * otherwise let every host run on its own bucket for up to
	 * stale-after at each failure, not once.
	 */
	if (!all_ok)
		f->ok_since = 0;
	else if (!f->ok_since)
		f->ok_since = now;
	if (!stale && f->st.fallback_active &&
	    (!f->ok_since || now - f->ok_since < f->cfg.stale_ms * 1000000ULL))
		stale = true;
	/*
	 * And back into it at the first failed sync for FLEET_PROBATION
	 * stale-afters after leaving it, not after stale-after more: each
	 * failure of a flapping path would otherwise give every host that
	 * long on its own bucket again (seen: 1842 and 2149 admitted in 6 s
	 * over a 20% lossy path, where the fallback holds 1300).
	 */
	if (!stale && !all_ok && f->left_at &&
	    now - f->left_at < FLEET_PROBATION * f->cfg.stale_ms * 1000000ULL)
		stale = true;
	if (!stale && f->st.fallback_active)
		f->left_at = now;
	if (f->hosts_seen)
		f->st.hosts = f->hosts_seen;
	/*
	 * The safe fallback divides by the most live hosts seen over the last
	 * FLEET_HOSTS_MEMORY_S, not by the last poll's count: a path to Redis
	 * that fails now and then lapses the other hosts' heartbeats with it
	 * (they refresh them through the same Redis), and the count shrinks to
	 * this host alone just when the fallback needs it, handing each host
	 * the whole rate (seen: 2441 admitted against 1299 in 6 s with 20% of
	 * Redis's packets lost). A host that left counts a while longer: the
	 * shares only get smaller.
	 */
	if (f->hosts_seen && (f->hosts_seen >= f->hosts_hi ||
			      now - f->hosts_hi_at > FLEET_HOSTS_MEMORY_S * 1000000000ULL)) {
		f->hosts_hi = f->hosts_seen;
		f->hosts_hi_at = now;
	}
	dt = fleet_now(f) - t0;
	f->st.syncs++;
	if (all_ok) {
		static const __u64 bounds_ms[] = { 1, 2, 5, 10, 25, 50, 100 };
		size_t b;

		f->st.last_sync_ns = t0;
		f->st.sync_us = dt / 1000;
		for (b = 0; b < ARRAY_SIZE(bounds_ms) && dt > bounds_ms[b] * 1000000ULL; b++)
			;
		f->st.sync_hist[b]++;
	}
	/*
	 * The share this host had of the fleet's use while Redis answered,
	 * over the last few seconds (each sync weighs 0.95 of the one
	 * before): hold keeps it when Redis goes away.
	 */
	if (!stale && f->use_local > 0) {
		double m = f->use_fleet / f->use_local;

		f->hold_mult = m < 1.5 ? 1 : m > 255 ? 255 : (unsigned int)(m + 0.5);
	}
	f->use_local *= 0.95;
	f->use_fleet *= 0.95;
	/* The fallback: each host's share (safe), the last share (hold), or the full rate (local). */
	want = 1;
	if (stale && f->cfg.fallback == WR_FLEET_SAFE)
		want = f->hosts_hi > 255 ? 255 : f->hosts_hi ? f->hosts_hi : 1;
	else if (stale && f->cfg.fallback == WR_FLEET_HOLD)
		want = f->hold_mult ? f->hold_mult : 1;
	if (stale != (bool)f->st.fallback_active)
		fprintf(stderr, "weir: fleet: %s (fallback %s, each packet counts %ux)\n",
			stale ? "Redis is stale: the fallback is in force"
			      : "Redis answers again: fleet limits are in step",
			f->cfg.fallback == WR_FLEET_SAFE ? "safe" :
			f->cfg.fallback == WR_FLEET_HOLD ? "hold" : "local", want);
	f->st.fallback_active = stale;
	if (want != mult) {
		__u64 one = 1;

		__atomic_store_n(&f->mult, want, __ATOMIC_RELAXED);
		if (f->notify_fd >= 0 && write(f->notify_fd, &one, sizeof(one)) < 0)
			fprintf(stderr, "weir: fleet: cannot wake the daemon: %s\n",
				strerror(errno));
	}
	f->st.multiplier = want;
	if (f->win_off_next)
		win_off_store(f, f->win_off_next, f->win_off_next_rtt);
	write_status(f);
}

void wr_fleet_sync(struct wr_fleet *f)
{
	sync_once(f, f->argv, f->argvlen, f->args);
}

/*
 * When the next fleet window turns after now (CLOCK_MONOTONIC), and
 * FLEET_TURN_NS more; 0 if no fleet window limit is in force or there is
 * no fleet clock yet. Every host's windows turn together (wr_limit_wnow),
 * and each host starts a new window with nothing counted, so until its
 * first sync in it a host admits whatever comes; a sync just after the
 * turn, on every host at once, hands out the shares while the window is
 * still nearly whole.
 */
__u64 wr_fleet_turn_after(const struct wr_fleet *f, __u64 now)
{
	__u64 best = 0, period, t;
	__u32 i, j;

	if (!f->win_off)
		return 0;
	for (i = 0; i < f->rs->nr_rules && i < WEIR_MAX_RULES; i++)
		for (j = 0; j < f->rs->rules[i].nr_limits && j < WEIR_MAX_LIMITS; j++) {
			const struct weir_limit *l = &f->rs->rules[i].limits[j];

			if (!l->fleet || !wr_limit_windowed(l))
				continue;
			period = wr_limit_period_ns(l);
			t = now + period - wr_limit_wnow(l, now, f->win_off) % period + FLEET_TURN_NS;
			if (!best || t < best)
				best = t;
		}
	return best;
}

static struct timespec ts_of(__u64 ns)
{
	return (struct timespec){ .tv_sec = ns / 1000000000ULL, .tv_nsec = ns % 1000000000ULL };
}

static void *fleet_thread(void *arg)
{
	struct wr_fleet *f = arg;
	__u64 next = wr_mono_ns(), wake, turn;
	bool extra = false;

	for (;;) {
		struct timespec ts;

		pthread_mutex_lock(&f->lock);
		if (f->stop) {
			pthread_mutex_unlock(&f->lock);
			break;
		}
		pthread_mutex_unlock(&f->lock);
		wr_fleet_sync(f);
		/* A sync at a window's turn leaves the interval's schedule as it was. */
		if (!extra) {
			next += (__u64)f->cfg.interval_ms * 1000000ULL;
			/* A sync that overran its interval does not pile up the next ones. */
			if (wr_mono_ns() > next)
				next = wr_mono_ns();
		}
		wake = next;
		turn = wr_fleet_turn_after(f, wr_mono_ns());
		extra = turn && turn < next;
		if (extra)
			wake = turn;
		ts = ts_of(wake);
		pthread_mutex_lock(&f->lock);
		while (!f->stop && pthread_cond_timedwait(&f->wake, &f->lock, &ts) != ETIMEDOUT)
			;
		pthread_mutex_unlock(&f->lock);
	}
	return NULL;
}

/* "[USER] PASSWORD" on the first line of a root-only file. */
static int read_auth(struct wr_fleet *f)
{
	char why[320], line[512], *nl, *sp;
	FILE *fp;
	int err;

	err = wr_fleet_auth_check(f->cfg.auth_file, why, sizeof(why));
	if (err) {
		pr_err("fleet: auth-file: %s", why);
		return err;
	}
	fp = fopen(f->cfg.auth_file, "re");
	if (!fp || !fgets(line, sizeof(line), fp)) {
		err = fp ? -EINVAL : -errno;
		pr_err("fleet: cannot read the password from %s", f->cfg.auth_file);
		if (fp)
			fclose(fp);
		return err;
	}
	fclose(fp);
	nl = strchr(line, '\n');
	if (nl)
		*nl = '\0';
	sp = strchr(line, ' ');
	if (sp) {
		*sp = '\0';
		snprintf(f->auth_user, sizeof(f->auth_user), "%s", line);
		snprintf(f->auth_pass, sizeof(f->auth_pass), "%s", sp + 1);
	} else {
		snprintf(f->auth_pass, sizeof(f->auth_pass), "%s", line);
	}
	explicit_bzero(line, sizeof(line));
	f->auth = true;
	return 0;
}

/* wr_state and wr_agg into this process, for the fold. */
static void *map_mmap(int fd, size_t *len, __u32 *entries)
{
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	if (bpf_obj_get_info_by_fd(fd, &info, &ilen))
		return NULL;
	*len = ((size_t)info.max_entries * info.value_size + page - 1) / page * page;
	if (entries)
		*entries = info.max_entries;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void fleet_free(struct wr_fleet *f)
{
	int i;

	for (i = 0; i < WEIR_FLEET_NODES; i++)
		if (f->nodes[i].c)
			redisFree(f->nodes[i].c);
	if (f->sets)
		munmap(f->sets, f->sets_len);
	if (f->agg)
		munmap(f->agg, f->agg_len);
	if (f->maps.fleet_status >= 0) {
		__u32 zero = 0;

		memset(&f->st, 0, sizeof(f->st));
		bpf_map_update_elem(f->maps.fleet_status, &zero, &f->st, BPF_ANY);
	}
	wr_maps_close(&f->maps);
	free(f->tab);
	free(f->tab_next);
	free(f->items);
	free(f->by_group);
	free(f->names);
	free(f->rs);
	free(f->calls);
	free(f->argv);
	free(f->argvlen);
	free(f->args);
	explicit_bzero(f->auth_pass, sizeof(f->auth_pass));
	free(f);
}

/* Each fd of m duplicated into *out (all -1 on failure): 0 or -errno. */
static int maps_dup(const struct wr_maps *m, struct wr_maps *out)
{
	struct wr_maps in = *m;
	int *src[] = WR_MAP_FDS(&in), *dst[] = WR_MAP_FDS(out);
	size_t i;

	wr_maps_reset(out);
	for (i = 0; i < ARRAY_SIZE(src); i++) {
		if (*src[i] < 0)
			continue;
		*dst[i] = fcntl(*src[i], F_DUPFD_CLOEXEC, 3);
		if (*dst[i] < 0) {
			int err = -errno;

			wr_maps_close(out);
			return err;
		}
	}
	return 0;
}

struct wr_fleet *wr_fleet_open(const struct wr_cfg_fleet *cfg, const struct wr_maps *maps,
			       const struct wr_fleet_hooks *hooks)
{
	struct wr_fleet *f = calloc(1, sizeof(*f));
	int i, err;

	if (!f) {
		errno = ENOMEM;
		return NULL;
	}
	wr_maps_reset(&f->maps);
	{
		pthread_condattr_t ca;

		pthread_mutex_init(&f->lock, NULL);
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&f->wake, &ca);
		pthread_condattr_destroy(&ca);
	}
	f->cfg = *cfg;
	f->orig = *cfg;
	if (hooks)
		f->hooks = *hooks;
	f->started = fleet_now(f);
	f->notify_fd = -1;
	f->mult = 1;
	if (!f->cfg.host[0] && gethostname(f->cfg.host, sizeof(f->cfg.host) - 1))
		strcpy(f->cfg.host, "localhost");
	err = maps ? maps_dup(maps, &f->maps) : wr_maps_open(&f->maps);
	if (err)
		goto fail;
	f->sets = map_mmap(f->maps.state, &f->sets_len, &f->nr_sets);
	f->agg = map_mmap(f->maps.agg, &f->agg_len, NULL);
	if (!f->sets || !f->agg) {
		err = -errno;
		pr_err("fleet: cannot map weir's buckets (%s); 'weir detach all' and a restart "
		       "create them mappable", strerror(-err));
		goto fail;
	}
	{
		struct weir_config sc;

		/* The offset in force stays (a restart turns no window), until Redis disagrees. */
		if (!wr_config_read(&f->maps, &sc) && sc.fleet_win_off) {
			f->win_off = sc.fleet_win_off;
			f->win_off_rtt = 2000000;
		}
	}
	f->tab_cap = FLEET_TAB_MIN;
	f->tab = calloc(FLEET_TAB_MAX, sizeof(*f->tab));
	f->tab_next = calloc(FLEET_TAB_MAX, sizeof(*f->tab_next));
	f->items = calloc(WEIR_FLEET_KEYS, sizeof(*f->items));
	f->by_group = calloc(WEIR_FLEET_KEYS, sizeof(*f->by_group));
	f->names = malloc((size_t)WEIR_FLEET_KEYS * FLEET_NAME_MAX);
	f->gen = 1;
	f->rs = calloc(1, sizeof(*f->rs));
	if (!f->tab || !f->tab_next || !f->items || !f->by_group || !f->names || !f->rs) {
		err = -ENOMEM;
		goto fail;
	}
	if (f->cfg.auth_file[0]) {
		err = read_auth(f);
		if (err)
			goto fail;
	}
	f->calls = calloc(FLEET_GROUPS * (WEIR_FLEET_KEYS / FLEET_BATCH + 2), sizeof(*f->calls));
	/* Per call: command, sha, numkeys, keys, the over set, the numbers, a test's now. */
	f->argv = calloc(6 + FLEET_BATCH, sizeof(*f->argv));
	f->argvlen = calloc(6 + FLEET_BATCH, sizeof(*f->argvlen));
	f->args = malloc(FLEET_ARG_BYTES * FLEET_BATCH);
	if (!f->calls || !f->argv || !f->argvlen || !f->args) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < f->cfg.nr_nodes; i++) {
		char host[64], *colon;
		const char *h = f->cfg.nodes[i];

		snprintf(host, sizeof(host), "%s", h[0] == '[' ? h + 1 : h);
		colon = strrchr(host, ':');
		if (!colon) {
			err = -EINVAL;
			goto fail;
		}
		*colon = '\0';
		if (colon > host && colon[-1] == ']')
			colon[-1] = '\0';
		if (f->cfg.mode == WR_FLEET_CLUSTER) {
			/* Where to ask for the slot map; the primaries are found there. */
			snprintf(f->seeds[i].host, sizeof(f->seeds[i].host), "%s", host);
			f->seeds[i].port = atoi(colon + 1);
			f->nr_seeds++;
		} else {
			node_find(f, host, atoi(colon + 1));
		}
	}
	for (i = 0; i < FLEET_GROUPS; i++) {
		f->group_node[i] = f->nr_nodes ? i % f->nr_nodes : 0;
		f->group_ok[i] = fleet_now(f);	/* stale-after counts from the start */
	}
	f->mapped = f->cfg.mode != WR_FLEET_CLUSTER;
	snprintf(f->st.name, sizeof(f->st.name), "%s", f->cfg.name);
	snprintf(f->st.host, sizeof(f->st.host), "%s", f->cfg.host);
	/* 48 bits: a double holds it exactly; 0 is no host. */
	f->host_id = (double)((fnv(f->cfg.host, strlen(f->cfg.host), FNV_BASIS) >> 16) | 1);
	{
		struct timespec ts;

		/* Runs of a new process start elsewhere: its totals are not an old run's. */
		clock_gettime(CLOCK_REALTIME, &ts);
		f->runs = fnv(&ts, sizeof(ts), fnv(&f->host_id, sizeof(f->host_id), FNV_BASIS) ^
						  (__u64)getpid());
	}
	f->st.pid = getpid();
	f->st.mode = f->cfg.mode;
	f->st.fallback = f->cfg.fallback;
	f->st.interval_ms = f->cfg.interval_ms;
	f->st.stale_ms = f->cfg.stale_ms;
	f->st.multiplier = 1;
	write_status(f);
	return f;
fail:
	fleet_free(f);
	errno = -err;
	return NULL;
}

void wr_fleet_close(struct wr_fleet *f)
{
	if (f)
		fleet_free(f);
}

struct wr_fleet *wr_fleet_start(const struct wr_cfg_fleet *cfg, int notify_fd)
{
	struct wr_fleet *f = wr_fleet_open(cfg, NULL, NULL);
	int err;

	if (!f)
		return NULL;
	f->notify_fd = notify_fd;
	err = pthread_create(&f->thread, NULL, fleet_thread, f);
	if (err) {
		fleet_free(f);
		errno = err;
		return NULL;
	}
	return f;
}

void wr_fleet_stop(struct wr_fleet *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	f->stop = 1;
	pthread_cond_signal(&f->wake);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->thread, NULL);
	fleet_free(f);
}

bool wr_fleet_same(const struct wr_fleet *f, const struct wr_cfg_fleet *cfg)
{
	/* With an auth file, a reload reads the password again. */
	return f && !cfg->auth_file[0] && !memcmp(&f->orig, cfg, sizeof(*cfg));
}

unsigned int wr_fleet_multiplier(const struct wr_fleet *f)
{
	return f ? __atomic_load_n(&f->mult, __ATOMIC_RELAXED) : 1;
}
