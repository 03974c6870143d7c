// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fleet-wide limits: one sync. The calls of each group planned, written
 * (the numbers user/fleet/sync.lua reads) and their answers taken; the
 * fallback decided from which groups were in step; the fleet's clock for
 * windows kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <hiredis/hiredis.h>
#include "fleet/fleet_int.h"

/* ---- one sync ---- */

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

static void fleet_append(struct wr_fleet *f, struct call *c, const char **argv, size_t *argvlen,
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
				p = put_double(p, fleet_win_spent(l, f->st.hosts));
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
static int fleet_take(struct wr_fleet *f, struct call *c, redisReply *rep,
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
		fleet_count_err(f, c->node, WEIR_FE_REPLY, "script", rep->str);
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
				if (fleet_win_ahead(l, cfg->fleet_win_off, v.idx, fleet_now(f)))
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
			if (fleet_fold(f, it->r, it->li, &it->k, &v, cfg, n->sent_at, it->way))
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
			if (fleet_key_parse(f, over->element[k]->str, &key, &r, &li))
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
				if (fleet_win_ahead(l, off, v.idx, fleet_now(f)))
					continue;
			} else {
				v.floor = n->sent_at + (__u64)((score - now_r) * 1000);
			}
			if (fleet_fold(f, r, li, &key, &v, cfg, n->sent_at, NULL)) {
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
	fleet_count_err(f, c->node, WEIR_FE_REPLY, "unexpected reply", NULL);
	return -EPROTO;
}

/* Keys whose charge did not reach the fleet: send it again next time. */
static void fleet_unsend(struct wr_fleet *f, const struct call *c)
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

void fleet_write_status(struct wr_fleet *f)
{
	__u32 zero = 0;

	f->st.updated_ns = fleet_now(f);
	bpf_map_update_elem(f->maps.fleet_status, &zero, &f->st, BPF_ANY);
}
/*
 * One node's share of a sync: its calls written, then each reply read and
 * taken (a redirect is unsent, to go again after the cluster's map is
 * refreshed); a node that fails is dropped, to reconnect next time.
 */
static void fleet_node_exchange(struct wr_fleet *f, int i, size_t nc, const char **argv,
				size_t *argvlen, char *args, const struct weir_config *cfg)
{
	struct node *n = &f->nodes[i];
	redisReply *rep;
	size_t j;
	bool ok = true;

	n->sent_at = fleet_now(f);
	for (j = 0; j < nc; j++)
		if (f->calls[j].node == i)
			fleet_append(f, &f->calls[j], argv, argvlen, args);
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
			fleet_count_err(f, i, n->c->err == REDIS_ERR_IO ? WEIR_FE_TIMEOUT
									: WEIR_FE_REPLY,
					"no reply", n->c->errstr);
			/*
			 * Not taken back: a stalled Redis may still run it. A
			 * token bucket's next call carries its charge anyway
			 * (its run's total), and Redis counts it once; a
			 * window's next floors do.
			 */
			fleet_node_drop(n, fleet_now(f));
			if (f->cfg.mode == WR_FLEET_CLUSTER)
				f->refresh = true;
			ok = false;
			continue;
		}
		r = fleet_take(f, c, rep, cfg);
		freeReplyObject(rep);
		if (r) {
			/* A redirect was not run; anything else may have been. */
			if (r == 1)
				fleet_unsend(f, c);
			ok = false;
			if (r < 0) {
				/* NOSCRIPT (a restarted Redis) or garbage: a new connection. */
				fleet_node_drop(n, 0);
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
		if (!fleet_cluster_refresh(f))
			f->mapped = true;
	}
	nr = fleet_gather(f, &cfg, mult);
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
		if (fleet_node_connect(f, i, t0)) {
			for (j = 0; j < nc; j++)
				if (f->calls[j].node == i)
					fleet_unsend(f, &f->calls[j]);
			if (f->cfg.mode == WR_FLEET_CLUSTER)
				f->refresh = true;
			continue;
		}
		fleet_node_exchange(f, i, nc, argv, argvlen, args, &cfg);
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
	fleet_write_status(f);
}

void wr_fleet_sync(struct wr_fleet *f)
{
	sync_once(f, f->argv, f->argvlen, f->args);
	fleet_fp_sync(f);
}

/*
 * When the next fleet window turns after now (CLOCK_MONOTONIC), and
 * WR_FLEET_TURN_NS more; 0 if no fleet window limit is in force or there is
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
			t = now + period - wr_limit_wnow(l, now, f->win_off) % period + WR_FLEET_TURN_NS;
			if (!best || t < best)
				best = t;
		}
	return best;
}

/* Send every call of node i, pipelined, and take the replies in order. */
