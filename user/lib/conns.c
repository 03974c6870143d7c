// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Connection limits: keeping wr_conns true to the kernel.
 *
 * wr_sockops counts each passively established connection under its keys
 * and uncounts it when the kernel closes it, so counts are exact as long as
 * the program saw both ends. It cannot see connections that were there
 * before it was loaded, nor ones whose socket storage could not be made;
 * and keys of rules that changed linger at zero. The daemon reconciles:
 * it counts the kernel's own sockets per key, and corrects an entry only
 * when the same disagreement shows on two scans in a row (a connection
 * opening or closing mid-scan disagrees once), and drops zero entries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <bpf/bpf.h>
#include "lib/conns.h"
#include "weir_limiter.h"
#include "lib/tcpdiag.h"

/* States between the passive "established" and the move to CLOSE. */
#define COUNTED_STATES ((1 << TCP_ESTABLISHED) | (1 << TCP_FIN_WAIT1) | (1 << TCP_FIN_WAIT2) | \
			(1 << TCP_CLOSE_WAIT) | (1 << TCP_LAST_ACK) | (1 << TCP_CLOSING))

struct kv {
	struct weir_key key;
	__u64 count;
};

struct tally {
	const struct weir_ruleset *rs;
	struct kv *v;
	size_t n, cap;
	int err;
};

static int cmp_kv(const void *a, const void *b)
{
	return memcmp(&((const struct kv *)a)->key, &((const struct kv *)b)->key,
		      sizeof(struct weir_key));
}

static int push(struct kv **v, size_t *n, size_t *cap, const struct weir_key *k, __u64 c)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		struct kv *nv = realloc(*v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[*n].key = *k;
	(*v)[(*n)++].count = c;
	return 0;
}

/* One kernel socket: the keys it is counted under, as wr_sockops makes them. */
static int tally_cb(const struct inet_diag_msg *m, void *arg)
{
	struct tally *t = arg;
	struct wr_pkt p = {};
	__u32 i, li;

	if (m->idiag_family == AF_INET) {
		p.family = 4;
		p.saddr[0] = m->id.idiag_dst[0];
	} else if (m->idiag_family == AF_INET6 && !m->id.idiag_dst[0] && !m->id.idiag_dst[1] &&
		   m->id.idiag_dst[2] == htonl(0xffff)) {
		/* An IPv4 client of a dual-stack listener, as wr_sockops counts it. */
		p.family = 4;
		p.saddr[0] = m->id.idiag_dst[3];
	} else if (m->idiag_family == AF_INET6) {
		p.family = 6;
		memcpy(p.saddr, m->id.idiag_dst, sizeof(p.saddr));
	} else {
		return 0;
	}
	p.proto = WR_IPPROTO_TCP;
	p.dport = ntohs(m->id.idiag_sport);	/* our side: the listening port */
	p.flags = WR_PKT_L4 | WR_PKT_PORTS;
	p.tcp_flags = WEIR_TCP_SYN;
	for (i = 0; i < t->rs->nr_rules && i < WEIR_MAX_RULES; i++) {
		const struct weir_rule *r = &t->rs->rules[i];

		if (!wr_rule_match(r, &p))
			continue;
		for (li = 0; li < r->nr_limits && li < WEIR_MAX_LIMITS; li++) {
			struct weir_key k;

			if (r->limits[li].algo != WEIR_ALGO_CONNS)
				continue;
			wr_make_key(r, li, &r->limits[li], &p, &k);
			t->err = push(&t->v, &t->n, &t->cap, &k, 1);
			if (t->err)
				return 1;
		}
	}
	return 0;
}

/* Sum duplicates of a sorted tally. */
static size_t fold(struct kv *v, size_t n)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		if (o && !memcmp(&v[o - 1].key, &v[i].key, sizeof(v[i].key)))
			v[o - 1].count += v[i].count;
		else
			v[o++] = v[i];
	}
	return o;
}

static struct kv *find(struct kv *v, size_t n, const struct weir_key *k)
{
	struct kv probe = { .key = *k };

	return n ? bsearch(&probe, v, n, sizeof(*v), cmp_kv) : NULL;
}

/* A disagreement seen before: same key, same map value, same kernel truth. */
static bool seen_before(const struct wr_conns_recon *rc, const struct weir_key *k,
			__u64 map_count, __u64 truth)
{
	size_t i;

	for (i = 0; i < rc->nr_pending; i++)
		if (!memcmp(&rc->pending[i].key, k, sizeof(*k)))
			return rc->pending[i].map_count == map_count &&
			       rc->pending[i].truth == truth;
	return false;
}

static void remember(struct wr_conns_recon *rc, const struct weir_key *k, __u64 map_count,
		     __u64 truth)
{
	if (rc->nr_next >= WR_CONNS_PENDING_MAX)
		return;
	rc->next[rc->nr_next].key = *k;
	rc->next[rc->nr_next].map_count = map_count;
	rc->next[rc->nr_next].truth = truth;
	rc->nr_next++;
}

int wr_conns_reconcile(const struct wr_maps *m, const struct weir_ruleset *rs,
		       struct wr_conns_recon *rc, int *fixed)
{
	struct tally t = { .rs = rs };
	struct weir_key k, next;
	struct kv *inmap = NULL;
	size_t nmap = 0, capmap = 0, i;
	void *prev = NULL;
	bool any = false;
	int err;

	*fixed = 0;
	for (i = 0; i < rs->nr_rules && i < WEIR_MAX_RULES && !any; i++)
		for (__u32 li = 0; li < rs->rules[i].nr_limits && li < WEIR_MAX_LIMITS; li++)
			any |= rs->rules[i].limits[li].algo == WEIR_ALGO_CONNS;
	if (any) {
		err = wr_tcp_dump(COUNTED_STATES, tally_cb, &t);
		if (!err)
			err = t.err;
		if (err)
			goto out;
		if (t.n)
			qsort(t.v, t.n, sizeof(*t.v), cmp_kv);
		t.n = fold(t.v, t.n);
	}
	while (!bpf_map_get_next_key(m->conns, prev, &next)) {
		struct weir_conns c;

		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(m->conns, &k, &c))
			continue;
		err = push(&inmap, &nmap, &capmap, &k, c.count);
		if (err)
			goto out;
	}
	if (nmap)
		qsort(inmap, nmap, sizeof(*inmap), cmp_kv);
	rc->nr_next = 0;
	/* Entries the map has: right, wrong, or zero and done with. */
	for (i = 0; i < nmap; i++) {
		struct kv *truth = find(t.v, t.n, &inmap[i].key);
		__u64 want = truth ? truth->count : 0;

		if (inmap[i].count == want) {
			if (!want)
				bpf_map_delete_elem(m->conns, &inmap[i].key);
			continue;
		}
		if (!seen_before(rc, &inmap[i].key, inmap[i].count, want)) {
			remember(rc, &inmap[i].key, inmap[i].count, want);
			continue;
		}
		if (want) {
			struct weir_conns c = { .count = want };

			bpf_map_update_elem(m->conns, &inmap[i].key, &c, BPF_EXIST);
		} else {
			bpf_map_delete_elem(m->conns, &inmap[i].key);
		}
		(*fixed)++;
	}
	/* Connections the map never counted (there before weir, or missed). */
	for (i = 0; i < t.n; i++) {
		struct weir_conns c = { .count = t.v[i].count };

		if (find(inmap, nmap, &t.v[i].key))
			continue;
		if (!seen_before(rc, &t.v[i].key, 0, t.v[i].count)) {
			remember(rc, &t.v[i].key, 0, t.v[i].count);
			continue;
		}
		if (!bpf_map_update_elem(m->conns, &t.v[i].key, &c, BPF_NOEXIST))
			(*fixed)++;
	}
	memcpy(rc->pending, rc->next, rc->nr_next * sizeof(rc->next[0]));
	rc->nr_pending = rc->nr_next;
	err = 0;
out:
	free(t.v);
	free(inmap);
	return err;
}
