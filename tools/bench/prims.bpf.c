// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the pieces of a limiter cost on this machine: each program is the
 * trivial XDP_DROP plus one thing (a clock read, a hash lookup, a call...).
 * progcost runs them in the same rounds as the trivial program and weir,
 * so the difference to the trivial program is that one thing's cost.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "weir.h"
#include "weir_limiter.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Same sizes as struct weir_key and struct weir_state. */
struct pkey {
	__u32 w[6];
};

struct pval {
	__u64 tat, drops, last;
};

/* One entry, inserted by progcost: every lookup hits. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct pkey);
	__type(value, struct pval);
} p_lru SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct pkey);
	__type(value, struct pval);
} p_hash SEC(".maps");

/*
 * wr_state's layout: sets of WEIR_WAYS ways in an array. progcost puts
 * the hit key (set_key() below) in the last way of its set and keys of the
 * same rule and limit in the others, so a lookup compares as many words as
 * the data path's longest hit does.
 */
#define P_SETS	16384
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, P_SETS);
	__type(key, __u32);
	__type(value, struct weir_set);
} p_sets SEC(".maps");

/* The set hash's seed, written by progcost: a variable, as wr_config's is. */
__u64 p_seed;

/* Per-CPU counters: the verifier inlines these lookups. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} p_pcpu SEC(".maps");

/* Where results go, so nothing is optimised away. */
__u64 p_sink;

static __always_inline struct pkey hit_key(void)
{
	struct pkey k = { { 1, 2, 3, 4, 5, 6 } };

	return k;
}

SEC("xdp")
int p_ktime(struct xdp_md *ctx)
{
	p_sink = bpf_ktime_get_ns();
	return XDP_DROP;
}

SEC("xdp")
int p_coarse(struct xdp_md *ctx)
{
	p_sink = bpf_ktime_get_coarse_ns();
	return XDP_DROP;
}

/* bpf_jiffies64 is inlined by the x86 JIT into one load: no call. */
SEC("xdp")
int p_jiffies(struct xdp_md *ctx)
{
	p_sink = bpf_jiffies64();
	return XDP_DROP;
}

SEC("xdp")
int p_prandom(struct xdp_md *ctx)
{
	p_sink = bpf_get_prandom_u32();
	return XDP_DROP;
}

/* A global (non-inlined) BPF function, like wr_match_rules and wr_limit_op. */
__noinline int p_callee(struct xdp_md *ctx)
{
	return ctx ? ctx->ingress_ifindex + 1 : 0;
}

SEC("xdp")
int p_subcall(struct xdp_md *ctx)
{
	p_sink = p_callee(ctx);
	return XDP_DROP;
}

SEC("xdp")
int p_lru_lookup(struct xdp_md *ctx)
{
	struct pkey k = hit_key();
	struct pval *v = bpf_map_lookup_elem(&p_lru, &k);

	if (v)
		p_sink = v->tat;
	return XDP_DROP;
}

SEC("xdp")
int p_hash_lookup(struct xdp_md *ctx)
{
	struct pkey k = hit_key();
	struct pval *v = bpf_map_lookup_elem(&p_hash, &k);

	if (v)
		p_sink = v->tat;
	return XDP_DROP;
}

/* weir's per-source lookup: hash the key, look its set up, find its way, CAS the TAT. */
SEC("xdp")
int p_set_cas(struct xdp_md *ctx)
{
	/* 198.18.0.2 (network order on a little-endian host) of rule 1, limit 0. */
	struct weir_key k = { .uid = 1, .family = 4, .plen = 32, .addr = { 0x020012c6 } };
	const __u64 *kw = (const __u64 *)&k;
	struct weir_set *set;
	__u32 idx, i;

	idx = wr_state_set(wr_key_hash(&k, p_seed), P_SETS);
	set = bpf_map_lookup_elem(&p_sets, &idx);
	if (!set)
		return XDP_DROP;
	for (i = 0; i < WEIR_WAYS; i++) {
		struct weir_way *w = &set->way[i];
		__u64 *ww = (__u64 *)&w->key;

		if (*(volatile __u64 *)&ww[0] == kw[0] && ww[1] == kw[1] && ww[2] == kw[2]) {
			__u64 t = w->st.tat;

			__sync_val_compare_and_swap(&w->st.tat, t, t + 1);
			break;
		}
	}
	return XDP_DROP;
}

/* The lookup plus the compare-and-swap weir did on the bucket when wr_state was an LRU hash. */
SEC("xdp")
int p_lru_cas(struct xdp_md *ctx)
{
	struct pkey k = hit_key();
	struct pval *v = bpf_map_lookup_elem(&p_lru, &k);

	if (v) {
		__u64 t = v->tat;

		__sync_val_compare_and_swap(&v->tat, t, t + 1);
	}
	return XDP_DROP;
}

/* Four per-CPU counter increments, as weir counts a packet. */
SEC("xdp")
int p_counters(struct xdp_md *ctx)
{
	__u32 i;

	for (i = 0; i < 4; i++) {
		__u32 k = i;
		__u64 *c = bpf_map_lookup_elem(&p_pcpu, &k);

		if (c)
			*c += 1;
	}
	return XDP_DROP;
}
