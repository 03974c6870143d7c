/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The daemon's own state, shared by its files: daemon.c (apply, reload,
 * the loop), events.c (log lines of limited sources), log.c. Nothing outside
 * daemon/ includes this; cmd/run.c starts the daemon through daemon.h.
 */
#ifndef WEIR_DAEMON_INT_H
#define WEIR_DAEMON_INT_H

#include "auto/fingerprint.h"
#include "config/config.h"
#include "daemon/metrics.h"
#include "fleet/fleet.h"
#include "lib/conns.h"
#include "lib/shed.h"

/* Sources tracked for event log lines at once; more are counted, not named. */
#define EV_TRACK_MAX 4096

struct tracked {
	struct weir_key key;	/* key.family 0: a rule-wide bucket */
	__u64 drops_at_start;	/* bucket's drops when this interval began */
	/* bans.c: the penalty box's count for a limit with ban */
	__u64 ban_prev;		/* the bucket's drops at the last tick; 0: not counted yet */
	__u64 ban_win_start;	/* CLOCK_MONOTONIC ns its current window began */
	__u64 ban_win_drops;	/* refusals in that window */
	bool ban_done;		/* banned, or judged not to be (said once) */
};

/* bans.c: a prefix the penalty box banned, for doubling on repeats. */
struct ban_hist {
	struct wr_cidr c;
	__u64 last_ns;		/* CLOCK_MONOTONIC ns of its latest ban */
	__u32 count;		/* bans within WR_BAN_MEMORY_NS of each other */
};
#define WR_BAN_HIST_MAX	4096

/* tcpstate.c's watch: the counts at its last tick, and how long the rate has been low. */
struct wr_tcpstate_watch {
	bool primed;		/* at, rsts and oos hold a reading */
	bool warned;		/* said once that /proc/net/snmp cannot be read */
	__u64 at;		/* CLOCK_MONOTONIC ns of the reading */
	__u64 rsts;		/* Tcp OutRsts */
	__u64 oos;		/* the out_of_state counter */
	__u64 quiet_ns;		/* on, and under tcp-state.off this long */
	double rate;		/* out-of-state segments a second at the last tick */
	__u64 switches;		/* times it switched on or off */
};

/* auto.c's tick: five readings a second, as the detector wants (100-250 ms). */
#define AUTO_TICK_MS	200
/* Buckets of auto.c's onset-to-mitigation histogram: 0.25 s .. 10 s, and +Inf. */
#define AUTO_HIST_N	7

struct daemon {
	struct wr_cfg cfg;
	struct wr_maps maps;
	struct ring_buffer *events;
	struct wr_metrics *metrics;
	char metrics_listen[64];
	char *cfg_path;		/* as given */
	char *cfg_dir, *cfg_base;
	int sig_fd, ino_fd, tick_fd, lock_fd;
	struct tracked *tracked;
	size_t nr_tracked;
	__u64 untracked;	/* sources limited this interval we could not track */
	/* Read by the metrics thread: only through __atomic_* */
	__u64 reloads_ok, reloads_failed, limited;
	bool missing_ifaces;	/* some configured interface does not exist yet */
	int shed_fd;		/* timerfd of the shedding controller */
	struct wr_signal sigs[WEIR_MAX_SIGNALS];
	double s_logged;	/* S when a change was last logged */
	struct wr_conns_recon *recon;	/* connection counts vs the kernel's sockets */
	struct wr_fleet *fleet;		/* the fleet sync's thread, with a fleet: section */
	int fleet_fd;			/* eventfd: the fleet's cost multiplier changed */
	unsigned int fleet_mult;	/* the multiplier the live rule set carries */
	int ts_fd;			/* timerfd: tcp-state auto's watch, every second */
	struct wr_tcpstate_watch ts;
	struct wr_feeds *feeds;		/* feeds.c's fetch thread */
	struct ban_hist *ban_hist;	/* bans.c, WR_BAN_HIST_MAX of them */
	struct wr_dauto *au;		/* auto.c's state while auto: mode is not off */
	int au_fd;			/* timerfd: auto.c's tick, every AUTO_TICK_MS while on */
	int au_mode;			/* `weir auto MODE` over the config's; -1: none */
	/* auto.c's figures for the metrics thread: only through __atomic_* */
	__u64 au_rules, au_onsets, au_installed, au_advised, au_failed;
	__u64 au_hist[AUTO_HIST_N];	/* onset to the rule or advice, by auto.c's buckets */
	__u64 au_sum_us;		/* ... their sum */
	__u64 au_vec[WR_FP_NR_VECTORS];	/* choices installed or advised, by wr_fp_vector */
	/* auto_fleet.c's: received rules installed now, and fingerprints by what became of them */
	__u64 auf_rules, auf_published, auf_applied, auf_advised, auf_refused;
	/* Read by the metrics thread: only through __atomic_* */
	__u64 bans, ban_spared_allow, ban_spared_verified, ban_spared_conns;
};

/* log.c: a line of the daemon's log, on stderr: "weir: ..." */
void dlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * events.c: the data path's "started limiting" events (events_on, the ring
 * buffer's callback) turned into at most cfg.event_lines log lines per
 * interval (events_flush, on each tick events_arm sets).
 */
int events_on(void *ctx, void *data, size_t size);
void events_flush(struct daemon *d);
void events_arm(struct daemon *d);

/*
 * tcpstate.c: once a second, `tcp-state auto` switched on when the
 * out-of-state rate reaches tcp-state.on, off when it stayed under
 * tcp-state.off for tcp-state.hold.
 */
void tcpstate_tick(struct daemon *d);

/*
 * events.c: the bucket behind a tracked key now (false if its rule or
 * bucket is gone); rule its index in rs.
 */
bool events_bucket_now(struct daemon *d, const struct weir_ruleset *rs,
		       const struct weir_config *cfg, const struct wr_src_waits *ws,
		       const struct weir_key *k, struct weir_state *st, int *rule);
/*
 * bans.c: once a second, the penalty box: a tracked source whose limit
 * has a ban and refused it `after` times within the limit's period goes
 * on the deny list, unless it is allowed, verified or holds several live
 * connections. bans_metrics: its counters.
 */
void bans_tick(struct daemon *d);
void bans_metrics(struct daemon *d, FILE *out);

/*
 * feeds.c: the config's lists: into the feed store and the store's lists
 * into the data path (at every apply, under its lock); a thread that
 * fetches feeds as their refresh comes round; their metrics.
 */
int feeds_apply(struct daemon *d, const struct wr_maps *m);
/*
 * The source sets of rs (the config's rules, about to be committed):
 * the config's feeds in the store first, then each set placed and filled
 * (a feed not fetched yet is an empty set until its first fetch). Under
 * the root lock. 0, or -errno said (pr_err).
 */
int feeds_srcsets(struct daemon *d, const struct wr_maps *m, struct weir_ruleset *rs);
/*
 * rs went live: the slots it does not name emptied, and where its sets
 * went kept in the config's rules, so a recommit (fleet_recommit) names
 * the same slots.
 */
void feeds_srcsets_done(struct daemon *d, const struct wr_maps *m, const struct weir_ruleset *rs);
int feeds_start(struct daemon *d);
void feeds_stop(struct daemon *d);
void feeds_metrics(FILE *out);

/*
 * auto.c: `weir auto`. auto_restart starts it, stops it or starts it
 * anew as the config's auto: section says (at start and every reload);
 * auto_tick reads samples and counters, detects, and installs or removes
 * rules; auto_append adds the rules it installed to a rule set built from
 * the config, so they survive the daemon's own commits; auto_stop removes
 * them (the daemon's exit).
 */
struct wr_dauto;
void auto_restart(struct daemon *d);
/*
 * The config's auto: section in force again (start, reload): a mode that
 * `weir auto on|advise|off` set is forgotten. auto_override: SIGUSR1, that
 * command's mode, in force until the next reload.
 */
void auto_configured(struct daemon *d);
void auto_override(struct daemon *d);
void auto_tick(struct daemon *d);
void auto_append(struct daemon *d, struct weir_ruleset *rs);
void auto_stop(struct daemon *d);
/* Its metrics (the metrics thread: reads only the atomics above). */
void auto_metrics(struct daemon *d, FILE *out);
/* auto_rules.c: the live rule set changed as `weir rule add|del` would; 0 or -errno, why. */
int auto_put_rule(struct weir_ruleset *rs, const char *name, const char *words, char *why,
		  size_t len);
int auto_change_live(struct daemon *d, const char *rule, const char *words, char *why,
		     size_t len);
void auto_json_str(FILE *f, const char *s);

/*
 * auto_fleet.c: auto's rules published through the fleet's Redis and the
 * other hosts' applied here (see its head). auto_fleet_tick: once per
 * auto tick, with the engine's mitigations; true if its state changed.
 */
struct auto_fleet;
struct wr_auto_mit;
struct auto_fleet *auto_fleet_new(void);
bool auto_fleet_tick(struct daemon *d, struct auto_fleet *fl, int mode, __u32 max_rules,
		     const struct wr_auto_mit *mits, size_t n);
void auto_fleet_append(struct daemon *d, struct auto_fleet *fl, struct weir_ruleset *rs);
void auto_fleet_free(struct daemon *d, struct auto_fleet *fl, bool remove);
void auto_fleet_json(FILE *f, const struct auto_fleet *fl);
void auto_fleet_metrics(struct daemon *d, FILE *out);

/*
 * caps.c: whether the daemon shares (or may share) an interface through
 * libxdp's dispatcher, and dropping every capability reloads do not need.
 */
bool uses_dispatcher(const struct daemon *d);
int drop_caps(bool dispatcher);

#endif /* WEIR_DAEMON_INT_H */
