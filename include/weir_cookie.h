/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * SYN cookies: the pure parts of answering a SYN from XDP, shared by the
 * BPF data path and the host tests. No BPF helpers: the cookie itself
 * comes from the kernel (bpf_tcp_raw_gen_syncookie_ipv4/6, the kernel's
 * own secret), and everything around it is here: the SYN's options read,
 * the SYN-ACK's options laid out, the timestamp that carries the options
 * the cookie cannot, and the Internet checksum.
 *
 * The timestamp encoding is the kernel's (net/ipv4/syncookies.c): the low
 * 6 bits of the SYN-ACK's TSval hold the client's window scale (0xf: none),
 * SACK permitted (bit 4) and ECN (bit 5); the client echoes TSval in its
 * ACK and the kernel's cookie check decodes them from TSecr. The kernel
 * subtracts its per-connection timestamp offset first, which is 0 only
 * with net.ipv4.tcp_timestamps = 2: otherwise no timestamp is sent and the
 * connection goes without window scaling and SACK, as a kernel cookie
 * without timestamps does.
 */
#ifndef WEIR_COOKIE_H
#define WEIR_COOKIE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* TCP option kinds. */
#define WR_TCPOPT_EOL		0
#define WR_TCPOPT_NOP		1
#define WR_TCPOPT_MSS		2
#define WR_TCPOPT_WSCALE	3
#define WR_TCPOPT_SACK_PERM	4
#define WR_TCPOPT_TS		8

/* IP protocol number of TCP, for the pseudo-header. */
#define WR_IPPROTO_TCP_NR	6
/* The longest TCP header: doff 15. */
#define WR_TCP_MAXHDR		60
/*
 * The SYN-ACK's TCP header: 20 bytes and MSS, SACK-permitted + TS, WS (NOPs
 * for what is off); without a timestamp nothing but MSS can come back, so
 * 20 bytes and MSS alone.
 */
#define WR_SYNACK_TCPLEN	40
#define WR_SYNACK_TCPLEN_MIN	24
/* Options walked in a SYN before giving up (each is at least one byte). */
#define WR_TCP_MAXOPTS		40

/* The kernel's timestamp option bits (net/ipv4/syncookies.c). */
#define WR_TS_OPT_WSCALE_MASK	0xf
#define WR_TS_OPT_SACK		(1 << 4)
#define WR_TS_OPT_ECN		(1 << 5)
#define WR_TSBITS		6
#define WR_TSMASK		((1u << WR_TSBITS) - 1)
/* The largest window scale (RFC 7323). */
#define WR_MAX_WSCALE		14

/* What a SYN asked for. */
struct wr_synopts {
	__u32 tsval;		/* with saw_ts: the client's TSval, network order as read */
	__u16 mss;		/* 0: no MSS option */
	__u8 wscale;		/* with saw_ws */
	__u8 saw_ws;
	__u8 sack;
	__u8 saw_ts;
	__u8 pad[2];
};

/*
 * One option of a SYN's TCP header hdr (hl bytes, at most 60), the one
 * at offset *at (20 for the first): read into o, *at moved past it.
 * 1 to go on, 0 at the end. Malformed options end the walk; what was read
 * so far stands, as with the kernel's tcp_parse_options. One option per
 * call, so that the data path can walk them with bpf_loop and the
 * verifier checks one step, not every path through forty.
 */
static __always_inline int wr_syn_option(const __u8 *hdr, __u32 hl, __u32 *at,
					 struct wr_synopts *o)
{
	__u32 i = *at;
	__u8 kind, olen;

	if (i >= hl || i >= WR_TCP_MAXHDR)
		return 0;
	kind = hdr[i & 63];
	if (kind == WR_TCPOPT_EOL)
		return 0;
	if (kind == WR_TCPOPT_NOP) {
		*at = i + 1;
		return 1;
	}
	if (i + 1 >= hl)
		return 0;
	olen = hdr[(i + 1) & 63];
	if (olen < 2 || i + olen > hl)
		return 0;
	if (kind == WR_TCPOPT_MSS && olen == 4) {
		o->mss = (__u16)hdr[(i + 2) & 63] << 8 | hdr[(i + 3) & 63];
	} else if (kind == WR_TCPOPT_WSCALE && olen == 3) {
		o->wscale = hdr[(i + 2) & 63];
		if (o->wscale > WR_MAX_WSCALE)
			o->wscale = WR_MAX_WSCALE;
		o->saw_ws = 1;
	} else if (kind == WR_TCPOPT_SACK_PERM && olen == 2) {
		o->sack = 1;
	} else if (kind == WR_TCPOPT_TS && olen == 10) {
		o->tsval = (__u32)hdr[(i + 2) & 63] << 24 | (__u32)hdr[(i + 3) & 63] << 16 |
			   (__u32)hdr[(i + 4) & 63] << 8 | hdr[(i + 5) & 63];
		o->saw_ts = 1;
	}
	*at = i + olen;
	return 1;
}

/* Every option of a SYN's TCP header hdr (hl bytes), for host code. */
static inline void wr_syn_options(const __u8 *hdr, __u32 hl, struct wr_synopts *o)
{
	__u32 at = 20;
	int n;

	__builtin_memset(o, 0, sizeof(*o));
	for (n = 0; n < WR_TCP_MAXOPTS; n++)
		if (!wr_syn_option(hdr, hl, &at, o))
			break;
}

/* weir_config.cookie_flags: what the kernel's cookie check will accept. */
enum weir_cookie_flags {
	WEIR_CK_TS = 1 << 0,		/* send timestamps (tcp_timestamps = 2) */
	WEIR_CK_SACK = 1 << 1,	/* tcp_sack on */
	WEIR_CK_WSCALE = 1 << 2,	/* tcp_window_scaling on */
};

/*
 * The SYN-ACK's TSval at now_ms (the kernel's TCP clock, milliseconds of
 * CLOCK_MONOTONIC) carrying the options agreed: the kernel's
 * cookie_init_timestamp, never ahead of the clock.
 */
static __always_inline __u32 wr_cookie_tsval(__u32 now_ms, const struct wr_synopts *o,
					     __u32 flags)
{
	__u32 opts = WR_TS_OPT_WSCALE_MASK, ts;

	if (o->saw_ws && (flags & WEIR_CK_WSCALE))
		opts = o->wscale & WR_TS_OPT_WSCALE_MASK;
	if (o->sack && (flags & WEIR_CK_SACK))
		opts |= WR_TS_OPT_SACK;
	ts = (now_ms & ~WR_TSMASK) | opts;
	if ((__s32)(ts - now_ms) > 0)
		ts -= 1u << WR_TSBITS;
	return ts;
}

static __always_inline void wr_put32(__u8 *p, __u32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

/* The SYN-ACK's TCP header length for a SYN with options o under flags. */
static __always_inline __u32 wr_synack_tcplen(const struct wr_synopts *o, __u32 flags)
{
	return o->saw_ts && (flags & WEIR_CK_TS) ? WR_SYNACK_TCPLEN : WR_SYNACK_TCPLEN_MIN;
}

/*
 * The SYN-ACK's option bytes at p (wr_synack_tcplen() - 20 of them), in
 * the kernel's order: MSS, then SACK-permitted + TS (NOP NOP when no
 * SACK), then NOP + window scale (NOPs when the client sent none or
 * scaling is off); without a timestamp MSS alone. Options the kernel would
 * not accept back from the cookie are left out.
 */
static __always_inline void wr_synack_options(__u8 *p, __u16 mss, const struct wr_synopts *o,
					      __u32 flags, __u32 tsval, __u8 wscale)
{
	int ts = o->saw_ts && (flags & WEIR_CK_TS);
	/* Without a timestamp the cookie cannot carry SACK or the scale: both off. */
	int sack = ts && o->sack && (flags & WEIR_CK_SACK);
	int ws = ts && o->saw_ws && (flags & WEIR_CK_WSCALE);

	p[0] = WR_TCPOPT_MSS;
	p[1] = 4;
	p[2] = mss >> 8;
	p[3] = mss;
	if (!ts)
		return;
	if (sack) {
		p[4] = WR_TCPOPT_SACK_PERM;
		p[5] = 2;
	} else {
		p[4] = WR_TCPOPT_NOP;
		p[5] = WR_TCPOPT_NOP;
	}
	p[6] = WR_TCPOPT_TS;
	p[7] = 10;
	wr_put32(p + 8, tsval);
	wr_put32(p + 12, o->tsval);
	p[16] = WR_TCPOPT_NOP;
	if (ws) {
		p[17] = WR_TCPOPT_WSCALE;
		p[18] = 3;
		p[19] = wscale;
	} else {
		p[17] = WR_TCPOPT_NOP;
		p[18] = WR_TCPOPT_NOP;
		p[19] = WR_TCPOPT_NOP;
	}
}

/* Fold a 32-bit ones' complement sum to 16 bits. */
static __always_inline __u16 wr_csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

/*
 * The ones' complement sum of n bytes at p (n even, at most 80), as
 * big-endian 16-bit words, added to sum. Each word is at most 0xffff and
 * at most 40 of them are added, so the 32-bit sum never overflows.
 */
static __always_inline __u32 wr_csum_add(__u32 sum, const __u8 *p, __u32 n)
{
	__u32 i;

	for (i = 0; i < 80; i += 2) {
		if (i >= n)
			break;
		sum += (__u32)p[i] << 8 | p[i + 1];
	}
	return sum;
}

/* The pseudo-header sum of TCP over IPv4 (addresses as 8 bytes, network order). */
static __always_inline __u32 wr_pseudo4(const __u8 *addrs, __u32 tcplen)
{
	return wr_csum_add(0, addrs, 8) + WR_IPPROTO_TCP_NR + tcplen;
}

/* The pseudo-header sum of TCP over IPv6 (addresses as 32 bytes). */
static __always_inline __u32 wr_pseudo6(const __u8 *addrs, __u32 tcplen)
{
	return wr_csum_add(0, addrs, 32) + WR_IPPROTO_TCP_NR + tcplen;
}

#endif /* WEIR_COOKIE_H */
