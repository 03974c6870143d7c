// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The fleet's accuracy bound (docs/fleet.md) over many
 * simulated traces, with injected time, against a real redis-server.
 *
 * What runs is the real thing: each of N = 1..4 hosts is its own loaded
 * instance of the BPF object (its own wr_state, wr_agg, wr_fleet_use), its
 * packets go through bpf_prog_test_run with the manual clock, and its sync
 * is user/fleet/'s own (wr_fleet_open / wr_fleet_sync: gather, the Lua
 * scripts, the fold into the mapped buckets), talking to a redis-server
 * this program starts on 127.0.0.1 at a port the kernel picked. Only time
 * is simulated, through struct wr_fleet_hooks: one simulation clock drives
 * every data path's now (each host's offset by its own constant, so hosts'
 * clocks disagree, as they do), every sync's monotonic clock (the same
 * per-host clock) and Redis's TIME (the scripts' optional "now" argument,
 * which only the hooks send). The data path is the BPF object itself, not
 * include/weir_limiter.h alone: what makes a key hot and what it reports
 * (fleet_note) lives only in bpf/limit.h, and the traces showed that
 * it shapes the bound. A sync's round trip rho is simulated too:
 * its calls are written, the other hosts' packets of the next rho run, and
 * only then are the replies read and folded. Syncs never overlap: one due
 * during another's round trip starts at its end. Each host syncs every
 * interval and, as the daemon's thread does, just after each fleet
 * window's turn (wr_fleet_turn_after).
 *
 * Traces are random but seeded (FLEET_SIM_SEED, default fixed; a failing
 * trace names its own seed, and FLEET_SIM_ONLY=SEED runs it alone;
 * FLEET_SIM_VERBOSE=1 prints a line per trace, FLEET_SIM_DEBUG=1 a line per
 * sync and Redis's bucket): N hosts, interval 20-1000 ms, round
 * trip up to 20 ms, rate 50-1000 pps, burst 0.1-1 s of it, offered load
 * 0.5-10x the rate, per source or one rule-wide bucket, 3-7 s long.
 * Classes, FLEET_SIM_TRACES traces each (default 60): all traffic on one
 * host; spread round-robin; moving from one host to another halfway; bursts
 * of several packets at one instant; on/off with idle gaps longer than the
 * bucket's refill; and, over those patterns, Redis flushed (FLUSHALL) or
 * stalled for 2-4 intervals (a password set and every host's connection
 * killed: the syncs fail, the hosts back off, charges are sent again
 * afterwards).
 *
 * Each trace checks, in packets, with R, B, N, delta, rho as above and T
 * its length (docs/fleet.md; +2 for rounding):
 * - the whole trace: admitted <= B + R T + N R (delta + rho)
 *   + (N - 1) (B + R t1), t1 when the key was first sent to Redis (before,
 *   each host holds it to its own bucket and reports nothing);
 * - once every host has synced since then (t_h), for every t:
 *   admitted in (t_h, t] <= B + R (t - t_h) + N R (delta + rho);
 * - a stall adds to both, per host, R times how much longer than an
 *   interval it went without an answered sync; a FLUSHALL B + N R (delta
 *   + rho): each host stays at its own bucket, but while Redis's bucket,
 *   refilled from the next charges alone, catches up with them, every host
 *   refills at R;
 * - a move, at t_m to host b, with the key refused before it: b admits in
 *   (t_m, t] at most R (t - t_m) + 2 R (delta + rho) (it polled the
 *   fleet's state at most an interval before, and that state was at most
 *   an interval and a round trip old), plus the event's term; and from
 *   max(1 s, 4 delta + B / R) after the move on, b admits >= 0.9 R t - 2
 *   (the others' spent share does not starve it; the 2 is rounding again:
 *   when a stall pushes the trace's end out, that stretch can be a tenth of
 *   a second, seven packets at 50 pps, and where the emission grid falls
 *   against the packets' arrivals moves one either way);
 * - and the other side: with the load at 1.5x the rate or more, no idle
 *   gaps and no burst of more packets at once than B (a bucket admits B of
 *   those, whatever the rate), admitted >= 0.7 R T, so a fleet that refuses
 *   everything fails.
 * Both bounds also carry the daemon's cool keys' leak, f R T (f = 1/8:
 * keys whose charges times the live hosts stay under f R are not sent),
 * and U, the packets hosts admitted while their data path did not track
 * the key (wr_fleet_use had no entry for it when the packet came): only
 * those can be missing from what a host reports (it reports what its
 * bucket holds when it starts tracking, and every charge after). U is
 * counted, packet by packet, and held to what the design allows: an
 * untracked key's bucket is under half spent (else the next charge tracks
 * it), and each charge tracks it with a chance of 1 in 32, so each stretch
 * of untracked packets on a host (the first, and one more each time the
 * key leaves wr_fleet_use, as cold, and comes back) is a geometric count with
 * mean 32. Over M stretches U >= s has the chance P(Binomial(s, 1/32) <
 * M); the trace fails if U reaches the s where that is 1e-9 (653 for one
 * stretch, 920 for four: sample_bound()), so a data path that samples
 * less often, or never, fails here. Every class, spread thin or in small
 * bursts included, is checked against the fleet's bound; the summary also
 * says, for traces where some host sees the key under 1.5x the rate, how
 * far over B + R T they went, and the largest U against its bound.
 * Per class: a "#" summary (closest approach to each bound, in units of
 * N R (delta + rho); lowest admitted / R T) and one ok/not ok line.
 *
 * Three more classes do the same for fleet windows (fixed and sliding, L a
 * second, windows of a second, delta up to 500 ms), over every pattern,
 * then with a FLUSHALL and with a stall; their checks are win_check's.
 * One more trace holds a fixed window's key, refused for most of each
 * window on the one host that sees it, to one stretch of untracked
 * packets: it is never dropped as cold while it is refused.
 */
#include <endian.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <hiredis/hiredis.h>

#include "bpf_harness.h"
#include "fleet/fleet.h"
#include "../tools/rand.h"

#define HOSTS_MAX	4
#define NO_TIME		(~0ULL)
/* user/fleet/fleet_int.h's FLEET_COOL, the fraction of R its unsent keys may reach */
#define FLEET_F		(1.0 / 8)
/* bpf/limit.h's WR_FLEET_SAMPLE: one charge in 32 tracks an untracked key */
#define SAMPLE_ONE_IN	32
/* The chance a trace's untracked packets may exceed sample_bound() with */
#define SAMPLE_P	1e-9

enum pattern { P_ONE, P_SPREAD, P_MOVE, P_BURSTS, P_IDLE, P_NR };
enum event { E_NONE, E_FLUSH, E_STALL };
static const char *const pattern_name[] = { "one host", "spread", "move", "bursts", "idle gaps" };

struct host {
	struct weir *skel;
	struct wr_fleet *f;
	__u64 off;		/* this host's clock less the simulation's (ns) */
	__u64 next_sync;	/* simulation time of its next sync */
	__u64 next_tick;	/* ... of its next sync by the interval */
	int turn_sync;		/* the next sync is a fleet window's turn's (not the interval's) */
	__u64 last_ok;		/* simulation time of its last answered sync */
	__u64 longest_gap;	/* longest time without an answered sync */
	__u64 last_sync_ns;	/* weir_fleet_status.last_sync_ns as last read */
	unsigned int mult;
	struct weir_set *sets;
	size_t sets_len;
	struct weir_state *agg;
	size_t agg_len;
	__u64 admitted, admitted_move;
	__u64 untracked;	/* admitted while wr_fleet_use did not hold the key */
	__u64 stretches;	/* runs of such packets: the first, and after each drop */
	int in_stretch;		/* untracked since its last such packet */
	int synced_key;		/* has sent the key at least once */
	__u64 keys_synced;	/* weir_fleet_status.keys_synced as last read */
	__u64 win_synced;	/* a window trace: the fleet's window of its last sync of the key */
};

struct trace {
	__u64 seed;
	unsigned int n;
	__u64 delta, rho, rate, burst, dur;	/* ns, ns, pps, packets, ns */
	double load;				/* offered / rate */
	int pattern, event, per_all;
	__u64 ev_at, ev_len;
	unsigned int from, to;
	__u64 move_at;
	__u64 on, off;
	unsigned int burst_pk;
	int algo;		/* WEIR_ALGO_GCRA, or a fleet window of rate a second */
};

/* A window trace's windows are a second; its windows are counted up to this many. */
#define WIN_MAX		16

/* main.c's options, which the user objects read; the defaults. */
struct wr_opts opts = { .root = WEIR_DEFAULT_ROOT };

static struct host hosts[HOSTS_MAX];
static struct {
	__u64 now;			/* simulation time, ns */
	__u64 redis_off_us;		/* Redis's clock less the simulation's (us) */
	const struct trace *t;
	/* the packet source */
	__u64 next_pkt;
	__u64 pkt_idx;
	unsigned int burst_left;
	__u64 rng;
	struct frame frame;
	/* the event */
	int ev_state;			/* 0 not yet, 1 under way, 2 over */
	/* accounting */
	__u64 t_h;			/* NO_TIME until every host synced after the first send */
	__u64 first_send;
	__u64 admitted_total, admitted_h;
	double worst_h;			/* max of admitted in (t_h, t] - R (t - t_h) */
	double worst_move;		/* max of admitted on b in (t_m, t] - R (t - t_m) */
	int refused_before_move;
	__u64 settle;			/* after a move, when host b's rate is measured from */
	__u64 admitted_settled;
	int in_flight;
	/*
	 * A window trace, per fleet window (Redis's seconds, from w0): what
	 * the fleet admitted, what hosts admitted before their first sync of
	 * the key in it (presync) and untracked, and whether Redis was flushed.
	 */
	__u64 w0;
	__u64 win_admitted[WIN_MAX], win_presync[WIN_MAX], win_untracked[WIN_MAX];
	int win_flushed[WIN_MAX];
} S;

static redisContext *ctl;
static pid_t redis_pid;
static int redis_port;
static char redis_dir[64];

/* The traces' randomness, seeded: the tests' and tools' one generator. */
static __u64 rnd(__u64 *s)
{
	uint64_t x = *s, r = wr_xorshift64s(&x);

	*s = x;
	return r;
}

static double rnd01(__u64 *s)
{
	return (rnd(s) >> 11) * (1.0 / 9007199254740992.0);
}

static __u64 rnd_in(__u64 *s, __u64 lo, __u64 hi)
{
	return lo + rnd(s) % (hi - lo + 1);
}

/* ---- Redis ---- */

static void redis_kill(void)
{
	if (redis_pid > 0) {
		kill(redis_pid, SIGKILL);
		waitpid(redis_pid, NULL, 0);
		redis_pid = 0;
	}
	if (redis_dir[0]) {
		char p[128];

		snprintf(p, sizeof(p), "%s/redis.log", redis_dir);
		unlink(p);
		rmdir(redis_dir);
		redis_dir[0] = '\0';
	}
}

static void on_signal(int sig)
{
	redis_kill();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* A port on 127.0.0.1 the kernel says is free. */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static redisReply *rcmd(const char *fmt, ...)
{
	va_list ap;
	redisReply *r;

	va_start(ap, fmt);
	r = redisvCommand(ctl, fmt, ap);
	va_end(ap);
	return r;
}

/* redis-server on loopback, no persistence, in a temp dir; 0 or -1 (why on stderr). */
static int redis_start(void)
{
	int attempt, i;

	snprintf(redis_dir, sizeof(redis_dir), "/tmp/weir-fleetsim.XXXXXX");
	if (!mkdtemp(redis_dir)) {
		redis_dir[0] = '\0';
		return -1;
	}
	for (attempt = 0; attempt < 3; attempt++) {
		char port[16], log[128];

		redis_port = free_port();
		if (redis_port < 0)
			return -1;
		snprintf(port, sizeof(port), "%d", redis_port);
		snprintf(log, sizeof(log), "%s/redis.log", redis_dir);
		redis_pid = fork();
		if (redis_pid < 0)
			return -1;
		if (!redis_pid) {
			/* Gone with this program, however it ends. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			execlp("redis-server", "redis-server", "--bind", "127.0.0.1", "--port", port,
			       "--save", "", "--appendonly", "no", "--dir", redis_dir,
			       "--daemonize", "no", "--logfile", log, (char *)NULL);
			_exit(127);
		}
		for (i = 0; i < 200; i++) {
			redisReply *r;

			usleep(25000);
			if (waitpid(redis_pid, NULL, WNOHANG) == redis_pid) {
				redis_pid = 0;
				break;	/* the port was taken after all: another one */
			}
			ctl = redisConnect("127.0.0.1", redis_port);
			if (ctl && !ctl->err && (r = rcmd("PING"))) {
				freeReplyObject(r);
				return 0;
			}
			if (ctl)
				redisFree(ctl);
			ctl = NULL;
		}
		if (redis_pid > 0) {
			kill(redis_pid, SIGKILL);
			waitpid(redis_pid, NULL, 0);
			redis_pid = 0;
		}
	}
	return -1;
}

/* One control command that must succeed. */
static void rok(const char *what, redisReply *r)
{
	if (!r || r->type == REDIS_REPLY_ERROR)
		CHECK_FAIL("redis %s: %s", what, r ? r->str : ctl->errstr);
	if (r)
		freeReplyObject(r);
}

/* ---- the hosts ---- */

static __u64 hook_clock(void *ctx)
{
	return S.now + ((struct host *)ctx)->off;
}

static __u64 hook_redis(void *ctx)
{
	(void)ctx;
	/* The script runs halfway through the round trip. */
	return (S.now + S.t->rho / 2) / 1000 + S.redis_off_us;
}

static void run_packets(__u64 until);

/* The fleet's window (Redis's second) at simulation time t. */
static __u64 fleet_win(__u64 t)
{
	return (t / 1000 + S.redis_off_us) / 1000000;
}

/* Its place in S.win_*, or -1 past WIN_MAX. */
static int win_slot(__u64 t)
{
	__u64 w = fleet_win(t);

	return w >= S.w0 && w - S.w0 < WIN_MAX ? (int)(w - S.w0) : -1;
}

static void hook_in_flight(void *ctx)
{
	(void)ctx;
	/* The round trip: everyone's packets go on meanwhile. */
	S.in_flight = 1;
	run_packets(S.now + S.t->rho);
	S.in_flight = 0;
}

static void *map_mem(struct bpf_map *m, size_t *len)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	*len = ((size_t)bpf_map__max_entries(m) * bpf_map__value_size(m) + page - 1) / page * page;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
	return p == MAP_FAILED ? NULL : p;
}

static int hosts_load(void)
{
	int i, err;

	for (i = 0; i < HOSTS_MAX; i++) {
		/* The first is harness_start()'s. */
		err = i ? load() : 0;
		if (err)
			return err;
		hosts[i].skel = skel;
		hosts[i].sets = map_mem(skel->maps.wr_state, &hosts[i].sets_len);
		hosts[i].agg = map_mem(skel->maps.wr_agg, &hosts[i].agg_len);
		if (!hosts[i].sets || !hosts[i].agg)
			return -errno;
	}
	return 0;
}

/* Every bucket and hot key of host h gone: a fresh data path. */
static void host_reset(struct host *h)
{
	struct weir_key k, next;
	int fd = bpf_map__fd(h->skel->maps.wr_fleet_use);

	struct weir_config c;
	__u32 zero = 0;

	memset(h->sets, 0, h->sets_len);
	memset(h->agg, 0, h->agg_len);
	/* The last trace's fleet clock went with its Redis. */
	if (!bpf_map_lookup_elem(bpf_map__fd(h->skel->maps.wr_config), &zero, &c)) {
		c.fleet_win_off = 0;
		bpf_map_update_elem(bpf_map__fd(h->skel->maps.wr_config), &zero, &c, BPF_ANY);
	}
	while (!bpf_map_get_next_key(fd, NULL, &next)) {
		k = next;
		if (bpf_map_delete_elem(fd, &k))
			break;
	}
}

static struct weir_fleet_status host_status(const struct host *h)
{
	struct weir_fleet_status st;
	__u32 zero = 0;

	memset(&st, 0, sizeof(st));
	bpf_map_lookup_elem(bpf_map__fd(h->skel->maps.wr_fleet_status), &zero, &st);
	return st;
}

static void commit_to(struct host *h)
{
	skel = h->skel;
	commit();
}

/* ---- a trace ---- */

static int pkt_host(void)
{
	const struct trace *t = S.t;

	switch (t->pattern) {
	case P_ONE:
		return t->from;
	case P_MOVE:
		return S.now < t->move_at ? t->from : t->to;
	case P_BURSTS:
		return (S.pkt_idx / t->burst_pk) % t->n;
	default:
		return S.pkt_idx % t->n;
	}
}

/* When the packet after the one at S.next_pkt comes. */
static __u64 pkt_after(__u64 at)
{
	const struct trace *t = S.t;
	double gap = 1e9 / (t->load * t->rate);
	__u64 next;

	if (t->pattern == P_BURSTS) {
		if (--S.burst_left)
			return at;
		S.burst_left = t->burst_pk;
		gap *= t->burst_pk;
	}
	next = at + (__u64)(gap * (0.7 + 0.6 * rnd01(&S.rng)));
	if (t->pattern == P_IDLE && next % (t->on + t->off) >= t->on)
		next = (next / (t->on + t->off) + 1) * (t->on + t->off);
	return next;
}

/* Whether host h's data path tracks the trace's key (its only one). */
static int tracked(const struct host *h)
{
	struct weir_key k;

	return !bpf_map_get_next_key(bpf_map__fd(h->skel->maps.wr_fleet_use), NULL, &k);
}

static void deliver(void)
{
	const struct trace *t = S.t;
	int hi = pkt_host(), v, tr;
	struct host *h = &hosts[hi];

	skel = h->skel;
	set_now(S.now + h->off);
	tr = tracked(h);
	v = xmit(&S.frame);
	if (t->algo != WEIR_ALGO_GCRA && v == 1) {
		int ws = win_slot(S.now);

		if (ws >= 0) {
			S.win_admitted[ws]++;
			if (h->win_synced != fleet_win(S.now))
				S.win_presync[ws]++;
			else if (!tr)
				S.win_untracked[ws]++;
		}
	}
	if (tr) {
		h->in_stretch = 0;
	} else if (v == 1) {
		/* One the host's report may miss; the first of a stretch, or one more. */
		if (!h->in_stretch)
			h->stretches++;
		h->in_stretch = 1;
		h->untracked++;
	}
	if (v == 1) {
		h->admitted++;
		S.admitted_total++;
		if (S.t_h != NO_TIME) {
			double ex;

			S.admitted_h++;
			ex = S.admitted_h - (double)t->rate * (S.now - S.t_h) / 1e9;
			if (ex > S.worst_h)
				S.worst_h = ex;
		}
		if (t->pattern == P_MOVE && S.now >= t->move_at && hi == (int)t->to) {
			double ex;

			h->admitted_move++;
			if (S.now >= t->move_at + S.settle)
				S.admitted_settled++;
			ex = h->admitted_move - (double)t->rate * (S.now - t->move_at) / 1e9;
			if (ex > S.worst_move)
				S.worst_move = ex;
		}
	} else if (v == 0 && t->pattern == P_MOVE && S.now < t->move_at) {
		S.refused_before_move = 1;
	}
	S.pkt_idx++;
}

/* Every packet due up to until (and no sync or event). */
static void run_packets(__u64 until)
{
	while (S.next_pkt <= until && S.next_pkt < S.t->dur) {
		S.now = S.next_pkt;
		deliver();
		S.next_pkt = pkt_after(S.next_pkt);
	}
	if (until > S.now)
		S.now = until;
}

static void host_sync(struct host *h)
{
	const struct trace *t = S.t;
	struct weir_fleet_status st;
	unsigned int m;
	__u64 at = S.now;

	wr_fleet_sync(h->f);
	st = host_status(h);
	/* A window trace: the key went out and came back in the window of the sync's start. */
	if (st.keys_synced != h->keys_synced && st.last_sync_ns != h->last_sync_ns)
		h->win_synced = fleet_win(at);
	h->keys_synced = st.keys_synced;
	if (st.last_sync_ns != h->last_sync_ns) {
		/* Answered: everything it sent reached the fleet. */
		h->last_sync_ns = st.last_sync_ns;
		if (at - h->last_ok > h->longest_gap)
			h->longest_gap = at - h->last_ok;
		h->last_ok = at;
	}
	if (getenv("FLEET_SIM_DEBUG"))
		printf("#   %.3f s host %ld: syncs %llu ok-at %llu hot %llu synced %llu floors %llu "
		       "over %llu err %llu/%llu/%llu admitted %llu\n", S.now / 1e9, (long)(h - hosts),
		       (unsigned long long)st.syncs, (unsigned long long)st.last_sync_ns,
		       (unsigned long long)st.hot_keys, (unsigned long long)st.keys_synced,
		       (unsigned long long)st.floors, (unsigned long long)st.over_keys,
		       (unsigned long long)st.node[0].errors[0], (unsigned long long)st.node[0].errors[1],
		       (unsigned long long)st.node[0].errors[2], (unsigned long long)h->admitted);
	if (getenv("FLEET_SIM_DEBUG")) {
		redisReply *k = rcmd("KEYS weir:*"), *v;
		size_t j;

		for (j = 0; k && k->type == REDIS_REPLY_ARRAY && j < k->elements; j++) {
			if (strstr(k->element[j]->str, ":over") || strstr(k->element[j]->str, ":hosts"))
				continue;
			v = rcmd("GET %s", k->element[j]->str);
			if (v && v->type == REDIS_REPLY_STRING && v->len == sizeof(double)) {
				/* A little-endian double (user/fleet/sync.lua) */
				__u64 b;
				double tat;

				memcpy(&b, v->str, sizeof(b));
				b = le64toh(b);
				memcpy(&tat, &b, sizeof(tat));
				printf("#     stored tat - redis now: %.1f ms\n",
				       (tat - (double)(S.now / 1000 + S.redis_off_us)) / 1000);
			}
			if (v)
				freeReplyObject(v);
		}
		if (k)
			freeReplyObject(k);
	}
	if (getenv("FLEET_SIM_DEBUG") && t->algo != WEIR_ALGO_GCRA) {
		int ws = win_slot(S.now);
		struct weir_config c;
		__u32 zero = 0;

		bpf_map_lookup_elem(bpf_map__fd(h->skel->maps.wr_config), &zero, &c);
		struct weir_key k = key4(&rs.rules[0], 0, IP4(198, 18, 7, 1 + (t->seed & 127)));
		struct weir_way w = {};

		skel = h->skel;
		state_way(&k, &w);
		printf("#     src word %llx/%llu\n", (unsigned long long)w.st.tat,
		       (unsigned long long)w.st.aux);
		printf("#     win %d (fleet %llu) admitted %llu presync %llu untracked %llu; host "
		       "synced-in %llu off %llu agg %llx/%llu\n", ws,
		       (unsigned long long)fleet_win(S.now),
		       ws >= 0 ? (unsigned long long)S.win_admitted[ws] : 0ULL,
		       ws >= 0 ? (unsigned long long)S.win_presync[ws] : 0ULL,
		       ws >= 0 ? (unsigned long long)S.win_untracked[ws] : 0ULL,
		       (unsigned long long)h->win_synced, (unsigned long long)c.fleet_win_off,
		       (unsigned long long)h->agg[rs.rules[0].limits[0].agg_slot].tat,
		       (unsigned long long)h->agg[rs.rules[0].limits[0].agg_slot].aux);
	}
	if (st.keys_synced && !h->synced_key) {
		h->synced_key = 1;
		if (S.first_send == NO_TIME)
			S.first_send = S.now;
	}
	/* The daemon's part: a new multiplier (a fallback) into the rules. */
	m = wr_fleet_multiplier(h->f);
	if (m != h->mult) {
		h->mult = m;
		rs.rules[0].limits[0].fleet = m;
		commit_to(h);
		rs.rules[0].limits[0].fleet = 1;
	}
	/*
	 * The next sync, as wr_fleet_start()'s thread schedules it: every
	 * interval, and just after each fleet window's turn
	 * (wr_fleet_turn_after, on the host's clock), which leaves the
	 * interval's schedule as it was.
	 */
	if (!h->turn_sync) {
		h->next_tick += t->delta;
		if (h->next_tick < S.now)
			h->next_tick = S.now;
	}
	{
		__u64 turn = wr_fleet_turn_after(h->f, S.now + h->off);

		h->turn_sync = turn && turn - h->off < h->next_tick;
		h->next_sync = h->turn_sync ? turn - h->off : h->next_tick;
	}
}

static void redis_event(void)
{
	const struct trace *t = S.t;

	if (t->event == E_FLUSH) {
		rok("FLUSHALL", rcmd("FLUSHALL"));
		S.ev_state = 2;
		if (win_slot(S.now) >= 0)
			S.win_flushed[win_slot(S.now)] = 1;
	} else if (S.ev_state == 0) {
		rok("CONFIG SET requirepass", rcmd("CONFIG SET requirepass %s", "stalled"));
		rok("CLIENT KILL", rcmd("CLIENT KILL TYPE normal SKIPME yes"));
		S.ev_state = 1;
	} else {
		rok("CONFIG SET requirepass", rcmd("CONFIG SET requirepass %s", ""));
		S.ev_state = 2;
	}
}

/*
 * Whether every host that sees the key sees it at 1.5 times the rate or
 * more, so that its own bucket is soon half spent; the others track it by
 * sampling. Only the summary and the floor check tell them apart now: both
 * are held to the fleet's bound (docs/fleet.md).
 */
static int trace_reported(const struct trace *t)
{
	double per_host = t->pattern == P_ONE || t->pattern == P_MOVE ? t->load : t->load / t->n;

	return per_host >= 1.5;
}

struct result {
	double total_excess;	/* admitted - (B + R T) */
	double bound_total, bound_h, bound_move, sync_term;
	double worst_h, worst_move, floor_ratio;
	double t1;		/* when the key was first sent (s; T: never) */
	int under;		/* some host sees the key under the rate: per-host bound */
	double floor;		/* the least admitted / R T when floor_checked */
	double settled;		/* after a move and a settling time, host b's admitted / R t */
	int settled_short;	/* and that under 0.9 R t - 2 */
	int move_checked, floor_checked;
	__u64 untracked, stretches, sample_bound;	/* U, M and sample_bound(M) */
	/*
	 * A window trace: the most a window went over L + presync + untracked
	 * (in L), the most presync packets in a window (in L), and the least
	 * admitted / the floor's expectation where it is checked (-1: none).
	 */
	double win_worst, win_presync, win_floor;
};

/*
 * The least s with P(Binomial(s, 1/SAMPLE_ONE_IN) < m) <= SAMPLE_P: m
 * stretches of untracked charges, each ended by a 1-in-32 draw, add up to s
 * or more with no more than that chance. 0 stretches: none.
 */
static __u64 sample_bound(__u64 m)
{
	const double p = 1.0 / SAMPLE_ONE_IN;
	__u64 s;

	if (!m)
		return 1;
	for (s = m;; s++) {
		double tail = 0;
		__u64 j;

		for (j = 0; j < m; j++)
			tail += exp(lgamma(s + 1.0) - lgamma(j + 1.0) - lgamma(s - j + 1.0) +
				    j * log(p) + (s - j) * log1p(-p));
		if (tail <= SAMPLE_P)
			return s;
	}
}

/*
 * A window trace's checks (docs/fleet.md "Fleet windows"), per fleet window w
 * (Redis's seconds, which every host's windows turn with), L the limit:
 * - admitted in w <= L + presync + untracked + 2: the hosts' allocations
 *   add up to L, beyond which only a host's use before its first sync of
 *   the key in w (presync: the turn, a sync that failed, a key not sent
 *   yet) and what it admitted while its data path did not track the key
 *   can go, plus L in a window where Redis was flushed (the allocations
 *   are gone; each host still counts no less than it was told);
 * - and a floor, with the load at 1.5x L or more, in windows the traffic
 *   covers whole (not the first, the last, a move's, idle gaps, bursts
 *   larger than L, nor a window with a Redis event): admitted >= 0.7 x
 *   min(offered, L x f), with f = 1 for traffic spread over every host and
 *   1 - (1 - 1/N)^(k - 1), k = 1 s / delta, for one host (it gains 1/N of
 *   what is left at each of its syncs; the first may come late), and for
 *   a sliding window f times (1 - delta / 1 s) / 2 (see win_check).
 * The untracked packets are held to sample_bound() as in a token-bucket
 * trace.
 */
static int win_check(const struct trace *t, struct result *res, char *why, size_t whylen)
{
	double L = t->rate, N = t->n, k = floor(1e9 / t->delta);
	double f = t->pattern == P_SPREAD || t->pattern == P_BURSTS ? 1 : 1 - pow(1 - 1 / N, k - 1);

	/*
	 * A sliding window's previous count frees room only as its weight
	 * shrinks, and the hosts take it at their syncs (the last comes an
	 * interval before the window's end at worst), each a 1/N share of it
	 * (what a host does not use stays allocated to it): half of that.
	 */
	if (t->algo == WEIR_ALGO_SLIDING)
		f *= 0.5 * (1 - t->delta / 1e9);
	__u64 last = fleet_win(t->dur) - S.w0, ev_w = t->event ? fleet_win(t->ev_at) - S.w0 : WIN_MAX;
	__u64 ev_end = t->event == E_STALL ? fleet_win(t->ev_at + t->ev_len) - S.w0 : ev_w;
	unsigned int i;
	int w, bad = 0;

	res->win_worst = -1e9;
	res->win_presync = 0;
	res->win_floor = -1;
	for (i = 0; i < t->n; i++) {
		res->untracked += hosts[i].untracked;
		res->stretches += hosts[i].stretches;
	}
	res->sample_bound = sample_bound(res->stretches);
	if (res->untracked >= res->sample_bound) {
		snprintf(why, whylen, "%llu packets admitted untracked in %llu stretches, the bound "
			 "%llu (1 in %d tracks)", (unsigned long long)res->untracked,
			 (unsigned long long)res->stretches, (unsigned long long)res->sample_bound,
			 SAMPLE_ONE_IN);
		bad = 1;
	}
	/*
	 * A host that sees every packet, at 1.5 L a second or more (one every
	 * 13 ms at most, under the shortest interval), charges or refuses
	 * the key between any two syncs of an interval: its key is never
	 * cold, so it is tracked once and stays so. A key that left as cold
	 * while it was refused would come back untracked in the next window,
	 * where the host admits up to L/2 before it is sent again.
	 */
	if (!bad && t->pattern == P_ONE && t->load >= 1.5 && hosts[t->from].stretches > 1) {
		snprintf(why, whylen, "the key left wr_fleet_use while it was refused: %llu stretches "
			 "of untracked packets on the host that sees them all",
			 (unsigned long long)hosts[t->from].stretches);
		bad = 1;
	}
	for (w = 0; w < WIN_MAX && (__u64)w <= last; w++) {
		double over = (double)S.win_admitted[w] - L - S.win_presync[w] - S.win_untracked[w] -
			      (S.win_flushed[w] ? L : 0);
		double want = 0.7 * fmin(t->load * L, L * f);

		if (over / L > res->win_worst)
			res->win_worst = over / L;
		if (S.win_presync[w] / L > res->win_presync)
			res->win_presync = S.win_presync[w] / L;
		if (!bad && over > 2) {
			snprintf(why, whylen, "window %d admitted %llu: over L %.0f + %llu before a "
				 "sync + %llu untracked%s", w, (unsigned long long)S.win_admitted[w], L,
				 (unsigned long long)S.win_presync[w],
				 (unsigned long long)S.win_untracked[w],
				 S.win_flushed[w] ? " + L (flushed)" : "");
			bad = 1;
		}
		if (w == 0 || (__u64)w >= last || t->load < 1.5 || t->pattern == P_IDLE ||
		    (t->pattern == P_BURSTS && t->burst_pk > L) ||
		    (t->pattern == P_MOVE && (__u64)w == fleet_win(t->move_at) - S.w0) ||
		    ((__u64)w >= ev_w && (__u64)w <= ev_end + 1))
			continue;
		if (res->win_floor < 0 || S.win_admitted[w] / want < res->win_floor)
			res->win_floor = S.win_admitted[w] / want;
		if (!bad && S.win_admitted[w] < want) {
			snprintf(why, whylen, "window %d admitted only %llu, under 0.7 x min(offered "
				 "%.0f, L x %.2f)", w, (unsigned long long)S.win_admitted[w],
				 t->load * L, f);
			bad = 1;
		}
	}
	return bad;
}

/* Run trace t; what it admitted against its bounds into *res; 0 if every check held. */
static int run_trace(const struct trace *t, struct result *res, char *why, size_t whylen)
{
	struct wr_cfg_fleet cfg;
	struct weir_limit *l;
	struct weir_rule *r;
	struct frame l4;
	__u64 stall_extra = 0;
	unsigned int i;
	int bad = 0;

	memset(&S, 0, sizeof(S));
	S.t = t;
	S.rng = t->seed ^ 0x9e3779b97f4a7c15ULL;
	S.t_h = NO_TIME;
	S.first_send = NO_TIME;
	S.redis_off_us = 1700000000000000ULL + rnd(&S.rng) % 1000000000000ULL;
	S.w0 = fleet_win(0);
	S.burst_left = t->burst_pk ? t->burst_pk : 1;
	S.settle = 4 * t->delta + t->burst * SEC / t->rate > SEC ? 4 * t->delta + t->burst * SEC / t->rate : SEC;
	rok("FLUSHALL", rcmd("FLUSHALL"));
	rok("CONFIG SET requirepass", rcmd("CONFIG SET requirepass %s", ""));

	memset(&rs, 0, sizeof(rs));
	next_agg = agg_base;
	r = add_rule(WEIR_ACT_DROP);
	if (t->algo != WEIR_ALGO_GCRA)
		l = new_limit(r, t->algo, t->rate, 1000, 0, WEIR_COST_PKT,
			      t->per_all ? WEIR_KEY_ALL : WEIR_KEY_SRC, 32, 64);
	else
		l = new_limit(r, WEIR_ALGO_GCRA, t->rate, 0, t->burst, WEIR_COST_PKT,
			      t->per_all ? WEIR_KEY_ALL : WEIR_KEY_SRC, 32, 64);
	l->fleet = 1;
	l4_udp(&l4, 9000, 18);
	frame4(&S.frame, IP4(198, 18, 7, 1 + (t->seed & 127)), WR_IPPROTO_UDP, &l4);

	memset(&cfg, 0, sizeof(cfg));
	cfg.on = true;
	snprintf(cfg.name, sizeof(cfg.name), "sim%llx", (unsigned long long)(t->seed & 0xffffff));
	snprintf(cfg.nodes[0], sizeof(cfg.nodes[0]), "127.0.0.1:%d", redis_port);
	cfg.nr_nodes = 1;
	cfg.mode = WR_FLEET_SINGLE;
	cfg.interval_ms = t->delta / MSEC;
	/* The fallback is tests/fleet.sh's: never within a trace here. */
	cfg.stale_ms = 600000;
	cfg.fallback = WR_FLEET_SAFE;
	for (i = 0; i < t->n; i++) {
		struct host *h = &hosts[i];
		struct wr_fleet_hooks hk = { hook_clock, hook_redis, hook_in_flight, h };
		struct wr_maps m;

		host_reset(h);
		commit_to(h);
		h->off = T0 + rnd(&S.rng) % (100 * SEC);
		h->next_sync = h->next_tick = rnd(&S.rng) % t->delta;
		h->turn_sync = 0;
		h->last_ok = 0;
		h->longest_gap = 0;
		h->last_sync_ns = 0;
		h->mult = 1;
		h->admitted = h->admitted_move = 0;
		h->untracked = h->stretches = 0;
		h->in_stretch = 0;
		h->synced_key = 0;
		h->keys_synced = 0;
		h->win_synced = 0;
		snprintf(cfg.host, sizeof(cfg.host), "host%u", i);
		wr_maps_reset(&m);
		m.config = bpf_map__fd(h->skel->maps.wr_config);
		m.rulesets = bpf_map__fd(h->skel->maps.wr_rulesets);
		m.state = bpf_map__fd(h->skel->maps.wr_state);
		m.agg = bpf_map__fd(h->skel->maps.wr_agg);
		m.fleet_use = bpf_map__fd(h->skel->maps.wr_fleet_use);
		m.fleet_status = bpf_map__fd(h->skel->maps.wr_fleet_status);
		h->f = wr_fleet_open(&cfg, &m, &hk);
		if (!h->f) {
			snprintf(why, whylen, "wr_fleet_open: %s", strerror(errno));
			while (i--)
				wr_fleet_close(hosts[i].f);
			return 1;
		}
	}

	S.next_pkt = rnd(&S.rng) % (SEC / t->rate);
	for (;;) {
		__u64 next_sync = NO_TIME, ev = NO_TIME, at;
		struct host *hs = NULL;

		for (i = 0; i < t->n; i++)
			if (hosts[i].next_sync < next_sync) {
				next_sync = hosts[i].next_sync;
				hs = &hosts[i];
			}
		if (t->event == E_FLUSH && S.ev_state == 0)
			ev = t->ev_at;
		else if (t->event == E_STALL && S.ev_state < 2)
			ev = S.ev_state ? t->ev_at + t->ev_len : t->ev_at;
		at = S.next_pkt < next_sync ? S.next_pkt : next_sync;
		if (ev < at)
			at = ev;
		if (at >= t->dur)
			break;
		if (at == ev) {
			S.now = at;
			redis_event();
		} else if (at == S.next_pkt) {
			run_packets(at);
		} else {
			S.now = at;
			host_sync(hs);
			/* t_h: every host has synced once since the key was first sent. */
			if (S.t_h == NO_TIME && S.first_send != NO_TIME) {
				int all = 1;

				for (i = 0; i < t->n; i++)
					all &= hosts[i].last_ok > S.first_send;
				if (all)
					S.t_h = S.now;
			}
		}
	}
	S.now = t->dur;
	for (i = 0; i < t->n; i++) {
		struct host *h = &hosts[i];

		if (S.now - h->last_ok > h->longest_gap)
			h->longest_gap = S.now - h->last_ok;
		if (t->event == E_STALL && h->longest_gap > t->delta)
			stall_extra += h->longest_gap - t->delta;
		wr_fleet_close(h->f);
		h->f = NULL;
	}
	if (t->algo != WEIR_ALGO_GCRA)
		return win_check(t, res, why, whylen);

	{
		double R = t->rate, B = t->burst, T = t->dur / 1e9, N = t->n;
		double lag = (t->delta + t->rho) / 1e9, extra, t1;

		res->sync_term = N * R * lag;
		extra = R * stall_extra / 1e9 + (t->event == E_FLUSH ? res->sync_term + B : 0);
		res->total_excess = S.admitted_total - (B + R * T);
		t1 = S.first_send == NO_TIME ? T : S.first_send / 1e9;
		res->t1 = t1;
		res->bound_total = res->sync_term + (N - 1) * (B + R * t1) + extra + 2;
		res->bound_h = B + res->sync_term + extra + 2;
		res->worst_h = S.worst_h;
		res->bound_move = 2 * R * lag + extra + 2;
		res->worst_move = S.worst_move;
		res->move_checked = t->pattern == P_MOVE && S.refused_before_move;
		if (t->move_at + S.settle < t->dur) {
			/* R t over the settled stretch, in packets */
			double rt = R * (t->dur - t->move_at - S.settle) / 1e9;

			res->settled = S.admitted_settled / rt;
			res->settled_short = S.admitted_settled + 2 < 0.9 * rt;
		} else {
			res->settled = -1;
			res->settled_short = 0;
		}
		/*
		 * Bursts of more packets at one instant than the bucket holds
		 * are cut to B each, whatever the rate: one host's own bucket
		 * admits no more, so no floor on R T there.
		 */
		res->floor_checked = t->load >= 1.5 && t->pattern != P_IDLE &&
				     !(t->pattern == P_BURSTS && t->burst_pk > t->burst);
		/* Stated floors: see the header. */
		res->floor = 0.7;
		res->floor_ratio = S.admitted_total / (R * T);
		res->under = !trace_reported(t);
		/*
		 * The daemon's cool keys (under FLEET_COOL of R fleet-wide) are
		 * not sent: at most f R T more; and what hosts admitted while
		 * they did not track the key, U, may be missing from their
		 * reports; U itself is held to sample_bound().
		 */
		for (i = 0; i < t->n; i++) {
			res->untracked += hosts[i].untracked;
			res->stretches += hosts[i].stretches;
		}
		res->sample_bound = sample_bound(res->stretches);
		res->bound_total += FLEET_F * R * T + res->untracked;
		res->bound_h += FLEET_F * R * T + res->untracked;
		if (res->untracked >= res->sample_bound) {
			snprintf(why, whylen, "%llu packets admitted untracked in %llu stretches, "
				 "the bound %llu (1 in %d tracks)", (unsigned long long)res->untracked,
				 (unsigned long long)res->stretches,
				 (unsigned long long)res->sample_bound, SAMPLE_ONE_IN);
			bad = 1;
		} else if (res->total_excess > res->bound_total) {
			snprintf(why, whylen, "admitted %llu, over B + R T + %.1f",
				 (unsigned long long)S.admitted_total, res->bound_total);
			bad = 1;
		} else if (S.worst_h > res->bound_h) {
			snprintf(why, whylen, "once hot, %.1f over R t (bound %.1f)", S.worst_h,
				 res->bound_h);
			bad = 1;
		} else if (res->move_checked && S.worst_move > res->bound_move) {
			snprintf(why, whylen, "after the move, host %u admitted %.1f over R t (bound "
				 "%.1f)", t->to, S.worst_move, res->bound_move);
			bad = 1;
		} else if (res->move_checked && res->settled_short) {
			snprintf(why, whylen, "after the move, host %u admitted only %.3f of R t once "
				 "settled (%llu packets; the floor 0.9 R t - 2)", t->to, res->settled,
				 (unsigned long long)S.admitted_settled);
			bad = 1;
		} else if (res->floor_checked && res->floor_ratio < res->floor) {
			snprintf(why, whylen, "admitted only %.3f of R T (floor %.2f)", res->floor_ratio,
				 res->floor);
			bad = 1;
		}
	}
	return bad;
}

/* A random trace of pattern p (event ev) from seed; win: a fleet window's. */
static void make_trace(struct trace *t, __u64 seed, int p, int ev, int win)
{
	static const __u64 deltas[] = { 20, 50, 100, 250, 500, 1000 };
	static const __u64 rates[] = { 50, 100, 200, 500, 1000 };
	static const double loads[] = { 0.5, 0.9, 1.5, 3, 10 };
	__u64 s = seed;

	memset(t, 0, sizeof(*t));
	t->seed = seed;
	rnd(&s);
	t->n = rnd_in(&s, 1, HOSTS_MAX);
	if (p == P_MOVE && t->n < 2)
		t->n = 2;
	t->delta = deltas[rnd(&s) % 6] * MSEC;
	t->rho = rnd_in(&s, 100 * USEC, (t->delta / 2 < 20 * MSEC ? t->delta / 2 : 20 * MSEC));
	t->rate = rates[rnd(&s) % 5];
	t->burst = t->rate * rnd_in(&s, 100, 1000) / 1000;
	if (t->burst < 5)
		t->burst = 5;
	t->load = loads[rnd(&s) % 5];
	if (p == P_MOVE && t->load < 1.5)
		t->load = 3;	/* the key is refused before it moves */
	t->dur = rnd_in(&s, 3, 7) * SEC;
	/* At most 20 000 packets a trace. */
	while (t->load * t->rate * t->dur / SEC > 20000 && t->rate > 50)
		t->rate /= 2;
	t->per_all = rnd(&s) % 5 == 0;
	t->pattern = p;
	t->from = rnd(&s) % t->n;
	t->to = (t->from + 1 + rnd(&s) % (t->n - 1 ? t->n - 1 : 1)) % t->n;
	t->move_at = t->dur / 2;
	t->burst_pk = p == P_BURSTS ? rnd_in(&s, 5, 50) : 1;
	t->on = rnd_in(&s, 500, 1500) * MSEC;
	/* Idle longer than the bucket's refill and an interval. */
	t->off = t->burst * SEC / t->rate + t->delta + rnd_in(&s, 100, 1000) * MSEC;
	t->event = ev;
	t->ev_at = rnd_in(&s, t->dur / 4, t->dur / 2);
	t->ev_len = rnd_in(&s, 2, 4) * t->delta;
	/* Over a second before the end: the hosts get back in step. */
	if (ev == E_STALL && t->dur < t->ev_at + t->ev_len + 2 * SEC)
		t->dur = t->ev_at + t->ev_len + 2 * SEC;
	t->algo = WEIR_ALGO_GCRA;
	if (win) {
		/* Windows of a second: two intervals at least (weir check refuses less). */
		t->algo = seed & 1 ? WEIR_ALGO_SLIDING : WEIR_ALGO_FIXED;
		if (t->delta > 500 * MSEC)
			t->delta = 500 * MSEC;
		if (t->rho > t->delta / 2)
			t->rho = t->delta / 2;
		t->burst = t->rate;
		t->off = SEC + t->delta + rnd_in(&s, 100, 1000) * MSEC;
		if (t->dur > (WIN_MAX - 2) * SEC)
			t->dur = (WIN_MAX - 2) * SEC;
	}
}

static __u64 base_seed = 0x51ce5eed;
static int traces = 60;

static void run_class(const char *name, int cls, int ev, int win)
{
	double worst_total = -1e9, worst_h = -1e9, worst_move = -1e9, min_floor = 1e9;
	int i, failed = 0, moves = 0, floors = 0, unders = 0, by_n[HOSTS_MAX + 1] = {};
	double under_max = 0, under_floor = 1e9, min_settled = 1e9, worst_u = -1;
	struct result worst_ur = {};
	char why[256] = "";

	/* FLEET_SIM_ONLY=SEED: that trace alone, wherever it is. */
	for (i = 0; i < (getenv("FLEET_SIM_ONLY") ? 100000 : traces); i++) {
		__u64 seed = base_seed * 1000003ULL + cls * 100000ULL + i;
		int p = win ? (int)(seed / 2 % P_NR) : ev == E_NONE ? cls
						: (int)(seed % 4 == 3 ? P_BURSTS : seed % 4);
		struct result res;
		struct trace t;

		if (getenv("FLEET_SIM_ONLY") && strtoull(getenv("FLEET_SIM_ONLY"), NULL, 0) != seed)
			continue;
		make_trace(&t, seed, p, ev, win);
		by_n[t.n]++;
		memset(&res, 0, sizeof(res));
		if (run_trace(&t, &res, why, sizeof(why))) {
			if (!failed++)
				CHECK_FAIL("trace seed %#llx (%s, N %u, delta %llu ms, rho %llu us, "
					   "R %llu, B %llu, load %.1fx, %s, T %llu s): %s",
					   (unsigned long long)seed, pattern_name[t.pattern], t.n,
					   (unsigned long long)(t.delta / MSEC),
					   (unsigned long long)(t.rho / USEC),
					   (unsigned long long)t.rate, (unsigned long long)t.burst, t.load,
					   t.per_all ? "all" : "src", (unsigned long long)(t.dur / SEC),
					   why);
		}
		if (win) {
			if (getenv("FLEET_SIM_VERBOSE"))
				printf("# %s %#llx N %u d %llu %s L %llu x%.1f %s: worst window "
				       "%.3f L over L + presync + untracked, presync %.3f L, floor "
				       "%.3f, untracked %llu in %llu (bound %llu)\n", name,
				       (unsigned long long)seed, t.n,
				       (unsigned long long)(t.delta / MSEC),
				       t.algo == WEIR_ALGO_FIXED ? "fixed" : "sliding",
				       (unsigned long long)t.rate, t.load, pattern_name[t.pattern],
				       res.win_worst, res.win_presync, res.win_floor,
				       (unsigned long long)res.untracked,
				       (unsigned long long)res.stretches,
				       (unsigned long long)res.sample_bound);
			if (res.win_worst > worst_total)
				worst_total = res.win_worst;
			if (res.win_presync > worst_h)
				worst_h = res.win_presync;
			if (res.win_floor >= 0 && res.win_floor < min_floor)
				min_floor = res.win_floor;
			if ((double)res.untracked / res.sample_bound > worst_u) {
				worst_u = (double)res.untracked / res.sample_bound;
				worst_ur = res;
			}
			continue;
		}
		if (getenv("FLEET_SIM_VERBOSE"))
			printf("# %s %#llx N %u d %llu r %llu R %llu B %llu x%.1f %s t1 %.2f: excess %.1f "
			       "(bound %.1f), hot %.1f (%.1f), move %.1f (%.1f), floor %.3f, "
			       "untracked %llu in %llu (bound %llu)\n",
			       name, (unsigned long long)seed, t.n,
			       (unsigned long long)(t.delta / MSEC),
			       (unsigned long long)(t.rho / USEC), (unsigned long long)t.rate,
			       (unsigned long long)t.burst, t.load, pattern_name[t.pattern], res.t1,
			       res.total_excess, res.bound_total, res.worst_h, res.bound_h,
			       res.worst_move, res.bound_move, res.floor_ratio,
			       (unsigned long long)res.untracked, (unsigned long long)res.stretches,
			       (unsigned long long)res.sample_bound);
		if (res.under) {
			/* How far over B + R T + N R (delta + rho) the thinly spread ones went. */
			double over = (res.total_excess - res.sync_term) / (t.burst + t.rate * t.dur / 1e9);

			unders++;
			if (over > under_max)
				under_max = over;
			if (t.load >= 1.5 && t.pattern != P_IDLE && res.floor_ratio < under_floor)
				under_floor = res.floor_ratio;
		}
		/* The worst of each, as a fraction of the sync term N R (delta + rho). */
		if ((res.total_excess - res.bound_total) / res.sync_term > worst_total)
			worst_total = (res.total_excess - res.bound_total) / res.sync_term;
		if ((res.worst_h - res.bound_h) / res.sync_term > worst_h)
			worst_h = (res.worst_h - res.bound_h) / res.sync_term;
		if (res.move_checked) {
			moves++;
			if (res.settled >= 0 && res.settled < min_settled)
				min_settled = res.settled;
			if ((res.worst_move - res.bound_move) / res.sync_term > worst_move)
				worst_move = (res.worst_move - res.bound_move) / res.sync_term;
		}
		/* The untracked packets closest to their bound. */
		if ((double)res.untracked / res.sample_bound > worst_u) {
			worst_u = (double)res.untracked / res.sample_bound;
			worst_ur = res;
		}
		if (res.floor_checked && !res.under) {
			floors++;
			if (res.floor_ratio < min_floor)
				min_floor = res.floor_ratio;
		}
	}
	if (win) {
		printf("# %s: %d traces (N=1..4: %d %d %d %d), %d failed; the worst window went "
		       "%.3f L over L + presync + untracked (its bound: 2 packets over); at most "
		       "%.3f L admitted before a sync in a window; lowest admitted / floor %.3f; "
		       "admitted untracked: at most %.2f of the bound (%llu packets in %llu "
		       "stretches, the bound %llu)\n", name, traces, by_n[1], by_n[2], by_n[3],
		       by_n[4], failed, worst_total, worst_h, min_floor < 1e9 ? min_floor : -1,
		       worst_u, (unsigned long long)worst_ur.untracked,
		       (unsigned long long)worst_ur.stretches,
		       (unsigned long long)worst_ur.sample_bound);
		return;
	}
	printf("# %s: %d traces (N=1..4: %d %d %d %d), %d failed; closest to a bound, in units "
	       "of N R (delta + rho) below it: total %.2f, once hot %.2f", name, traces, by_n[1],
	       by_n[2], by_n[3], by_n[4], failed, -worst_total, -worst_h);
	if (moves)
		printf(", after a move %.2f (%d traces; the new host's admitted / R t once settled: "
		       "%.3f at least)", -worst_move, moves, min_settled);
	if (unders)
		printf("; %d traces with a host under 1.5x the rate: up to %.2f x (B + R T) "
		       "over B + R T + N R (delta + rho)", unders, under_max);
	if (under_floor < 1e9)
		printf(", lowest admitted / R T of those at 1.5x or more %.3f", under_floor);
	if (floors)
		printf("; lowest admitted / R T at 1.5x or more: %.3f (%d traces)", min_floor,
		       floors);
	printf("; admitted untracked: at most %.2f of the bound (%llu packets in %llu stretches, "
	       "the bound %llu)\n", worst_u, (unsigned long long)worst_ur.untracked,
	       (unsigned long long)worst_ur.stretches, (unsigned long long)worst_ur.sample_bound);
}

TEST_CASE(one_host) { run_class("one host", P_ONE, E_NONE, 0); }
TEST_CASE(spread) { run_class("spread", P_SPREAD, E_NONE, 0); }
TEST_CASE(move) { run_class("move", P_MOVE, E_NONE, 0); }
TEST_CASE(bursts) { run_class("bursts", P_BURSTS, E_NONE, 0); }
TEST_CASE(idle_gaps) { run_class("idle gaps", P_IDLE, E_NONE, 0); }
TEST_CASE(flushall) { run_class("flushall", 5, E_FLUSH, 0); }
TEST_CASE(stall) { run_class("stall", 6, E_STALL, 0); }
/* Fleet windows, fixed and sliding, over every pattern; then with a FLUSHALL, a stall. */
TEST_CASE(windows) { run_class("windows", 7, E_NONE, 1); }

/*
 * A fixed window's key, refused for most of each window on the one host
 * that sees it, stays tracked from window to window. Its allocation is
 * spent a third of the way into each window at 1.5 L, and nothing is
 * charged after; the sync just after the turn often comes before the new
 * window's first packet (150 a second, the turn's sync 2 ms after it). A
 * key cold by its charges alone left wr_fleet_use there, and each window
 * then began with up to L/2 admitted untracked before it was sent again.
 */
TEST_CASE(windows_refused_key_stays_tracked)
{
	struct result res = {};
	struct trace t;
	char why[256] = "";

	make_trace(&t, base_seed, P_ONE, E_NONE, 1);
	t.n = 1;
	t.from = t.to = 0;
	t.algo = WEIR_ALGO_FIXED;
	t.delta = 20 * MSEC;
	t.rho = MSEC;
	t.rate = t.burst = 100;
	t.load = 1.5;
	t.per_all = 0;
	t.dur = 8 * SEC;
	if (run_trace(&t, &res, why, sizeof(why)))
		CHECK_FAIL("%s", why);
	printf("# a fixed window refused on its one host: %llu untracked in %llu stretches, worst "
	       "window %.3f L over L + presync + untracked\n", (unsigned long long)res.untracked,
	       (unsigned long long)res.stretches, res.win_worst);
	CHECK_EQ(res.stretches, 1);
}
TEST_CASE(windows_flushall) { run_class("windows flushall", 8, E_FLUSH, 1); }
TEST_CASE(windows_stall) { run_class("windows stall", 9, E_STALL, 1); }

int main(void)
{
	const char *e;
	int err, rc;

	if ((e = getenv("FLEET_SIM_SEED")))
		base_seed = strtoull(e, NULL, 0);
	if ((e = getenv("FLEET_SIM_TRACES")) && atoi(e) > 0)
		traces = atoi(e);
	err = harness_start("fleet_sim");
	if (err)
		return err > 0;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, on_signal);
	if (redis_start()) {
		printf("not ok - fleet_sim: redis-server did not start on 127.0.0.1 (make deps "
		       "installs it)\n");
		redis_kill();
		return 1;
	}
	err = hosts_load();
	if (err) {
		printf("not ok - fleet_sim: loading %d BPF objects: %s\n", HOSTS_MAX,
		       strerror(-err));
		redis_kill();
		return 1;
	}
	printf("# seed %#llx, %d traces a class, redis-server on 127.0.0.1:%d\n",
	       (unsigned long long)base_seed, traces, redis_port);
	rc = check_run_all();
	/*
	 * A comment, not a summary line: tests/run.sh counts the ok lines
	 * and prints the one summary, and CI adds up every summary line, so
	 * a second one here counted these cases twice.
	 */
	if (__start_wr_tests && __stop_wr_tests)
		printf("# %d cases, %d failed\n", (int)(__stop_wr_tests - __start_wr_tests),
		       check_total_failed);
	redisFree(ctl);
	redis_kill();
	return rc;
}
