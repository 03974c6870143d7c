/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `weir auto`'s view of the traffic: the capture ring's samples (a copy
 * of at most a budget of judged packets a second, bpf/capture.h), each
 * reduced to a struct wr_fp_pkt, kept in a ring; and every traffic class's
 * rate, estimated from them. The data path counts no class: with auto on
 * it pays only the capture's sampling, as sFlow's switches do. A class is
 * a (protocol, destination port) pair ("udp/53"; "icmp" for a protocol
 * without ports) or a destination address ("198.18.0.1").
 *
 * The estimate. At each reading the caller gives the data path's totals
 * (every IP packet and byte it judged, monotonic); what they grew by since
 * the last reading is shared among the classes in the proportions of the
 * samples judged in the same interval (packets by count, bytes by the
 * samples' wire lengths), and added to each class's estimated counters,
 * which are monotonic like real ones and go to the detector
 * (auto/baseline.h). The capture takes one packet in N at random (N set as
 * the rate moves, so that the budget is seldom reached), so the interval's
 * samples are a fair draw of its packets, and a flood is its class's at
 * the first reading after its first packets. An interval with fewer than
 * WR_SAMPLER_MIN_SHARE samples (quiet traffic, or a second whose budget
 * ran out) is shared by the samples of the last window instead (default
 * 1 s). A class's share is right to within about the square root of its
 * samples.
 *
 * Pure computation over the caller's samples, totals and times: no clock,
 * no I/O (auto.c feeds it from the capture session), so tests inject all.
 */
#ifndef WEIR_USER_AUTO_SAMPLER_H
#define WEIR_USER_AUTO_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "auto/fingerprint.h"

/* A class key's kind, in its top two bits; the rest says which. */
#define WR_AUTO_KEY_PORT	(1ULL << 62)	/* | proto << 16 | dport */
#define WR_AUTO_KEY_DST		(2ULL << 62)	/* | an IPv4 address, or 61 bits of an IPv6 one's hash */
#define WR_AUTO_KEY_KIND	(3ULL << 62)
/* A class name's room, the NUL included: an IPv6 address's text at most. */
#define WR_AUTO_NAME_LEN	48
/* Samples an interval needs to be shared by its own; with fewer, by the window's. */
#define WR_SAMPLER_MIN_SHARE	16
/* Classes one sampler estimates at most; a sample of further ones counts for none. */
#define WR_AUTO_CLASSES_MAX	4096

/* p's (protocol, destination port) class, and its destination's. */
uint64_t wr_auto_port_key(const struct wr_fp_pkt *p);
uint64_t wr_auto_dst_key(const struct wr_fp_pkt *p);
/* The name of p's class key (one of the two above). */
void wr_auto_key_name(uint64_t key, const struct wr_fp_pkt *p, char *buf, size_t len);

struct wr_sampler;

/*
 * A sampler keeping the last ring samples (a power of two, 64 to 2^20)
 * and sharing totals by the samples of the last window_ns (1 ms to 60 s):
 * 0, -EINVAL or -ENOMEM.
 */
int wr_sampler_new(size_t ring, uint64_t window_ns, struct wr_sampler **out);
void wr_sampler_free(struct wr_sampler *s);
/*
 * One sample: the data path's time it was judged at (ts_ns, the capture
 * header's), its length on the wire, what it says. Samples come in the
 * ring's order; one older than the newest is kept, and counts where its
 * time puts it.
 */
void wr_sampler_add(struct wr_sampler *s, uint64_t ts_ns, uint32_t wire_len,
		    const struct wr_fp_pkt *p);
/* Samples added in all, and those that no class had room for. */
uint64_t wr_sampler_added(const struct wr_sampler *s);
uint64_t wr_sampler_unclassed(const struct wr_sampler *s);

typedef void (*wr_sampler_fn)(void *ctx, uint64_t key, const char *name, uint64_t packets,
			      uint64_t bytes, uint64_t at_ns);
/*
 * A reading of the totals at now_ns: their growth since the last reading
 * shared among the classes by the samples (above); fn gets every class
 * the sampler knows, with its estimated monotonic counters at now_ns. A
 * class first sampled since the last reading is given first with zero
 * counters at that reading's time (it had none then), so that its first
 * interval is already a rate to the detector. The first
 * reading, and one whose totals went back (the counters were reset), only
 * set the reference. 0, or -EINVAL for a time before the last reading's.
 */
int wr_sampler_read(struct wr_sampler *s, uint64_t total_pkts, uint64_t total_bytes,
		    uint64_t now_ns, wr_sampler_fn fn, void *ctx);
/* wr_sampler_take's which */
enum {
	WR_TAKE_ALL,		/* every sample */
	/*
	 * Only those weir passed (no WR_FP_DROPPED): a before-sample is what
	 * the host served, not an earlier flood that a rule already dropped.
	 */
	WR_TAKE_PASSED,
};

/*
 * The samples of class key judged in [from_ns, to_ns), oldest first, at
 * most max of them into out (the newest max, if there are more), all or
 * only the passed ones (which): the number copied. key 0: every class's.
 */
size_t wr_sampler_take(const struct wr_sampler *s, uint64_t key, uint64_t from_ns,
		       uint64_t to_ns, int which, struct wr_fp_pkt *out, size_t max);

#endif /* WEIR_USER_AUTO_SAMPLER_H */
