// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Hostile frames through the real BPF object (bpf_prog_test_run_opts), each
 * with the verdict and the counters it must produce, through the XDP entry
 * and the TC entry alike.
 *
 * The object is loaded as tests/bpf_harness.h loads it (manual clock,
 * nothing pinned) with a fixed set of probe rules, each generous enough
 * never to refuse anything, so that what a rule counted says what it
 * matched:
 *   R_UDP53   proto udp dport 53        R_UDPANY  proto udp (no ports)
 *   R_SYN80   proto tcp dport 80 syn    R_TCPANY  proto tcp (no ports)
 *   R_ECHO4   icmp type 8               R_UNREACH icmp type 3
 *   R_ECHO6   icmpv6 type 128           R_BYTES   everything, in bytes
 * For every frame: exactly one of non-IP / parsed / malformed counts it,
 * passed or dropped counts it, exactly the expected rules count it as
 * passed, and R_BYTES is charged exactly its IP length.
 *
 * Then faults: per-source keys whose set is not in wr_state (wr_config
 * claims more sets than the map has), with fail open and with fail closed;
 * and eviction from a table of a few sets: far more sources than ways must
 * never fault nor refuse a new source its burst, a source deep in its limit
 * keeps its way while its set has ways nearer to full, and an evicted one
 * reads as full again.
 */
#include <unistd.h>

#include "bpf_harness.h"

/* The probe rules, by index in the rule set. */
enum {
	R_UDP53, R_SYN80, R_ECHO4, R_UDPANY, R_ECHO6, R_UNREACH, R_TCPANY, R_BYTES, R_NR
};
static const char *const rule_names[R_NR] = {
	"udp53", "syn80", "echo4", "udpany", "echo6", "unreach", "tcpany", "bytes",
};
#define BIT(r) (1u << (r))

/* What a frame must do. */
enum cls { C_NON_IP, C_PARSED, C_MALFORMED };
static const char *const cls_names[] = { "non-IP", "parsed", "malformed" };

struct expect {
	enum cls cls;
	unsigned int rules;	/* BIT(R_*) of the rules that count it as passed */
	__u32 cost;		/* IP length R_BYTES is charged (parsed frames) */
};

static int malformed_pass;	/* the object's `set malformed pass` */
static int frames_run;		/* frames sent in the current case, both entries */
static int xdp_not_run;		/* frames beyond one buffer, where XDP has no multi-buffer */
/* Shortest frames test_run takes through the TC entry: IPv4, IPv6, tagged. */
static int tc_min4, tc_min6, tc_minq;
/* Longest frame test_run takes through the TC entry (a linear skb in a page). */
static int tc_max;
/*
 * The largest XDP frame that is one buffer: a page less XDP_PACKET_HEADROOM
 * and the skb_shared_info tailroom (4096 - 256 - 320, x86-64). test_run
 * hands longer ones over as multi-buffer frames.
 */
#define XDP_ONE_BUFFER	3520

/* ------------------------------------------------------------------------ */
/* Rules and maps                                                           */
/* ------------------------------------------------------------------------ */

/* commit(), with the case's malformed_pass in the same write of wr_config. */
static void commit_with_malformed_pass(void)
{
	struct weir_config c;

	if (stage_rules(&c))
		return;
	c.malformed_pass = malformed_pass;
	cfg_put(&c);
}

static struct weir_limit *add_limit(struct weir_rule *r, __u64 rate, __u64 burst, int cost,
				      int key, __u16 agg_slot)
{
	struct weir_limit *l = &r->limits[r->nr_limits++];

	limit_init(l, WEIR_ALGO_GCRA, rate, 1000, burst, cost, key, 32, 128);
	l->agg_slot = agg_slot;
	return l;
}

/* The next rule of rs, named name. */
static struct weir_rule *add_named_rule(const char *name)
{
	__u32 i = rs.nr_rules++;
	struct weir_rule *r = &rs.rules[i];

	memset(r, 0, sizeof(*r));
	r->uid = 100 + i;
	r->slot = 10 + i;	/* not the index: slot/index mix-ups show */
	snprintf(rs.names[i], WEIR_NAME_LEN, "%s", name);
	return r;
}

/* The probe rules: each one rule-wide limit that never refuses. */
static void probe_rules(void)
{
	struct weir_rule *r;
	int i;

	memset(&rs, 0, sizeof(rs));
	for (i = 0; i < R_NR; i++) {
		r = add_named_rule(rule_names[i]);
		switch (i) {
		case R_UDP53:
			match_proto(r, WR_IPPROTO_UDP);
			r->match |= WEIR_M_DPORT;
			r->dport_lo = r->dport_hi = 53;
			break;
		case R_SYN80:
			match_proto(r, WR_IPPROTO_TCP);
			r->match |= WEIR_M_DPORT | WEIR_M_TCPFLAGS;
			r->dport_lo = r->dport_hi = 80;
			r->tcp_value = WEIR_TCP_SYN;
			r->tcp_mask = WEIR_TCP_SYN | WEIR_TCP_ACK;
			break;
		case R_ECHO4:
		case R_UNREACH:
		case R_ECHO6:
			match_proto(r, i == R_ECHO6 ? WR_IPPROTO_ICMPV6 : WR_IPPROTO_ICMP);
			r->match |= WEIR_M_ICMPTYPE;
			r->icmp_type = i == R_ECHO4 ? 8 : i == R_UNREACH ? 3 : 128;
			break;
		case R_UDPANY:
			match_proto(r, WR_IPPROTO_UDP);
			break;
		case R_TCPANY:
			match_proto(r, WR_IPPROTO_TCP);
			break;
		default:
			break;
		}
		/* 10^9 per second, a burst of 10^9: never refuses here */
		add_limit(r, 1000000000ULL, 1000000000ULL,
			  i == R_BYTES ? WEIR_COST_BYTE : WEIR_COST_PKT, WEIR_KEY_ALL, 7 + i);
	}
	commit_with_malformed_pass();
}

/* passed packets and passed bytes of the probe rule i */
static void rule_passed(int i, __u64 *pkts, __u64 *bytes)
{
	struct weir_rule_stats v[ncpu];
	__u32 key = 10 + i;
	int c;

	*pkts = *bytes = 0;
	if (bpf_map__lookup_elem(skel->maps.wr_rule_stats, &key, 4, v, sizeof(v), 0)) {
		CHECK_FAIL("reading wr_rule_stats[%u]: %s", key, strerror(errno));
		return;
	}
	for (c = 0; c < ncpu; c++) {
		*pkts += v[c].passed_pkts + v[c].dropped_pkts;
		*bytes += v[c].passed_bytes;
	}
}

/* Every frame is non-IP, parsed or malformed, and non-IP, passed or dropped. */
static void check_balance(void)
{
	__u64 pk = g(WEIR_G_PACKETS), non = g(WEIR_G_NON_IP), par = g(WEIR_G_PARSED),
	      mal = g(WEIR_G_MALFORMED), pas = g(WEIR_G_PASSED), dro = g(WEIR_G_DROPPED);

	CHECK(pk == non + par + mal && pk == non + pas + dro,
	      "counters do not balance: packets %llu, non-IP %llu parsed %llu malformed %llu, "
	      "passed %llu dropped %llu", (unsigned long long)pk, (unsigned long long)non,
	      (unsigned long long)par, (unsigned long long)mal, (unsigned long long)pas,
	      (unsigned long long)dro);
}

/* ------------------------------------------------------------------------ */
/* One frame, both entries, every counter                                   */
/* ------------------------------------------------------------------------ */

struct snap {
	__u64 g[WEIR_G_MAX];
	__u64 pkts[R_NR], bytes[R_NR];
};

static void snap(struct snap *s)
{
	int i;

	for (i = 0; i < WEIR_G_MAX; i++)
		s->g[i] = g(i);
	for (i = 0; i < R_NR; i++)
		rule_passed(i, &s->pkts[i], &s->bytes[i]);
}

/* Every mismatch is printed as a comment; the first fails the case. */
static void mismatch(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void mismatch(const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("# %s\n", buf);
	CHECK_FAIL("%s", buf);
}

static void rules_text(unsigned int mask, char *buf, size_t len)
{
	size_t off = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < R_NR && off < len; i++)
		if (mask & BIT(i))
			off += snprintf(buf + off, len - off, "%s%s", off ? "," : "",
					rule_names[i]);
	if (!off)
		snprintf(buf, len, "none");
}

/* The shortest frame of f's ethertype the TC entry's test_run takes. */
static size_t tc_min_of(const struct frame *f)
{
	__u16 type = f->n >= 14 ? f->b[12] << 8 | f->b[13] : 0;

	if (type == WR_ETH_P_IP)
		return tc_min4;
	if (type == WR_ETH_P_IPV6)
		return tc_min6;
	if (type == WR_ETH_P_8021Q || type == WR_ETH_P_8021AD)
		return tc_minq;
	return 14;
}

/* Send f through the XDP and the TC entry; check everything it must do. */
static void frame_is(const char *name, const struct frame *f, struct expect e)
{
	int tc;

	for (tc = 0; tc < 2; tc++) {
		const char *entry = tc ? "tc" : "xdp";
		int want = e.cls == C_NON_IP || e.cls == C_PARSED || malformed_pass;
		int got, err, i, cls_hits = 0;
		unsigned int rules = 0;
		struct snap a, b;

		if (tc && (f->n < tc_min_of(f) || f->n > (size_t)tc_max))
			break;	/* test_run refuses it; the XDP entry ran the same core */
		/*
		 * A kernel without multi-buffer XDP never gives its XDP
		 * program a frame beyond one buffer (native XDP refuses such
		 * an MTU, generic XDP makes the frame linear): TC's run checks it.
		 */
		if (!tc && !skel->rodata->has_frags && f->n > XDP_ONE_BUFFER) {
			xdp_not_run++;
			continue;
		}
		snap(&a);
		got = run_frame(f, tc, &err);
		frames_run++;
		if (got == -1) {
			mismatch("%s (%zu bytes) %s: test_run refused it: %s", name, f->n, entry,
				 strerror(-err));
			continue;
		}
		snap(&b);
		if (got != want)
			mismatch("%s %s: %s, want %s", name, entry, got == 1 ? "passed" :
				 got == 0 ? "dropped" : "odd verdict", want ? "passed" : "dropped");
		if (b.g[WEIR_G_PACKETS] - a.g[WEIR_G_PACKETS] != 1)
			mismatch("%s %s: packets +%llu", name, entry, (unsigned long long)
				 (b.g[WEIR_G_PACKETS] - a.g[WEIR_G_PACKETS]));
		cls_hits += b.g[WEIR_G_NON_IP] != a.g[WEIR_G_NON_IP];
		cls_hits += b.g[WEIR_G_PARSED] != a.g[WEIR_G_PARSED];
		cls_hits += b.g[WEIR_G_MALFORMED] != a.g[WEIR_G_MALFORMED];
		{
			int idx = e.cls == C_NON_IP ? WEIR_G_NON_IP :
				  e.cls == C_PARSED ? WEIR_G_PARSED : WEIR_G_MALFORMED;
			const char *seen = b.g[WEIR_G_NON_IP] != a.g[WEIR_G_NON_IP] ? "non-IP" :
					   b.g[WEIR_G_PARSED] != a.g[WEIR_G_PARSED] ? "parsed" :
					   b.g[WEIR_G_MALFORMED] != a.g[WEIR_G_MALFORMED] ?
					   "malformed" : "nothing";

			if (cls_hits != 1 || b.g[idx] - a.g[idx] != 1)
				mismatch("%s %s: counted %s, want %s", name, entry, seen,
					 cls_names[e.cls]);
		}
		if (e.cls != C_NON_IP &&
		    b.g[got == 1 ? WEIR_G_PASSED : WEIR_G_DROPPED] -
			    a.g[got == 1 ? WEIR_G_PASSED : WEIR_G_DROPPED] != 1)
			mismatch("%s %s: passed/dropped counters do not follow the verdict", name,
				 entry);
		if (b.g[WEIR_G_FAULT] != a.g[WEIR_G_FAULT])
			mismatch("%s %s: an internal fault", name, entry);
		for (i = 0; i < R_NR; i++)
			if (b.pkts[i] != a.pkts[i])
				rules |= BIT(i);
		if (rules != e.rules) {
			char have[128], wantr[128];

			rules_text(rules, have, sizeof(have));
			rules_text(e.rules, wantr, sizeof(wantr));
			mismatch("%s %s: matched %s, want %s", name, entry, have, wantr);
		}
		if (e.cls == C_PARSED && (e.rules & BIT(R_BYTES)) &&
		    b.bytes[R_BYTES] - a.bytes[R_BYTES] != e.cost)
			mismatch("%s %s: charged %llu bytes, want the IP length %u", name, entry,
				 (unsigned long long)(b.bytes[R_BYTES] - a.bytes[R_BYTES]), e.cost);
	}
}

static struct expect malformed(void)
{
	return (struct expect){ .cls = C_MALFORMED };
}

static struct expect non_ip(void)
{
	return (struct expect){ .cls = C_NON_IP };
}

/* Parsed: matched by these rules and R_BYTES, charged cost bytes. */
static struct expect parsed(unsigned int rules, __u32 cost)
{
	return (struct expect){ .cls = C_PARSED, .rules = rules | BIT(R_BYTES), .cost = cost };
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                   */
/* ------------------------------------------------------------------------ */

static const __u32 SRC = IP4(198, 18, 7, 7);
static const __u8 SRC6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7 };

/* Offsets in a frame: where L3 and L4 start, how long the L4 header is. */
struct layout {
	size_t l3, l4, l4hdr;
	int v6;
};

/* IPv4 options: NOPs and an end, ihl words in all. */
static void ip4_opts(struct frame *f, __u32 src, __u8 proto, __u8 ihl, __u16 frag,
		     const struct frame *l4)
{
	size_t o = f->n;

	ip4(f, src, proto, ihl, frag, 0, l4);
	if (ihl > 5) {
		memset(f->b + o + 20, 1, (ihl - 5) * 4);	/* NOP */
		f->b[o + ihl * 4 - 1] = 0;			/* end of options */
	}
}

/* Set the IPv4 total length (l3 at off) / the IPv6 payload length. */
static void set_tot(struct frame *f, size_t l3, unsigned int v)
{
	f->b[l3 + 2] = v >> 8;
	f->b[l3 + 3] = v & 0xff;
}

static void set_plen(struct frame *f, size_t l3, unsigned int v)
{
	f->b[l3 + 4] = v >> 8;
	f->b[l3 + 5] = v & 0xff;
}

/* An IPv6 extension header of type t (length in 8-octet units for most). */
static void ext(struct frame *pl, __u8 t, __u8 next, __u8 len)
{
	put8(pl, next);
	if (t == WR_IPPROTO_FRAGMENT) {
		put8(pl, 0);
		put16(pl, 0);	/* offset 0, M clear: an atomic fragment */
		put32(pl, 77);
		return;
	}
	put8(pl, len);
	if (t == WR_IPPROTO_AH)
		zeros(pl, (len + 2) * 4 - 2);
	else
		zeros(pl, (len + 1) * 8 - 2);
}

/* The frames every truncation case cuts, with their layout. */
static int base_frames(struct frame *fs, struct layout *ly, const char **names)
{
	struct frame l, pl;
	int n = 0;

	l4_udp(&l, 53, 10);
	frame4(&fs[n], SRC, WR_IPPROTO_UDP, &l);
	ly[n] = (struct layout){ 14, 34, 8, 0 };
	names[n++] = "udp4";
	l4_tcp(&l, 80, WEIR_TCP_SYN, 8);
	frame4(&fs[n], SRC, WR_IPPROTO_TCP, &l);
	ly[n] = (struct layout){ 14, 34, 32, 0 };
	names[n++] = "tcp4-options";
	l4_icmp(&l, 8, 16);
	frame4(&fs[n], SRC, WR_IPPROTO_ICMP, &l);
	ly[n] = (struct layout){ 14, 34, 8, 0 };
	names[n++] = "icmp4";
	l4_udp(&l, 53, 10);
	eth(&fs[n], WR_ETH_P_IP, 0, NULL);
	ip4_opts(&fs[n], SRC, WR_IPPROTO_UDP, 9, 0, &l);
	ly[n] = (struct layout){ 14, 50, 8, 0 };
	names[n++] = "udp4-ihl9";
	eth(&fs[n], WR_ETH_P_IP, 1, TAG_Q);
	ip4(&fs[n], SRC, WR_IPPROTO_UDP, 5, 0, 0, &l);
	ly[n] = (struct layout){ 18, 38, 8, 0 };
	names[n++] = "udp4-vlan";
	eth(&fs[n], WR_ETH_P_IPV6, 2, TAG_QINQ);
	ip6(&fs[n], SRC6, WR_IPPROTO_UDP, 64, -1, &l);
	ly[n] = (struct layout){ 22, 62, 8, 1 };
	names[n++] = "udp6-qinq";
	l4_tcp(&l, 80, WEIR_TCP_SYN, 5);
	frame6(&fs[n], SRC6, WR_IPPROTO_TCP, &l);
	ly[n] = (struct layout){ 14, 54, 20, 1 };
	names[n++] = "tcp6";
	l4_icmp(&l, 128, 8);
	frame6(&fs[n], SRC6, WR_IPPROTO_ICMPV6, &l);
	ly[n] = (struct layout){ 14, 54, 8, 1 };
	names[n++] = "icmp6";
	/* hop-by-hop, destination options, routing, fragment (first), UDP */
	l4_udp(&l, 53, 10);
	pl.n = 0;
	ext(&pl, WR_IPPROTO_HOPOPTS, WR_IPPROTO_DSTOPTS, 0);
	ext(&pl, WR_IPPROTO_DSTOPTS, WR_IPPROTO_ROUTING, 1);
	ext(&pl, WR_IPPROTO_ROUTING, WR_IPPROTO_FRAGMENT, 0);
	ext(&pl, WR_IPPROTO_FRAGMENT, WR_IPPROTO_UDP, 0);
	putn(&pl, l.b, l.n);
	frame6(&fs[n], SRC6, WR_IPPROTO_HOPOPTS, &pl);
	ly[n] = (struct layout){ 14, 54, 40 + 8, 1 };
	names[n++] = "udp6-ext-chain";
	/* AH, then TCP */
	l4_tcp(&l, 80, WEIR_TCP_SYN, 5);
	pl.n = 0;
	ext(&pl, WR_IPPROTO_AH, WR_IPPROTO_TCP, 4);
	putn(&pl, l.b, l.n);
	frame6(&fs[n], SRC6, WR_IPPROTO_AH, &pl);
	ly[n] = (struct layout){ 14, 54, 24 + 20, 1 };
	names[n++] = "tcp6-ah";
	return n;
}

/* What a base frame matches when whole. */
static unsigned int base_rules(const char *name)
{
	if (strstr(name, "udp"))
		return BIT(R_UDP53) | BIT(R_UDPANY);
	if (strstr(name, "tcp"))
		return BIT(R_SYN80) | BIT(R_TCPANY);
	if (!strcmp(name, "icmp4"))
		return BIT(R_ECHO4);
	return BIT(R_ECHO6);
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * HOSTILE_CASE(name) { body }: a fresh object with the probe rules; after
 * the body, the global counters must balance.
 */
#define HOSTILE_CASE(name)                                                      \
	static void name##_body(void);                                          \
	static void name(void)                                                  \
	{                                                                       \
		if (setup())                                                    \
			return;                                                 \
		frames_run = 0;                                                 \
		xdp_not_run = 0;                                                \
		probe_rules();                                                  \
		name##_body();                                                  \
		check_balance();                                                \
		printf("# %s: %d runs (xdp, and tc)\n", #name, frames_run);     \
		if (xdp_not_run)                                                \
			printf("# %s: %d frames beyond one buffer not run "     \
			       "through XDP (no multi-buffer XDP)\n", #name,    \
			       xdp_not_run);                                    \
		if (!frames_run)                                                \
			CHECK_SKIP("no frame of this case can reach this "      \
				   "kernel's XDP or TC test_run");              \
		teardown();                                                     \
	}                                                                       \
	CHECK_REGISTER(name);                                                   \
	static void name##_body(void)

/* Every base frame whole, then cut at every byte from the Ethernet header on. */
HOSTILE_CASE(hostile_truncated_at_every_byte)
{
	struct frame fs[16], f;
	struct layout ly[16];
	const char *names[16];
	char name[96];
	int i, n = base_frames(fs, ly, names);
	size_t c;

	for (i = 0; i < n; i++) {
		const struct layout *y = &ly[i];
		__u32 l3len = fs[i].n - y->l3;

		frame_is(names[i], &fs[i], parsed(base_rules(names[i]), l3len));
		/* The length fields still say the whole packet: every cut lies. */
		for (c = 14; c < fs[i].n; c++) {
			f = fs[i];
			f.n = c;
			snprintf(name, sizeof(name), "%s cut to %zu bytes", names[i], c);
			frame_is(name, &f, malformed());
		}
		/*
		 * The IP length follows the cut: the IP packet is whole, but a
		 * header inside it is short. Every cut before the end of the
		 * L4 header is malformed.
		 */
		for (c = y->l3 + (y->v6 ? 40 : 0); c < y->l4 + y->l4hdr; c++) {
			f = fs[i];
			f.n = c;
			if (y->v6)
				set_plen(&f, y->l3, c - y->l3 - 40);
			else
				set_tot(&f, y->l3, c - y->l3);
			snprintf(name, sizeof(name), "%s cut to %zu bytes, length fields agreeing",
				 names[i], c);
			frame_is(name, &f, malformed());
		}
	}
}

HOSTILE_CASE(hostile_ipv4_ihl)
{
	struct frame f, l;
	char name[64];
	int ihl;

	l4_udp(&l, 53, 10);
	/* below 5: rejected before it is used as a length */
	for (ihl = 0; ihl < 5; ihl++) {
		frame4(&f, SRC, WR_IPPROTO_UDP, &l);
		f.b[14] = 0x40 | ihl;
		snprintf(name, sizeof(name), "ihl %d", ihl);
		frame_is(name, &f, malformed());
	}
	/* 6..15 with real options: the UDP header is found behind them */
	for (ihl = 6; ihl <= 15; ihl++) {
		eth(&f, WR_ETH_P_IP, 0, NULL);
		ip4_opts(&f, SRC, WR_IPPROTO_UDP, ihl, 0, &l);
		snprintf(name, sizeof(name), "ihl %d with options", ihl);
		frame_is(name, &f, parsed(BIT(R_UDP53) | BIT(R_UDPANY), ihl * 4 + 18));
	}
	/* 15, but no options: 60 header bytes claimed in a 38-byte packet */
	frame4(&f, SRC, WR_IPPROTO_UDP, &l);
	f.b[14] = 0x4f;
	frame_is("ihl 15, total length 38", &f, malformed());
	set_tot(&f, 14, 60 + 18);
	frame_is("ihl 15, total length beyond the frame", &f, malformed());
	/* options only: no room left for the UDP header */
	eth(&f, WR_ETH_P_IP, 0, NULL);
	ip4_opts(&f, SRC, WR_IPPROTO_UDP, 15, 0, &l);
	set_tot(&f, 14, 60);
	frame_is("ihl 15, total length 60 (no UDP header)", &f, malformed());
	/* other protocols behind options are parsed too */
	eth(&f, WR_ETH_P_IP, 0, NULL);
	l4_icmp(&l, 8, 4);
	ip4_opts(&f, SRC, WR_IPPROTO_ICMP, 10, 0, &l);
	frame_is("icmp echo behind ihl 10", &f, parsed(BIT(R_ECHO4), 40 + 12));
	/* the version must match the ethertype */
	l4_udp(&l, 53, 10);
	frame4(&f, SRC, WR_IPPROTO_UDP, &l);
	f.b[14] = 0x65;
	frame_is("version 6 in an IPv4 ethertype", &f, malformed());
	frame6(&f, SRC6, WR_IPPROTO_UDP, &l);
	f.b[14] = 0x45;
	frame_is("version 4 in an IPv6 ethertype", &f, malformed());
}

HOSTILE_CASE(hostile_ipv4_total_length)
{
	static const unsigned int lies[] = { 0, 1, 19, 20, 27, 39, 1500, 65535 };
	struct frame f, l;
	char name[64];
	size_t i;

	l4_udp(&l, 53, 10);
	/* 38 is the truth; every other value here lies in a way that cannot pass */
	for (i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		frame4(&f, SRC, WR_IPPROTO_UDP, &l);
		set_tot(&f, 14, lies[i]);
		snprintf(name, sizeof(name), "total length %u of 38", lies[i]);
		frame_is(name, &f, malformed());
	}
	/* shorter than the frame: Ethernet padding; the cost is the IP length */
	frame4(&f, SRC, WR_IPPROTO_UDP, &l);
	zeros(&f, 46);
	frame_is("38-byte packet in a padded frame", &f, parsed(BIT(R_UDP53) | BIT(R_UDPANY), 38));
	/* shorter than the UDP length says: a datagram cut short */
	frame4(&f, SRC, WR_IPPROTO_UDP, &l);
	set_tot(&f, 14, 36);
	frame_is("total length 36 under a UDP length of 18", &f, malformed());
	/* a UDP length shorter than the IP payload is trimmed by the stack: parsed */
	l.b[4] = 0;
	l.b[5] = 8;
	frame4(&f, SRC, WR_IPPROTO_UDP, &l);
	frame_is("UDP length 8 in an 18-byte payload", &f,
		 parsed(BIT(R_UDP53) | BIT(R_UDPANY), 38));
}

HOSTILE_CASE(hostile_ipv6_payload_length)
{
	static const unsigned int lies[] = { 0, 1, 7, 17, 19, 1500, 65535 };
	struct frame f, l, pl;
	char name[64];
	size_t i;

	l4_udp(&l, 53, 10);
	/* 18 is the truth */
	for (i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		frame6(&f, SRC6, WR_IPPROTO_UDP, &l);
		set_plen(&f, 14, lies[i]);
		snprintf(name, sizeof(name), "payload length %u of 18", lies[i]);
		frame_is(name, &f, malformed());
	}
	frame6(&f, SRC6, WR_IPPROTO_UDP, &l);
	zeros(&f, 30);
	frame_is("18-byte payload in a padded frame", &f,
		 parsed(BIT(R_UDP53) | BIT(R_UDPANY), 58));
	/* a jumbogram: payload length 0 and a jumbo option, cannot come over Ethernet */
	pl.n = 0;
	put8(&pl, WR_IPPROTO_UDP);
	put8(&pl, 0);
	put8(&pl, 0xc2);	/* jumbo payload option */
	put8(&pl, 4);
	put32(&pl, 8 + 18);
	putn(&pl, l.b, l.n);
	frame6(&f, SRC6, WR_IPPROTO_HOPOPTS, &pl);
	set_plen(&f, 14, 0);
	frame_is("jumbogram (payload length 0, jumbo option)", &f, malformed());
	/* shorter than the extension header in front of UDP */
	pl.n = 0;
	ext(&pl, WR_IPPROTO_DSTOPTS, WR_IPPROTO_UDP, 1);
	putn(&pl, l.b, l.n);
	frame6(&f, SRC6, WR_IPPROTO_DSTOPTS, &pl);
	set_plen(&f, 14, 12);
	frame_is("payload length inside the destination options", &f, malformed());
	set_plen(&f, 14, 16 + 4);
	frame_is("payload length inside the UDP header", &f, malformed());
}

/* IPv6 with n extension headers of type t (then kind: UDP 53, or nothing). */
static void chain6(struct frame *f, const __u8 *types, int n, int udp)
{
	struct frame pl, l;
	int i;

	pl.n = 0;
	for (i = 0; i < n; i++)
		ext(&pl, types[i],
		    i + 1 < n ? types[i + 1] : udp ? WR_IPPROTO_UDP : WR_IPPROTO_NONE,
		    types[i] == WR_IPPROTO_AH ? 4 : 0);
	if (udp) {
		l4_udp(&l, 53, 10);
		putn(&pl, l.b, l.n);
	}
	frame6(f, SRC6, n ? types[0] : WR_IPPROTO_UDP, &pl);
}

HOSTILE_CASE(hostile_ipv6_extension_headers)
{
	__u8 types[32];
	struct frame f, pl, l;
	char name[64];
	int n, i;

	/* up to the walk bound (WR_MAX_EXTHDR) of destination options: parsed */
	for (n = 1; n <= WR_MAX_EXTHDR; n++) {
		memset(types, WR_IPPROTO_DSTOPTS, sizeof(types));
		chain6(&f, types, n, 1);
		snprintf(name, sizeof(name), "%d destination options, then UDP", n);
		frame_is(name, &f, parsed(BIT(R_UDP53) | BIT(R_UDPANY), f.n - 14));
	}
	/* one more than the walk bound, and far more: malformed */
	for (n = WR_MAX_EXTHDR + 1; n <= 24; n += n < 12 ? 1 : 6) {
		chain6(&f, types, n, 1);
		snprintf(name, sizeof(name), "%d destination options, then UDP", n);
		frame_is(name, &f, malformed());
	}
	/* the bound with every kind of header in it */
	{
		static const __u8 mix[WR_MAX_EXTHDR] = {
			WR_IPPROTO_HOPOPTS, WR_IPPROTO_DSTOPTS, WR_IPPROTO_ROUTING, WR_IPPROTO_AH,
			WR_IPPROTO_FRAGMENT, WR_IPPROTO_MH, WR_IPPROTO_DSTOPTS, WR_IPPROTO_AH,
		};

		chain6(&f, mix, WR_MAX_EXTHDR, 1);
		frame_is("8 mixed extension headers, then UDP", &f,
			 parsed(BIT(R_UDP53) | BIT(R_UDPANY), f.n - 14));
	}
	/* a chain that loops: each header names its own type, to the end of the packet */
	pl.n = 0;
	for (i = 0; i < 40; i++)
		ext(&pl, WR_IPPROTO_ROUTING, WR_IPPROTO_ROUTING, 0);
	frame6(&f, SRC6, WR_IPPROTO_ROUTING, &pl);
	frame_is("routing headers naming themselves to the end", &f, malformed());
	pl.n = 0;
	for (i = 0; i < 3; i++)
		ext(&pl, WR_IPPROTO_HOPOPTS, WR_IPPROTO_HOPOPTS, 0);
	frame6(&f, SRC6, WR_IPPROTO_HOPOPTS, &pl);
	frame_is("hop-by-hop naming itself until the payload ends", &f, malformed());
	/* a header claiming more than the packet holds */
	pl.n = 0;
	ext(&pl, WR_IPPROTO_DSTOPTS, WR_IPPROTO_UDP, 0);
	pl.b[1] = 255;	/* 2048 bytes */
	l4_udp(&l, 53, 10);
	putn(&pl, l.b, l.n);
	frame6(&f, SRC6, WR_IPPROTO_DSTOPTS, &pl);
	frame_is("destination options of 2048 bytes in 26", &f, malformed());
	/* the chain ends exactly where the packet does, naming UDP */
	chain6(&f, types, 2, 0);
	f.b[14 + 40 + 8] = WR_IPPROTO_UDP;
	frame_is("chain naming UDP at the end of the packet", &f, malformed());
	/* no next header: parsed, nothing for port rules */
	chain6(&f, types, 2, 0);
	frame_is("destination options, then no next header", &f, parsed(0, f.n - 14));
	/* an unknown upper protocol is taken as it is */
	chain6(&f, types, 1, 1);
	f.b[14 + 40] = 253;
	frame_is("destination options, then protocol 253", &f, parsed(0, f.n - 14));
}

HOSTILE_CASE(hostile_fragments)
{
	struct frame f, l, pl;

	/* IPv4 first fragment (MF, offset 0): the UDP header and its ports are there */
	l4_udp(&l, 53, 1000);
	l.n = 8 + 100;
	eth_ip4(&f, SRC, WR_IPPROTO_UDP, 5, 0x2000, 0, &l);
	frame_is("ipv4 first fragment of a UDP datagram", &f,
		 parsed(BIT(R_UDP53) | BIT(R_UDPANY), 128));
	/* tiny first fragments (RFC 1858): too short for the TCP header */
	l4_tcp(&l, 80, WEIR_TCP_SYN, 5);
	l.n = 16;
	eth_ip4(&f, SRC, WR_IPPROTO_TCP, 5, 0x2000, 0, &l);
	frame_is("ipv4 first fragment with 16 bytes of TCP", &f, malformed());
	l.n = 8;
	eth_ip4(&f, SRC, WR_IPPROTO_TCP, 5, 0x2000, 0, &l);
	frame_is("ipv4 first fragment with 8 bytes of TCP", &f, malformed());
	/* non-first fragments carry no ports: only port-less rules match */
	l4_tcp(&l, 80, WEIR_TCP_SYN, 5);
	eth_ip4(&f, SRC, WR_IPPROTO_TCP, 5, 1, 0, &l);
	frame_is("ipv4 fragment at offset 8 (overlapping the TCP header)", &f,
		 parsed(BIT(R_TCPANY), 40));
	l4_udp(&l, 53, 10);
	eth_ip4(&f, SRC, WR_IPPROTO_UDP, 5, 0x2000 | 0x1fff, 0, &l);
	frame_is("ipv4 fragment at the last offset, MF", &f, parsed(BIT(R_UDPANY), 38));
	eth_ip4(&f, SRC, WR_IPPROTO_UDP, 5, 185, 0, &l);
	frame_is("ipv4 last fragment whose payload looks like UDP to 53", &f,
		 parsed(BIT(R_UDPANY), 38));
	l.n = 0;
	eth_ip4(&f, SRC, WR_IPPROTO_UDP, 5, 185, 0, &l);
	frame_is("ipv4 non-first fragment with no payload", &f, parsed(BIT(R_UDPANY), 20));
	l4_icmp(&l, 8, 8);
	eth_ip4(&f, SRC, WR_IPPROTO_ICMP, 5, 3, 0, &l);
	frame_is("ipv4 non-first fragment of an echo", &f, parsed(0, 36));
	/* DF with MF, and the reserved bit: flags, not offsets */
	l4_udp(&l, 53, 10);
	eth_ip4(&f, SRC, WR_IPPROTO_UDP, 5, 0x4000 | 0x2000, 0, &l);
	frame_is("ipv4 DF and MF, offset 0", &f, parsed(BIT(R_UDP53) | BIT(R_UDPANY), 38));
	eth_ip4(&f, SRC, WR_IPPROTO_UDP, 5, 0x8000, 0, &l);
	frame_is("ipv4 reserved flag", &f, parsed(BIT(R_UDP53) | BIT(R_UDPANY), 38));

	/* IPv6 first fragment (offset 0, M): ports visible */
	pl.n = 0;
	put8(&pl, WR_IPPROTO_UDP);
	put8(&pl, 0);
	put16(&pl, 1);
	put32(&pl, 5);
	l4_udp(&l, 53, 1000);
	l.n = 8 + 24;
	putn(&pl, l.b, l.n);
	frame6(&f, SRC6, WR_IPPROTO_FRAGMENT, &pl);
	frame_is("ipv6 first fragment of a UDP datagram", &f,
		 parsed(BIT(R_UDP53) | BIT(R_UDPANY), 80));
	/* tiny first fragment */
	pl.n = 8;
	pl.b[0] = WR_IPPROTO_TCP;
	put32(&pl, 0x9c400050);
	frame6(&f, SRC6, WR_IPPROTO_FRAGMENT, &pl);
	frame_is("ipv6 first fragment with 4 bytes of TCP", &f, malformed());
	/* non-first: the protocol from the fragment header, no ports, no ICMPv6 type */
	pl.n = 0;
	put8(&pl, WR_IPPROTO_UDP);
	put8(&pl, 0);
	put16(&pl, 100 << 3);
	put32(&pl, 5);
	l4_udp(&l, 53, 10);
	putn(&pl, l.b, l.n);
	frame6(&f, SRC6, WR_IPPROTO_FRAGMENT, &pl);
	frame_is("ipv6 non-first fragment looking like UDP to 53", &f, parsed(BIT(R_UDPANY), 66));
	pl.b[0] = WR_IPPROTO_ICMPV6;
	l4_icmp(&l, 135, 16);
	pl.n = 8;
	putn(&pl, l.b, l.n);
	frame6(&f, SRC6, WR_IPPROTO_FRAGMENT, &pl);
	f.b[14 + 7] = 255;
	frame_is("ipv6 non-first fragment looking like a neighbour solicitation", &f,
		 parsed(0, 72));
	/* an atomic fragment (offset 0, no M) is a whole datagram */
	chain6(&f, (const __u8[]){ WR_IPPROTO_FRAGMENT }, 1, 1);
	frame_is("ipv6 atomic fragment", &f, parsed(BIT(R_UDP53) | BIT(R_UDPANY), 66));
	/* the fragment header itself cut short by the payload length */
	set_plen(&f, 14, 4);
	frame_is("ipv6 fragment header beyond the payload", &f, malformed());
}

HOSTILE_CASE(hostile_vlan)
{
	static const __u16 q2[] = { WR_ETH_P_8021Q, WR_ETH_P_8021Q };
	static const __u16 ad_inner[] = { WR_ETH_P_8021Q, WR_ETH_P_8021AD };
	static const __u16 four[] = { WR_ETH_P_8021Q, WR_ETH_P_8021Q, WR_ETH_P_8021Q,
				      WR_ETH_P_8021Q };
	struct frame f, l;

	l4_udp(&l, 53, 10);
	eth(&f, WR_ETH_P_IP, 1, TAG_Q);
	ip4(&f, SRC, WR_IPPROTO_UDP, 5, 0, 0, &l);
	frame_is("one 802.1Q tag", &f, parsed(BIT(R_UDP53) | BIT(R_UDPANY), 38));
	eth(&f, WR_ETH_P_IP, 2, TAG_QINQ);
	ip4(&f, SRC, WR_IPPROTO_UDP, 5, 0, 0, &l);
	frame_is("802.1ad + 802.1Q", &f, parsed(BIT(R_UDP53) | BIT(R_UDPANY), 38));
	eth(&f, WR_ETH_P_IPV6, 2, q2);
	ip6(&f, SRC6, WR_IPPROTO_UDP, 64, -1, &l);
	frame_is("two 802.1Q tags, IPv6", &f, parsed(BIT(R_UDP53) | BIT(R_UDPANY), 58));
	eth(&f, WR_ETH_P_IP, 2, ad_inner);
	ip4(&f, SRC, WR_IPPROTO_UDP, 5, 0, 0, &l);
	frame_is("802.1Q outside 802.1ad", &f, parsed(BIT(R_UDP53) | BIT(R_UDPANY), 38));
	/* deeper than two: never trusted, not even as non-IP */
	eth(&f, WR_ETH_P_IP, 3, TAG_3);
	ip4(&f, SRC, WR_IPPROTO_UDP, 5, 0, 0, &l);
	frame_is("three tags", &f, malformed());
	eth(&f, WR_ETH_P_IP, 4, four);
	ip4(&f, SRC, WR_IPPROTO_UDP, 5, 0, 0, &l);
	frame_is("four tags", &f, malformed());
	eth(&f, 0x0806, 3, TAG_3);
	zeros(&f, 28);
	frame_is("ARP behind three tags", &f, malformed());
	/* ARP behind one or two tags is non-IP and passes */
	eth(&f, 0x0806, 1, TAG_Q);
	zeros(&f, 28);
	frame_is("ARP behind one tag", &f, non_ip());
	eth(&f, 0x0806, 2, TAG_QINQ);
	zeros(&f, 28);
	frame_is("ARP behind two tags", &f, non_ip());
	/* a tag with nothing behind it */
	eth(&f, WR_ETH_P_IP, 2, TAG_QINQ);
	f.n -= 2;
	frame_is("two tags cut inside the second", &f, malformed());
}

HOSTILE_CASE(hostile_tcp)
{
	struct frame f, l;
	char name[64];
	int doff;

	for (doff = 0; doff < 5; doff++) {
		l4_tcp(&l, 80, WEIR_TCP_SYN, 5);
		l.b[12] = doff << 4;
		frame4(&f, SRC, WR_IPPROTO_TCP, &l);
		snprintf(name, sizeof(name), "tcp data offset %d", doff);
		frame_is(name, &f, malformed());
	}
	l4_tcp(&l, 80, WEIR_TCP_SYN, 5);
	l.b[12] = 15 << 4;
	frame4(&f, SRC, WR_IPPROTO_TCP, &l);
	frame_is("tcp data offset 15 in a 20-byte segment", &f, malformed());
	l4_tcp(&l, 80, WEIR_TCP_SYN, 15);
	frame4(&f, SRC, WR_IPPROTO_TCP, &l);
	frame_is("tcp data offset 15 with 40 bytes of options", &f,
		 parsed(BIT(R_SYN80) | BIT(R_TCPANY), 80));
	l4_tcp(&l, 80, WEIR_TCP_SYN | WEIR_TCP_ACK, 5);
	frame4(&f, SRC, WR_IPPROTO_TCP, &l);
	frame_is("tcp SYN+ACK is not a connection attempt", &f, parsed(BIT(R_TCPANY), 40));
	l4_tcp(&l, 80, WEIR_TCP_SYN | WEIR_TCP_FIN, 5);
	frame4(&f, SRC, WR_IPPROTO_TCP, &l);
	frame_is("tcp SYN+FIN counts as SYN without ACK", &f,
		 parsed(BIT(R_SYN80) | BIT(R_TCPANY), 40));
	l4_tcp(&l, 80, 0xff, 5);
	frame4(&f, SRC, WR_IPPROTO_TCP, &l);
	frame_is("tcp every flag", &f, parsed(BIT(R_TCPANY), 40));
	l4_tcp(&l, 0, 0, 5);
	frame6(&f, SRC6, WR_IPPROTO_TCP, &l);
	frame_is("tcp to port 0, no flags", &f, parsed(BIT(R_TCPANY), 60));
}

HOSTILE_CASE(hostile_udp)
{
	struct frame f, l;
	char name[64];
	int ulen;

	for (ulen = 0; ulen < 8; ulen++) {
		l4_udp(&l, 53, 10);
		l.b[5] = ulen;
		frame4(&f, SRC, WR_IPPROTO_UDP, &l);
		snprintf(name, sizeof(name), "udp length %d", ulen);
		frame_is(name, &f, malformed());
	}
	l4_udp(&l, 53, 0);
	frame4(&f, SRC, WR_IPPROTO_UDP, &l);
	frame_is("udp with no payload", &f, parsed(BIT(R_UDP53) | BIT(R_UDPANY), 28));
	l4_udp(&l, 53, 10);
	l.b[5] = 19;
	frame4(&f, SRC, WR_IPPROTO_UDP, &l);
	frame_is("udp length one beyond the payload", &f, malformed());
	l4_udp(&l, 53, 10);
	l.b[4] = 0;
	l.b[5] = 0;
	frame6(&f, SRC6, WR_IPPROTO_UDP, &l);
	frame_is("udp length 0 over IPv6 (a jumbogram's)", &f, malformed());
	l4_udp(&l, 0, 10);
	frame4(&f, SRC, WR_IPPROTO_UDP, &l);
	frame_is("udp to port 0", &f, parsed(BIT(R_UDPANY), 38));
}

/* An ICMP error quoting an IPv4 header and 8 bytes of UDP to port 53. */
HOSTILE_CASE(hostile_icmp_errors)
{
	struct frame f, l, inner, iu;

	/* the quoted datagram: from the victim, to port 53 */
	l4_udp(&iu, 53, 0);
	inner.n = 0;
	ip4(&inner, IP4(198, 18, 0, 1), WR_IPPROTO_UDP, 5, 0, 0, &iu);
	l4_icmp(&l, 3, 0);
	putn(&l, inner.b, inner.n);
	frame4(&f, SRC, WR_IPPROTO_ICMP, &l);
	frame_is("icmp port unreachable quoting UDP to 53", &f,
		 parsed(BIT(R_UNREACH), 20 + 8 + 28));
	l.b[0] = 11;
	frame4(&f, SRC, WR_IPPROTO_ICMP, &l);
	frame_is("icmp time exceeded quoting UDP to 53", &f, parsed(0, 56));
	/* quoting a TCP SYN to 80 */
	l4_tcp(&iu, 80, WEIR_TCP_SYN, 5);
	iu.n = 8;
	inner.n = 0;
	ip4(&inner, IP4(198, 18, 0, 1), WR_IPPROTO_TCP, 5, 0, 48, &iu);
	l4_icmp(&l, 3, 0);
	putn(&l, inner.b, inner.n);
	frame4(&f, SRC, WR_IPPROTO_ICMP, &l);
	frame_is("icmp unreachable quoting a TCP SYN to 80", &f, parsed(BIT(R_UNREACH), 56));
	/* ICMPv6 destination unreachable and packet too big quoting UDP to 53 */
	l4_udp(&iu, 53, 0);
	inner.n = 0;
	ip6(&inner, DST6, WR_IPPROTO_UDP, 64, -1, &iu);
	l4_icmp(&l, 1, 0);
	putn(&l, inner.b, inner.n);
	frame6(&f, SRC6, WR_IPPROTO_ICMPV6, &l);
	frame_is("icmpv6 unreachable quoting UDP to 53", &f, parsed(0, 40 + 8 + 48));
	l.b[0] = 2;
	frame6(&f, SRC6, WR_IPPROTO_ICMPV6, &l);
	frame_is("icmpv6 packet too big quoting UDP to 53", &f, parsed(0, 96));
	/* ICMP too short for its own header */
	l4_icmp(&l, 8, 0);
	l.n = 7;
	frame4(&f, SRC, WR_IPPROTO_ICMP, &l);
	frame_is("icmp of 7 bytes", &f, malformed());
	l.n = 4;
	frame6(&f, SRC6, WR_IPPROTO_ICMPV6, &l);
	frame_is("icmpv6 of 4 bytes", &f, malformed());
	/* an echo with a large payload */
	l4_icmp(&l, 8, 1400);
	frame4(&f, SRC, WR_IPPROTO_ICMP, &l);
	frame_is("icmp echo of 1408 bytes", &f, parsed(BIT(R_ECHO4), 1428));
}

/*
 * The largest (or, with smallest, the shortest) frame of this ethertype
 * that test_run takes through an entry, within struct frame.
 */
static int frame_limit(int tc, int smallest, __u16 type)
{
	int lo = smallest ? 14 : 64, hi = (int)sizeof(((struct frame *)0)->b), err;
	struct frame f;

	while (lo < hi) {
		int mid = (lo + hi + !smallest) / 2;

		eth(&f, type, 0, NULL);
		zeros(&f, mid - 14);
		if ((run_frame(&f, tc, &err) >= 0) != smallest)
			lo = smallest ? mid + 1 : mid;
		else
			hi = smallest ? mid : mid - 1;
	}
	return lo;
}

/* A well-formed UDP frame of n bytes to port 53, IPv4 or IPv6. */
static void udp_frame(struct frame *f, int n, int v6)
{
	struct frame l;

	l4_udp(&l, 53, n - 14 - (v6 ? 40 : 20) - 8);
	if (v6)
		frame6(f, SRC6, WR_IPPROTO_UDP, &l);
	else
		frame4(f, SRC, WR_IPPROTO_UDP, &l);
}

/*
 * Jumbo frames, as far as test_run takes them: the largest one-buffer XDP
 * frame and the largest TC frame, IPv4 and IPv6, parsed and charged their
 * whole IP length; length fields that claim more than the frame holds.
 * Longer XDP frames: hostile_xdp_multibuffer.
 */
HOSTILE_CASE(hostile_jumbo)
{
	const int sizes[] = { 1514, XDP_ONE_BUFFER, tc_max };
	struct frame f;
	char name[96];
	size_t i;
	int v6;

	printf("# largest frame through test_run: tc %d bytes; one XDP buffer: %d bytes\n",
	       sizes[2], XDP_ONE_BUFFER);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (v6 = 0; v6 < 2; v6++) {
			udp_frame(&f, sizes[i], v6);
			snprintf(name, sizeof(name), "udp%d frame of %d bytes", v6 ? 6 : 4,
				 sizes[i]);
			frame_is(name, &f, parsed(BIT(R_UDP53) | BIT(R_UDPANY), sizes[i] - 14));
		}
	}
	udp_frame(&f, XDP_ONE_BUFFER, 0);
	set_tot(&f, 14, 9000);
	frame_is("ipv4 total length 9000 in a smaller frame", &f, malformed());
	set_tot(&f, 14, 65535);
	frame_is("ipv4 total length 65535 in a smaller frame", &f, malformed());
	udp_frame(&f, XDP_ONE_BUFFER, 1);
	set_plen(&f, 14, 65535);
	frame_is("ipv6 payload length 65535 in a smaller frame", &f, malformed());
	udp_frame(&f, XDP_ONE_BUFFER, 0);
	f.b[38] = 0xff;
	f.b[39] = 0xff;
	frame_is("udp length 65535 in a smaller frame", &f, malformed());
}

/*
 * A frame longer than one XDP buffer reaches the XDP entry as a multi-buffer
 * frame (a linear head, the rest in fragments). It is measured whole, not by
 * its head: parsed and charged its full IP length, and its length fields
 * still checked against the whole frame. (Until the entry took xdp.frags
 * and bpf_xdp_get_buff_len(), the head alone was taken for the frame and a
 * well-formed jumbo frame was counted malformed and dropped.)
 */
HOSTILE_CASE(hostile_xdp_multibuffer)
{
	const int sizes[] = { XDP_ONE_BUFFER + 1, XDP_ONE_BUFFER + 192,
			      (int)sizeof(((struct frame *)0)->b) };
	struct frame f;
	char name[96];
	size_t i;
	int v6;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (v6 = 0; v6 < 2; v6++) {
			udp_frame(&f, sizes[i], v6);
			snprintf(name, sizeof(name), "udp%d frame of %d bytes", v6 ? 6 : 4,
				 sizes[i]);
			frame_is(name, &f, parsed(BIT(R_UDP53) | BIT(R_UDPANY), sizes[i] - 14));
		}
	}
	udp_frame(&f, XDP_ONE_BUFFER + 192, 0);
	set_tot(&f, 14, XDP_ONE_BUFFER + 192 - 14 + 1);
	frame_is("multi-buffer ipv4, total length one beyond the whole frame", &f, malformed());
	udp_frame(&f, XDP_ONE_BUFFER + 192, 1);
	set_plen(&f, 14, XDP_ONE_BUFFER + 192 - 54 + 1);
	frame_is("multi-buffer ipv6, payload length one beyond the whole frame", &f, malformed());
}

HOSTILE_CASE(hostile_non_ip)
{
	static const __u16 types[] = { 0x0806, 0x88cc, 0x8863, 0x8864, 0x88e5, 0x0000, 0x0026,
				       0x05dc, 0xffff };
	struct frame f;
	char name[64];
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		eth(&f, types[i], 0, NULL);
		zeros(&f, 46);
		snprintf(name, sizeof(name), "ethertype %#06x", types[i]);
		frame_is(name, &f, non_ip());
	}
	eth(&f, 0x0806, 0, NULL);
	frame_is("ARP with nothing behind the Ethernet header", &f, non_ip());
	eth(&f, WR_ETH_P_IP, 0, NULL);
	frame_is("IPv4 ethertype, nothing behind it", &f, malformed());
	eth(&f, WR_ETH_P_IPV6, 0, NULL);
	frame_is("IPv6 ethertype, nothing behind it", &f, malformed());
}

/* The same corpus with `set malformed pass`: counted malformed, passed. */
TEST_CASE(hostile_malformed_pass)
{
	malformed_pass = 1;
	hostile_truncated_at_every_byte();
	if (!check_failed)
		hostile_ipv6_extension_headers();
	if (!check_failed)
		hostile_vlan();
	malformed_pass = 0;
}

/* ------------------------------------------------------------------------ */
/* Faults                                                                   */
/* ------------------------------------------------------------------------ */

/* Per-source packets/s limit rate, burst, as the only rule. */
static void one_src_rule(__u64 rate, __u64 burst)
{
	struct weir_rule *r;

	memset(&rs, 0, sizeof(rs));
	r = add_named_rule("per-src");
	add_limit(r, rate, burst, WEIR_COST_PKT, WEIR_KEY_SRC, 0);
	commit_with_malformed_pass();
}

static int send_from(__u32 src)
{
	struct frame f, l;
	int err, v;

	l4_udp(&l, 53, 10);
	frame4(&f, src, WR_IPPROTO_UDP, &l);
	v = run_frame(&f, 0, &err);
	if (v < 0)
		CHECK_FAIL("test_run: %s", strerror(-err));
	return v;
}

/* Send from src until one is refused (at most 1000); how many passed. */
static int drain(__u32 src)
{
	int n = 0;

	while (n < 1000 && send_from(src) == 1)
		n++;
	return n;
}

/* load_with(sets, -1), failing the case if it fails. */
static int load_sets(__u32 sets)
{
	int err = load_with(sets, -1);

	if (err)
		CHECK_FAIL("loading with %u sets in wr_state: %s", sets, strerror(-err));
	return err;
}

static void set_fail_closed(int closed)
{
	struct weir_config c = cfg_get();

	c.fail_closed = closed;
	cfg_put(&c);
}

/*
 * Sources of 198.18.0.0/16, from base on, whose key for limit 0 of rule r
 * lies in set `set` (under wr_config's seed and set count): n of them into
 * out. How many were found.
 */
static int sources_in_set(const struct weir_rule *r, __u32 set, __u32 base, __u32 *out, int n)
{
	struct weir_key k;
	__u32 src;
	int got = 0;

	for (src = base; got < n && src < IP4(198, 19, 0, 0); src++) {
		k = key4(r, 0, src);
		if (state_set_of(&k) == set)
			out[got++] = src;
	}
	if (got < n)
		CHECK_FAIL("only %d sources of set %u from %#x", got, set, base);
	return got;
}

/* Does src have a bucket for limit 0 of rule r? Its bucket into *st if so. */
static int has_bucket(const struct weir_rule *r, __u32 src, struct weir_state *st)
{
	struct weir_key k = key4(r, 0, src);
	struct weir_state tmp;

	return !state_find(&k, st ? st : &tmp);
}

/* All of wr_state into buf (sets sets of it). */
static void state_dump(struct weir_set *buf, __u32 sets)
{
	__u32 i;

	for (i = 0; i < sets; i++)
		if (state_set_get(i, &buf[i]))
			CHECK_FAIL("reading wr_state[%u]: %s", i, strerror(errno));
}

/*
 * A per-source key whose set is not in wr_state: wr_config claims twice
 * the sets the map has, so about half the sources hash beyond it (then
 * none: a set count of 0, never initialised). Each of their packets is an
 * internal fault, passed under fail open (the default) and dropped under
 * fail closed, counted either way; nothing else changes: no way is
 * written, and the sources whose sets exist are limited exactly as before.
 */
#define FAULT_SETS	4
static void fault_set_beyond_map(int closed)
{
	struct weir_set before[FAULT_SETS], after[FAULT_SETS];
	__u32 good[3], bad[10];
	const struct weir_rule *r;
	struct weir_config c;
	__u64 pas, dro;
	int i;

	if (load_sets(FAULT_SETS))
		return;
	one_src_rule(1, 2);
	r = &rs.rules[0];
	set_fail_closed(closed);
	c = cfg_get();
	CHECK_EQ(c.state_sets, FAULT_SETS);
	c.state_sets = 2 * FAULT_SETS;
	cfg_put(&c);
	/* sets 0 and FAULT_SETS: one that exists, one beyond the map */
	sources_in_set(r, 0, IP4(198, 18, 1, 0), good, 3);
	sources_in_set(r, FAULT_SETS, IP4(198, 18, 1, 0), bad, 10);

	/* the sources whose set exists: each its burst of 2, then refused */
	for (i = 0; i < 3; i++) {
		CHECK_EQ(send_from(good[i]), 1);
		CHECK_EQ(send_from(good[i]), 1);
		CHECK_EQ(send_from(good[i]), 0);
	}
	CHECK_EQ(g(WEIR_G_FAULT), 0);
	CHECK_EQ(state_count(NULL), 3);
	state_dump(before, FAULT_SETS);

	/* the others: every packet a fault, whatever their burst would say */
	pas = g(WEIR_G_PASSED);
	dro = g(WEIR_G_DROPPED);
	for (i = 0; i < 10; i++) {
		CHECK_EQ(send_from(bad[i]), !closed);
		CHECK_EQ(send_from(bad[i]), !closed);
		CHECK_EQ(send_from(bad[i]), !closed);
	}
	CHECK_EQ(g(WEIR_G_FAULT), 30);
	CHECK_EQ(g(WEIR_G_FAIL_OPEN), closed ? 0 : 30);
	CHECK_EQ(g(WEIR_G_PASSED) - pas, closed ? 0 : 30);
	CHECK_EQ(g(WEIR_G_DROPPED) - dro, closed ? 30 : 0);
	state_dump(after, FAULT_SETS);
	CHECK(!memcmp(before, after, sizeof(before)), "a faulted packet wrote to wr_state");

	/* the sources that have buckets are still limited exactly */
	CHECK_EQ(send_from(good[0]), 0);
	set_now(T0 + SEC);
	CHECK_EQ(send_from(good[0]), 1);
	CHECK_EQ(send_from(good[0]), 0);
	CHECK_EQ(g(WEIR_G_FAULT), 30);
	CHECK_EQ(state_count(NULL), 3);

	/* no set count at all: every per-source packet faults, nothing is written */
	c = cfg_get();
	c.state_sets = 0;
	cfg_put(&c);
	state_dump(before, FAULT_SETS);
	set_now(T0 + 100 * SEC);
	CHECK_EQ(send_from(good[1]), !closed);
	CHECK_EQ(send_from(bad[0]), !closed);
	CHECK_EQ(g(WEIR_G_FAULT), 32);
	CHECK_EQ(g(WEIR_G_FAIL_OPEN), closed ? 0 : 32);
	state_dump(after, FAULT_SETS);
	CHECK(!memcmp(before, after, sizeof(before)), "a faulted packet wrote to wr_state");
	check_balance();
	teardown();
}

TEST_CASE(fault_set_beyond_map_fail_open)
{
	fault_set_beyond_map(0);
}

TEST_CASE(fault_set_beyond_map_fail_closed)
{
	fault_set_beyond_map(1);
}

/*
 * Eviction. wr_state of EVICT_SETS sets (EVICT_SETS x WEIR_WAYS ways)
 * and one rule, 1 pps per source with a burst of EVICT_BURST: a source
 * that sent its whole burst is deep in its limit (its TAT EVICT_BURST s
 * ahead), one that sent a packet a second ago is a full bucket again.
 * The sources of each case are picked by the set their key hashes to.
 */
#define EVICT_SETS	2
#define EVICT_BURST	10

/*
 * Far more sources than ways: every new source is admitted its burst (an
 * evicted bucket reads as full), nothing faults even under fail closed,
 * and the table never holds more keys than it has ways.
 */
TEST_CASE(evict_far_more_sources_than_ways)
{
	int i, passed = 0, n, most = 0;

	if (load_sets(EVICT_SETS))
		return;
	one_src_rule(1, 1);
	set_fail_closed(1);
	for (i = 0; i < 20000; i++) {
		passed += send_from(IP4(198, 18, 16 + i / 256, i % 256)) == 1;
		if (i % 500 == 499) {
			n = state_count(NULL);
			most = n > most ? n : most;
		}
	}
	CHECK_EQ(passed, 20000);
	CHECK_EQ(g(WEIR_G_FAULT), 0);
	CHECK(most <= EVICT_SETS * WEIR_WAYS, "wr_state held %d keys, it has %d ways", most,
	      EVICT_SETS * WEIR_WAYS);
	/* and every way is in use: a full table evicts, it does not stay half empty */
	CHECK_EQ(state_count(NULL), EVICT_SETS * WEIR_WAYS);
	check_balance();
	teardown();
}

/*
 * A source deep in its limit keeps its bucket while its set has ways
 * closer to full: idle keys (full buckets) go first, then keys that sent
 * less. It stays limited throughout.
 */
TEST_CASE(evict_idle_ways_before_a_limiting_source)
{
	const struct weir_rule *r;
	struct weir_state st, d0;
	__u32 src[8], d, x[3], y[4];
	int i;

	if (load_sets(EVICT_SETS))
		return;
	one_src_rule(1, EVICT_BURST);
	r = &rs.rules[0];
	set_fail_closed(1);
	sources_in_set(r, 1, IP4(198, 18, 1, 0), src, 8);
	d = src[0];
	memcpy(x, &src[1], sizeof(x));
	memcpy(y, &src[4], sizeof(y));

	/* T0: d sends its whole burst, x[] one packet each; the set is full */
	CHECK_EQ(drain(d), EVICT_BURST);
	for (i = 0; i < 3; i++)
		CHECK_EQ(send_from(x[i]), 1);
	CHECK_EQ(state_count(NULL), 4);
	/* 2 s on: x[] are full buckets again; d takes 2 more and is refused again */
	set_now(T0 + 2 * SEC);
	CHECK_EQ(drain(d), 2);
	CHECK(has_bucket(r, d, &d0), "no bucket for the limiting source");
	CHECK_EQ(d0.tat, T0 + (EVICT_BURST + 2) * SEC);
	/* new sources of the set take the idle keys' ways, one by one */
	for (i = 0; i < 3; i++) {
		int j, idle = 0;

		CHECK_EQ(send_from(y[i]), 1);
		for (j = 0; j < 3; j++)
			idle += has_bucket(r, x[j], NULL);
		CHECK(idle == 2 - i, "%d idle keys left after %d new sources", idle, i + 1);
		CHECK(has_bucket(r, d, &st), "the limiting source evicted while idle keys were "
		      "there (new source %d)", i);
		CHECK(!memcmp(&st, &d0, sizeof(st)), "the limiting source's bucket changed");
	}
	/* ... and then one of those, whose TAT is nearer: d's bucket stays */
	CHECK_EQ(send_from(y[3]), 1);
	CHECK(has_bucket(r, d, &st), "the limiting source evicted before a key nearer full");
	CHECK(!memcmp(&st, &d0, sizeof(st)), "the limiting source's bucket changed");
	CHECK_EQ(state_count(NULL), 4);
	/* still limited exactly */
	CHECK_EQ(send_from(d), 0);
	CHECK(has_bucket(r, d, &st) && st.tat == d0.tat && st.drops == d0.drops + 1,
	      "the limiting source's bucket: TAT %llu, drops %llu",
	      (unsigned long long)st.tat, (unsigned long long)st.drops);
	CHECK_EQ(g(WEIR_G_FAULT), 0);
	check_balance();
	teardown();
}

/*
 * When every way of its set is limiting, a new source takes the way
 * nearest to full: here the deep source's, whose TAT is the smallest. The
 * evicted source then reads as a full bucket and is admitted its burst
 * again: eviction only ever admits more. Sources of the other set are
 * untouched.
 */
TEST_CASE(evict_limiting_source_when_all_ways_limit)
{
	const struct weir_rule *r;
	struct weir_state st, before[3];
	__u32 src[5], other[4], d, z[3], w;
	int i;

	if (load_sets(EVICT_SETS))
		return;
	one_src_rule(1, EVICT_BURST);
	r = &rs.rules[0];
	set_fail_closed(1);
	sources_in_set(r, 0, IP4(198, 18, 1, 0), src, 5);
	sources_in_set(r, 1, IP4(198, 18, 1, 0), other, 4);
	d = src[0];
	memcpy(z, &src[1], sizeof(z));
	w = src[4];

	/* the other set full of idle keys, which must not be touched */
	for (i = 0; i < 4; i++)
		CHECK_EQ(send_from(other[i]), 1);
	/* T0: d its whole burst; 0.5 s on z[] theirs: four ways, all limiting */
	CHECK_EQ(drain(d), EVICT_BURST);
	set_now(T0 + SEC / 2);
	for (i = 0; i < 3; i++) {
		CHECK_EQ(drain(z[i]), EVICT_BURST);
		CHECK(has_bucket(r, z[i], &before[i]), "no bucket for z[%d]", i);
	}
	CHECK_EQ(send_from(d), 0);
	CHECK(has_bucket(r, d, &st), "the limiting source lost its bucket to an empty way");
	CHECK_EQ(st.tat, T0 + EVICT_BURST * SEC);
	CHECK_EQ(state_count(NULL), 8);
	/* a new source: admitted, and d's way (the smallest TAT) is the one it takes */
	CHECK_EQ(send_from(w), 1);
	CHECK(!has_bucket(r, d, NULL), "the way nearest to full was not the one evicted");
	CHECK(has_bucket(r, w, NULL), "no bucket for the new source");
	for (i = 0; i < 3; i++) {
		CHECK(has_bucket(r, z[i], &st), "z[%d] evicted instead", i);
		CHECK(!memcmp(&st, &before[i], sizeof(st)), "z[%d]'s bucket changed", i);
	}
	for (i = 0; i < 4; i++)
		CHECK(has_bucket(r, other[i], NULL), "a source of the other set was evicted");
	CHECK_EQ(state_count(NULL), 8);
	/* d reads as a full bucket: its whole burst again, 0.5 s after the first */
	CHECK_EQ(drain(d), EVICT_BURST);
	CHECK(has_bucket(r, d, &st), "no bucket for the evicted source");
	CHECK_EQ(st.tat, T0 + SEC / 2 + EVICT_BURST * SEC);
	CHECK_EQ(g(WEIR_G_FAULT), 0);
	check_balance();
	teardown();
}

/*
 * A window key is evicted by the end of its window (way.idle_at), not by
 * its state word (window index << 32 | count, far larger than any TAT): a
 * window long over goes before token buckets that are still limiting.
 */
TEST_CASE(evict_window_by_its_end)
{
	struct weir_rule *gr, *wr;
	struct weir_set s;
	__u32 gsrc[4], wsrc[1];
	struct weir_key k;
	struct weir_state st;
	int i, wi;

	if (load_sets(EVICT_SETS))
		return;
	memset(&rs, 0, sizeof(rs));
	/* 198.18.1.0/24: a token bucket; 198.18.2.0/24: 5 per 1 s fixed window */
	gr = add_named_rule("bucket");
	match_src4(gr, IP4(198, 18, 1, 0), 24);
	add_limit(gr, 1, EVICT_BURST, WEIR_COST_PKT, WEIR_KEY_SRC, 0);
	wr = add_named_rule("window");
	match_src4(wr, IP4(198, 18, 2, 0), 24);
	limit_init(&wr->limits[wr->nr_limits++], WEIR_ALGO_FIXED, 5, 1000, 0, WEIR_COST_PKT,
		   WEIR_KEY_SRC, 32, 128);
	commit_with_malformed_pass();
	set_fail_closed(1);
	sources_in_set(gr, 0, IP4(198, 18, 1, 0), gsrc, 4);
	sources_in_set(wr, 0, IP4(198, 18, 2, 0), wsrc, 1);

	/* T0: the window key one packet */
	CHECK_EQ(send_from(wsrc[0]), 1);
	k = key4(wr, 0, wsrc[0]);
	if (state_set_get(0, &s) || (wi = way_of(&s, &k)) < 0) {
		CHECK_FAIL("no way for the window key");
	} else {
		CHECK_EQ(s.way[wi].st.tat, wr_win_pack(T0 / SEC, 1));
		CHECK_EQ(s.way[wi].idle_at, wr_win_idle_at(WEIR_ALGO_FIXED,
							   wr_win_pack(T0 / SEC, 1), SEC));
	}
	/* 1.5 s on, its window is over; three buckets take their whole burst */
	set_now(T0 + 3 * SEC / 2);
	for (i = 0; i < 3; i++)
		CHECK_EQ(drain(gsrc[i]), EVICT_BURST);
	CHECK_EQ(state_count(NULL), 4);
	/* token buckets leave idle_at 0: their TAT says when they are full */
	if (!state_set_get(0, &s))
		for (i = 0; i < WEIR_WAYS; i++)
			if (s.way[i].key.uid == gr->uid)
				CHECK_EQ(s.way[i].idle_at, 0);
	/* a new source: the window's way goes, not a limiting bucket's */
	CHECK_EQ(send_from(gsrc[3]), 1);
	CHECK(state_find(&k, &st) != 0, "a window long over kept over limiting buckets");
	for (i = 0; i < 3; i++)
		CHECK(has_bucket(gr, gsrc[i], NULL), "a limiting bucket (source %d) evicted", i);
	/* the window key reads as an empty window: its whole limit again */
	CHECK_EQ(drain(wsrc[0]), 5);
	CHECK_EQ(g(WEIR_G_FAULT), 0);
	check_balance();
	teardown();
}

int main(void)
{
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	err = harness_start("bpf_hostile");
	if (err)
		return err > 0;
	tc_min4 = frame_limit(1, 1, WR_ETH_P_IP);
	tc_min6 = frame_limit(1, 1, WR_ETH_P_IPV6);
	tc_minq = frame_limit(1, 1, WR_ETH_P_8021Q);
	tc_max = frame_limit(1, 0, 0x88b5);	/* a local experimental ethertype */
	teardown();
	printf("# the TC entry's test_run takes IPv4 frames from %d bytes, IPv6 from %d, tagged "
	       "from %d; shorter ones go through the XDP entry alone (the same core)\n", tc_min4,
	       tc_min6, tc_minq);

	return check_run_all();
}
