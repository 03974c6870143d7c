/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Fleet-wide limits: the daemon's sync of hot keys with Redis (user/fleet/:
 * fleet_int.h says which file does what).
 */
#ifndef WEIR_FLEET_H
#define WEIR_FLEET_H

#include "config/config.h"
#include "weir_limiter.h"

struct wr_fleet;

/*
 * Start syncing under cfg (copied) on the pinned maps of the current root,
 * in a thread of its own: the caller's loop never waits on Redis. When the
 * cost multiplier the fleet limits should carry changes (the safe fallback
 * starts or ends), notify_fd (an eventfd) is written and
 * wr_fleet_multiplier() says the new one. NULL with errno on failure.
 */
struct wr_fleet *wr_fleet_start(const struct wr_cfg_fleet *cfg, int notify_fd);
void wr_fleet_stop(struct wr_fleet *f);
unsigned int wr_fleet_multiplier(const struct wr_fleet *f);
/*
 * Whether f runs under exactly cfg (and reads no password): a reload that
 * keeps it keeps the sync.
 */
bool wr_fleet_same(const struct wr_fleet *f, const struct wr_cfg_fleet *cfg);

/*
 * The sync without its thread, for tests/fleet_sim.c, which runs several
 * hosts' syncs in one process against simulated time. wr_fleet_start() is
 * wr_fleet_open(cfg, NULL, NULL) and a thread calling wr_fleet_sync()
 * every interval.
 */
struct wr_fleet_hooks {
	/* The clock of the sync, which must be the data path's (default CLOCK_MONOTONIC). */
	__u64 (*clock)(void *ctx);
	/*
	 * Redis's now in microseconds, sent with each script call in place of
	 * Redis's own TIME (see sync_lua). NULL in the daemon: always TIME.
	 */
	__u64 (*redis_us)(void *ctx);
	/* Called once a node's calls are written, before their replies are read. */
	void (*in_flight)(void *ctx);
	void *ctx;
};

/*
 * A sync on maps (its fds are duplicated; NULL: the pinned maps of the
 * current root) under hooks (NULL: none). NULL with errno on failure.
 */
struct wr_fleet *wr_fleet_open(const struct wr_cfg_fleet *cfg, const struct wr_maps *maps,
			       const struct wr_fleet_hooks *hooks);
/* One sync: every hot key's charge sent, the fleet's answers folded in. */
void wr_fleet_sync(struct wr_fleet *f);
/*
 * When the sync after the next fleet window's turn is due, on the sync's
 * clock (later than now); 0 with no fleet window in force or no fleet clock
 * yet. wr_fleet_start()'s thread syncs then as well as every interval.
 */
__u64 wr_fleet_turn_after(const struct wr_fleet *f, __u64 now);
/* Free what wr_fleet_open() made (not for wr_fleet_start()'s: wr_fleet_stop()). */
void wr_fleet_close(struct wr_fleet *f);

/*
 * The Redis key of a bucket, as every host names it:
 * weir:FLEET:RULE:LIMIT:PARAMS:ADDR/PLEN (ADDR "all" for a rule-wide
 * bucket); PARAMS is a hash of the limit's rate, burst and key, so hosts
 * whose limits differ never share a bucket.
 */
int wr_fleet_key_name(const char *fleet, const char *rule, __u32 li, const struct weir_limit *l,
		      const struct weir_key *k, char *buf, size_t len);

/* A sync this long after a fleet window turns (wr_fleet_turn_after): every data path has turned. */
#define WR_FLEET_TURN_NS	(2 * 1000000ULL)
/* The round trip to Redis the accuracy wr_fleet_bound() states assumes: a LAN's. */
#define WR_FLEET_RTT_NS		(1 * 1000000ULL)

/*
 * The accuracy of fleet limit l under a sync interval, as `weir check`
 * prints it (README "Fleet-wide limits"): lag_ns, how long a host admits on
 * what it has not yet heard from the fleet, and per_host, what each host
 * may admit beyond the fleet's bound meanwhile, in l's units. A token
 * bucket: an interval and a round trip (WR_FLEET_RTT_NS) at its rate, once
 * a key is hot. A window: the hosts sync WR_FLEET_TURN_NS after each turn
 * and hand out its shares a round trip later; what comes in that time is
 * whatever the source sends, not a rate (per_host 0).
 */
struct wr_fleet_bound {
	__u64 lag_ns;
	double per_host;
};

static inline struct wr_fleet_bound wr_fleet_bound(const struct weir_limit *l, __u32 interval_ms)
{
	struct wr_fleet_bound b = { 0, 0 };

	if (wr_limit_windowed(l)) {
		b.lag_ns = WR_FLEET_TURN_NS + WR_FLEET_RTT_NS;
		return b;
	}
	b.lag_ns = interval_ms * 1000000ULL + WR_FLEET_RTT_NS;
	b.per_host = (double)l->rate * b.lag_ns / wr_limit_period_ns(l);
	return b;
}

/*
 * Fingerprints shared across the fleet (weir auto, docs/auto.md): one
 * Redis sorted set per fleet, weir:{FLEET#0}:auto (group 0's hash tag: one
 * node, the same for every host), whose members are "HOST<TAB>WORDS" and
 * whose scores are their expiry in Redis's time (ms). Each sync the
 * fleet's thread drops the expired members, re-adds this host's (expiry
 * now + WR_FLEET_FP_TTL_MS(interval)), removes those it no longer
 * publishes, and reads the live ones; one script call (fp.lua) on the
 * fleet's thread, so the daemon's loop never waits on Redis. What is
 * handed between the two is copied under a mutex.
 */
/* Fingerprints published by one host, and read from the fleet, at most. */
#define WR_FLEET_FP_MAX		64
/* A member's words, and a host's name, fit in these (longer ones are read as corrupt). */
#define WR_FLEET_FP_WORDS	512
#define WR_FLEET_FP_HOST	64
/*
 * A member lives three sync intervals and a second past its last refresh:
 * a host that dies (or loses Redis) stops being followed that long after.
 */
#define WR_FLEET_FP_TTL_MS(interval_ms)	(3 * (__u64)(interval_ms) + 1000)

struct wr_fleet_fp {
	char host[WR_FLEET_FP_HOST];	/* who found it; "" if the member named none */
	char words[WR_FLEET_FP_WORDS];	/* the rule's words, as the member has them */
	__u64 expires_ms;		/* CLOCK_REALTIME ms when its member expires */
	bool corrupt;			/* the member is not HOST<TAB>WORDS that fit */
};

/*
 * The fingerprints this host publishes from now on (replacing the last
 * call's; n 0: none, and those published are removed at the next sync).
 * words: n strings of WR_FLEET_FP_WORDS; -E2BIG past WR_FLEET_FP_MAX.
 */
int wr_fleet_fp_publish(struct wr_fleet *f, const char (*words)[WR_FLEET_FP_WORDS], size_t n);
/*
 * Other hosts' fingerprints as the last good read found them (this host's
 * own left out), at most max into out: their number; -EAGAIN before the
 * first good read. *gen (if not NULL): a number that changes with each good
 * read.
 */
int wr_fleet_fp_received(struct wr_fleet *f, struct wr_fleet_fp *out, size_t max, __u64 *gen);
/* This host's name in the fleet (the config's host, or the system's name). */
const char *wr_fleet_host(const struct wr_fleet *f);

#endif /* WEIR_FLEET_H */
