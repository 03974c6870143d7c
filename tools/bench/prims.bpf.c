// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the pieces of a limiter cost on this machine: each program is the
 * trivial XDP_DROP plus one thing (a clock read, a hash lookup, a call...).
 * progcost runs them in the same rounds as the trivial program and sluice,
 * so the difference to the trivial program is that one thing's cost.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Same sizes as struct sluice_key and struct sluice_state. */
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

/* A global (non-inlined) BPF function, like sl_match_rules and sl_limit_op. */
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

/* The lookup plus the compare-and-swap sluice does on the bucket. */
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

/* Four per-CPU counter increments, as sluice counts a packet. */
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
