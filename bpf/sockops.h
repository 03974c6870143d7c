/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Connection limits: the sock_ops program that counts each passively
 * established connection under the keys of the rules it matches, and
 * uncounts it when the kernel closes it.
 *
 * Part of weir.bpf.c, the one BPF object; includes what it uses.
 */
#ifndef WEIR_BPF_SOCKOPS_H
#define WEIR_BPF_SOCKOPS_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "compat.bpf.h"
#include "weir.h"
#include "weir_parse.h"
#include "weir_limiter.h"
#include "maps.h"
#include "clock.h"

/* ---- connection limits: counting established connections ---- */

/* State of one wr_sockops walk over the rules, on the stack. */
struct wr_conn_walk {
	struct wr_pkt pkt;
	__u32 rs_idx;
	__u32 nr;
	__u64 cand;	/* the candidates not visited yet (wr_rule_candidates) */
	__u32 cell;	/* their cell of the rule index */
	__u32 pad;
	struct weir_key keys[WEIR_CONN_KEYS_PER_SOCK];
};

/*
 * The connection-limit keys the next candidate rule (the lowest bit of
 * w->cand) gives this connection; 1 stops the walk.
 */
static __always_inline long conn_rule_at(struct wr_conn_walk *w)
{
	struct weir_ruleset *rs;
	const struct weir_rule *r;
	__u32 rs_idx = w->rs_idx, pos, li;

	if (!w->cand)
		return 1;
	pos = wr_cand_pop(&w->cand);
	/* A key on this frame's stack: w may be a global function's argument. */
	rs = bpf_map_lookup_elem(&wr_rulesets, &rs_idx);
	if (!rs)
		return 1;
	r = &rs->rules[wr_cand_rule(rs, w->cell, pos) & (WEIR_MAX_RULES - 1)];
	/* Rules with connection limits have no further fields (the rule parser refuses them). */
	if (!wr_rule_match_base(r, &w->pkt))
		return 0;
	for (li = 0; li < WEIR_MAX_LIMITS; li++) {
		const struct weir_limit *l = &r->limits[li];
		__u32 n = w->nr;

		if (li >= r->nr_limits || l->algo != WEIR_ALGO_CONNS)
			continue;
		if (n >= WEIR_CONN_KEYS_PER_SOCK)
			return 1;
		wr_make_key(r, li, l, &w->pkt, &w->keys[n]);
		w->nr = n + 1;
	}
	return 0;
}

/* bpf_loop callback: conn_rule_at. */
static long conn_rule(__u32 i, void *ctx)
{
	return conn_rule_at(ctx);
}

/* Without bpf_loop: the walk as a bounded loop in a global function (wr_walk_rules). */
__noinline int wr_walk_conn_rules(struct wr_conn_walk *w)
{
	__u32 i;

	if (!w)
		return 0;
	for (i = 0; i < WEIR_MAX_CAND; i++)
		if (conn_rule_at(w))
			break;
	return 0;
}

/*
 * A passively established connection: match it like its SYN (remote
 * address as the source, local port as the destination), count it under
 * every connection limit it falls in, and remember where in its socket
 * storage, so that its close takes back exactly that.
 */
/*
 * A passively established connection proves its remote address: a verified
 * source (wr_verified), while the controller keeps them (verified_ttl_ns).
 */
static __always_inline void verify_source(struct bpf_sock_ops *skops,
					  const struct weir_config *cfg, const struct wr_pkt *p)
{
	struct weir_verified_key k = {};
	__u64 now, *hint;
	__u32 slot;

	if (!cfg->verified_ttl_ns)
		return;
	k.family = p->family;
	k.addr[0] = p->saddr[0];
	k.addr[1] = p->saddr[1];
	k.addr[2] = p->saddr[2];
	k.addr[3] = p->saddr[3];
	now = clock_now(cfg, 0);
	bpf_map_update_elem(&wr_verified, &k, &now, BPF_ANY);
	/* The hint after the entry: a fresh slot always has its entries in place. */
	slot = wr_verified_slot(&k);
	hint = bpf_map_lookup_elem(&wr_verified_hint, &slot);
	if (hint)
		WRITE_ONCE(*hint, now);
}

static __always_inline void conn_established(struct bpf_sock_ops *skops)
{
	struct wr_conn_walk w = {};
	struct weir_sock_conns *sc;
	struct weir_config *cfg;
	struct bpf_sock *sk = skops->sk;
	__u32 zero = 0, i;

	cfg = bpf_map_lookup_elem(&wr_config, &zero);
	if (!cfg || !sk)
		return;
	if (cfg->conn_netns && bpf_get_netns_cookie(skops) != cfg->conn_netns)
		return;
	if (skops->family == 2) {
		w.pkt.family = 4;
		w.pkt.saddr[0] = skops->remote_ip4;
	} else if (skops->family == 10 && !skops->remote_ip6[0] && !skops->remote_ip6[1] &&
		   skops->remote_ip6[2] == wr_htonl(0xffff)) {
		/* An IPv4 client of a dual-stack listener (::ffff:a.b.c.d): it is IPv4 to XDP. */
		w.pkt.family = 4;
		w.pkt.saddr[0] = skops->remote_ip6[3];
	} else if (skops->family == 10) {
		w.pkt.family = 6;
		w.pkt.saddr[0] = skops->remote_ip6[0];
		w.pkt.saddr[1] = skops->remote_ip6[1];
		w.pkt.saddr[2] = skops->remote_ip6[2];
		w.pkt.saddr[3] = skops->remote_ip6[3];
	} else {
		return;
	}
	verify_source(skops, cfg, &w.pkt);
	w.pkt.proto = WR_IPPROTO_TCP;
	w.pkt.dport = skops->local_port;	/* host byte order */
	w.pkt.flags = WR_PKT_L4 | WR_PKT_PORTS;
	w.pkt.tcp_flags = WEIR_TCP_SYN;	/* so that "tcp-flags syn" rules match too */
	w.rs_idx = cfg->active & 1;
	{
		struct weir_ruleset *rs = bpf_map_lookup_elem(&wr_rulesets, &w.rs_idx);

		if (!rs)
			return;
		/*
		 * Only the rules the index gives for the local port, lowest
		 * first: the walk stops when none are left.
		 */
		w.cand = wr_rule_candidates(rs, &w.pkt, &w.cell);
		if (has_bpf_loop)
			bpf_loop(WEIR_MAX_CAND, conn_rule, &w, 0);
		else
			wr_walk_conn_rules(&w);
	}
	if (!w.nr)
		return;
	sc = bpf_sk_storage_get(&wr_sock_conns, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!sc)
		return;	/* not counted, so never uncounted; the daemon reconciles */
	for (i = 0; i < WEIR_CONN_KEYS_PER_SOCK; i++) {
		struct weir_conns one = { .count = 1 }, *c;

		if (i >= w.nr)
			break;
		sc->keys[i] = w.keys[i];
		c = bpf_map_lookup_elem(&wr_conns, &w.keys[i]);
		if (c)
			__sync_fetch_and_add(&c->count, 1);
		else if (bpf_map_update_elem(&wr_conns, &w.keys[i], &one, BPF_NOEXIST) &&
			 (c = bpf_map_lookup_elem(&wr_conns, &w.keys[i])))
			__sync_fetch_and_add(&c->count, 1);	/* lost the insert race */
	}
	sc->nr = w.nr;
	/* Tell us when this connection changes state: its close uncounts it. */
	bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags | BPF_SOCK_OPS_STATE_CB_FLAG);
}

static __always_inline void conn_closed(struct bpf_sock_ops *skops)
{
	struct weir_sock_conns *sc;
	struct bpf_sock *sk = skops->sk;
	__u32 i;

	if (!sk)
		return;
	sc = bpf_sk_storage_get(&wr_sock_conns, sk, 0, 0);
	if (!sc)
		return;
	for (i = 0; i < WEIR_CONN_KEYS_PER_SOCK; i++) {
		struct weir_conns *c;
		__u64 n;
		int t;

		if (i >= sc->nr)
			break;
		c = bpf_map_lookup_elem(&wr_conns, &sc->keys[i]);
		if (!c)
			continue;
		/* Never below zero, even after the daemon corrected a count. */
		for (t = 0; t < WR_CAS_TRIES; t++) {
			n = READ_ONCE(c->count);
			if (!n || __sync_val_compare_and_swap(&c->count, n, n - 1) == n)
				break;
		}
	}
	sc->nr = 0;
	bpf_sk_storage_delete(&wr_sock_conns, sk);
}

SEC("sockops")
int weir_sockops(struct bpf_sock_ops *skops)
{
	switch (skops->op) {
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		conn_established(skops);
		break;
	case BPF_SOCK_OPS_STATE_CB:
		if (skops->args[1] == BPF_TCP_CLOSE)
			conn_closed(skops);
		break;
	}
	return 1;
}

#endif /* WEIR_BPF_SOCKOPS_H */
