// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wrflood's packet rewriter: run through BPF_PROG_RUN in live-frames mode
 * (BPF_F_TEST_XDP_LIVE_FRAMES), it turns the template frame userspace
 * passes in into packet number n of the flood and sends it with XDP_TX,
 * which live mode turns into a redirect out of the ingress device (one end
 * of a veth pair). The frames reach the peer as xdp_frames, the way a NIC
 * driver hands them to XDP: no skb exists until something passes them on.
 *
 * Per packet it writes the source address (one of 2^src_bits sources, taken
 * in a scattered order or at random), for TCP a fresh source port and
 * sequence number, the L4 header (UDP, or a SYN with an MSS option; "mix"
 * alternates), and both checksums, computed whole. Nothing depends on what
 * a recycled page held before. A paced run (interval_ns) spins through
 * frames it does not send until the next packet is due, so the generator's
 * CPU stays busy and the rate is exact; each BPF_PROG_RUN call costs too
 * much setup to pace by calls.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* L4 bytes after the IP header: a UDP header and 16 bytes, or TCP with MSS. */
#define L4_LEN		24
#define ETH_LEN		14
#define IP4_LEN		20
#define IP6_LEN		40
/* Odd, so that n -> n * SCATTER mod 2^k is a permutation of the sources. */
#define SCATTER		0x9E3779B1u

/* PROTO_ACK: TCP ACKs of no connection (random sequence and acknowledgment numbers). */
enum { PROTO_UDP = 0, PROTO_SYN = 1, PROTO_MIX = 2, PROTO_ACK = 3 };

/* Set by wrflood before load. */
const volatile __u32 family = 4;	/* 4 or 6 */
const volatile __u32 proto = PROTO_UDP;
const volatile __u32 src_bits = 0;	/* 2^src_bits distinct sources */
const volatile __u32 src_random = 0;	/* random source per packet, not a cycle */
/*
 * The varying source word, host byte order: IPv4 saddr, or IPv6 word 1
 * (bits 32..63: the /64 changes, so every source is its own /64 key).
 */
const volatile __u32 src_base = 0;
const volatile __u16 dport = 9000;

/* Paced runs: ns between packets (0: as fast as the CPU goes). */
const volatile __u64 interval_ns = 0;
/* Packets to send in all: later runs send nothing (a paced call runs on). */
const volatile __u64 max_seq = ~0ULL;
/*
 * Paced runs that fall behind: 0 drops what is more than PACE_SLACK_NS late
 * (no bursts), 1 sends it at once (every packet of the schedule goes out).
 */
const volatile __u32 catch_up = 0;
/* A paced generator that fell this far behind starts over instead of bursting. */
#define PACE_SLACK_NS	1000000

/* Packets sent so far; the generator runs on one CPU, so plain counters. */
__u64 seq = 0;
/* When the next paced packet is due (bpf_ktime_get_ns). */
__u64 next_ns = 0;
/* Paced runs: when the first and the latest packet went out (CLOCK_MONOTONIC). */
__u64 first_ns = 0;
__u64 last_ns = 0;

static __always_inline __u32 fold(__u64 s)
{
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return s;
}

/* Sum of n 16-bit words at p (n constant: unrolled). */
static __always_inline __u64 sum16(const __u16 *p, int n)
{
	__u64 s = 0;
	int i;

#pragma unroll
	for (i = 0; i < n; i++)
		s += p[i];
	return s;
}

/* The L4 checksum from its 32-bit sum; a UDP checksum of 0 means none, so it is sent as 0xffff. */
static __always_inline void put_l4_csum(__u8 *l4, int syn, __u64 s)
{
	__u16 c = ~fold(s);

	if (syn)
		((__u16 *)l4)[8] = c;
	else
		((__u16 *)l4)[3] = c ? c : 0xffff;
}

static __always_inline void write_l4(__u8 *l4, int syn)
{
	__u16 *w = (void *)l4;
	__u32 r = bpf_get_prandom_u32();

	if (syn) {
		/* sport, dport, seq, ack, offset 6 words + SYN, window, csum, urg, MSS 1460 */
		w[0] = bpf_htons(1024 + (r & 0x7fff));
		w[1] = bpf_htons(dport);
		*(__u32 *)(l4 + 4) = r * SCATTER;
		*(__u32 *)(l4 + 8) = proto == PROTO_ACK ? r * 0x85ebca6bu : 0;
		/* Data offset 6 words; SYN, or ACK for PROTO_ACK. */
		w[6] = bpf_htons(proto == PROTO_ACK ? 0x6010 : 0x6002);
		w[7] = bpf_htons(64240);
		w[8] = 0;
		w[9] = 0;
		*(__u32 *)(l4 + 20) = bpf_htonl(0x020405b4);
	} else {
		w[0] = bpf_htons(40000 + (r & 0xfff));
		w[1] = bpf_htons(dport);
		w[2] = bpf_htons(L4_LEN);
		w[3] = 0;
		/* payload: "SLF1" and the packet number */
		*(__u32 *)(l4 + 8) = bpf_htonl(0x534c4631);
		*(__u32 *)(l4 + 12) = 0;
		*(__u64 *)(l4 + 16) = seq;
	}
}

SEC("xdp")
int wrflood(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u32 n = seq, idx, src;
	int syn = proto == PROTO_SYN || proto == PROTO_ACK || (proto == PROTO_MIX && (n & 1));
	__u8 l4p = syn ? 6 : 17;
	__u64 s;

	/*
	 * Pacing: a run that comes too early gives its frame back to the page
	 * pool (XDP_DROP before anything was written); userspace keeps calling
	 * until seq says enough went out.
	 */
	if (seq >= max_seq)
		return XDP_DROP;
	if (interval_ns) {
		__u64 now = bpf_ktime_get_ns();

		if (now < next_ns)
			return XDP_DROP;
		if (!next_ns || (!catch_up && next_ns + PACE_SLACK_NS < now))
			next_ns = now;
		next_ns += interval_ns;
		if (!first_ns)
			first_ns = now;
		last_ns = now;
	}
	seq++;
	idx = src_random ? bpf_get_prandom_u32() : n * SCATTER;
	src = src_base + (src_bits ? idx & ((1u << src_bits) - 1) : 0);

	if (family == 4) {
		__u8 *ip = data + ETH_LEN;
		__u8 *l4 = ip + IP4_LEN;
		__u16 *iw = (void *)ip;

		if ((void *)(l4 + L4_LEN) > end)
			return XDP_ABORTED;
		*(__u32 *)(ip + 12) = bpf_htonl(src);
		ip[9] = l4p;
		iw[5] = 0;
		iw[5] = ~fold(sum16(iw, IP4_LEN / 2));
		write_l4(l4, syn);
		/* pseudo header: addresses, protocol, L4 length */
		s = sum16((void *)(ip + 12), 4) + bpf_htons(l4p) + bpf_htons(L4_LEN);
		s += sum16((void *)l4, L4_LEN / 2);
		put_l4_csum(l4, syn, s);
	} else {
		__u8 *ip = data + ETH_LEN;
		__u8 *l4 = ip + IP6_LEN;

		if ((void *)(l4 + L4_LEN) > end)
			return XDP_ABORTED;
		*(__u32 *)(ip + 12) = bpf_htonl(src);
		ip[6] = l4p;
		write_l4(l4, syn);
		s = sum16((void *)(ip + 8), 16) + bpf_htons(l4p) + bpf_htons(L4_LEN);
		s += sum16((void *)l4, L4_LEN / 2);
		put_l4_csum(l4, syn, s);
	}
	return XDP_TX;
}
