/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The deny and allow lists: a longest-prefix match on the source, looking
 * past entries whose time to live ran out.
 *
 * Part of weir.bpf.c, the one BPF object; includes what it uses.
 */
#ifndef WEIR_BPF_LISTS_H
#define WEIR_BPF_LISTS_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "compat.bpf.h"
#include "weir.h"
#include "weir_parse.h"
#include "clock.h"

/*
 * Is the source on a list (its v4 trie, its v6 trie), counting only
 * entries that have not expired? An entry with a time to live carries its
 * expiry in the data path's clock; the clock is read only when the longest
 * match has one, so permanent entries cost what they always did. A trie's
 * lookup returns the longest matching prefix only: when that one has
 * expired, look again below its length, so an expired /32 inside a live
 * /24 does not hide the /24. Up to WEIR_LIST_DEPTH expired entries nested
 * in one another are looked past; deeper than that the source counts as
 * not listed until the controller purges them (every CLI write, every
 * daemon tick). Static and not inlined: its frame is on its own short
 * call chain, off the rule walk's deep one, and 6.1 verifies it in the
 * caller's context (map pointers as arguments need a static function).
 */
static __noinline int on_list(void *trie4, void *trie6, const struct wr_pkt *p,
			      const struct weir_config *cfg)
{
	struct weir_lpm6 k = { .plen = 128 };
	struct weir_list_val *v;
	__u64 now = 0, exp;
	int i;

	if (p->family == 4) {
		k.plen = 32;
		k.addr[0] = p->saddr[0];
	} else {
		__builtin_memcpy(k.addr, p->saddr, sizeof(k.addr));
	}
	for (i = 0; i < WEIR_LIST_DEPTH; i++) {
		/* The v4 trie reads the first 8 bytes of k: its plen and addr[0]. */
		v = bpf_map_lookup_elem(p->family == 4 ? trie4 : trie6, &k);
		if (!v)
			return 0;
		exp = READ_ONCE(v->expires_ns);
		if (!exp)
			return 1;
		if (!now)
			now = clock_now(cfg, 0);
		if (now < exp)
			return 1;
		if (!v->plen)
			return 0;
		k.plen = v->plen - 1;
	}
	return 0;
}

/*
 * An IPv6 source's feed action: a longest-prefix match in generation gen.
 * Not inlined: its key is off weir_core's frame, on a short chain.
 */
static __noinline int on_feed6(const struct wr_pkt *p, __u32 gen)
{
	struct weir_lpm6 k = { .plen = 128 };
	void *inner;
	__u32 *v;

	inner = bpf_map_lookup_elem(&wr_feed6, &gen);
	if (!inner)
		return WEIR_FA_NONE;
	__builtin_memcpy(k.addr, p->saddr, sizeof(k.addr));
	v = bpf_map_lookup_elem(inner, &k);
	return v ? *v & WEIR_FA_MASK : WEIR_FA_NONE;
}

/*
 * What the feeds say of the source (enum weir_feed_action, a limit-class
 * with its class: WEIR_FA_CLASS_OF(c); NONE when no feed lists it), from
 * generation `lists & WEIR_L_FEED_GEN` of the feed maps. IPv4 is one
 * array load for a /24 that no longer prefix splits, whatever the number
 * of prefixes; a split /24 (every /24 a limit-class lists is one) adds one
 * or two hash lookups. IPv6 is a longest-prefix match. A slot with no
 * inner map (a packet racing the controller's cleanup of the old
 * generation, which it waits out) lists nothing.
 *
 * The IPv4 path is inlined: a BPF-to-BPF call returns through the
 * kernel's return thunk, which under a speculative-return mitigation
 * (AMD's Safe RET, Intel's call-depth tracking) costs more than the two
 * array loads it would wrap. The split /24's hash lookups and IPv6 stay
 * out of line, as does their stack.
 */
static __noinline int on_feed_split(__u32 saddr, __u32 gen)
{
	__u64 hk = bpf_ntohl(saddr);
	void *inner;
	__u32 *v;

	inner = bpf_map_lookup_elem(&wr_feed_host, &gen);
	if (!inner)
		return WEIR_FA_NONE;
	v = bpf_map_lookup_elem(inner, &hk);
	if (!v) {
		hk = WEIR_FEED_BLOCK_KEY | ((hk >> 8) << 8);
		v = bpf_map_lookup_elem(inner, &hk);
	}
	return v ? *v & WEIR_FA_MASK : WEIR_FA_NONE;
}

static __always_inline int on_feed(const struct wr_pkt *p, __u32 lists)
{
	__u32 gen = lists & WEIR_L_FEED_GEN ? 1 : 0, blk, idx;
	__u64 *w;
	void *inner;

	if (p->family != 4)
		return lists & WEIR_L_FEED6 ? on_feed6(p, gen) : WEIR_FA_NONE;
	if (!(lists & WEIR_L_FEED4))
		return WEIR_FA_NONE;
	inner = bpf_map_lookup_elem(&wr_feed_blk, &gen);
	if (!inner)
		return WEIR_FA_NONE;
	blk = bpf_ntohl(p->saddr[0]) >> 8;
	idx = blk / 32;
	w = bpf_map_lookup_elem(inner, &idx);
	if (!w)
		return WEIR_FA_NONE;
	idx = (*w >> ((blk % 32) * 2)) & 3;
	return idx != WEIR_FA_SPLIT ? idx : on_feed_split(p->saddr[0], gen);
}

#endif /* WEIR_BPF_LISTS_H */
