// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The real BPF object through bpf_prog_test_run_opts: crafted frames in,
 * verdicts and counters out.
 *
 * Each case loads a fresh skeleton (so maps start empty) with the manual
 * clock, a small wr_state and pinning switched off, so nothing under
 * /sys/fs/bpf is read or written. Rule sets are written the way the
 * controller does it: into the inactive wr_rulesets entry, then
 * wr_config.active is flipped. The harness that does so is bpf_harness.h.
 */
#include "bpf_harness.h"
#include "weir_reflect.h"

/* First agg_slot handed out; not 0, so slot/index mix-ups show. */
#define AGG_BASE	5

/* ------------------------------------------------------------------------ */
/* Rules and maps                                                           */
/* ------------------------------------------------------------------------ */

/* Start the next rule set empty; its rules still get uids and slots of their own. */
static void clear_rules(void)
{
	memset(&rs.rules, 0, sizeof(rs.rules));
	rs.nr_rules = 0;
}

/* A token bucket of rate per second; rule-wide ones get the next agg_slot. */
static struct weir_limit *add_limit(struct weir_rule *r, __u64 rate, __u64 burst, int cost,
				      int key, int plen4, int plen6)
{
	return new_limit(r, WEIR_ALGO_GCRA, rate, 0, burst, cost, key, plen4, plen6);
}

/* Per-source packets/s limit, the common case. */
static struct weir_limit *per_src(struct weir_rule *r, __u64 rate, __u64 burst)
{
	return add_limit(r, rate, burst, WEIR_COST_PKT, WEIR_KEY_SRC, 32, 128);
}

static struct weir_limit *per_all(struct weir_rule *r, __u64 rate, __u64 burst)
{
	return add_limit(r, rate, burst, WEIR_COST_PKT, WEIR_KEY_ALL, 0, 0);
}

static __u64 unit_of(const struct weir_limit *l)
{
	return wr_gcra_inc(l->interval_fp, 1);
}

static void match_dport(struct weir_rule *r, __u16 lo, __u16 hi)
{
	r->match |= WEIR_M_DPORT;
	r->dport_lo = lo;
	r->dport_hi = hi;
}

/* ICMP (proto WR_IPPROTO_ICMP) or ICMPv6 (WR_IPPROTO_ICMPV6) of one type. */
static void match_icmp(struct weir_rule *r, __u8 proto, __u8 type)
{
	match_proto(r, proto);
	r->match |= WEIR_M_ICMPTYPE;
	r->icmp_type = type;
}

static void match_src6(struct weir_rule *r, const __u8 *net, unsigned int plen)
{
	int i;

	r->match |= WEIR_M_SRC | WEIR_M_FAMILY;
	r->family = 6;
	r->src_plen = plen;
	memcpy(r->src_net, net, 16);
	for (i = 0; i < 4; i++) {
		r->src_mask[i] = wr_prefix_word(plen, i);
		r->src_net[i] &= r->src_mask[i];
	}
}

/* The per-source bucket of limit li of rule r for an IPv4 source (host order). */
static int state_get4(const struct weir_rule *r, __u32 li, __u32 src, struct weir_state *st)
{
	struct weir_key k = key4(r, li, src);

	return state_find(&k, st);
}

static void list_add4(struct bpf_map *m, __u32 net, __u32 plen)
{
	list_put4(m, net, plen, 0);
}

static void list_add6(struct bpf_map *m, const __u8 *net, __u32 plen)
{
	list_put6(m, net, plen, 0);
}

/*
 * Every frame the program saw ends in exactly one of: non-IP (passed
 * untouched), passed, dropped. And every frame is non-IP, parsed or
 * malformed.
 */
static void check_balance(void)
{
	__u64 pk = g(WEIR_G_PACKETS), non = g(WEIR_G_NON_IP), par = g(WEIR_G_PARSED),
	      mal = g(WEIR_G_MALFORMED), pas = g(WEIR_G_PASSED), dro = g(WEIR_G_DROPPED);

	CHECK(pk == non + par + mal, "PACKETS %llu != NON_IP %llu + PARSED %llu + MALFORMED %llu",
	      (unsigned long long)pk, (unsigned long long)non, (unsigned long long)par,
	      (unsigned long long)mal);
	CHECK(pk == non + pas + dro, "PACKETS %llu != NON_IP %llu + PASSED %llu + DROPPED %llu",
	      (unsigned long long)pk, (unsigned long long)non, (unsigned long long)pas,
	      (unsigned long long)dro);
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                   */
/* ------------------------------------------------------------------------ */

/* Ready-made frames. */
static void udp4(struct frame *f, __u32 src, __u16 dport)
{
	struct frame l;

	l4_udp(&l, dport, 18);
	frame4(f, src, WR_IPPROTO_UDP, &l);
}

/* UDP/IPv4 whose IP total length (the bytes/s cost) is l3len. */
static void udp4_len(struct frame *f, __u32 src, __u16 dport, size_t l3len)
{
	struct frame l;

	l4_udp(&l, dport, l3len - 28);
	frame4(f, src, WR_IPPROTO_UDP, &l);
}

static void icmp4(struct frame *f, __u32 src, __u8 type)
{
	struct frame l;

	l4_icmp(&l, type, 32);
	frame4(f, src, WR_IPPROTO_ICMP, &l);
}

static void udp6(struct frame *f, const __u8 *src, __u16 dport)
{
	struct frame l;

	l4_udp(&l, dport, 18);
	frame6(f, src, WR_IPPROTO_UDP, &l);
}

static void arp(struct frame *f)
{
	eth(f, 0x0806, 0, NULL);
	put16(f, 1);		/* Ethernet */
	put16(f, WR_ETH_P_IP);
	put8(f, 6);
	put8(f, 4);
	put16(f, 1);		/* request */
	zeros(f, 6);
	put32(f, IP4(198, 18, 0, 2));
	zeros(f, 6);
	put32(f, IP4(198, 18, 0, 1));
}

/* A handful of malformed frames; returns how many were built into fs. */
static int malformed_frames(struct frame *fs)
{
	struct frame l;
	int n = 0;

	/* TCP/IPv4 cut after 30 bytes of IP */
	l4_tcp(&l, 80, WEIR_TCP_SYN, 5);
	frame4(&fs[n], IP4(198, 18, 0, 9), WR_IPPROTO_TCP, &l);
	fs[n].n = 14 + 30;
	n++;
	/* IHL 4 */
	frame4(&fs[n], IP4(198, 18, 0, 9), WR_IPPROTO_TCP, &l);
	fs[n].b[14] = 0x44;
	n++;
	/* IPv6 payload length larger than the frame */
	{
		__u8 a[16];

		addr6(a, 9, 9);
		udp6(&fs[n], a, 53);
		fs[n].b[18] = 0x02;
		n++;
	}
	/* three VLAN tags */
	l4_udp(&l, 53, 10);
	eth(&fs[n], WR_ETH_P_IP, 3, TAG_3);
	ip4(&fs[n], IP4(198, 18, 0, 9), WR_IPPROTO_UDP, 5, 0, 0, &l);
	n++;
	/* UDP length 0 */
	l.b[4] = 0;
	l.b[5] = 0;
	frame4(&fs[n], IP4(198, 18, 0, 9), WR_IPPROTO_UDP, &l);
	n++;
	return n;
}

/* ------------------------------------------------------------------------ */
/* Running                                                                  */
/* ------------------------------------------------------------------------ */

/* One UDP packet from each of n sources 198.18.<net + i / 250>.<i % 250>; how many passed. */
static int xmit_from_sources(int n, int net)
{
	struct frame f;
	int i, passed = 0;

	for (i = 0; i < n; i++) {
		udp4(&f, IP4(198, 18, net + i / 250, i % 250), 53);
		passed += xmit(&f) == 1;
	}
	return passed;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * DP_CASE(name) { body } defines and registers the case name() (HARNESS_CASE):
 * a fresh object, the body, the global counters checked to balance, unload.
 */
#define DP_CASE(name) HARNESS_CASE(name)

DP_CASE(dp_protocols_pass_without_rules)
{
	struct frame f;
	__u8 a[16];

	addr6(a, 1, 1);
	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit(&f), 1);
	tcp4(&f, SRC_A, 80, WEIR_TCP_SYN);
	CHECK_EQ(xmit(&f), 1);
	icmp4(&f, SRC_A, 8);
	CHECK_EQ(xmit(&f), 1);
	udp6(&f, a, 53);
	CHECK_EQ(xmit(&f), 1);
	tcp6(&f, a, 443, WEIR_TCP_SYN);
	CHECK_EQ(xmit(&f), 1);
	icmp6(&f, a, 128, 64);
	CHECK_EQ(xmit(&f), 1);
	CHECK_EQ(g(WEIR_G_PACKETS), 6);
	CHECK_EQ(g(WEIR_G_PARSED), 6);
	CHECK_EQ(g(WEIR_G_NO_RULE), 6);
	CHECK_EQ(g(WEIR_G_PASSED), 6);
	CHECK_EQ(g(WEIR_G_DROPPED), 0);
	CHECK_EQ(g(WEIR_G_MALFORMED), 0);
	CHECK_EQ(g(WEIR_G_FAULT), 0);
}

DP_CASE(dp_malformed_dropped_by_default)
{
	struct frame fs[8];
	int i, n;

	n = malformed_frames(fs);
	for (i = 0; i < n; i++)
		CHECK(xmit(&fs[i]) == 0, "malformed frame %d passed", i);
	CHECK_EQ(g(WEIR_G_MALFORMED), n);
	CHECK_EQ(g(WEIR_G_DROPPED), n);
	CHECK_EQ(g(WEIR_G_PARSED), 0);
	CHECK_EQ(g(WEIR_G_PASSED), 0);
}

DP_CASE(dp_malformed_passed_with_malformed_pass)
{
	struct frame fs[8];
	int i, n;

	CFG_SET(malformed_pass, 1);
	n = malformed_frames(fs);
	for (i = 0; i < n; i++)
		CHECK(xmit(&fs[i]) == 1, "malformed frame %d dropped", i);
	CHECK_EQ(g(WEIR_G_MALFORMED), n);
	CHECK_EQ(g(WEIR_G_DROPPED), 0);
	CHECK_EQ(g(WEIR_G_PARSED), 0);
	/* a passed frame is counted as passed, as it is under the kill switch */
	CHECK_EQ(g(WEIR_G_PASSED), n);
}

DP_CASE(dp_arp_passes_as_non_ip)
{
	struct weir_rule *r;
	struct weir_limit *l;
	struct frame f;

	/* a rule matching every IP packet, one packet in all */
	r = add_rule(WEIR_ACT_DROP);
	l = per_all(r, 1, 1);
	commit();
	arp(&f);
	CHECK_EQ(xmit_n(&f, 5), 5);
	CHECK_EQ(g(WEIR_G_NON_IP), 5);
	CHECK_EQ(g(WEIR_G_PARSED), 0);
	CHECK_EQ(rstat(0).passed_pkts, 0);
	CHECK_EQ(agg_get(l).tat, 0);
	/* the rule is live: IP is limited */
	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit_n(&f, 3), 1);
	CHECK_EQ(g(WEIR_G_DROPPED), 2);
}

/*
 * f once through the TC entry as a GSO super-packet of segs segments (the
 * __sk_buff that test_run takes sets skb_shinfo's gso_segs and gso_size).
 */
static int xmit_tc_gso(const struct frame *f, __u32 segs)
{
	static __u8 out[sizeof(f->b) + 512];
	struct __sk_buff ctx = { .gso_segs = segs, .gso_size = segs > 1 ? 100 : 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->b, .data_size_in = f->n, .data_out = out,
		    .data_size_out = sizeof(out), .ctx_in = &ctx, .ctx_size_in = sizeof(ctx),
		    .repeat = 1);

	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.weir_tc), &o)) {
		CHECK_FAIL("tc test_run with gso_segs %u: %s", segs, strerror(errno));
		return -1;
	}
	return o.retval == TC_ACT_OK ? 1 : o.retval == TC_ACT_SHOT ? 0 : -2;
}

/*
 * TC sees GRO/GSO super-packets: a packet limit charges each the segments
 * it carries, as XDP (before GRO) would have seen them one by one; a byte
 * limit its real length. So a rule means the same in every mode.
 */
DP_CASE(dp_tc_gso_charged_per_segment)
{
	struct weir_rule *r;
	struct frame f;

	/* 1 pps per source, burst 10: ten segments' worth, then nothing */
	r = add_rule(WEIR_ACT_DROP);
	per_src(r, 1, 10);
	commit();
	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit_tc_gso(&f, 4), 1);	/* 4 of 10 */
	CHECK_EQ(xmit_tc_gso(&f, 4), 1);	/* 8 of 10 */
	CHECK_EQ(xmit_tc_gso(&f, 4), 0);	/* 12 would be over: refused, nothing charged */
	CHECK_EQ(xmit_tc_gso(&f, 2), 1);	/* 10 of 10 */
	CHECK_EQ(xmit_tc_gso(&f, 1), 0);
	CHECK_EQ(rstat(0).passed_pkts, 3);
	CHECK_EQ(rstat(0).dropped_pkts, 2);
	/* a plain skb (gso_segs 0 or 1) is one packet, as before */
	udp4(&f, SRC_B, 53);
	CHECK_EQ(xmit_tc_gso(&f, 0), 1);
	CHECK_EQ(xmit_tc_gso(&f, 1), 1);
	CHECK_EQ(xmit_tc_gso(&f, 8), 1);	/* 10 of 10 */
	CHECK_EQ(xmit_tc_gso(&f, 1), 0);
}

/* IPv6 with No Next Header and payload length 0 is a valid packet: it passes. */
DP_CASE(dp_ipv6_no_next_header_empty_passes)
{
	struct frame f, l = { .n = 0 };
	__u8 a[16];

	addr6(a, 3, 3);
	eth_ip6(&f, a, WR_IPPROTO_NONE, 64, 0, &l);
	CHECK_EQ(xmit(&f), 1);
	CHECK_EQ(g(WEIR_G_PARSED), 1);
	CHECK_EQ(g(WEIR_G_MALFORMED), 0);
	/* the same 0 with a next header that needs a payload is malformed, dropped */
	eth_ip6(&f, a, WR_IPPROTO_UDP, 64, 0, &l);
	CHECK_EQ(xmit(&f), 0);
	CHECK_EQ(g(WEIR_G_MALFORMED), 1);
}

DP_CASE(dp_nd_passes_unless_named)
{
	struct weir_rule *r;
	struct frame f;
	__u8 denied[16];

	/* every ICMPv6 packet, per source 1 pps burst 1 */
	r = add_rule(WEIR_ACT_DROP);
	r->match = WEIR_M_FAMILY;
	r->family = 6;
	match_proto(r, WR_IPPROTO_ICMPV6);
	per_src(r, 1, 1);
	commit();
	/* another source is denied; LL6 is not */
	addr6(denied, 9, 9);
	list_add6(skel->maps.wr_deny6, denied, 128);
	CFG_SET(lists, WEIR_L_DENY6);

	icmp6(&f, LL6, 135, 255);	/* NS */
	CHECK_EQ(xmit_n(&f, 5), 5);
	icmp6(&f, LL6, 136, 255);	/* NA */
	CHECK_EQ(xmit_n(&f, 5), 5);
	icmp6(&f, LL6, 134, 255);	/* RA */
	CHECK_EQ(xmit_n(&f, 5), 5);
	CHECK_EQ(g(WEIR_G_ND), 15);
	CHECK_EQ(g(WEIR_G_NO_RULE), 15);
	CHECK_EQ(g(WEIR_G_DENIED), 0);
	CHECK_EQ(rstat(0).passed_pkts, 0);
	CHECK_EQ(state_count(NULL), 0);
	/* An explicit deny wins over the ND pass: NS, NA and RA from there are dropped. */
	icmp6(&f, denied, 135, 255);
	CHECK_EQ(xmit_n(&f, 2), 0);
	icmp6(&f, denied, 136, 255);
	CHECK_EQ(xmit(&f), 0);
	icmp6(&f, denied, 134, 255);
	CHECK_EQ(xmit(&f), 0);
	CHECK_EQ(g(WEIR_G_DENIED), 4);
	CHECK_EQ(g(WEIR_G_ND), 19);
	/* type 135 with hop limit 64 is not ND: limited like any ICMPv6 */
	icmp6(&f, LL6, 135, 64);
	CHECK_EQ(xmit_n(&f, 3), 1);
	CHECK_EQ(rstat(0).dropped_pkts, 2);
	/* ... and a real NS from the same source still passes */
	icmp6(&f, LL6, 135, 255);
	CHECK_EQ(xmit_n(&f, 3), 3);
	CHECK_EQ(g(WEIR_G_ND), 22);
}

DP_CASE(dp_nd_limited_when_named)
{
	struct weir_rule *r;
	struct frame f;

	r = add_rule(WEIR_ACT_DROP);
	match_icmp(r, WR_IPPROTO_ICMPV6, 135);
	per_src(r, 1, 1);
	commit();
	icmp6(&f, LL6, 135, 255);
	CHECK_EQ(xmit_n(&f, 3), 1);
	icmp6(&f, LL6, 136, 255);
	CHECK_EQ(xmit_n(&f, 3), 3);
	CHECK_EQ(g(WEIR_G_ND), 6);
	CHECK_EQ(rstat(0).passed_pkts, 1);
	CHECK_EQ(rstat(0).dropped_pkts, 2);
	CHECK_EQ(g(WEIR_G_DROPPED), 2);
}

DP_CASE(dp_vlan_limited_like_untagged)
{
	struct weir_rule *r;
	struct frame f, l;

	r = add_rule(WEIR_ACT_DROP);
	match_proto(r, WR_IPPROTO_UDP);
	match_dport(r, 53, 53);
	per_src(r, 1, 2);
	commit();
	l4_udp(&l, 53, 10);
	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit_n(&f, 3), 2);
	eth(&f, WR_ETH_P_IP, 1, TAG_Q);
	ip4(&f, SRC_B, WR_IPPROTO_UDP, 5, 0, 0, &l);
	CHECK_EQ(xmit_n(&f, 3), 2);
	eth(&f, WR_ETH_P_IP, 2, TAG_QINQ);
	ip4(&f, SRC_C, WR_IPPROTO_UDP, 5, 0, 0, &l);
	CHECK_EQ(xmit_n(&f, 3), 2);
	/* tagged or not, SRC_A has one bucket */
	eth(&f, WR_ETH_P_IP, 2, TAG_QINQ);
	ip4(&f, SRC_A, WR_IPPROTO_UDP, 5, 0, 0, &l);
	CHECK_EQ(xmit(&f), 0);
	/* a tagged frame to another port is not matched */
	eth(&f, WR_ETH_P_IP, 1, TAG_Q);
	l4_udp(&l, 54, 10);
	ip4(&f, SRC_A, WR_IPPROTO_UDP, 5, 0, 0, &l);
	CHECK_EQ(xmit(&f), 1);
	CHECK_EQ(rstat(0).passed_pkts, 6);
	CHECK_EQ(rstat(0).dropped_pkts, 4);
	/* the cost in bytes is the L3 length, tags not included */
	CHECK_EQ(rstat(0).passed_bytes, 2 * 46 + 4 * 38);
	CHECK_EQ(state_count(NULL), 3);
	CHECK_EQ(g(WEIR_G_NO_RULE), 1);
}

/* IPv6 payload: extension headers of these types, then UDP to dport. */
static void udp6_ext(struct frame *f, const __u8 *src, const __u8 *types, int n, __u16 fragoff,
		     __u16 dport)
{
	struct frame pl, l;
	int i;

	l4_udp(&l, dport, 20);
	pl.n = 0;
	for (i = 0; i < n; i++) {
		__u8 next = i + 1 < n ? types[i + 1] : WR_IPPROTO_UDP;

		put8(&pl, next);
		if (types[i] == WR_IPPROTO_FRAGMENT) {
			put8(&pl, 0);
			put16(&pl, fragoff);
			put32(&pl, 77);
		} else if (types[i] == WR_IPPROTO_AH) {
			put8(&pl, 16 / 4 - 2);
			zeros(&pl, 14);
		} else {
			put8(&pl, 0);
			zeros(&pl, 6);
		}
	}
	putn(&pl, l.b, l.n);
	frame6(f, src, n ? types[0] : WR_IPPROTO_UDP, &pl);
}

DP_CASE(dp_ipv6_extension_headers_matched)
{
	static const __u8 chain[] = { WR_IPPROTO_HOPOPTS, WR_IPPROTO_DSTOPTS, WR_IPPROTO_ROUTING,
				      WR_IPPROTO_FRAGMENT };
	static const __u8 ah[] = { WR_IPPROTO_AH };
	static const __u8 frag[] = { WR_IPPROTO_FRAGMENT };
	struct weir_rule *r;
	struct frame f;
	__u8 a[16], b[16], c[16];

	r = add_rule(WEIR_ACT_DROP);
	r->match = WEIR_M_FAMILY;
	r->family = 6;
	match_proto(r, WR_IPPROTO_UDP);
	match_dport(r, 53, 53);
	per_src(r, 1, 1);
	commit();
	addr6(a, 1, 1);
	addr6(b, 1, 2);
	addr6(c, 1, 3);
	/* four extension headers, a first fragment (M set): ports visible, matched */
	udp6_ext(&f, a, chain, 4, 1, 53);
	CHECK_EQ(xmit_n(&f, 3), 1);
	udp6_ext(&f, b, ah, 1, 0, 53);
	CHECK_EQ(xmit_n(&f, 3), 1);
	/* a non-first fragment has no ports: no rule */
	udp6_ext(&f, c, frag, 1, 100 << 3, 53);
	CHECK_EQ(xmit_n(&f, 3), 3);
	CHECK_EQ(g(WEIR_G_NO_RULE), 3);
	CHECK_EQ(rstat(0).passed_pkts, 2);
	CHECK_EQ(rstat(0).dropped_pkts, 4);
}

DP_CASE(dp_ipv4_fragments)
{
	struct weir_rule *r;
	struct frame first, later, l;

	r = add_rule(WEIR_ACT_DROP);
	match_proto(r, WR_IPPROTO_UDP);
	match_dport(r, 53, 53);
	per_src(r, 1, 1);
	commit();
	/* first fragment: MF, offset 0, the UDP header there */
	l4_udp(&l, 53, 1000);
	l.n = 8 + 200;
	eth_ip4(&first, SRC_A, WR_IPPROTO_UDP, 5, 0x2000, 0, &l);
	/* a later fragment, its payload starting with bytes that look like port 53 */
	l4_udp(&l, 53, 200);
	eth_ip4(&later, SRC_A, WR_IPPROTO_UDP, 5, 26, 0, &l);

	CHECK_EQ(xmit_n(&first, 2), 1);
	CHECK_EQ(xmit_n(&later, 5), 5);
	CHECK_EQ(g(WEIR_G_NO_RULE), 5);
	CHECK_EQ(rstat(0).passed_pkts, 1);
	CHECK_EQ(rstat(0).dropped_pkts, 1);

	/* a proto-only rule (new rule set, flipped in) matches later fragments */
	clear_rules();
	r = add_rule(WEIR_ACT_DROP);
	match_proto(r, WR_IPPROTO_UDP);
	per_src(r, 1, 1);
	commit();
	CHECK_EQ(xmit_n(&later, 3), 1);
	CHECK_EQ(g(WEIR_G_NO_RULE), 5);
	CHECK_EQ(rstat(0).passed_pkts, 1);
	CHECK_EQ(rstat(0).dropped_pkts, 2);
}

DP_CASE(dp_deny_list)
{
	struct frame f;
	__u8 bad[16], net[16], good[16];

	list_add4(skel->maps.wr_deny4, IP4(198, 18, 66, 0), 24);
	addr6(net, 0x0bad0000, 0);
	addr6(bad, 0x0bad0001, 5);	/* inside 2001:db8:bad::/48 */
	addr6(good, 0x0bae0000, 5);
	list_add6(skel->maps.wr_deny6, net, 48);

	/* lists bits clear: the tries are not consulted */
	udp4(&f, IP4(198, 18, 66, 7), 53);
	CHECK_EQ(xmit(&f), 1);
	udp6(&f, bad, 53);
	CHECK_EQ(xmit(&f), 1);
	CHECK_EQ(g(WEIR_G_DENIED), 0);

	CFG_SET(lists, WEIR_L_DENY4 | WEIR_L_DENY6);
	udp4(&f, IP4(198, 18, 66, 7), 53);
	CHECK_EQ(xmit_n(&f, 3), 0);
	tcp4(&f, IP4(198, 18, 66, 255), 22, WEIR_TCP_SYN);
	CHECK_EQ(xmit(&f), 0);
	udp4(&f, IP4(198, 18, 67, 7), 53);
	CHECK_EQ(xmit(&f), 1);
	udp6(&f, bad, 53);
	CHECK_EQ(xmit(&f), 0);
	udp6(&f, good, 53);
	CHECK_EQ(xmit(&f), 1);
	CHECK_EQ(g(WEIR_G_DENIED), 5);
	CHECK_EQ(g(WEIR_G_DROPPED), 5);
	CHECK_EQ(g(WEIR_G_PASSED), 4);
}

/*
 * Entries with a time to live: dropped up to the last ns before the expiry
 * (in the data path's clock, here the manual one), passed from it on; an
 * expired entry inside a live prefix does not hide the prefix, up to
 * WEIR_LIST_DEPTH nested expired entries.
 */
DP_CASE(dp_deny_ttl)
{
	struct frame f;
	__u8 net[16], a6[16], b6[16];
	__u32 i;

	CFG_SET(lists, WEIR_L_DENY4 | WEIR_L_DENY6);
	/* 198.18.70.7/32 for 10 s; 2001:db8:70::/48 for 5 s */
	list_put4(skel->maps.wr_deny4, IP4(198, 18, 70, 7), 32, T0 + 10 * SEC);
	addr6(net, 0x00700000, 0);
	addr6(a6, 0x00700000, 9);
	list_put6(skel->maps.wr_deny6, net, 48, T0 + 5 * SEC);
	udp4(&f, IP4(198, 18, 70, 7), 53);
	CHECK_EQ(xmit_n(&f, 3), 0);
	udp4(&f, IP4(198, 18, 70, 8), 53);
	CHECK_EQ(xmit(&f), 1);
	udp6(&f, a6, 53);
	CHECK_EQ(xmit(&f), 0);
	set_now(T0 + 5 * SEC - 1);
	CHECK_EQ(xmit(&f), 0);
	set_now(T0 + 5 * SEC);
	CHECK_EQ(xmit_n(&f, 2), 2);
	udp4(&f, IP4(198, 18, 70, 7), 53);
	set_now(T0 + 10 * SEC - 1);
	CHECK_EQ(xmit(&f), 0);
	set_now(T0 + 10 * SEC);
	CHECK_EQ(xmit_n(&f, 4), 4);
	CHECK_EQ(g(WEIR_G_DENIED), 6);

	/* An expired /32 in a live /24: the /24 still denies it. */
	set_now(T0 + 20 * SEC);
	list_put4(skel->maps.wr_deny4, IP4(198, 18, 71, 0), 24, 0);
	list_put4(skel->maps.wr_deny4, IP4(198, 18, 71, 7), 32, T0 + 15 * SEC);
	udp4(&f, IP4(198, 18, 71, 7), 53);
	CHECK_EQ(xmit(&f), 0);
	/* ... and a live /32 in an expired /24 denies only itself. */
	list_put4(skel->maps.wr_deny4, IP4(198, 18, 72, 0), 24, T0 + 15 * SEC);
	list_put4(skel->maps.wr_deny4, IP4(198, 18, 72, 7), 32, T0 + 30 * SEC);
	udp4(&f, IP4(198, 18, 72, 7), 53);
	CHECK_EQ(xmit(&f), 0);
	udp4(&f, IP4(198, 18, 72, 8), 53);
	CHECK_EQ(xmit(&f), 1);

	/* A live /16 under WEIR_LIST_DEPTH - 1 expired prefixes of 198.18.73.7: found. */
	list_put4(skel->maps.wr_deny4, IP4(198, 18, 0, 0), 16, 0);
	for (i = 0; i < WEIR_LIST_DEPTH - 1; i++)
		list_put4(skel->maps.wr_deny4, IP4(198, 18, 73, 7) & ~((1U << i) - 1), 32 - i,
			  T0 + SEC);
	udp4(&f, IP4(198, 18, 73, 7), 53);
	CHECK_EQ(xmit(&f), 0);
	/* One more expired level: past the lookups one packet makes, so it passes. */
	list_put4(skel->maps.wr_deny4, IP4(198, 18, 73, 0) & ~((1U << i) - 1), 32 - i, T0 + SEC);
	CHECK_EQ(xmit(&f), 1);

	/* A v6 /128 with a ttl inside an expired /48: expiry per entry. */
	addr6(b6, 0x00700000, 10);
	list_put6(skel->maps.wr_deny6, b6, 128, T0 + 25 * SEC);
	udp6(&f, b6, 53);
	CHECK_EQ(xmit(&f), 0);
	udp6(&f, a6, 53);
	CHECK_EQ(xmit(&f), 1);
	set_now(T0 + 25 * SEC);
	udp6(&f, b6, 53);
	CHECK_EQ(xmit(&f), 1);
}

/* An allow entry with a ttl bypasses the limits until it expires. */
DP_CASE(dp_allow_ttl)
{
	struct weir_rule *r;
	struct frame f;

	r = add_rule(WEIR_ACT_DROP);
	per_src(r, 1, 1);
	commit();
	list_put4(skel->maps.wr_allow4, SRC_A, 32, T0 + 2 * SEC);
	CFG_SET(lists, WEIR_L_ALLOW4);
	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit_n(&f, 10), 10);
	CHECK_EQ(g(WEIR_G_ALLOWED), 10);
	set_now(T0 + 2 * SEC);
	/* the rule's 1 pps, burst 1, from now on */
	CHECK_EQ(xmit_n(&f, 10), 1);
	CHECK_EQ(g(WEIR_G_ALLOWED), 10);
	CHECK_EQ(rstat(0).dropped_pkts, 9);
}

DP_CASE(dp_allow_list_bypasses_limits)
{
	struct weir_rule *r;
	struct frame f;
	__u8 net[16], ok6[16], other6[16];

	r = add_rule(WEIR_ACT_DROP);
	per_src(r, 1, 1);
	commit();
	list_add4(skel->maps.wr_allow4, SRC_A, 32);
	addr6(net, 0x00010000, 0);
	addr6(ok6, 0x00010000, 77);
	addr6(other6, 0x00020000, 77);
	list_add6(skel->maps.wr_allow6, net, 64);
	CFG_SET(lists, WEIR_L_ALLOW4 | WEIR_L_ALLOW6);

	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit_n(&f, 10), 10);
	udp6(&f, ok6, 53);
	CHECK_EQ(xmit_n(&f, 10), 10);
	CHECK_EQ(g(WEIR_G_ALLOWED), 20);
	CHECK_EQ(rstat(0).passed_pkts, 0);
	CHECK_EQ(state_count(NULL), 0);
	udp4(&f, SRC_B, 53);
	CHECK_EQ(xmit_n(&f, 10), 1);
	udp6(&f, other6, 53);
	CHECK_EQ(xmit_n(&f, 10), 1);
	CHECK_EQ(g(WEIR_G_ALLOWED), 20);
	CHECK_EQ(rstat(0).passed_pkts, 2);
	CHECK_EQ(rstat(0).dropped_pkts, 18);
	CHECK_EQ(g(WEIR_G_PASSED), 22);
}

DP_CASE(dp_deny_wins_over_allow)
{
	struct frame f;
	__u8 a[16];

	list_add4(skel->maps.wr_deny4, SRC_A, 32);
	list_add4(skel->maps.wr_allow4, IP4(198, 18, 1, 0), 24);
	addr6(a, 3, 3);
	list_add6(skel->maps.wr_deny6, a, 128);
	list_add6(skel->maps.wr_allow6, a, 128);
	CFG_SET(lists, WEIR_L_DENY4 | WEIR_L_DENY6 | WEIR_L_ALLOW4 | WEIR_L_ALLOW6);
	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit(&f), 0);
	udp6(&f, a, 53);
	CHECK_EQ(xmit(&f), 0);
	udp4(&f, SRC_B, 53);
	CHECK_EQ(xmit(&f), 1);
	CHECK_EQ(g(WEIR_G_DENIED), 2);
	CHECK_EQ(g(WEIR_G_ALLOWED), 1);
	CHECK_EQ(g(WEIR_G_DROPPED), 2);
}

DP_CASE(dp_match_dport_range)
{
	static const struct {
		__u16 port;
		int in;
	} t[] = { { 999, 0 }, { 1000, 1 }, { 1001, 1 }, { 1500, 1 }, { 1999, 1 }, { 2000, 1 },
		  { 2001, 0 }, { 0, 0 }, { 65535, 0 } };
	struct weir_rule *r;
	struct frame f;
	size_t i;
	__u64 in = 0;

	r = add_rule(WEIR_ACT_DROP);
	match_proto(r, WR_IPPROTO_UDP);
	match_dport(r, 1000, 2000);
	per_src(r, 1, 1);
	commit();
	/* a new source per packet, so only matching decides; then one repeat */
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		udp4(&f, IP4(198, 18, 10, i), t[i].port);
		CHECK_EQ(xmit(&f), 1);
		CHECK(xmit(&f) == !t[i].in, "port %u: second packet %s", t[i].port,
		      t[i].in ? "passed" : "dropped");
		in += t[i].in;
	}
	/* TCP to a port in range: proto does not match */
	tcp4(&f, SRC_A, 1500, WEIR_TCP_SYN);
	CHECK_EQ(xmit_n(&f, 3), 3);
	CHECK_EQ(rstat(0).passed_pkts, in);
	CHECK_EQ(rstat(0).dropped_pkts, in);
	CHECK_EQ(g(WEIR_G_NO_RULE), 2 * (sizeof(t) / sizeof(t[0]) - in) + 3);
}

DP_CASE(dp_match_src_cidr)
{
	static const struct {
		__u32 src;
		int in;
	} t4[] = { { IP4(198, 18, 3, 255), 0 }, { IP4(198, 18, 4, 0), 1 },
		   { IP4(198, 18, 5, 77), 1 }, { IP4(198, 18, 7, 255), 1 },
		   { IP4(198, 18, 8, 0), 0 }, { IP4(198, 19, 4, 1), 0 } };
	struct weir_rule *r4, *r6;
	struct frame f;
	__u8 net[16], a[16];
	size_t i;

	r4 = add_rule(WEIR_ACT_DROP);
	match_src4(r4, IP4(198, 18, 4, 0), 22);
	per_src(r4, 1, 1);
	r6 = add_rule(WEIR_ACT_DROP);
	addr6(net, 0x00070000, 0);
	match_src6(r6, net, 48);
	per_src(r6, 1, 1);
	commit();
	for (i = 0; i < sizeof(t4) / sizeof(t4[0]); i++) {
		udp4(&f, t4[i].src, 53);
		CHECK_EQ(xmit(&f), 1);
		CHECK(xmit(&f) == !t4[i].in, "source %08x: second packet %s", t4[i].src,
		      t4[i].in ? "passed" : "dropped");
	}
	CHECK_EQ(rstat(0).passed_pkts, 3);
	CHECK_EQ(rstat(0).dropped_pkts, 3);
	addr6(a, 0x0007ffff, 1);	/* 2001:db8:7:ffff::1, in the /48 */
	udp6(&f, a, 53);
	CHECK_EQ(xmit_n(&f, 2), 1);
	addr6(a, 0x00080000, 1);	/* 2001:db8:8::1, outside */
	udp6(&f, a, 53);
	CHECK_EQ(xmit_n(&f, 2), 2);
	CHECK_EQ(rstat(1).passed_pkts, 1);
	CHECK_EQ(rstat(1).dropped_pkts, 1);
	CHECK_EQ(rstat(0).passed_pkts, 3);
}

DP_CASE(dp_match_syn_without_ack)
{
	struct weir_rule *r;
	struct frame f;
	__u8 a[16];

	r = add_rule(WEIR_ACT_DROP);
	match_proto(r, WR_IPPROTO_TCP);
	r->match |= WEIR_M_TCPFLAGS;
	r->tcp_mask = WEIR_TCP_SYN | WEIR_TCP_ACK;
	r->tcp_value = WEIR_TCP_SYN;
	per_src(r, 1, 2);
	commit();
	tcp4(&f, SRC_A, 80, WEIR_TCP_SYN);
	CHECK_EQ(xmit_n(&f, 5), 2);
	tcp4(&f, SRC_A, 80, WEIR_TCP_ACK);
	CHECK_EQ(xmit_n(&f, 5), 5);
	tcp4(&f, SRC_A, 80, WEIR_TCP_SYN | WEIR_TCP_ACK);
	CHECK_EQ(xmit_n(&f, 3), 3);
	tcp4(&f, SRC_A, 80, WEIR_TCP_ACK | WEIR_TCP_PSH);
	CHECK_EQ(xmit_n(&f, 3), 3);
	/* SYN with ECN bits is still SYN-without-ACK */
	tcp4(&f, SRC_A, 80, WEIR_TCP_SYN | WEIR_TCP_ECE | WEIR_TCP_CWR);
	CHECK_EQ(xmit(&f), 0);
	addr6(a, 1, 1);
	tcp6(&f, a, 443, WEIR_TCP_SYN);
	CHECK_EQ(xmit_n(&f, 3), 2);
	tcp6(&f, a, 443, WEIR_TCP_ACK);
	CHECK_EQ(xmit_n(&f, 3), 3);
	CHECK_EQ(rstat(0).passed_pkts, 4);
	CHECK_EQ(rstat(0).dropped_pkts, 5);
	CHECK_EQ(g(WEIR_G_NO_RULE), 14);
}

DP_CASE(dp_match_icmp_type)
{
	struct weir_rule *r4, *r6;
	struct frame f;
	__u8 a[16];

	r4 = add_rule(WEIR_ACT_DROP);
	match_icmp(r4, WR_IPPROTO_ICMP, 8);
	per_src(r4, 1, 1);
	r6 = add_rule(WEIR_ACT_DROP);
	match_icmp(r6, WR_IPPROTO_ICMPV6, 128);
	per_src(r6, 1, 1);
	commit();
	icmp4(&f, SRC_A, 8);
	CHECK_EQ(xmit_n(&f, 3), 1);
	icmp4(&f, SRC_A, 0);
	CHECK_EQ(xmit_n(&f, 3), 3);
	icmp4(&f, SRC_A, 3);
	CHECK_EQ(xmit_n(&f, 3), 3);
	addr6(a, 1, 1);
	icmp6(&f, a, 128, 64);
	CHECK_EQ(xmit_n(&f, 3), 1);
	icmp6(&f, a, 129, 64);
	CHECK_EQ(xmit_n(&f, 3), 3);
	CHECK_EQ(rstat(0).passed_pkts, 1);
	CHECK_EQ(rstat(0).dropped_pkts, 2);
	CHECK_EQ(rstat(1).passed_pkts, 1);
	CHECK_EQ(rstat(1).dropped_pkts, 2);
	CHECK_EQ(g(WEIR_G_NO_RULE), 9);
}

DP_CASE(dp_multiple_rules_all_apply)
{
	struct weir_rule *ra, *rb;
	struct weir_state st = { 0 };
	struct frame f;
	const __u32 x = IP4(198, 18, 20, 1), y = IP4(198, 18, 21, 1), z = IP4(198, 18, 20, 2);

	ra = add_rule(WEIR_ACT_DROP);	/* all UDP, per source burst 3 */
	match_proto(ra, WR_IPPROTO_UDP);
	per_src(ra, 1, 3);
	rb = add_rule(WEIR_ACT_DROP);	/* everything from 198.18.20.0/24, burst 5 */
	match_src4(rb, IP4(198, 18, 20, 0), 24);
	per_src(rb, 1, 5);
	commit();
	/* x over TCP matches rb only: rb's burst of 5 */
	tcp4(&f, x, 80, WEIR_TCP_SYN);
	CHECK_EQ(xmit_n(&f, 6), 5);
	/* UDP from x matches both; rb refuses, so ra is not charged (not even created) */
	udp4(&f, x, 53);
	CHECK_EQ(xmit_n(&f, 3), 0);
	CHECK(state_get4(ra, 0, x, &st) != 0, "ra charged for packets rb refused");
	/* a second later rb has one back: one passes, charging both */
	set_now(T0 + SEC);
	CHECK_EQ(xmit_n(&f, 2), 1);
	CHECK(!state_get4(ra, 0, x, &st), "no ra bucket for x");
	CHECK_EQ(st.tat, T0 + 2 * SEC);
	CHECK(!state_get4(rb, 0, x, &st), "no rb bucket for x");
	CHECK_EQ(st.tat, T0 + 6 * SEC);
	/* z matches both, ra is the tighter: 3 pass, rb charged for those 3 only */
	udp4(&f, z, 53);
	CHECK_EQ(xmit_n(&f, 10), 3);
	CHECK(!state_get4(rb, 0, z, &st), "no rb bucket for z");
	CHECK_EQ(st.tat, T0 + SEC + 3 * SEC);
	/* y matches ra only */
	udp4(&f, y, 53);
	CHECK_EQ(xmit_n(&f, 5), 3);
	/* every drop is counted once, by the rule that refused */
	CHECK_EQ(rstat(0).passed_pkts, 1 + 3 + 3);
	CHECK_EQ(rstat(0).dropped_pkts, 7 + 2);
	CHECK_EQ(rstat(1).passed_pkts, 5 + 1 + 3);
	CHECK_EQ(rstat(1).dropped_pkts, 1 + 3 + 1);
	CHECK_EQ(g(WEIR_G_DROPPED), 9 + 5);
}

/*
 * A full set of WEIR_MAX_RULES rules. The data path's masks are over a
 * cell's list of candidates, not over rule indices, so the same pair of
 * rules (an enforcing limit and a dry-run one on UDP 9999) must give the
 * same verdicts and counters alone, as rules 0 and 1, and behind 251
 * others, as rules 253 and 254, where their positions in the cell are not
 * their indices. The last rule, a port-less TCP one, limits too.
 */
static void pair_on_9999(void)
{
	struct weir_rule *e = add_rule(WEIR_ACT_DROP), *d;

	match_proto(e, WR_IPPROTO_UDP);
	match_dport(e, 9999, 9999);
	per_src(e, 1, 4);
	d = add_rule(WEIR_ACT_DRYRUN);
	match_proto(d, WR_IPPROTO_UDP);
	match_dport(d, 9999, 9999);
	per_src(d, 1, 2);
}

DP_CASE(dp_full_rule_set_positions)
{
	struct weir_rule_stats alone[2], behind[2];
	struct frame f;
	int passed, i;

	pair_on_9999();
	commit();
	udp4(&f, SRC_A, 9999);
	passed = xmit_n(&f, 6);
	CHECK_EQ(passed, 4);
	alone[0] = rstat(0);
	alone[1] = rstat(1);

	clear_rules();
	for (i = 0; i < WEIR_MAX_RULES - 3; i++) {
		struct weir_rule *o = add_rule(WEIR_ACT_DROP);

		match_proto(o, WR_IPPROTO_UDP);
		/* Ports 9748 .. 10001 but the pair's 9999. */
		match_dport(o, 9748 + i + (i >= 251), 9748 + i + (i >= 251));
		per_src(o, 1, 1);
	}
	pair_on_9999();
	{
		struct weir_rule *t = add_rule(WEIR_ACT_DROP);

		match_proto(t, WR_IPPROTO_TCP);
		per_src(t, 1, 3);
	}
	CHECK_EQ(rs.nr_rules, WEIR_MAX_RULES);
	/* 9766 (rule 18) shares 9999's cell: the pair sits at positions 1 and 2 of its list. */
	CHECK_EQ(wr_port_bucket(9766), wr_port_bucket(9999));
	commit();
	udp4(&f, SRC_B, 9999);
	CHECK_EQ(xmit_n(&f, 6), passed);
	behind[0] = rstat(WEIR_MAX_RULES - 3);
	behind[1] = rstat(WEIR_MAX_RULES - 2);
	for (i = 0; i < 2; i++) {
		CHECK(behind[i].passed_pkts == alone[i].passed_pkts &&
		      behind[i].dropped_pkts == alone[i].dropped_pkts &&
		      behind[i].wdrop_pkts == alone[i].wdrop_pkts,
		      "rule %d of the pair: passed %llu dropped %llu would-drop %llu behind 251 "
		      "rules, %llu %llu %llu alone", i, (unsigned long long)behind[i].passed_pkts,
		      (unsigned long long)behind[i].dropped_pkts,
		      (unsigned long long)behind[i].wdrop_pkts,
		      (unsigned long long)alone[i].passed_pkts,
		      (unsigned long long)alone[i].dropped_pkts,
		      (unsigned long long)alone[i].wdrop_pkts);
	}
	CHECK(alone[0].dropped_pkts == 2 && alone[1].wdrop_pkts == 2,
	      "the pair alone: %llu dropped, %llu would-drop", (unsigned long long)alone[0].dropped_pkts,
	      (unsigned long long)alone[1].wdrop_pkts);
	/* The neighbours met nothing; the last rule limits TCP from anywhere. */
	CHECK_EQ(rstat(0).passed_pkts + rstat(250).passed_pkts + rstat(252).passed_pkts, 0);
	udp4(&f, SRC_B, 9748);
	CHECK_EQ(xmit_n(&f, 3), 1);
	CHECK_EQ(rstat(0).dropped_pkts, 2);
	tcp4(&f, SRC_B, 443, WEIR_TCP_SYN);
	CHECK_EQ(xmit_n(&f, 5), 3);
	CHECK_EQ(rstat(WEIR_MAX_RULES - 1).dropped_pkts, 2);
}

DP_CASE(dp_per_src_burst_then_rate)
{
	struct weir_rule *r;
	struct weir_state st = { 0 };
	struct frame f;

	r = add_rule(WEIR_ACT_DROP);
	per_src(r, 10, 5);
	commit();
	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit_n(&f, 10), 5);
	set_now(T0 + 100 * MSEC);
	CHECK_EQ(xmit_n(&f, 10), 1);
	set_now(T0 + 150 * MSEC);
	CHECK_EQ(xmit_n(&f, 10), 0);
	set_now(T0 + 199 * MSEC);
	CHECK_EQ(xmit_n(&f, 10), 0);
	set_now(T0 + 200 * MSEC);
	CHECK_EQ(xmit_n(&f, 3), 1);
	/* another source is unaffected */
	udp4(&f, SRC_B, 53);
	CHECK_EQ(xmit_n(&f, 10), 5);

	CHECK_EQ(rstat(0).passed_pkts, 12);
	CHECK_EQ(rstat(0).dropped_pkts, 41);
	CHECK_EQ(rstat(0).passed_bytes, 12 * 46);
	CHECK_EQ(rstat(0).dropped_bytes, 41 * 46);
	CHECK_EQ(g(WEIR_G_PASSED), 12);
	CHECK_EQ(g(WEIR_G_DROPPED), 41);
	/*
	 * The bucket's own drop counter (with what waits per CPU) and the
	 * time it was last written: the refusals at 200 ms came within a
	 * batch period of those at 199 ms, so they wait.
	 */
	CHECK(!state_get4(r, 0, SRC_A, &st), "no bucket for SRC_A");
	CHECK_EQ(st.drops, 36);
	CHECK_EQ(st.last_drop, T0 + 199 * MSEC);
	CHECK_EQ(st.tat, T0 + 200 * MSEC + 5 * unit_of(&r->limits[0]));
	CHECK(!state_get4(r, 0, SRC_B, &st), "no bucket for SRC_B");
	CHECK_EQ(st.drops, 5);
	CHECK_EQ(state_count(NULL), 2);
}

DP_CASE(dp_bytes_per_second)
{
	struct weir_rule *r;
	struct frame f, l;
	__u64 passed_bytes = 0, dropped_bytes = 0;

	r = add_rule(WEIR_ACT_DROP);
	add_limit(r, 10000, 3000, WEIR_COST_BYTE, WEIR_KEY_SRC, 32, 128);
	commit();
	udp4_len(&f, SRC_A, 53, 1000);
	CHECK_EQ(xmit_n(&f, 5), 3);
	passed_bytes += 3000;
	dropped_bytes += 2000;
	/* 100 ms refills 1000 bytes */
	set_now(T0 + 100 * MSEC);
	CHECK_EQ(xmit_n(&f, 2), 1);
	passed_bytes += 1000;
	dropped_bytes += 1000;
	/* 50 ms: 500 bytes: a 500-byte packet fits, a 1000-byte one does not */
	set_now(T0 + 150 * MSEC);
	CHECK_EQ(xmit(&f), 0);
	dropped_bytes += 1000;
	udp4_len(&f, SRC_A, 53, 500);
	CHECK_EQ(xmit(&f), 1);
	passed_bytes += 500;
	/* tagged: the cost is still the L3 length */
	set_now(T0 + 200 * MSEC);
	l4_udp(&l, 53, 500 - 28);
	eth(&f, WR_ETH_P_IP, 2, TAG_QINQ);
	ip4(&f, SRC_A, WR_IPPROTO_UDP, 5, 0, 0, &l);
	CHECK_EQ(xmit(&f), 1);
	passed_bytes += 500;
	CHECK_EQ(xmit(&f), 0);
	dropped_bytes += 500;
	/* Ethernet padding is not charged: a 28-byte datagram in a 60-byte frame */
	set_now(T0 + 300 * MSEC);
	udp4_len(&f, SRC_A, 53, 28);
	zeros(&f, 60 - f.n);
	CHECK_EQ(xmit(&f), 1);
	passed_bytes += 28;
	/* after a long idle: the burst in bytes, and never a packet larger than it */
	set_now(T0 + 3600 * SEC);
	udp4_len(&f, SRC_A, 53, 3100);
	CHECK_EQ(xmit(&f), 0);
	dropped_bytes += 3100;
	udp4_len(&f, SRC_A, 53, 1500);
	CHECK_EQ(xmit_n(&f, 3), 2);
	passed_bytes += 3000;
	dropped_bytes += 1500;
	CHECK_EQ(rstat(0).passed_bytes, passed_bytes);
	CHECK_EQ(rstat(0).dropped_bytes, dropped_bytes);
	CHECK_EQ(rstat(0).passed_pkts, 9);
	CHECK_EQ(rstat(0).dropped_pkts, 7);
}

/*
 * A bytes/s limit whose burst is exactly one full-size packet admits that
 * packet when the bucket is full (here after an hour of idle).
 */
DP_CASE(dp_bytes_burst_sized_packet)
{
	static const __u64 rates[] = { 1000, 3000, 125000 };
	struct weir_rule *r;
	struct frame f;
	size_t i;

	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		r = add_rule(WEIR_ACT_DROP);
		match_dport(r, 1000 + i, 1000 + i);
		add_limit(r, rates[i], 1500, WEIR_COST_BYTE, WEIR_KEY_SRC, 32, 128);
	}
	commit();
	set_now(T0 + 3600 * SEC);
	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		udp4_len(&f, SRC_A, 1000 + i, 1500);
		CHECK(xmit(&f) == 1, "rate %llu B/s burst 1500 B: a 1500-byte packet dropped by a "
		      "full bucket", (unsigned long long)rates[i]);
		CHECK_EQ(xmit(&f), 0);
	}
}

DP_CASE(dp_key_per_24_shared)
{
	struct weir_rule *r;
	struct frame f;

	r = add_rule(WEIR_ACT_DROP);
	add_limit(r, 1, 4, WEIR_COST_PKT, WEIR_KEY_SRC, 24, 64);
	commit();
	udp4(&f, IP4(198, 18, 9, 1), 53);
	CHECK_EQ(xmit_n(&f, 3), 3);
	udp4(&f, IP4(198, 18, 9, 200), 53);
	CHECK_EQ(xmit_n(&f, 3), 1);
	udp4(&f, IP4(198, 18, 10, 1), 53);
	CHECK_EQ(xmit_n(&f, 3), 3);
	CHECK_EQ(state_count(NULL), 2);
	{
		struct weir_state st;

		CHECK(!state_get4(r, 0, IP4(198, 18, 9, 0), &st), "no bucket for 198.18.9.0/24");
		CHECK_EQ(st.tat, T0 + 4 * SEC);
		CHECK_EQ(st.drops, 2);
	}
}

DP_CASE(dp_key_per_64_shared_v6)
{
	struct weir_rule *r;
	struct frame f;
	__u8 a[16];
	struct weir_key k;

	r = add_rule(WEIR_ACT_DROP);
	add_limit(r, 1, 4, WEIR_COST_PKT, WEIR_KEY_SRC, 32, 64);
	commit();
	addr6(a, 0x00000007, 1);
	udp6(&f, a, 53);
	CHECK_EQ(xmit_n(&f, 3), 3);
	addr6(a, 0x00000007, 0xffffffff);
	a[8] = 0xaa;	/* still 2001:db8:0:7::/64 */
	udp6(&f, a, 53);
	CHECK_EQ(xmit_n(&f, 3), 1);
	addr6(a, 0x00000008, 1);
	udp6(&f, a, 53);
	CHECK_EQ(xmit_n(&f, 3), 3);
	CHECK_EQ(state_count(&k), 2);
	CHECK_EQ(k.family, 6);
	CHECK_EQ(k.plen, 64);
	CHECK_EQ(k.addr[2] | k.addr[3], 0);
}

/* A UDP frame's destination (IPv4: host order; IPv6: 16 bytes) and source port, rewritten. */
static void set_dst4(struct frame *f, __u32 dst)
{
	f->b[14 + 16] = dst >> 24;
	f->b[14 + 17] = dst >> 16;
	f->b[14 + 18] = dst >> 8;
	f->b[14 + 19] = dst;
}

static void set_dst6(struct frame *f, const __u8 *dst)
{
	memcpy(f->b + 14 + 24, dst, 16);
}

static void set_sport(struct frame *f, size_t l4off, __u16 sport)
{
	f->b[l4off] = sport >> 8;
	f->b[l4off + 1] = sport;
}

/* The bucket key of a per-dst or per-flow limit, as the data path makes it. */
static struct weir_key key_kind4(const struct weir_rule *r, __u32 li, __u32 addr, __u32 port)
{
	struct weir_key k = key4(r, li, addr);

	k.kind = r->limits[li].key;
	if (k.kind == WEIR_KEY_FLOW)
		k.addr[1] = port;
	return k;
}

/*
 * per dst: a carpet bomb over 198.18.7.0/24 from many sources is limited
 * per target; each destination has its own budget, whoever sends; a
 * second limit per src on the same rule keeps buckets of its own.
 */
static void per_dst_v4(int tc)
{
	struct weir_rule *r;
	struct weir_state st = { 0 };
	struct frame f;
	int i, pass;

	use_tc = tc;
	r = add_rule(WEIR_ACT_DROP);
	add_limit(r, 1, 3, WEIR_COST_PKT, WEIR_KEY_DST, 32, 128);
	commit();
	/* 5 packets to .1 from 5 sources: 3 pass */
	for (i = 0, pass = 0; i < 5; i++) {
		udp4(&f, IP4(198, 18, 100, 1 + i), 53);
		set_dst4(&f, IP4(198, 18, 7, 1));
		pass += xmit(&f);
	}
	CHECK_EQ(pass, 3);
	/* .2 is untouched by .1's flood: its own 3 */
	udp4(&f, IP4(198, 18, 100, 1), 53);
	set_dst4(&f, IP4(198, 18, 7, 2));
	CHECK_EQ(xmit_n(&f, 5), 3);
	CHECK_EQ(state_count(NULL), 2);
	{
		struct weir_key k = key_kind4(r, 0, IP4(198, 18, 7, 1), 0);

		CHECK(!state_find(&k, &st), "no bucket for destination 198.18.7.1");
		CHECK_EQ(st.tat, T0 + 3 * SEC);
		CHECK_EQ(st.drops, 2);
		/* not stored as a source key */
		k.kind = WEIR_KEY_SRC;
		CHECK(state_find(&k, &st) == -ENOENT, "a dst bucket found as a source's");
	}
	check_balance();
}

DP_CASE(dp_key_per_dst_v4)
{
	per_dst_v4(0);
}

DP_CASE(dp_key_per_dst_v4_tc)
{
	per_dst_v4(1);
}

/* per dst/24 with a per src limit on the same rule, and a dst match field. */
DP_CASE(dp_key_per_dst_prefix_with_src_and_dst_match)
{
	struct weir_rule *r;
	struct weir_state st = { 0 };
	struct weir_key k;
	struct frame f;

	r = add_rule(WEIR_ACT_DROP);
	r->xmatch |= WEIR_X_DST;
	r->nr_dst = 1;
	r->dst_family[0] = 4;
	r->dst_mask[0][0] = htonl(0xffff0000);
	r->dst_net[0][0] = htonl(IP4(198, 18, 0, 0));
	add_limit(r, 1, 4, WEIR_COST_PKT, WEIR_KEY_DST, 24, 64);
	add_limit(r, 1, 100, WEIR_COST_PKT, WEIR_KEY_SRC, 32, 64);
	commit();
	/* 198.18.7.x shares one /24 bucket of 4 */
	udp4(&f, IP4(198, 18, 100, 1), 53);
	set_dst4(&f, IP4(198, 18, 7, 1));
	CHECK_EQ(xmit_n(&f, 3), 3);
	set_dst4(&f, IP4(198, 18, 7, 200));
	CHECK_EQ(xmit_n(&f, 3), 1);
	/* another /24 its own */
	set_dst4(&f, IP4(198, 18, 8, 1));
	CHECK_EQ(xmit_n(&f, 5), 4);
	/* outside the rule's dst: no limit at all */
	set_dst4(&f, IP4(198, 19, 7, 1));
	CHECK_EQ(xmit_n(&f, 6), 6);
	/* two dst buckets and one src bucket, the src one charged for every admitted packet */
	CHECK_EQ(state_count(NULL), 3);
	k = key_kind4(r, 0, IP4(198, 18, 7, 0), 0);
	CHECK(!state_find(&k, &st), "no bucket for 198.18.7.0/24");
	CHECK_EQ(st.drops, 2);
	k = key4(r, 1, IP4(198, 18, 100, 1));
	CHECK(!state_find(&k, &st), "no per-source bucket");
	CHECK_EQ(st.tat, T0 + 8 * SEC);
	check_balance();
}

DP_CASE(dp_key_per_dst_v6)
{
	struct weir_rule *r;
	struct weir_key k;
	struct frame f;
	__u8 s[16], d[16];

	r = add_rule(WEIR_ACT_DROP);
	add_limit(r, 1, 2, WEIR_COST_PKT, WEIR_KEY_DST, 32, 128);
	commit();
	addr6(s, 1, 1);
	addr6(d, 7, 1);
	udp6(&f, s, 53);
	set_dst6(&f, d);
	CHECK_EQ(xmit_n(&f, 4), 2);
	addr6(s, 2, 9);	/* another source, same target: no more */
	udp6(&f, s, 53);
	set_dst6(&f, d);
	CHECK_EQ(xmit_n(&f, 2), 0);
	addr6(d, 7, 2);	/* another target: its own 2 */
	set_dst6(&f, d);
	CHECK_EQ(xmit_n(&f, 4), 2);
	CHECK_EQ(state_count(&k), 2);
	CHECK_EQ(k.family, 6);
	CHECK_EQ(k.kind, WEIR_KEY_DST);
	CHECK_EQ(k.plen, 128);
	check_balance();
}

/* per flow: one source's ports are separate buckets; v4 and v6. */
static void per_flow(int tc)
{
	struct weir_rule *r;
	struct weir_state st = { 0 };
	struct weir_key k;
	struct frame f;
	__u8 s[16];

	use_tc = tc;
	r = add_rule(WEIR_ACT_DROP);
	add_limit(r, 1, 2, WEIR_COST_PKT, WEIR_KEY_FLOW, 32, 64);
	commit();
	udp4(&f, IP4(198, 18, 100, 1), 53);
	set_sport(&f, 34, 40000);
	CHECK_EQ(xmit_n(&f, 4), 2);
	set_sport(&f, 34, 40001);
	CHECK_EQ(xmit_n(&f, 4), 2);
	k = key_kind4(r, 0, IP4(198, 18, 100, 1), 40000);
	CHECK(!state_find(&k, &st), "no bucket for flow 198.18.100.1:40000");
	CHECK_EQ(st.drops, 2);
	/* v6: the /64 and the port */
	addr6(s, 5, 1);
	udp6(&f, s, 53);
	set_sport(&f, 54, 123);
	CHECK_EQ(xmit_n(&f, 3), 2);
	addr6(s, 5, 2);	/* same /64 and port: the same flow */
	udp6(&f, s, 53);
	set_sport(&f, 54, 123);
	CHECK_EQ(xmit_n(&f, 2), 0);
	set_sport(&f, 54, 124);
	CHECK_EQ(xmit_n(&f, 3), 2);
	CHECK_EQ(state_count(NULL), 4);
	check_balance();
}

DP_CASE(dp_key_per_flow)
{
	per_flow(0);
}

DP_CASE(dp_key_per_flow_tc)
{
	per_flow(1);
}

DP_CASE(dp_per_all_limit)
{
	struct weir_rule *r;
	struct weir_limit *l;
	struct weir_state st = { 0 };
	struct frame f;

	r = add_rule(WEIR_ACT_DROP);
	l = per_all(r, 10, 5);
	commit();
	CHECK_EQ(xmit_from_sources(10, 30), 5);
	st = agg_get(l);
	CHECK_EQ(st.tat, T0 + 5 * unit_of(l));
	CHECK_EQ(st.drops, 5);
	CHECK_EQ(st.last_drop, T0);
	CHECK_EQ(state_count(NULL), 0);
	set_now(T0 + 100 * MSEC);
	udp4(&f, IP4(198, 18, 31, 1), 53);
	CHECK_EQ(xmit_n(&f, 3), 1);
	CHECK_EQ(rstat(0).passed_pkts, 6);
	CHECK_EQ(rstat(0).dropped_pkts, 7);
}

/* wr_events since the last call: how many, and the last one's drops. */
static int on_event(void *ctx, void *data, size_t size)
{
	const struct weir_event *e = data;
	__u64 *c = ctx;

	if (size >= sizeof(*e)) {
		c[0]++;
		c[1] = e->drops;
	}
	return 0;
}

static void events_read(__u64 *n, __u64 *drops)
{
	__u64 c[2] = { 0, 0 };
	struct ring_buffer *rb;

	rb = ring_buffer__new(bpf_map__fd(skel->maps.wr_events), on_event, c, NULL);
	if (!rb) {
		CHECK_FAIL("ring_buffer__new: %s", strerror(errno));
	} else {
		ring_buffer__consume(rb);
		ring_buffer__free(rb);
	}
	*n = c[0];
	*drops = c[1];
}

/*
 * A rule-wide bucket that refuses on and on is written once a batch period
 * (WEIR_DROP_BATCH_NS) per CPU: the refusals in between wait in this
 * CPU's wr_agg_drops and go into the bucket's drops with the next refusal
 * past it. Readers count them either way. An event still marks the first
 * refusal after a quiet spell, with the bucket's count.
 */
DP_CASE(dp_per_all_refusals_wait_per_cpu)
{
	struct weir_rule *r;
	struct weir_limit *l;
	struct weir_state st = { 0 };
	struct frame f;
	__u64 n, d;

	r = add_rule(WEIR_ACT_DROP);
	l = per_all(r, 10, 5);
	commit();
	CHECK_EQ(xmit_from_sources(10, 30), 5);
	/* the first refusal wrote the bucket and told of it; the other four wait */
	st = agg_raw(l);
	CHECK_EQ(st.drops, 1);
	CHECK_EQ(st.last_drop, T0);
	CHECK_EQ(agg_waiting(l), 4);
	CHECK_EQ(agg_get(l).drops, 5);
	events_read(&n, &d);
	CHECK_EQ(n, 1);
	CHECK_EQ(d, 1);
	/* within the batch period: it waits too */
	set_now(T0 + WEIR_DROP_BATCH_NS - 1);
	udp4(&f, IP4(198, 18, 31, 1), 53);
	CHECK_EQ(xmit_n(&f, 1), 0);
	st = agg_raw(l);
	CHECK_EQ(st.drops, 1);
	CHECK_EQ(st.last_drop, T0);
	CHECK_EQ(agg_waiting(l), 5);
	/* past it: this refusal takes what waited into the bucket */
	set_now(T0 + WEIR_DROP_BATCH_NS);
	CHECK_EQ(xmit_n(&f, 1), 0);
	st = agg_raw(l);
	CHECK_EQ(st.drops, 7);
	CHECK_EQ(st.last_drop, T0 + WEIR_DROP_BATCH_NS);
	CHECK_EQ(agg_waiting(l), 0);
	events_read(&n, &d);
	CHECK_EQ(n, 0);
	/* after a quiet spell (the burst of 5 is back): one event, the count whole */
	set_now(T0 + WEIR_DROP_BATCH_NS + WEIR_EVENT_QUIET_NS);
	CHECK_EQ(xmit_n(&f, 7), 5);
	events_read(&n, &d);
	CHECK_EQ(n, 1);
	CHECK_EQ(d, 8);
	CHECK_EQ(agg_raw(l).drops, 8);
	CHECK_EQ(agg_waiting(l), 1);
	CHECK_EQ(agg_get(l).drops, 9);
	CHECK_EQ(rstat(0).dropped_pkts, 9);
}

/* The same for a per-source bucket: its refusals wait in this CPU's slot for its key. */
DP_CASE(dp_per_src_refusals_wait_per_cpu)
{
	struct weir_rule *r;
	struct weir_state st = {};
	struct weir_way w = {};
	struct weir_key k;
	struct frame f;

	r = add_rule(WEIR_ACT_DROP);
	per_src(r, 10, 5);
	commit();
	k = key4(r, 0, SRC_A);
	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit_n(&f, 10), 5);
	CHECK(!state_way(&k, &w), "no bucket for SRC_A");
	CHECK_EQ(w.st.drops, 1);
	CHECK_EQ(w.st.last_drop, T0);
	CHECK_EQ(src_waiting(&k), 4);
	CHECK(!state_find(&k, &st), "no bucket for SRC_A");
	CHECK_EQ(st.drops, 5);
	set_now(T0 + WEIR_DROP_BATCH_NS - 1);
	CHECK_EQ(xmit_n(&f, 1), 0);
	CHECK(!state_way(&k, &w), "no bucket for SRC_A");
	CHECK_EQ(w.st.drops, 1);
	CHECK_EQ(src_waiting(&k), 5);
	set_now(T0 + WEIR_DROP_BATCH_NS);
	CHECK_EQ(xmit_n(&f, 1), 0);
	CHECK(!state_way(&k, &w), "no bucket for SRC_A");
	CHECK_EQ(w.st.drops, 7);
	CHECK_EQ(w.st.last_drop, T0 + WEIR_DROP_BATCH_NS);
	CHECK_EQ(src_waiting(&k), 0);
	CHECK_EQ(rstat(0).dropped_pkts, 7);
}

/*
 * Two sources whose keys pick the same slot: the second's refusals are
 * written while the first's wait there, and the slot is given over once
 * the first was not refused on this CPU for a batch period, its count
 * going into its bucket first.
 */
DP_CASE(dp_src_wait_slot_given_over)
{
	struct weir_key ka, kb;
	struct weir_rule *r;
	struct weir_state st = {};
	struct weir_way w = {};
	struct frame fa, fb;
	__u32 b = 0, i;

	r = add_rule(WEIR_ACT_DROP);
	per_src(r, 10, 1);
	commit();
	ka = key4(r, 0, SRC_A);
	for (i = 1; i < 65536 && !b; i++) {
		kb = key4(r, 0, IP4(198, 19, i >> 8, i & 0xff));
		if (wr_src_wait_slot(&kb) == wr_src_wait_slot(&ka))
			b = IP4(198, 19, i >> 8, i & 0xff);
	}
	if (!b) {
		CHECK_FAIL("no source shares SRC_A's slot among 65535");
		return;
	}
	udp4(&fa, SRC_A, 53);
	udp4(&fb, b, 53);
	/* A: one admitted, one refused and written, one waiting */
	CHECK_EQ(xmit_n(&fa, 3), 1);
	CHECK(!state_way(&ka, &w), "no bucket for A");
	CHECK_EQ(w.st.drops, 1);
	CHECK_EQ(src_waiting(&ka), 1);
	/* half a batch on, B: A holds the slot, so B's second refusal is written too */
	set_now(T0 + WEIR_DROP_BATCH_NS / 2);
	CHECK_EQ(xmit_n(&fb, 3), 1);
	CHECK(!state_way(&kb, &w), "no bucket for B");
	CHECK_EQ(w.st.drops, 2);
	CHECK_EQ(src_waiting(&kb), 0);
	CHECK_EQ(src_waiting(&ka), 1);
	/* a batch after A's last refusal: A's count goes to its bucket, B takes the slot */
	set_now(T0 + WEIR_DROP_BATCH_NS);
	CHECK_EQ(xmit_n(&fb, 1), 0);
	CHECK(!state_way(&ka, &w), "no bucket for A");
	CHECK_EQ(w.st.drops, 2);
	CHECK_EQ(src_waiting(&ka), 0);
	CHECK(!state_way(&kb, &w), "no bucket for B");
	CHECK_EQ(w.st.drops, 2);
	CHECK_EQ(src_waiting(&kb), 1);
	CHECK(!state_find(&kb, &st), "no bucket for B");
	CHECK_EQ(st.drops, 3);
	CHECK_EQ(rstat(0).dropped_pkts, 5);
}

DP_CASE(dp_check_then_charge)
{
	struct weir_rule *r;
	struct weir_limit *all;
	struct weir_state st = { 0 };
	struct frame f;

	r = add_rule(WEIR_ACT_DROP);
	per_src(r, 1, 3);
	all = per_all(r, 1, 100);
	commit();
	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit_n(&f, 10), 3);
	st = agg_get(all);
	CHECK_EQ(st.tat, T0 + 3 * SEC);	/* the 7 refused packets charged nothing */
	CHECK_EQ(st.drops, 0);
	CHECK(!state_get4(r, 0, SRC_A, &st), "no bucket for SRC_A");
	CHECK_EQ(st.tat, T0 + 3 * SEC);
	CHECK_EQ(st.drops, 7);
	/* so the rule-wide burst still has 97 for others */
	CHECK_EQ(xmit_from_sources(100, 40), 97);
	st = agg_get(all);
	CHECK_EQ(st.tat, T0 + 100 * SEC);
	CHECK_EQ(st.drops, 3);
	/* sources refused by the rule-wide limit got no per-source state */
	CHECK_EQ(state_count(NULL), 98);
	CHECK_EQ(rstat(0).passed_pkts, 100);
	CHECK_EQ(rstat(0).dropped_pkts, 10);
}

DP_CASE(dp_spoofed_flood_bounded)
{
	struct weir_rule *r;
	struct weir_limit *all;

	r = add_rule(WEIR_ACT_DROP);
	per_src(r, 1, 5);
	all = per_all(r, 10, 10);
	commit();
	CHECK_EQ(xmit_from_sources(1000, 100), 10);
	CHECK_EQ(state_count(NULL), 10);
	CHECK_EQ(agg_get(all).drops, 990);
	CHECK_EQ(rstat(0).dropped_pkts, 990);
	CHECK_EQ(g(WEIR_G_DROPPED), 990);
	CHECK_EQ(g(WEIR_G_FAULT), 0);
}

DP_CASE(dp_dry_run)
{
	struct weir_rule *r, *e;
	struct weir_state st = { 0 };
	struct frame f;

	r = add_rule(WEIR_ACT_DRYRUN);
	per_src(r, 10, 2);
	commit();
	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit_n(&f, 5), 5);
	CHECK_EQ(rstat(0).passed_pkts, 5);
	CHECK_EQ(rstat(0).wdrop_pkts, 3);
	CHECK_EQ(rstat(0).wdrop_bytes, 3 * 46);
	CHECK_EQ(rstat(0).dropped_pkts, 0);
	CHECK_EQ(g(WEIR_G_WOULD_DROP), 3);
	CHECK_EQ(g(WEIR_G_DROPPED), 0);
	CHECK_EQ(g(WEIR_G_PASSED), 5);
	/* the would-drops were not charged */
	CHECK(!state_get4(r, 0, SRC_A, &st), "no bucket for SRC_A");
	CHECK_EQ(st.tat, T0 + 2 * unit_of(&r->limits[0]));
	CHECK_EQ(st.drops, 3);
	/* one interval later exactly one more is within the limit */
	set_now(T0 + unit_of(&r->limits[0]));
	CHECK_EQ(xmit_n(&f, 2), 2);
	CHECK_EQ(rstat(0).wdrop_pkts, 4);
	CHECK_EQ(rstat(0).passed_pkts, 7);

	/* next to an enforcing rule: that one is charged for every packet */
	clear_rules();
	e = add_rule(WEIR_ACT_DROP);
	per_src(e, 10, 10);
	r = add_rule(WEIR_ACT_DRYRUN);
	per_src(r, 10, 2);
	commit();
	set_now(T0 + 10 * SEC);
	udp4(&f, SRC_B, 53);
	CHECK_EQ(xmit_n(&f, 5), 5);
	CHECK_EQ(rstat(0).passed_pkts, 5);
	CHECK_EQ(rstat(1).passed_pkts, 5);
	CHECK_EQ(rstat(1).wdrop_pkts, 3);
	CHECK(!state_get4(e, 0, SRC_B, &st), "no enforcing bucket");
	CHECK_EQ(st.tat, T0 + 10 * SEC + 5 * unit_of(&e->limits[0]));
	CHECK(!state_get4(r, 0, SRC_B, &st), "no dry-run bucket");
	CHECK_EQ(st.tat, T0 + 10 * SEC + 2 * unit_of(&r->limits[0]));
	/* the enforcing rule still drops */
	CHECK_EQ(xmit_n(&f, 10), 5);
	CHECK_EQ(rstat(0).dropped_pkts, 5);
}

DP_CASE(dp_kill_switch)
{
	struct weir_rule *r;
	struct weir_state st = { 0 };
	struct frame f, bad[8];
	const __u32 denied = IP4(198, 18, 66, 6);

	r = add_rule(WEIR_ACT_DROP);
	per_src(r, 1, 1);
	commit();
	list_add4(skel->maps.wr_deny4, denied, 32);
	CFG_SET(lists, WEIR_L_DENY4);
	CFG_SET(disabled, 1);

	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit_n(&f, 5), 5);
	CHECK_EQ(g(WEIR_G_WOULD_DROP), 4);
	CHECK_EQ(rstat(0).passed_pkts, 5);
	CHECK_EQ(rstat(0).wdrop_pkts, 4);
	CHECK_EQ(rstat(0).dropped_pkts, 0);
	CHECK(!state_get4(r, 0, SRC_A, &st), "no bucket for SRC_A");
	CHECK_EQ(st.tat, T0 + SEC);
	udp4(&f, denied, 53);
	CHECK_EQ(xmit(&f), 1);
	CHECK_EQ(g(WEIR_G_DENIED), 1);
	CHECK_EQ(g(WEIR_G_WOULD_DROP), 5);
	malformed_frames(bad);
	CHECK_EQ(xmit(&bad[0]), 1);
	CHECK_EQ(g(WEIR_G_MALFORMED), 1);
	CHECK_EQ(g(WEIR_G_WOULD_DROP), 6);
	CHECK_EQ(g(WEIR_G_DROPPED), 0);
	CHECK_EQ(g(WEIR_G_PASSED), 7);

	/* switched back on: enforced again */
	CFG_SET(disabled, 0);
	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit(&f), 0);
	udp4(&f, denied, 53);
	CHECK_EQ(xmit(&f), 0);
	CHECK_EQ(xmit(&bad[0]), 0);
	CHECK_EQ(g(WEIR_G_DROPPED), 3);
	CHECK_EQ(g(WEIR_G_WOULD_DROP), 6);
}

DP_CASE(dp_idle_refill)
{
	struct weir_rule *r;
	struct weir_limit *all;
	struct frame f;

	r = add_rule(WEIR_ACT_DROP);
	per_src(r, 10, 5);
	all = per_all(r, 10, 8);
	commit();
	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit_n(&f, 10), 5);
	/* 499 ms: one short of a full bucket */
	set_now(T0 + 499 * MSEC);
	CHECK_EQ(xmit_n(&f, 10), 4);
	/* an hour: the burst again, not more */
	set_now(T0 + 3600 * SEC);
	CHECK_EQ(xmit_n(&f, 10), 5);
	/* a day: the rule-wide bucket too is full, not more */
	set_now(T0 + 86400 * SEC);
	udp4(&f, SRC_B, 53);
	CHECK_EQ(xmit_n(&f, 10), 5);
	udp4(&f, SRC_C, 53);
	CHECK_EQ(xmit_n(&f, 10), 3);
	CHECK_EQ(agg_get(all).tat, T0 + 86400 * SEC + 8 * unit_of(all));
}

/*
 * An evicted bucket reads as full: eviction can only admit more, never less.
 * Emptying its way stands in for eviction (bpf_hostile.c evicts for real).
 * The rule walk's own answer: the first stage off (it sees an eviction
 * within a batch, bpf_cache.c cache_sees_eviction).
 */
DP_CASE(dp_evicted_bucket_refills)
{
	struct weir_rule *r;
	struct weir_key k;
	struct frame f;

	r = add_rule(WEIR_ACT_DROP);
	per_src(r, 1, 2);
	CFG_SET(cache_off, 1);
	commit();
	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit_n(&f, 5), 2);
	CHECK_EQ(state_count(&k), 1);
	CHECK(!state_forget(&k), "no way holds the bucket");
	CHECK_EQ(xmit_n(&f, 5), 2);
	CHECK_EQ(rstat(0).passed_pkts, 4);
	CHECK_EQ(rstat(0).dropped_pkts, 6);
}

/*
 * Internal faults. The fault here is a rule-wide limit whose agg_slot lies
 * outside wr_agg: the lookup fails as a map fault would. (A per-source one,
 * a set beyond wr_state, is in bpf_hostile.c.)
 */
DP_CASE(dp_fault_fail_open_and_closed)
{
	struct weir_rule *r;
	struct frame f;

	r = add_rule(WEIR_ACT_DROP);
	per_all(r, 1, 1)->agg_slot = WEIR_AGG_SLOTS;
	commit();
	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit_n(&f, 3), 3);
	CHECK_EQ(g(WEIR_G_FAULT), 3);
	CHECK_EQ(g(WEIR_G_FAIL_OPEN), 3);
	CHECK_EQ(g(WEIR_G_PASSED), 3);
	CHECK_EQ(rstat(0).passed_pkts, 3);
	CFG_SET(fail_closed, 1);
	CHECK_EQ(xmit_n(&f, 2), 0);
	CHECK_EQ(g(WEIR_G_FAULT), 5);
	CHECK_EQ(g(WEIR_G_FAIL_OPEN), 3);
	CHECK_EQ(g(WEIR_G_DROPPED), 2);
	/* with a second, healthy limit in the rule: the fault still decides */
	clear_rules();
	r = add_rule(WEIR_ACT_DROP);
	per_src(r, 1, 100);
	per_all(r, 1, 1)->agg_slot = 60000;
	commit();
	CHECK_EQ(xmit(&f), 0);
	CFG_SET(fail_closed, 0);
	CHECK_EQ(xmit(&f), 1);
	CHECK_EQ(g(WEIR_G_FAULT), 7);
	CHECK_EQ(g(WEIR_G_FAIL_OPEN), 4);
}

/*
 * A new key's claim stalled by another CPU (a vCPU preempted between its
 * two compare-and-swaps): one way of the key's set holds the busy marker
 * the claimant wrote, as if it never came back. A new key of that set
 * meets it on every try: that is contention, not a fault. The packet is
 * refused by the rule and counted (contended), whatever the fail policy,
 * nothing of it stays charged, and the marker is left alone. Keys with
 * buckets in that set, and new keys of other sets, are served as ever;
 * once the claim is over, the new key is admitted and charged.
 */
/* The set of the per-source bucket of limit 0 of rule r for src, under seed and sets. */
static __attribute__((noinline)) __u32 set_of4(const struct weir_rule *r, __u32 src,
					       __u64 seed, __u32 sets)
{
	struct weir_key k = key4(r, 0, src);

	return wr_state_set(wr_key_hash(&k, seed), sets);
}

/* An IPv4 source in 198.18.0.0/15 whose bucket lives in set (in), or not in it. */
static __u32 src_by_set(const struct weir_rule *r, __u32 set, int in, __u32 not)
{
	struct weir_config c = cfg_get();
	__u32 h;

	for (h = 1; h < 1U << 17; h++) {
		__u32 src = IP4(198, 18, 0, 0) + h;

		if (src != not && (set_of4(r, src, c.state_seed, c.state_sets) == set) == in)
			return src;
	}
	return 0;
}

/* Way w of key k's set as a stalled claimant leaves it (busy), or empty again. */
static void way_busy(const struct weir_key *k, int w, int busy)
{
	__u32 idx = state_set_of(k);
	__u64 w0 = busy ? WEIR_WAY_BUSY : 0;
	struct weir_set s;

	if (state_set_get(idx, &s)) {
		CHECK_FAIL("reading wr_state[%u]", idx);
		return;
	}
	memset(&s.way[w], 0, sizeof(s.way[w]));
	memcpy(&s.way[w].key, &w0, sizeof(w0));
	state_set_put(idx, &s);
}

static int way_is_busy(const struct weir_key *k, int w)
{
	struct weir_set s;
	__u64 w0;

	if (state_set_get(state_set_of(k), &s))
		return 0;
	memcpy(&w0, &s.way[w].key, sizeof(w0));
	return w0 == WEIR_WAY_BUSY;
}

/* with_all: a rule-wide limit too, so the general walk (check, charge, refund) runs. */
static void stalled_claim(int with_all)
{
	struct weir_rule *r;
	struct weir_limit *src, *all = NULL;
	struct weir_state st = { 0 };
	struct weir_key k;
	__u32 old, other;
	struct frame f;

	r = add_rule(WEIR_ACT_DROP);
	src = per_src(r, 1, 100);
	if (with_all)
		all = per_all(r, 1, 100);
	commit();
	k = key4(r, 0, SRC_A);
	old = src_by_set(r, state_set_of(&k), 1, SRC_A);
	other = src_by_set(r, state_set_of(&k), 0, SRC_A);
	if (!old || !other) {
		CHECK_FAIL("no source found for set %u", state_set_of(&k));
		return;
	}
	/* a source of the same set with a bucket from before the stall */
	udp4(&f, old, 53);
	CHECK_EQ(xmit(&f), 1);
	way_busy(&k, 3, 1);
	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit_n(&f, 5), 0);
	CHECK_EQ(g(WEIR_G_CONTENDED), 5);
	CHECK_EQ(g(WEIR_G_FAULT), 0);
	CHECK_EQ(g(WEIR_G_FAIL_OPEN), 0);
	CHECK_EQ(rstat(0).dropped_pkts, 5);
	CHECK(state_get4(r, 0, SRC_A, &st) == -ENOENT, "a bucket for the stalled key");
	CHECK(way_is_busy(&k, 3), "the claimant's busy marker was overwritten");
	if (all)
		CHECK_EQ(agg_get(all).tat, T0 + 1 * unit_of(all));	/* old's packet alone */
	/* under fail closed, too: refused, and still not a fault */
	CFG_SET(fail_closed, 1);
	CHECK_EQ(xmit(&f), 0);
	CFG_SET(fail_closed, 0);
	CHECK_EQ(g(WEIR_G_CONTENDED), 6);
	CHECK_EQ(g(WEIR_G_FAULT), 0);
	/* a key with a bucket in that set is charged as ever */
	udp4(&f, old, 53);
	CHECK_EQ(xmit_n(&f, 2), 2);
	CHECK(!state_get4(r, 0, old, &st), "no bucket for the old source");
	CHECK_EQ(st.tat, T0 + 3 * unit_of(src));
	/* and a new key of another set is claimed as ever */
	udp4(&f, other, 53);
	CHECK_EQ(xmit(&f), 1);
	CHECK(!state_get4(r, 0, other, &st), "no bucket for the source of another set");
	CHECK_EQ(g(WEIR_G_CONTENDED), 6);
	/* the claim over (handed back): the stalled key is admitted and charged */
	way_busy(&k, 3, 0);
	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit_n(&f, 2), 2);
	CHECK(!state_get4(r, 0, SRC_A, &st), "no bucket for SRC_A after the claim");
	CHECK_EQ(st.tat, T0 + 2 * unit_of(src));
	CHECK_EQ(g(WEIR_G_CONTENDED), 6);
	CHECK_EQ(g(WEIR_G_FAULT), 0);
	if (all)
		CHECK_EQ(agg_get(all).tat, T0 + 6 * unit_of(all));
	CHECK_EQ(rstat(0).passed_pkts, 6);
	CHECK_EQ(rstat(0).dropped_pkts, 6);
	check_balance();
}

DP_CASE(dp_stalled_claim_refused_not_failed_open)
{
	stalled_claim(0);
}

DP_CASE(dp_stalled_claim_refused_rule_wide_refunded)
{
	stalled_claim(1);
}

/* A set written to the inactive entry does nothing until config.active flips. */
DP_CASE(dp_ruleset_flip)
{
	struct weir_rule *r;
	struct frame f;

	r = add_rule(WEIR_ACT_DROP);
	per_src(r, 1, 1);
	write_rules(0);
	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit_n(&f, 3), 3);
	CHECK_EQ(g(WEIR_G_NO_RULE), 3);
	CFG_SET(active, 1);
	CHECK_EQ(xmit_n(&f, 3), 1);
	CFG_SET(active, 0);
	CHECK_EQ(xmit_n(&f, 3), 3);
	CHECK_EQ(g(WEIR_G_NO_RULE), 6);
	CHECK_EQ(rstat(0).passed_pkts, 1);
	CHECK_EQ(rstat(0).dropped_pkts, 2);
}

/*
 * Token state is exact across CPUs: two threads on two CPUs hammer the same
 * rule at the same instant, round after round. Whatever the interleaving
 * (CAS retries, a charge lost half-way and refunded, a new key's claim met
 * mid-way and refused as contended), each round admits exactly the tighter
 * burst and leaves each TAT exactly that many intervals ahead; nothing is
 * a fault, nothing fails open.
 */
#define RACE_ROUNDS	100
#define RACE_REPEAT	300

/* Two racers from sources a and b; per round exactly want pass. */
static void race_rounds(__u32 a, __u32 b, __u64 want)
{
	struct weir_rule *r;
	struct weir_limit *src, *all;
	struct racer rc[2];
	pthread_barrier_t bar;
	pthread_t th[2];
	__u64 passed = 0, now = T0;
	int i, round;

	if (setup())
		return;
	r = add_rule(WEIR_ACT_DROP);
	src = per_src(r, 1, 100);
	all = per_all(r, 1, 150);
	commit();
	pthread_barrier_init(&bar, NULL, 3);
	for (i = 0; i < 2; i++) {
		rc[i].cpu = i;
		rc[i].rounds = RACE_ROUNDS;
		rc[i].repeat = RACE_REPEAT;
		rc[i].bar = &bar;
		rc[i].err = 0;
		udp4(&rc[i].f, i ? b : a, 53);
		pthread_create(&th[i], NULL, race, &rc[i]);
	}
	for (round = 0; round < RACE_ROUNDS; round++) {
		struct weir_state st;
		__u64 p;

		/* far enough on that every bucket is full again */
		now = T0 + round * 1000000 * SEC;
		set_now(now);
		pthread_barrier_wait(&bar);
		pthread_barrier_wait(&bar);
		p = g(WEIR_G_PASSED);
		/*
		 * Exact: a new key's claim met twice in progress (another CPU
		 * stalled mid-claim, which emulation does) refuses that packet
		 * (contended); the key's bucket, once claimed, admits the rest.
		 */
		if (p - passed != want) {
			CHECK_FAIL("round %d: %llu passed (%llu failing open), want %llu", round,
				   (unsigned long long)(p - passed),
				   (unsigned long long)g(WEIR_G_FAIL_OPEN), (unsigned long long)want);
			break;
		}
		passed = p;
		st = agg_get(all);
		if (st.tat != now + want * unit_of(all)) {
			CHECK_FAIL("round %d: rule-wide TAT now+%lld ns, want now+%llu", round,
				   (long long)(st.tat - now),
				   (unsigned long long)(want * unit_of(all)));
			break;
		}
		if (a == b) {
			CHECK(!state_get4(r, 0, a, &st), "no bucket");
			if (st.tat != now + want * unit_of(src)) {
				CHECK_FAIL("round %d: source TAT now+%lld ns, want now+%llu", round,
					   (long long)(st.tat - now),
					   (unsigned long long)(want * unit_of(src)));
				break;
			}
		}
	}
	/* let the racers finish their rounds */
	for (round++; round < RACE_ROUNDS; round++) {
		pthread_barrier_wait(&bar);
		pthread_barrier_wait(&bar);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		CHECK(!rc[i].err, "racer %d: %s", i, strerror(-rc[i].err));
	}
	pthread_barrier_destroy(&bar);
	/*
	 * Every refusal counted once, by the bucket that refused it: the
	 * rule-wide one's count whole (what waits per CPU included), the
	 * sources' on their buckets, and the contended ones apart.
	 */
	{
		__u64 drops = agg_get(all).drops;
		struct weir_state st;

		if (!state_get4(r, 0, a, &st))
			drops += st.drops;
		if (b != a && !state_get4(r, 0, b, &st))
			drops += st.drops;
		CHECK_EQ(drops + g(WEIR_G_CONTENDED), g(WEIR_G_DROPPED));
	}
	if (g(WEIR_G_CONTENDED))
		printf("# %llu packets met a claim in progress twice and were refused\n",
		       (unsigned long long)g(WEIR_G_CONTENDED));
	CHECK_EQ(g(WEIR_G_FAULT), 0);
	CHECK_EQ(g(WEIR_G_FAIL_OPEN), 0);
	CHECK_EQ(g(WEIR_G_PACKETS), 2ULL * RACE_ROUNDS * RACE_REPEAT);
	check_balance();
	teardown();
}

/* One source from two CPUs: the per-source burst (100) bounds each round. */
TEST_CASE(dp_two_cpus_one_source_exact)
{
	if (ncpu < 2) {
		CHECK_SKIP("one possible CPU");
		return;
	}
	race_rounds(SRC_A, SRC_A, 100);
}

/* Two sources from two CPUs: the rule-wide burst (150) bounds each round. */
TEST_CASE(dp_two_cpus_two_sources_exact)
{
	if (ncpu < 2) {
		CHECK_SKIP("one possible CPU");
		return;
	}
	race_rounds(SRC_A, SRC_B, 150);
}

/* The same cases through the TC entry point: load() picks it up from tc_cases. */

/* ---- the reflection preset ---- */

/* A `preset reflection` rule as `rule add NAME preset reflection` makes it: drop every one. */
static struct weir_rule *add_reflect_rule(void)
{
	struct weir_rule *r = add_rule(WEIR_ACT_DROP);

	r->preset = WEIR_PRESET_REFLECT;
	match_proto(r, WR_IPPROTO_UDP);
	new_limit(r, WEIR_ALGO_FIXED, 0, 1000, 0, WEIR_COST_PKT, WEIR_KEY_ALL, 0, 0);
	r->flags |= WEIR_RF_PRESET_DEFAULT;
	rs.reflect_rules++;
	return r;
}

/* f through weir_egress, as the host sends it: 1 if it let the hook go on (TC_ACT_UNSPEC). */
static int egress(const struct frame *f)
{
	static __u8 out[sizeof(f->b) + 512];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->b, .data_size_in = f->n, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);
	int err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.weir_egress), &o);

	if (err) {
		CHECK_FAIL("egress test_run: %s", strerror(-err));
		return -1;
	}
	return (int)o.retval == -1;
}

static int reflect_flows(void)
{
	struct weir_flow_key k, next;
	void *prev = NULL;
	int n = 0;

	while (!bpf_map__get_next_key(skel->maps.wr_reflect, prev, &next, sizeof(next))) {
		n++;
		k = next;
		prev = &k;
	}
	return n;
}

static const __u32 NTP_SRV = IP4(198, 18, 7, 7);

/* An unsolicited reply from port 123 is dropped; once the host asked, its answer passes. */
DP_CASE(dp_reflect_answer_passes_unsolicited_dropped)
{
	struct frame f;

	add_reflect_rule();
	commit();
	reply4(&f, NTP_SRV, 123, 40123, 0, NULL);
	CHECK_EQ(xmit(&f), 0);
	CHECK_EQ(rstat(0).dropped_pkts, 1);
	/* The host's query to that server and port, from port 40123. */
	query4(&f, NTP_SRV, 123, 40123, 0, NULL);
	CHECK_EQ(egress(&f), 1);
	CHECK_EQ(reflect_flows(), 1);
	reply4(&f, NTP_SRV, 123, 40123, 0, NULL);
	CHECK_EQ(xmit_n(&f, 3), 3);
	CHECK_EQ(g(WEIR_G_NO_RULE), 3);
	CHECK_EQ(rstat(0).dropped_pkts, 1);
	/* Another local port, another server, another amplifier port: still unsolicited. */
	reply4(&f, NTP_SRV, 123, 40124, 0, NULL);
	CHECK_EQ(xmit(&f), 0);
	reply4(&f, NTP_SRV + 1, 123, 40123, 0, NULL);
	CHECK_EQ(xmit(&f), 0);
	reply4(&f, NTP_SRV, 53, 40123, 0, NULL);
	CHECK_EQ(xmit(&f), 0);
	CHECK_EQ(rstat(0).dropped_pkts, 4);
	/* Not from an amplifier's port, or not UDP: the preset does not match. */
	reply4(&f, NTP_SRV + 1, 443, 40123, 0, NULL);
	CHECK_EQ(xmit(&f), 1);
	tcp4(&f, NTP_SRV + 1, 53, WEIR_TCP_SYN);
	CHECK_EQ(xmit(&f), 1);
	CHECK_EQ(g(WEIR_G_NO_RULE), 5);
	CHECK_EQ(g(WEIR_G_DROPPED), 4);
}

/* A flow admits replies WR_REFLECT_TTL_NS after its last outgoing packet, then not; a new query renews it. */
DP_CASE(dp_reflect_flow_expires_and_renews)
{
	struct frame q, f;

	add_reflect_rule();
	commit();
	query4(&q, NTP_SRV, 123, 40123, 0, NULL);
	CHECK_EQ(egress(&q), 1);
	reply4(&f, NTP_SRV, 123, 40123, 0, NULL);
	set_now(T0 + WR_REFLECT_TTL_NS);
	CHECK_EQ(xmit(&f), 1);
	set_now(T0 + WR_REFLECT_TTL_NS + 1);
	CHECK_EQ(xmit(&f), 0);
	CHECK_EQ(egress(&q), 1);
	CHECK_EQ(reflect_flows(), 1);
	set_now(T0 + 2 * WR_REFLECT_TTL_NS);
	CHECK_EQ(xmit(&f), 1);
	CHECK_EQ(rstat(0).dropped_pkts, 1);
}

/* Without a preset rule the egress program records nothing (and still never drops). */
DP_CASE(dp_reflect_egress_idle_without_preset_rule)
{
	struct weir_rule *r;
	struct frame q;

	query4(&q, NTP_SRV, 123, 40123, 0, NULL);
	CHECK_EQ(egress(&q), 1);
	r = add_rule(WEIR_ACT_DROP);
	match_proto(r, WR_IPPROTO_UDP);
	per_all(r, 1000, 1000);
	commit();
	CHECK_EQ(egress(&q), 1);
	CHECK_EQ(reflect_flows(), 0);
	add_reflect_rule();
	commit();
	CHECK_EQ(egress(&q), 1);
	CHECK_EQ(reflect_flows(), 1);
}

DP_CASE(dp_reflect_ipv6)
{
	__u8 srv[16], other[16];
	struct frame f;

	addr6(srv, 7, 7);
	addr6(other, 7, 8);
	add_reflect_rule();
	commit();
	reply6(&f, srv, 53, 40053);
	CHECK_EQ(xmit(&f), 0);
	query6(&f, srv, 53, 40053);
	CHECK_EQ(egress(&f), 1);
	reply6(&f, srv, 53, 40053);
	CHECK_EQ(xmit(&f), 1);
	reply6(&f, other, 53, 40053);
	CHECK_EQ(xmit(&f), 0);
	reply6(&f, srv, 53, 40054);
	CHECK_EQ(xmit(&f), 0);
	/* The IPv4 address of the same bits is another flow. */
	reply4(&f, NTP_SRV, 53, 40053, 0, NULL);
	CHECK_EQ(xmit(&f), 0);
	CHECK_EQ(rstat(0).dropped_pkts, 4);
}

DP_CASE(dp_reflect_vlan)
{
	struct frame f;

	add_reflect_rule();
	commit();
	reply4(&f, NTP_SRV, 123, 40123, 1, TAG_Q);
	CHECK_EQ(xmit(&f), 0);
	query4(&f, NTP_SRV, 123, 40123, 1, TAG_Q);
	CHECK_EQ(egress(&f), 1);
	reply4(&f, NTP_SRV, 123, 40123, 1, TAG_Q);
	CHECK_EQ(xmit(&f), 1);
	reply4(&f, NTP_SRV, 123, 40123, 2, TAG_QINQ);
	CHECK_EQ(xmit(&f), 1);
	reply4(&f, NTP_SRV, 123, 40999, 2, TAG_QINQ);
	CHECK_EQ(xmit(&f), 0);
	CHECK_EQ(rstat(0).dropped_pkts, 2);
}

/* A preset rule with a limit of its own: unsolicited replies are limited, not all dropped. */
DP_CASE(dp_reflect_with_limit)
{
	struct weir_rule *r = add_rule(WEIR_ACT_DROP);
	struct frame f;

	r->preset = WEIR_PRESET_REFLECT;
	match_proto(r, WR_IPPROTO_UDP);
	per_all(r, 1, 2);
	rs.reflect_rules = 1;
	commit();
	reply4(&f, NTP_SRV, 11211, 40000, 0, NULL);
	CHECK_EQ(xmit_n(&f, 5), 2);
	CHECK_EQ(rstat(0).dropped_pkts, 3);
}

#define TC_CASE(name)                 \
	static void tc_##name(void)   \
	{                             \
		tc_cases = 1;         \
		dp_##name();          \
		tc_cases = 0;         \
	}                             \
	CHECK_REGISTER(tc_##name);

TC_CASE(protocols_pass_without_rules)
TC_CASE(malformed_dropped_by_default)
TC_CASE(arp_passes_as_non_ip)
TC_CASE(vlan_limited_like_untagged)
TC_CASE(per_src_burst_then_rate)
TC_CASE(bytes_per_second)
TC_CASE(deny_list)
TC_CASE(check_then_charge)
TC_CASE(reflect_answer_passes_unsolicited_dropped)

/*
 * One mixed sequence through XDP and through TC, each on a fresh load: the
 * same verdict for every frame and the same global counters.
 */
static void run_mixed(int tc, char *verdicts, __u64 *counters)
{
	struct weir_rule *r;
	struct frame f, bad[8];
	int i, n = 0, nbad;
	__u8 a[16];

	if (setup())
		return;
	use_tc = tc;
	r = add_rule(WEIR_ACT_DROP);
	match_proto(r, WR_IPPROTO_UDP);
	per_src(r, 10, 3);
	per_all(r, 10, 20);
	r = add_rule(WEIR_ACT_DRYRUN);
	match_proto(r, WR_IPPROTO_TCP);
	per_src(r, 10, 1);
	commit();
	list_add4(skel->maps.wr_deny4, SRC_C, 32);
	CFG_SET(lists, WEIR_L_DENY4);
	nbad = malformed_frames(bad);
	addr6(a, 5, 5);
	for (i = 0; i < 60; i++) {
		set_now(T0 + (i / 10) * 50 * MSEC);
		switch (i % 6) {
		case 0:
			udp4(&f, SRC_A, 53);
			break;
		case 1:
			tcp4(&f, SRC_B, 80, WEIR_TCP_SYN);
			break;
		case 2:
			udp6(&f, a, 53);
			break;
		case 3:
			udp4(&f, SRC_C, 53);
			break;
		case 4:
			arp(&f);
			break;
		default:
			f = bad[i % nbad];
			break;
		}
		verdicts[n++] = '0' + xmit(&f);
	}
	verdicts[n] = 0;
	for (i = 0; i < WEIR_G_MAX; i++)
		counters[i] = g(i);
	teardown();
}

/* ------------------------------------------------------------------------ */
/* The further match fields: sport, dst, len, ttl, frag, dscp, payload      */
/* ------------------------------------------------------------------------ */

/* The rules of fields_rules(), by index. */
enum { FR_SPORT, FR_LEN, FR_TTL, FR_FNONE, FR_FFIRST, FR_FLATER, FR_FANY, FR_DSCP, FR_DST,
       FR_PAY, FR_PAYEND, FR_PAYTCP, FR_NR };

/*
 * One rule per field (per all, never refusing), so that which rules a
 * frame matched shows in their counters: fields_hits().
 */
static void fields_rules(void)
{
	struct weir_rule *r;
	int i;

	for (i = 0; i < FR_NR; i++) {
		r = add_rule(WEIR_ACT_DROP);
		per_all(r, 1000000, 1000000);
		switch (i) {
		case FR_SPORT:
			match_proto(r, WR_IPPROTO_UDP);
			r->sport_lo = 1000;
			r->sport_hi = 2000;
			break;
		case FR_LEN:
			r->len_lo = 60;
			r->len_hi = 100;
			break;
		case FR_TTL:
			r->ttl_lo = 30;
			r->ttl_hi = 64;
			break;
		case FR_FNONE:
		case FR_FFIRST:
		case FR_FLATER:
		case FR_FANY:
			r->frag = i - FR_FNONE;
			break;
		case FR_DSCP:
			r->dscp = 46;
			break;
		case FR_DST:
			/* 198.18.0.0/31 and 2001:db8::1/128 (DST6, what the frames are sent to) */
			r->nr_dst = 2;
			r->dst_family[0] = 4;
			r->dst_mask[0][0] = htonl(0xfffffffe);
			r->dst_net[0][0] = htonl(IP4(198, 18, 0, 0));
			r->dst_family[1] = 6;
			memcpy(r->dst_net[1], DST6, 16);
			memset(r->dst_mask[1], 0xff, 16);
			break;
		case FR_PAY:
			match_proto(r, WR_IPPROTO_UDP);
			r->nr_pay = 2;
			r->pay[0].off = 0;
			r->pay[0].mask = htonl(0xff000000);
			r->pay[0].value = htonl(0x17000000);
			r->pay[1].off = 8;
			r->pay[1].mask = 0xffffffffu;
			r->pay[1].value = htonl(0xdeadbeef);
			break;
		case FR_PAYEND:
			/* The last word an offset may name: bytes 1500 .. 1503. */
			match_proto(r, WR_IPPROTO_UDP);
			r->nr_pay = 1;
			r->pay[0].off = WEIR_PAY_MAX_OFF;
			r->pay[0].mask = 0xffffffffu;
			r->pay[0].value = htonl(0x01020304);
			break;
		case FR_PAYTCP:
			match_proto(r, WR_IPPROTO_TCP);
			r->nr_pay = 1;
			r->pay[0].mask = htonl(0xffff0000);
			r->pay[0].value = htonl(0x47450000);	/* "GE" */
			break;
		}
		r->xmatch = (__u8[]){ WEIR_X_SPORT, WEIR_X_LEN, WEIR_X_TTL, WEIR_X_FRAG, WEIR_X_FRAG,
				      WEIR_X_FRAG, WEIR_X_FRAG, WEIR_X_DSCP, WEIR_X_DST,
				      WEIR_X_PAYLOAD, WEIR_X_PAYLOAD, WEIR_X_PAYLOAD }[i];
	}
	commit();
}

/* The rules of fields_rules() f matched (bit FR_*), sent once; it must pass. */
static __u32 fields_hits(const struct frame *f)
{
	__u64 before[FR_NR];
	__u32 hits = 0;
	int i;

	for (i = 0; i < FR_NR; i++)
		before[i] = rstat(i).passed_pkts;
	CHECK_EQ(xmit(f), 1);
	for (i = 0; i < FR_NR; i++)
		if (rstat(i).passed_pkts != before[i])
			hits |= 1u << i;
	return hits;
}

/*
 * UDP/IPv4 behind vlans tags: from sport, payload paylen bytes of which
 * the first are pay (npay bytes), ttl, tos, to dst, IP flags/offset frag.
 */
static void fudp4(struct frame *f, int vlans, __u16 sport, const __u8 *pay, size_t npay,
		  size_t paylen, __u8 ttl, __u8 tos, __u32 dst, __u16 frag)
{
	struct frame l;
	size_t ip = 14 + 4 * vlans;

	l4_udp_from(&l, sport, 53, paylen);
	if (npay)	/* (pay may be NULL then: memcpy's source must not be) */
		memcpy(l.b + 8, pay, npay);
	eth(f, WR_ETH_P_IP, vlans, TAG_QINQ);
	ip4(f, SRC_A, WR_IPPROTO_UDP, 5, frag, 0, &l);
	f->b[ip + 1] = tos;
	f->b[ip + 8] = ttl;
	f->b[ip + 16] = dst >> 24;
	f->b[ip + 17] = dst >> 16;
	f->b[ip + 18] = dst >> 8;
	f->b[ip + 19] = dst;
}

#define BIT(x) (1u << (x))
/* What every plain UDP/IPv4 frame below matches besides: not a fragment, TTL 64, to dst. */
#define FR_PLAIN (BIT(FR_TTL) | BIT(FR_FNONE) | BIT(FR_DST))

/* Each field's edges, through one entry (tc: TC, else XDP). */
static void fields_edges(int tc)
{
	static const __u8 magic[12] = { 0x17, 0x99, 0x99, 0x99, 0, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef };
	/* A plain UDP/IPv4 frame with one field at or beside an edge of the rules' ranges. */
	static const struct edge {
		int vlans;
		__u16 sport;
		size_t paylen;
		__u8 ttl, tos;
		__u32 dst;	/* 0: 198.18.0.1 */
		__u16 frag;
		__u32 want;
	} edges[] = {
		/* sport 999, 1000, 2000, 2001; length 20 + 8 + 18 = 46 */
		{ 0, 999, 18, 64, 0, 0, 0, FR_PLAIN },
		{ 0, 1000, 18, 64, 0, 0, 0, FR_PLAIN | BIT(FR_SPORT) },
		{ 0, 2000, 18, 64, 0, 0, 0, FR_PLAIN | BIT(FR_SPORT) },
		{ 0, 2001, 18, 64, 0, 0, 0, FR_PLAIN },
		/* len 59, 60, 100, 101 (IP length = 28 + payload) */
		{ 0, 1, 31, 64, 0, 0, 0, FR_PLAIN },
		{ 0, 1, 32, 64, 0, 0, 0, FR_PLAIN | BIT(FR_LEN) },
		{ 0, 1, 72, 64, 0, 0, 0, FR_PLAIN | BIT(FR_LEN) },
		{ 0, 1, 73, 64, 0, 0, 0, FR_PLAIN },
		/* ttl 29, 30, 64, 65, behind one and two VLAN tags */
		{ 1, 1, 18, 29, 0, 0, 0, FR_PLAIN & ~BIT(FR_TTL) },
		{ 2, 1, 18, 30, 0, 0, 0, FR_PLAIN },
		{ 1, 1, 18, 64, 0, 0, 0, FR_PLAIN },
		{ 2, 1, 18, 65, 0, 0, 0, FR_PLAIN & ~BIT(FR_TTL) },
		/* dscp 45, 46, 47 (TOS is DSCP << 2, ECN bits set too) */
		{ 0, 1, 18, 64, 45 << 2 | 3, 0, 0, FR_PLAIN },
		{ 2, 1, 18, 64, 46 << 2 | 3, 0, 0, FR_PLAIN | BIT(FR_DSCP) },
		{ 0, 1, 18, 64, 47 << 2, 0, 0, FR_PLAIN },
		/* dst: the /31's two addresses in, the ones either side out */
		{ 0, 1, 18, 64, 0, IP4(198, 18, 0, 0), 0, FR_PLAIN },
		{ 0, 1, 18, 64, 0, IP4(198, 18, 0, 2), 0, FR_PLAIN & ~BIT(FR_DST) },
		{ 0, 1, 18, 64, 0, IP4(198, 17, 255, 255), 0, FR_PLAIN & ~BIT(FR_DST) },
		/* fragments: first (MF, offset 0) and later (offset 26 x 8, ports not there) */
		{ 0, 1, 18, 64, 0, 0, 0x2000,
		  BIT(FR_TTL) | BIT(FR_FFIRST) | BIT(FR_FANY) | BIT(FR_DST) },
		{ 0, 1500, 18, 64, 0, 0, 26,
		  BIT(FR_TTL) | BIT(FR_FLATER) | BIT(FR_FANY) | BIT(FR_DST) },
	};
	__u8 big[1504];
	struct frame f, l;
	__u32 dst = IP4(198, 18, 0, 1);
	size_t i;

	use_tc = tc;
	fields_rules();
	for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		const struct edge *e = &edges[i];
		__u32 got;

		fudp4(&f, e->vlans, e->sport, NULL, 0, e->paylen, e->ttl, e->tos,
		      e->dst ? e->dst : dst, e->frag);
		got = fields_hits(&f);
		if (got != e->want)
			fprintf(stderr, "edge %zu: hits 0x%x, want 0x%x\n", i, got, e->want);
		CHECK_EQ(got, e->want);
	}
	/* payload: both terms hold; the masked-out bytes differ freely; one byte off */
	fudp4(&f, 0, 1, magic, sizeof(magic), 18, 64, 0, dst, 0);
	CHECK_EQ(fields_hits(&f), FR_PLAIN | BIT(FR_PAY));
	fudp4(&f, 2, 1, magic, sizeof(magic), 12, 64, 0, dst, 0);
	CHECK_EQ(fields_hits(&f), FR_PLAIN | BIT(FR_PAY));
	{
		__u8 m[12];

		memcpy(m, magic, 12);
		m[11] ^= 1;
		fudp4(&f, 0, 1, m, 12, 18, 64, 0, dst, 0);
		CHECK_EQ(fields_hits(&f), FR_PLAIN);
	}
	/* a payload one byte too short for the second term's word: no match */
	fudp4(&f, 0, 1, magic, 11, 11, 64, 0, dst, 0);
	CHECK_EQ(fields_hits(&f), FR_PLAIN);
	/* the word at 1500 .. 1503: a payload of 1504 bytes holds it, of 1503 not */
	memset(big, 0, sizeof(big));
	big[1500] = 1;
	big[1501] = 2;
	big[1502] = 3;
	big[1503] = 4;
	fudp4(&f, 0, 1, big, 1504, 1504, 64, 0, dst, 0);
	CHECK_EQ(fields_hits(&f), (FR_PLAIN | BIT(FR_PAYEND)));
	fudp4(&f, 0, 1, big, 1503, 1503, 64, 0, dst, 0);
	CHECK_EQ(fields_hits(&f), FR_PLAIN);
	/* TCP: the payload starts after the options (doff 8: 12 bytes of them) */
	l4_tcp(&l, 80, WEIR_TCP_ACK, 8);
	putn(&l, "GET / HTTP/1.1", 14);
	frame4(&f, SRC_A, WR_IPPROTO_TCP, &l);
	CHECK_EQ(fields_hits(&f), FR_PLAIN | BIT(FR_LEN) | BIT(FR_PAYTCP));
	/* the same bytes inside the options are not the payload */
	l4_tcp(&l, 80, WEIR_TCP_ACK, 8);
	l.b[20] = 'G';
	l.b[21] = 'E';
	putn(&l, "POST", 4);
	frame4(&f, SRC_A, WR_IPPROTO_TCP, &l);
	CHECK_EQ(fields_hits(&f), FR_PLAIN | BIT(FR_PAYTCP) * 0);
	clear_rules();
}

DP_CASE(dp_match_fields_xdp)
{
	fields_edges(0);
}

DP_CASE(dp_match_fields_tc)
{
	fields_edges(1);
}

/* IPv6: hop limit, traffic class, destination, extension headers before the payload, fragments. */
static void fields_v6(int tc)
{
	static const __u8 chain[] = { WR_IPPROTO_HOPOPTS, WR_IPPROTO_DSTOPTS, WR_IPPROTO_ROUTING };
	static const __u8 frag[] = { WR_IPPROTO_FRAGMENT };
	static const __u8 magic[12] = { 0x17, 0, 0, 0, 0, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef };
	struct frame f;
	__u8 a[16];
	size_t l4;

	use_tc = tc;
	fields_rules();
	addr6(a, 1, 1);
	/* three extension headers, then UDP with the payload terms: ttl 64, dst DST6 */
	udp6_ext(&f, a, chain, 3, 0, 53);
	l4 = f.n - 28;			/* udp6_ext's UDP header and its 20 bytes */
	memcpy(f.b + l4 + 8, magic, sizeof(magic));
	CHECK_EQ(fields_hits(&f), FR_PLAIN | BIT(FR_PAY) | BIT(FR_LEN) * (f.n - 14 <= 100));
	/* hop limit 65 and traffic class 0xb8 (DSCP 46) */
	f.b[14 + 7] = 65;
	f.b[14] = 0x6b;
	f.b[15] = 0x80;
	CHECK_EQ(fields_hits(&f), (FR_PLAIN & ~BIT(FR_TTL)) | BIT(FR_PAY) | BIT(FR_DSCP) |
				  BIT(FR_LEN) * (f.n - 14 <= 100));
	/* another destination */
	udp6_ext(&f, a, chain, 3, 0, 53);
	f.b[14 + 24 + 15] ^= 1;
	CHECK_EQ(fields_hits(&f), (FR_PLAIN & ~BIT(FR_DST)) | BIT(FR_LEN) * (f.n - 14 <= 100));
	/* a first IPv6 fragment, then a later one */
	udp6_ext(&f, a, frag, 1, 1, 53);
	CHECK_EQ(fields_hits(&f), BIT(FR_TTL) | BIT(FR_FFIRST) | BIT(FR_FANY) | BIT(FR_DST) |
				  BIT(FR_LEN));
	udp6_ext(&f, a, frag, 1, 100 << 3, 53);
	CHECK_EQ(fields_hits(&f), BIT(FR_TTL) | BIT(FR_FLATER) | BIT(FR_FANY) | BIT(FR_DST) |
				  BIT(FR_LEN));
	clear_rules();
}

/*
 * Payload words past the linear head: test_run hands XDP a frame longer
 * than one buffer (XDP_ONE_BUFFER, 3520 bytes on x86-64) as a multi-buffer
 * frame. Two IPv6 extension headers (2048 + 1408 bytes) put the UDP header
 * at 3510: its first payload word straddles the head's end and the second
 * lies in a fragment, both read through bpf_xdp_load_bytes.
 */
DP_CASE(dp_match_payload_past_the_linear_head)
{
	static const __u8 magic[12] = { 0x17, 0, 0, 0, 0, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef };
	struct frame f, pl, l;
	__u8 a[16];

	if (!skel->rodata->has_frags) {
		CHECK_SKIP("no multi-buffer XDP on this kernel");
		return;
	}
	use_tc = 0;
	fields_rules();
	addr6(a, 1, 1);
	pl.n = 0;
	put8(&pl, WR_IPPROTO_DSTOPTS);	/* hop-by-hop: (255 + 1) x 8 bytes of Pad1 */
	put8(&pl, 255);
	zeros(&pl, 2046);
	put8(&pl, WR_IPPROTO_UDP);	/* destination options: (175 + 1) x 8 bytes */
	put8(&pl, 175);
	zeros(&pl, 1406);
	l4_udp_from(&l, 1, 53, 20);
	memcpy(l.b + 8, magic, sizeof(magic));
	putn(&pl, l.b, l.n);
	frame6(&f, a, WR_IPPROTO_HOPOPTS, &pl);
	CHECK_EQ(f.n, 14 + 40 + 2048 + 1408 + 8 + 20);
	CHECK_EQ(fields_hits(&f), FR_PLAIN | BIT(FR_PAY));
	f.b[f.n - 20 + 11] ^= 1;	/* the second word, in the fragment, one bit off */
	CHECK_EQ(fields_hits(&f), FR_PLAIN);
	clear_rules();
}

DP_CASE(dp_match_fields_ipv6_xdp)
{
	fields_v6(0);
}

DP_CASE(dp_match_fields_ipv6_tc)
{
	fields_v6(1);
}

/*
 * f once through the entry (tc: TC, else XDP) as arrived on ifindex: XDP's
 * ctx_in ingress_ifindex (with its rx queue 0), TC's ifindex (test_run
 * takes no ingress_ifindex for an skb; weir reads skb->ifindex at TC).
 * The interface must exist in this network namespace. 1 passed, 0 dropped.
 */
static int xmit_on(const struct frame *f, int tc, __u32 ifindex)
{
	static __u8 out[sizeof(f->b) + 512];
	struct xdp_md xctx = { .data_end = f->n, .ingress_ifindex = ifindex };
	struct __sk_buff sctx = { .ifindex = ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->b, .data_size_in = f->n, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);

	o.ctx_in = tc ? (void *)&sctx : (void *)&xctx;
	o.ctx_size_in = tc ? sizeof(sctx) : sizeof(xctx);
	if (bpf_prog_test_run_opts(bpf_program__fd(tc ? skel->progs.weir_tc :
							skel->progs.weir_xdp), &o)) {
		CHECK_FAIL("%s test_run on ifindex %u: %s", tc ? "tc" : "xdp", ifindex,
			   strerror(errno));
		return -1;
	}
	if (tc)
		return o.retval == TC_ACT_OK ? 1 : o.retval == TC_ACT_SHOT ? 0 : -2;
	return o.retval == XDP_PASS ? 1 : o.retval == XDP_DROP ? 0 : -2;
}

/* An ifindex no interface has here (the kernel allocates from 1 upwards). */
#define IFINDEX_ELSEWHERE 0x7ffffff0

/*
 * iface: a rule for lo (ifindex 1) drops lo's flood past its burst; the
 * same rule for an interface the packets did not arrive on never sees
 * them; with sport, both must hold.
 */
static void iface_case(int tc)
{
	struct weir_rule *r;
	struct frame f;
	int i, passed;

	use_tc = tc;
	r = add_rule(WEIR_ACT_DROP);		/* 0: iface lo, 1 pps burst 2 */
	per_all(r, 1, 2);
	r->xmatch = WEIR_X_IFACE;
	r->ifindex = 1;
	r = add_rule(WEIR_ACT_DROP);		/* 1: elsewhere, 1 pps burst 1 */
	per_all(r, 1, 1);
	r->xmatch = WEIR_X_IFACE;
	r->ifindex = IFINDEX_ELSEWHERE;
	r = add_rule(WEIR_ACT_DROP);		/* 2: lo and sport 1000-2000, never refusing */
	per_all(r, 1000000, 1000000);
	match_proto(r, WR_IPPROTO_UDP);
	r->xmatch = WEIR_X_IFACE | WEIR_X_SPORT;
	r->ifindex = 1;
	r->sport_lo = 1000;
	r->sport_hi = 2000;
	commit();
	fudp4(&f, 0, 999, NULL, 0, 18, 64, 0, IP4(198, 18, 0, 1), 0);
	for (i = 0, passed = 0; i < 5; i++)
		passed += xmit_on(&f, tc, 1) == 1;
	CHECK_EQ(passed, 2);
	CHECK_EQ(rstat(0).dropped_pkts, 3);
	CHECK_EQ(rstat(1).passed_pkts + rstat(1).dropped_pkts, 0);
	CHECK_EQ(rstat(2).passed_pkts + rstat(2).dropped_pkts, 0);
	/* sport 1000 on lo: rule 0, over its burst, drops it */
	fudp4(&f, 0, 1000, NULL, 0, 18, 64, 0, IP4(198, 18, 0, 1), 0);
	CHECK_EQ(xmit_on(&f, tc, 1), 0);
	CHECK_EQ(rstat(0).dropped_pkts, 4);
	CHECK_EQ(rstat(1).passed_pkts + rstat(1).dropped_pkts, 0);
	/* test_run without a context: lo's too */
	CHECK_EQ(xmit(&f), 0);
	CHECK_EQ(rstat(0).dropped_pkts, 5);
	/* the rule for lo, now for another interface: lo's packets pass it by */
	rs.rules[0].ifindex = IFINDEX_ELSEWHERE - 1;
	commit();
	for (i = 0, passed = 0; i < 3; i++)
		passed += xmit_on(&f, tc, 1) == 1;
	CHECK_EQ(passed, 3);
	CHECK_EQ(rstat(0).dropped_pkts + rstat(0).passed_pkts, 5 + 2);
	CHECK_EQ(rstat(2).passed_pkts, 3);
	clear_rules();
}

DP_CASE(dp_match_iface_xdp)
{
	iface_case(0);
}

DP_CASE(dp_match_iface_tc)
{
	iface_case(1);
}

/* wr_if_stats[h], summed over CPUs. */
static struct weir_if_stats ifstat(__u32 h)
{
	struct weir_if_stats s;

	percpu_sum(skel->maps.wr_if_stats, h, &s, sizeof(s));
	return s;
}

static void if_owner(__u32 h, __u32 ifindex)
{
	if (bpf_map__update_elem(skel->maps.wr_if_slot, &h, 4, &ifindex, 4, 0))
		CHECK_FAIL("writing wr_if_slot[%u]: %s", h, strerror(errno));
}

/*
 * Per-interface counters: lo's frames (ifindex 1) go to the slot that
 * names it, found at 1 or, with 1 taken by another ifindex of the same
 * low bits, at 2; none without a slot.
 */
static void ifcount_case(int tc)
{
	struct weir_if_stats a, b;
	struct weir_rule *r;
	struct frame f;
	int i;

	use_tc = tc;
	r = add_rule(WEIR_ACT_DROP);
	per_all(r, 1, 2);
	commit();
	udp4(&f, SRC_A, 53);
	/* No slot: nothing counted, the verdicts as ever. */
	if_owner(1, 0);
	if_owner(2, 0);
	a = ifstat(1);
	CHECK_EQ(xmit_on(&f, tc, 1), 1);
	b = ifstat(1);
	CHECK_EQ(b.passed_pkts - a.passed_pkts, 0);
	/* Slot 1: one passed (the burst's second), three dropped, their bytes. */
	if_owner(1, 1);
	a = ifstat(1);
	for (i = 0; i < 4; i++)
		xmit_on(&f, tc, 1);
	b = ifstat(1);
	CHECK_EQ(b.passed_pkts - a.passed_pkts, 1);
	CHECK_EQ(b.dropped_pkts - a.dropped_pkts, 3);
	CHECK_EQ(b.passed_bytes - a.passed_bytes, f.n);
	CHECK_EQ(b.dropped_bytes - a.dropped_bytes, 3 * f.n);
	/* Slot 1 another's (1 + 256): lo's frames found at the next probe. */
	if_owner(1, 1 + WEIR_IF_SLOTS);
	if_owner(2, 1);
	a = ifstat(2);
	CHECK_EQ(xmit_on(&f, tc, 1), 0);
	b = ifstat(2);
	CHECK_EQ(b.dropped_pkts - a.dropped_pkts, 1);
	a = ifstat(1);
	CHECK_EQ(xmit(&f), 0);
	CHECK_EQ(ifstat(1).dropped_pkts - a.dropped_pkts, 0);
	CHECK_EQ(ifstat(2).dropped_pkts - b.dropped_pkts, 1);
	if_owner(1, 0);
	if_owner(2, 0);
	clear_rules();
}

DP_CASE(dp_interface_counters_xdp)
{
	ifcount_case(0);
}

DP_CASE(dp_interface_counters_tc)
{
	ifcount_case(1);
}

/*
 * action block: every packet the rule matches is dropped and counted
 * against it, whatever the rules after it would admit, and no bucket of
 * theirs is charged; other ports pass. Under the kill switch a would-drop;
 * with spare verified a verified source goes by to the next rule.
 */
DP_CASE(dp_action_block)
{
	struct weir_rule *r;
	struct weir_state st;
	struct frame f;

	r = add_rule(WEIR_ACT_BLOCK);
	match_proto(r, WR_IPPROTO_UDP);
	match_dport(r, 53, 53);
	r = add_rule(WEIR_ACT_DROP);
	match_proto(r, WR_IPPROTO_UDP);
	per_src(r, 1000, 1000);
	commit();

	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit_n(&f, 10), 0);
	CHECK_EQ(rstat(0).dropped_pkts, 10);
	CHECK_EQ(rstat(1).passed_pkts + rstat(1).dropped_pkts, 0);
	CHECK(state_get4(r, 0, SRC_A, &st), "rule 1 charged SRC_A a bucket");
	CHECK_EQ(g(WEIR_G_DROPPED), 10);
	udp4(&f, SRC_A, 54);
	CHECK_EQ(xmit_n(&f, 3), 3);
	CHECK_EQ(rstat(1).passed_pkts, 3);

	CFG_SET(disabled, 1);
	udp4(&f, SRC_A, 53);
	CHECK_EQ(xmit_n(&f, 4), 4);
	CHECK_EQ(rstat(0).wdrop_pkts, 4);
	CHECK_EQ(g(WEIR_G_WOULD_DROP), 4);
	CFG_SET(disabled, 0);

	rs.rules[0].flags |= WEIR_RF_SPARE_VERIFIED;
	commit();
	CFG_SET(verified_ttl_ns, 60 * SEC);
	verify4(SRC_A, T0 - SEC, 0);
	CHECK_EQ(xmit_n(&f, 5), 5);
	udp4(&f, SRC_B, 53);
	CHECK_EQ(xmit_n(&f, 5), 0);
	CHECK_EQ(g(WEIR_G_VERIFIED_UNMATCHED), 5);
}

TEST_CASE(tc_same_verdicts_as_xdp)
{
	char vx[64], vt[64];
	__u64 cx[WEIR_G_MAX], ct[WEIR_G_MAX];
	int i;

	memset(vx, 0, sizeof(vx));
	memset(vt, 0, sizeof(vt));
	run_mixed(0, vx, cx);
	if (check_failed)
		return;
	run_mixed(1, vt, ct);
	CHECK(!strcmp(vx, vt), "verdicts differ:\n  xdp %s\n  tc  %s", vx, vt);
	for (i = 0; i < WEIR_G_MAX; i++)
		CHECK(cx[i] == ct[i], "counter %d: xdp %llu tc %llu", i,
		      (unsigned long long)cx[i], (unsigned long long)ct[i]);
	/* and the sequence did exercise both verdicts */
	CHECK(strchr(vx, '0') && strchr(vx, '1'), "verdicts all alike: %s", vx);
}

int main(void)
{
	int err;

	agg_base = AGG_BASE;
	err = harness_start("bpf_datapath");
	if (err)
		return err > 0;
	teardown();

	return check_run_all();
}
