// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * SYN cookies in the real BPF object, through bpf_prog_test_run_opts: a
 * SYN that an action cookie rule refuses comes back as XDP_TX with the
 * SYN-ACK written over it, which is checked field by field (addresses,
 * ports, sequence numbers, checksums, options); the ACK that answers it
 * passes and a forged one is dropped, for a listener this process opens;
 * what must never be answered is not; the SYN-ACK budgets hold; verified
 * sources are shed as their verified-class.
 *
 * The cookie is the kernel's (its secret), so the test reads it from the
 * SYN-ACK and cannot predict it; whether it is right is what the kernel's
 * own check of the ACK says.
 *
 * `bpf_cookie stale` runs one case alone, which waits two minutes for a
 * real cookie to go stale (tests/soak.sh runs it beside its flood).
 */
#include <time.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "bpf_harness.h"
#include "weir_cookie.h"

/* The port the rules protect; a listener there makes ACKs worth checking. */
#define PORT		45443
/* A port no rule names. */
#define OTHER_PORT	45444
/* What the client's SYN carries. */
#define CLIENT_MSS	1460
#define CLIENT_WS	7
#define CLIENT_TSVAL	0x01020304u
#define CLIENT_ISN	0x11223344u
/* Every cookie flag: the kernel accepts timestamps, SACK and scaling back. */
#define ALL_FLAGS	(WEIR_CK_TS | WEIR_CK_SACK | WEIR_CK_WSCALE)
/* The window scale the config says the kernel uses. */
#define HOST_WS		9

static void check_balance(void)
{
	__u64 pk = g(WEIR_G_PACKETS), non = g(WEIR_G_NON_IP), pas = g(WEIR_G_PASSED),
	      dro = g(WEIR_G_DROPPED);

	CHECK(pk == non + pas + dro, "PACKETS %llu != NON_IP %llu + PASSED %llu + DROPPED %llu",
	      (unsigned long long)pk, (unsigned long long)non, (unsigned long long)pas,
	      (unsigned long long)dro);
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                   */
/* ------------------------------------------------------------------------ */

/* Where a frame's headers are. */
struct where {
	size_t l3, l4;
	int family;
};

static __u16 get16(const __u8 *p)
{
	return (__u16)(p[0] << 8 | p[1]);
}

static __u32 get32(const __u8 *p)
{
	return (__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 | p[3];
}

/* The TCP checksum's sum over the frame: pseudo-header and segment of seglen bytes. */
static __u16 tcp_sum(const struct frame *f, const struct where *w, size_t seglen)
{
	__u32 sum;

	if (w->family == 4)
		sum = wr_pseudo4(f->b + w->l3 + 12, seglen);
	else
		sum = wr_pseudo6(f->b + w->l3 + 8, seglen);
	sum = wr_csum_add(sum, f->b + w->l4, seglen < 80 ? seglen : 80);
	return wr_csum_fold(sum);
}

/* Fill in the IPv4 header checksum and the TCP checksum of a frame built here. */
static void fix_csums(struct frame *f, const struct where *w)
{
	size_t seglen = f->n - w->l4;
	__u16 c;

	if (w->family == 4) {
		f->b[w->l3 + 10] = f->b[w->l3 + 11] = 0;
		c = ~wr_csum_fold(wr_csum_add(0, f->b + w->l3, 20));
		f->b[w->l3 + 10] = c >> 8;
		f->b[w->l3 + 11] = c;
	}
	f->b[w->l4 + 16] = f->b[w->l4 + 17] = 0;
	c = ~tcp_sum(f, w, seglen);
	f->b[w->l4 + 16] = c >> 8;
	f->b[w->l4 + 17] = c;
}

/*
 * A TCP header from port 40000 to dport with these flags, seq and ack,
 * and (opts) a Linux client's SYN options: MSS, SACK-permitted,
 * timestamps, window scale.
 */
static void l4_tcp_full(struct frame *l, __u16 dport, __u8 flags, __u32 seq, __u32 ack, int opts)
{
	l4_tcp(l, dport, flags, opts ? 10 : 5);
	l->b[4] = seq >> 24;
	l->b[5] = seq >> 16;
	l->b[6] = seq >> 8;
	l->b[7] = seq;
	l->b[8] = ack >> 24;
	l->b[9] = ack >> 16;
	l->b[10] = ack >> 8;
	l->b[11] = ack;
	if (opts) {
		__u8 *o = l->b + 20;

		o[0] = WR_TCPOPT_MSS, o[1] = 4, o[2] = CLIENT_MSS >> 8, o[3] = CLIENT_MSS & 0xff;
		o[4] = WR_TCPOPT_SACK_PERM, o[5] = 2;
		o[6] = WR_TCPOPT_TS, o[7] = 10;
		wr_put32(o + 8, CLIENT_TSVAL);
		wr_put32(o + 12, 0);
		o[16] = WR_TCPOPT_NOP, o[17] = WR_TCPOPT_WSCALE, o[18] = 3, o[19] = CLIENT_WS;
	}
}

/* Frame kinds: plain IPv4, IPv4 in a VLAN, IPv6, IPv6 with a hop-by-hop header. */
enum kind { K4, K4_VLAN, K6, K6_EXT, K_NR };
static const char *const kind_names[K_NR] = { "ipv4", "ipv4 vlan", "ipv6", "ipv6 hop-by-hop" };

static __u8 src6[16];

/* A TCP frame of kind k from src (IPv4) or src6 with this header; checksums right. */
static void tcp_frame(struct frame *f, enum kind k, __u32 src, const struct frame *l4,
		      struct where *w)
{
	struct frame p;

	memset(w, 0, sizeof(*w));
	switch (k) {
	case K4:
	case K4_VLAN:
		eth(f, WR_ETH_P_IP, k == K4_VLAN, TAG_Q);
		w->l3 = f->n;
		ip4(f, src, WR_IPPROTO_TCP, 5, 0, 0, l4);
		w->l4 = w->l3 + 20;
		w->family = 4;
		break;
	case K6:
		eth(f, WR_ETH_P_IPV6, 0, NULL);
		w->l3 = f->n;
		ip6(f, src6, WR_IPPROTO_TCP, 64, -1, l4);
		w->l4 = w->l3 + 40;
		w->family = 6;
		break;
	default:
		/* hop-by-hop options: next header TCP, length 0 (8 bytes), PadN */
		p.n = 0;
		put8(&p, WR_IPPROTO_TCP);
		put8(&p, 0);
		put8(&p, 1);
		put8(&p, 4);
		zeros(&p, 4);
		putn(&p, l4->b, l4->n);
		eth(f, WR_ETH_P_IPV6, 0, NULL);
		w->l3 = f->n;
		ip6(f, src6, WR_IPPROTO_HOPOPTS, 64, -1, &p);
		w->l4 = w->l3 + 48;
		w->family = 6;
		break;
	}
	fix_csums(f, w);
}

/* A client SYN of kind k from src with the usual options. */
static void syn_frame(struct frame *f, enum kind k, __u32 src, __u16 dport, struct where *w)
{
	struct frame l;

	l4_tcp_full(&l, dport, WEIR_TCP_SYN, CLIENT_ISN, 0, 1);
	tcp_frame(f, k, src, &l, w);
}

/* f through the XDP entry: the XDP verdict, the frame after it in *out. -1 on error. */
static int run_xdp(const struct frame *f, struct frame *out)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->b, .data_size_in = f->n,
		    .data_out = out->b, .data_size_out = sizeof(out->b), .repeat = 1);
	int err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.weir_xdp), &o);

	if (err) {
		CHECK_FAIL("xdp test_run of %zu bytes: %s", f->n, strerror(-err));
		return -1;
	}
	out->n = o.data_size_out;
	return o.retval;
}

/* ------------------------------------------------------------------------ */
/* Rules                                                                    */
/* ------------------------------------------------------------------------ */

/* A GCRA budget of rate per second with a burst of burst, as the controller sets it. */
static void budget(__u64 *ifp, __u64 *tol, __u64 rate, __u64 burst)
{
	*ifp = wr_gcra_interval_per(rate, 1000);
	*tol = wr_gcra_tolerance(*ifp, burst, WEIR_COST_PKT);
}

/*
 * `proto tcp dport PORT tcp-flags syn limit RATE per all action cookie`,
 * with SYN-ACK budgets of ck per second for the rule and ckd per
 * destination (0: none), each with a burst of one second.
 */
static struct weir_rule *cookie_rule(__u64 rate, __u8 mode, __u32 ck, __u32 ckd)
{
	struct weir_rule *r = add_rule(WEIR_ACT_COOKIE);

	match_proto(r, WR_IPPROTO_TCP);
	r->match |= WEIR_M_DPORT | WEIR_M_TCPFLAGS;
	r->dport_lo = r->dport_hi = PORT;
	r->tcp_mask = WEIR_TCP_SYN | WEIR_TCP_ACK;
	r->tcp_value = WEIR_TCP_SYN;
	r->cookie = mode;
	new_limit(r, WEIR_ALGO_GCRA, rate, 0, rate, WEIR_COST_PKT, WEIR_KEY_ALL, 0, 0);
	r->ck_rate = ck;
	r->ckd_rate = ckd;
	if (ck)
		budget(&r->ck_interval_fp, &r->ck_tolerance, ck, ck);
	if (ckd)
		budget(&r->ckd_interval_fp, &r->ckd_tolerance, ckd, ckd);
	rs.cookie_rules++;
	return r;
}

/*
 * The kernel was primed for rule i's port, for both families, at `at`: the
 * data path answers SYNs instead of passing one (see ck_prime).
 */
static void primed(int i, __u64 at)
{
	struct weir_ck_dst k;
	int fam;

	for (fam = 4; fam <= 6; fam += 2) {
		memset(&k, 0, sizeof(k));
		k.addr[0] = PORT;
		k.slot = rs.rules[i].slot;
		k.family = 0x80 | fam;
		if (bpf_map__update_elem(skel->maps.wr_cookie_dst, &k, sizeof(k), &at, sizeof(at),
					 0))
			CHECK_FAIL("writing wr_cookie_dst: %s", strerror(errno));
	}
}

/*
 * The cookie flags and the host's window scale in wr_config, as the
 * controller writes them, and rule 0's port primed just now.
 */
static void cookie_cfg(__u32 flags)
{
	struct weir_config c = cfg_get();

	c.cookie_flags = flags;
	c.cookie_wscale = HOST_WS;
	cfg_put(&c);
	primed(0, T0);
}

/* ------------------------------------------------------------------------ */
/* The SYN-ACK                                                              */
/* ------------------------------------------------------------------------ */

/*
 * out is the SYN-ACK answering syn (kind k, headers at w): Ethernet and IP
 * addresses and ports swapped, SYN|ACK, ack = ISN + 1, both checksums
 * right, no extension headers, the options flags allow. Its cookie (the
 * sequence number) to *cookie.
 */
static void check_synack(const struct frame *syn, const struct where *w, const struct frame *out,
			 __u32 flags, __u32 *cookie, const char *what)
{
	size_t l4 = w->l3 + (w->family == 4 ? 20 : 40);
	struct where ow = { .l3 = w->l3, .l4 = l4, .family = w->family };
	const __u8 *ip = out->b + w->l3, *in = syn->b + w->l3, *th = out->b + l4, *o = th + 20;
	int ts = flags & WEIR_CK_TS;
	/* With a timestamp every option; without, MSS alone. */
	unsigned int tcplen = ts ? WR_SYNACK_TCPLEN : WR_SYNACK_TCPLEN_MIN;

	if (out->n != l4 + tcplen) {
		CHECK_FAIL("%s: SYN-ACK of %zu bytes, want %zu", what, out->n, l4 + tcplen);
		return;
	}
	CHECK(!memcmp(out->b, syn->b + 6, 6) && !memcmp(out->b + 6, syn->b, 6),
	      "%s: Ethernet addresses not swapped", what);
	CHECK(!memcmp(out->b + 12, syn->b + 12, w->l3 - 12), "%s: VLAN tags or type changed", what);
	if (w->family == 4) {
		CHECK(ip[0] == 0x45 && get16(ip + 2) == 20 + tcplen && ip[9] == 6,
		      "%s: IPv4 header %02x len %u proto %u", what, ip[0], get16(ip + 2), ip[9]);
		CHECK(!memcmp(ip + 12, in + 16, 4) && !memcmp(ip + 16, in + 12, 4),
		      "%s: IPv4 addresses not swapped", what);
		CHECK(wr_csum_fold(wr_csum_add(0, ip, 20)) == 0xffff, "%s: bad IPv4 checksum", what);
	} else {
		CHECK((ip[0] >> 4) == 6 && get16(ip + 4) == tcplen && ip[6] == 6,
		      "%s: IPv6 header: payload %u next header %u", what, get16(ip + 4), ip[6]);
		CHECK(!memcmp(ip + 8, in + 24, 16) && !memcmp(ip + 24, in + 8, 16),
		      "%s: IPv6 addresses not swapped", what);
	}
	CHECK(get16(th) == get16(syn->b + w->l4 + 2) && get16(th + 2) == get16(syn->b + w->l4),
	      "%s: ports not swapped: %u -> %u", what, get16(th), get16(th + 2));
	CHECK(get32(th + 8) == CLIENT_ISN + 1, "%s: ack %08x, want ISN + 1", what, get32(th + 8));
	CHECK(th[13] == (WEIR_TCP_SYN | WEIR_TCP_ACK), "%s: flags %02x", what, th[13]);
	CHECK(th[12] >> 4 == tcplen / 4, "%s: data offset %u", what, th[12] >> 4);
	CHECK(tcp_sum(out, &ow, tcplen) == 0xffff, "%s: bad TCP checksum", what);
	/* MSS: this host's, from the test device's MTU; at least the minimum. */
	CHECK(o[0] == WR_TCPOPT_MSS && o[1] == 4 && get16(o + 2) >= 536, "%s: MSS option %u %u %u",
	      what, o[0], o[1], get16(o + 2));
	if (ts) {
		__u32 tsval = get32(o + 8);

		CHECK(o[4] == WR_TCPOPT_SACK_PERM && o[5] == 2, "%s: no SACK-permitted", what);
		CHECK(o[6] == WR_TCPOPT_TS && o[7] == 10 && get32(o + 12) == CLIENT_TSVAL,
		      "%s: timestamp option %u %u echo %08x", what, o[6], o[7], get32(o + 12));
		/* The kernel's encoding: the client's scale and SACK in the low bits. */
		CHECK((tsval & WR_TS_OPT_WSCALE_MASK) == CLIENT_WS && (tsval & WR_TS_OPT_SACK),
		      "%s: TSval %08x does not carry wscale %u and SACK", what, tsval, CLIENT_WS);
		CHECK(o[16] == WR_TCPOPT_NOP && o[17] == WR_TCPOPT_WSCALE && o[18] == 3 &&
		      o[19] == HOST_WS, "%s: window scale option %u %u %u", what, o[17], o[18],
		      o[19]);
	}
	*cookie = get32(th + 4);
}

/* ------------------------------------------------------------------------ */
/* A listener, so that ACKs reach the cookie check                          */
/* ------------------------------------------------------------------------ */

static int listen_on(int family, __u16 port)
{
	int fd = socket(family == 4 ? AF_INET : AF_INET6, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(port) };

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == 6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if ((family == 4 ? bind(fd, (void *)&a4, sizeof(a4)) : bind(fd, (void *)&a6, sizeof(a6))) ||
	    listen(fd, 16)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * For each kind of frame: the first SYN is within the limit and passes,
 * the second is answered; the ACK carrying the cookie passes, one with
 * the cookie off by one is dropped and counted, both through the
 * kernel's check against a listener on the port.
 */
static void handshake(enum kind k, __u32 flags)
{
	struct frame syn, out, ack, l;
	struct where w, aw;
	__u32 cookie = 0;
	int lfd, v;
	char what[64];

	snprintf(what, sizeof(what), "%s%s", kind_names[k], flags & WEIR_CK_TS ? "" : " no ts");
	cookie_rule(1, WEIR_COOKIE_OVER, 0, 0);
	commit();
	cookie_cfg(flags);
	lfd = listen_on(k >= K6 ? 6 : 4, PORT);
	if (lfd < 0) {
		CHECK_FAIL("%s: cannot listen on port %d: %s", what, PORT, strerror(errno));
		return;
	}
	syn_frame(&syn, k, SRC_A, PORT, &w);
	CHECK_EQ(run_xdp(&syn, &out), XDP_PASS);
	v = run_xdp(&syn, &out);
	CHECK(v == XDP_TX, "%s: SYN over the limit: verdict %d, want XDP_TX", what, v);
	if (v == XDP_TX)
		check_synack(&syn, &w, &out, flags, &cookie, what);
	CHECK_EQ(g(WEIR_G_COOKIE_SENT), 1);
	CHECK_EQ(rstat(0).dropped_pkts, 1);

	l4_tcp_full(&l, PORT, WEIR_TCP_ACK, CLIENT_ISN + 1, cookie + 1, 0);
	tcp_frame(&ack, k, SRC_A, &l, &aw);
	v = run_xdp(&ack, &out);
	CHECK(v == XDP_PASS, "%s: ACK with the cookie: verdict %d, want XDP_PASS", what, v);
	CHECK_EQ(g(WEIR_G_COOKIE_VALID), 1);

	/*
	 * Forged: the cookie's counter bits changed. (Its low bits are the MSS
	 * index, so a cookie one off can be valid for another MSS.)
	 */
	l4_tcp_full(&l, PORT, WEIR_TCP_ACK, CLIENT_ISN + 1, (cookie ^ 0xa5000000) + 1, 0);
	tcp_frame(&ack, k, SRC_A, &l, &aw);
	v = run_xdp(&ack, &out);
	CHECK(v == XDP_DROP, "%s: forged ACK: verdict %d, want XDP_DROP", what, v);
	CHECK_EQ(g(WEIR_G_COOKIE_INVALID), 1);
	CHECK_EQ(g(WEIR_G_COOKIE_VALID), 1);
	/* The same with PSH, as a first segment of data would come. */
	l4_tcp_full(&l, PORT, WEIR_TCP_ACK | WEIR_TCP_PSH, CLIENT_ISN + 1,
		    (cookie ^ 0xa5000000) + 1, 0);
	tcp_frame(&ack, k, SRC_A, &l, &aw);
	v = run_xdp(&ack, &out);
	CHECK(v == XDP_DROP, "%s: forged PSH ACK: verdict %d, want XDP_DROP", what, v);
	CHECK_EQ(g(WEIR_G_COOKIE_INVALID), 2);
	close(lfd);
}

HARNESS_CASE(cookie_handshake_ipv4)
{
	handshake(K4, ALL_FLAGS);
}

HARNESS_CASE(cookie_handshake_ipv4_vlan)
{
	handshake(K4_VLAN, ALL_FLAGS);
}

HARNESS_CASE(cookie_handshake_ipv6)
{
	handshake(K6, ALL_FLAGS);
}

HARNESS_CASE(cookie_handshake_ipv6_hop_by_hop)
{
	handshake(K6_EXT, ALL_FLAGS);
}

/* tcp_timestamps = 1 (random offsets): no timestamp, so no options ride along. */
HARNESS_CASE(cookie_handshake_without_timestamps)
{
	handshake(K4, WEIR_CK_SACK | WEIR_CK_WSCALE);
}

/* ACKs that are not a cookie's answer are left alone. */
HARNESS_CASE(cookie_other_acks_pass)
{
	struct frame ack, out, l;
	struct where w;
	int lfd;

	cookie_rule(1, WEIR_COOKIE_OVER, 0, 0);
	commit();
	cookie_cfg(ALL_FLAGS);
	lfd = listen_on(4, OTHER_PORT);
	CHECK(lfd >= 0, "cannot listen on %d", OTHER_PORT);
	/* No listener on the rule's port: nothing to check against, passed. */
	l4_tcp_full(&l, PORT, WEIR_TCP_ACK, 1, 12345, 0);
	tcp_frame(&ack, K4, SRC_A, &l, &w);
	CHECK_EQ(run_xdp(&ack, &out), XDP_PASS);
	/* A listener, but on a port no cookie rule names: not checked, passed. */
	l4_tcp_full(&l, OTHER_PORT, WEIR_TCP_ACK, 1, 12345, 0);
	tcp_frame(&ack, K4, SRC_A, &l, &w);
	CHECK_EQ(run_xdp(&ack, &out), XDP_PASS);
	/* An RST to the rule's port is not an ACK to check. */
	l4_tcp_full(&l, PORT, WEIR_TCP_ACK | WEIR_TCP_RST, 1, 12345, 0);
	tcp_frame(&ack, K4, SRC_A, &l, &w);
	CHECK_EQ(run_xdp(&ack, &out), XDP_PASS);
	CHECK_EQ(g(WEIR_G_COOKIE_VALID) + g(WEIR_G_COOKIE_INVALID), 0);
	if (lfd >= 0)
		close(lfd);
}

/*
 * The ACK check visits the rule index's candidates for the ACK's port, not
 * every rule: a cookie rule behind 40 others (on other ports, and some on
 * every port) is still found for its port, and the same rule set's ACKs to
 * another port with a listener, whose candidates hold no cookie rule, are
 * not checked.
 */
HARNESS_CASE(cookie_ack_found_among_many_rules)
{
	struct frame ack, out, l;
	struct where w;
	int lfd, lfd2, i, v;

	for (i = 0; i < 40; i++) {
		struct weir_rule *r = add_rule(WEIR_ACT_DROP);

		match_proto(r, WR_IPPROTO_TCP);
		/* Every fourth on every port; the rest on ports around PORT but not it. */
		if (i % 4) {
			r->match |= WEIR_M_DPORT;
			r->dport_lo = r->dport_hi = PORT + 2 + i;
		}
		new_limit(r, WEIR_ALGO_GCRA, 1000000, 0, 1000000, WEIR_COST_PKT,
			  WEIR_KEY_SRC, 32, 128);
	}
	cookie_rule(1, WEIR_COOKIE_OVER, 0, 0);
	commit();
	cookie_cfg(ALL_FLAGS);
	lfd = listen_on(4, PORT);
	lfd2 = listen_on(4, OTHER_PORT);
	CHECK(lfd >= 0 && lfd2 >= 0, "cannot listen on %d and %d", PORT, OTHER_PORT);
	/* A forged answer to the cookie rule's port: checked, dropped. */
	l4_tcp_full(&l, PORT, WEIR_TCP_ACK, CLIENT_ISN + 1, 0xa5a5a5a5, 0);
	tcp_frame(&ack, K4, SRC_A, &l, &w);
	v = run_xdp(&ack, &out);
	CHECK(v == XDP_DROP, "forged ACK to the cookie rule's port: verdict %d, want XDP_DROP", v);
	CHECK_EQ(g(WEIR_G_COOKIE_INVALID), 1);
	/* The same to another port: ten rules match it, none a cookie rule; passed unchecked. */
	l4_tcp_full(&l, OTHER_PORT, WEIR_TCP_ACK, CLIENT_ISN + 1, 0xa5a5a5a5, 0);
	tcp_frame(&ack, K4, SRC_A, &l, &w);
	CHECK_EQ(run_xdp(&ack, &out), XDP_PASS);
	CHECK_EQ(g(WEIR_G_COOKIE_VALID) + g(WEIR_G_COOKIE_INVALID), 1);
	if (lfd >= 0)
		close(lfd);
	if (lfd2 >= 0)
		close(lfd2);
}

/* SYN+FIN, SYN+RST, SYN+ACK and a SYN with a bad checksum are never answered. */
HARNESS_CASE(cookie_never_answered)
{
	static const __u8 flags[] = { WEIR_TCP_SYN | WEIR_TCP_FIN,
				      WEIR_TCP_SYN | WEIR_TCP_RST };
	struct frame f, out, l;
	struct where w;
	unsigned int i;
	int v;

	/* The rule matches every SYN, with or without other flags, and admits none. */
	cookie_rule(1, WEIR_COOKIE_OVER, 0, 0)->tcp_mask = WEIR_TCP_SYN;
	commit();
	cookie_cfg(ALL_FLAGS);
	syn_frame(&f, K4, SRC_B, PORT, &w);
	CHECK_EQ(run_xdp(&f, &out), XDP_PASS);	/* the limit's one */
	for (i = 0; i < sizeof(flags); i++) {
		l4_tcp_full(&l, PORT, flags[i], CLIENT_ISN, 0, 1);
		tcp_frame(&f, K4, SRC_A, &l, &w);
		v = run_xdp(&f, &out);
		CHECK(v == XDP_DROP, "flags %02x: verdict %d, want XDP_DROP", flags[i], v);
	}
	syn_frame(&f, K4, SRC_A, PORT, &w);
	f.b[w.l4 + 17] ^= 0x01;		/* TCP checksum off by one bit */
	v = run_xdp(&f, &out);
	CHECK(v == XDP_DROP, "bad TCP checksum: verdict %d, want XDP_DROP", v);
	syn_frame(&f, K4, SRC_A, PORT, &w);
	f.b[w.l3 + 11] ^= 0x01;		/* IPv4 header checksum off */
	v = run_xdp(&f, &out);
	CHECK(v == XDP_DROP, "bad IPv4 checksum: verdict %d, want XDP_DROP", v);
	syn_frame(&f, K6, SRC_A, PORT, &w);
	f.b[w.l4 + 16] ^= 0x80;
	v = run_xdp(&f, &out);
	CHECK(v == XDP_DROP, "bad TCP checksum over IPv6: verdict %d, want XDP_DROP", v);
	CHECK_EQ(g(WEIR_G_COOKIE_SENT), 0);
	CHECK_EQ(g(WEIR_G_COOKIE_BAD), 3);
}

/*
 * A local sender's SYN over veth, its checksum left to the device
 * (CHECKSUM_PARTIAL: the field holds the pseudo-header's folded sum), is
 * answered, over IPv4 and IPv6; the same field one bit off is not.
 */
HARNESS_CASE(cookie_partial_checksum_answered)
{
	static const enum kind kinds[] = { K4, K6 };
	struct frame f, out;
	struct where w;
	unsigned int i;
	__u32 sum, cookie;
	__u16 c;
	int v;

	cookie_rule(1, WEIR_COOKIE_OVER, 0, 0);
	commit();
	cookie_cfg(ALL_FLAGS);
	syn_frame(&f, K4, SRC_B, PORT, &w);
	CHECK_EQ(run_xdp(&f, &out), XDP_PASS);	/* the limit's one */
	for (i = 0; i < 2; i++) {
		syn_frame(&f, kinds[i], SRC_A, PORT, &w);
		sum = kinds[i] == K4 ? wr_pseudo4(f.b + w.l3 + 12, f.n - w.l4) :
				       wr_pseudo6(f.b + w.l3 + 8, f.n - w.l4);
		c = wr_csum_fold(sum);
		f.b[w.l4 + 16] = c >> 8;
		f.b[w.l4 + 17] = c;
		v = run_xdp(&f, &out);
		CHECK(v == XDP_TX, "%s partial checksum: verdict %d, want XDP_TX",
		      kind_names[kinds[i]], v);
		if (v == XDP_TX)
			check_synack(&f, &w, &out, ALL_FLAGS, &cookie, kind_names[kinds[i]]);
		f.b[w.l4 + 17] ^= 0x01;
		v = run_xdp(&f, &out);
		CHECK(v == XDP_DROP, "%s partial checksum one bit off: verdict %d, want XDP_DROP",
		      kind_names[kinds[i]], v);
	}
	CHECK_EQ(g(WEIR_G_COOKIE_SENT), 2);
	CHECK_EQ(g(WEIR_G_COOKIE_BAD), 2);
}

/* The rule-wide SYN-ACK budget: 10 per second, so 10 of 30 SYNs at one instant. */
HARNESS_CASE(cookie_budget_rule)
{
	struct frame f, out;
	struct where w;
	int i, tx = 0;

	cookie_rule(1, WEIR_COOKIE_ALWAYS, 10, 0);
	commit();
	cookie_cfg(ALL_FLAGS);
	for (i = 0; i < 30; i++) {
		syn_frame(&f, K4, IP4(198, 18, 7, i), PORT, &w);
		tx += run_xdp(&f, &out) == XDP_TX;
	}
	CHECK_EQ(tx, 10);
	CHECK_EQ(g(WEIR_G_COOKIE_SENT), 10);
	CHECK_EQ(g(WEIR_G_COOKIE_BUDGET), 20);
	/* A second later the budget is 10 again. */
	set_now(T0 + SEC);
	for (i = 0, tx = 0; i < 30; i++) {
		syn_frame(&f, K4, IP4(198, 18, 8, i), PORT, &w);
		tx += run_xdp(&f, &out) == XDP_TX;
	}
	CHECK_EQ(tx, 10);
}

/* The budget per destination: 2 per second to each address, whatever the rule's. */
HARNESS_CASE(cookie_budget_per_destination)
{
	struct frame f, out;
	struct where w;
	int i, tx_a = 0, tx_b = 0;

	cookie_rule(1, WEIR_COOKIE_ALWAYS, 1000, 2);
	commit();
	cookie_cfg(ALL_FLAGS);
	for (i = 0; i < 10; i++) {
		syn_frame(&f, K4, SRC_A, PORT, &w);
		tx_a += run_xdp(&f, &out) == XDP_TX;
		syn_frame(&f, K6, SRC_A, PORT, &w);
		tx_b += run_xdp(&f, &out) == XDP_TX;
	}
	CHECK_EQ(tx_a, 2);
	CHECK_EQ(tx_b, 2);
	CHECK_EQ(g(WEIR_G_COOKIE_BUDGET), 16);
}

/* cookie always: a SYN within the limits is answered too, and charges nothing. */
HARNESS_CASE(cookie_always_answers_every_syn)
{
	struct frame f, out;
	struct where w;
	__u32 cookie;
	int i, tx = 0;

	cookie_rule(1000, WEIR_COOKIE_ALWAYS, 0, 0);
	commit();
	cookie_cfg(ALL_FLAGS);
	for (i = 0; i < 5; i++) {
		syn_frame(&f, K4, SRC_A, PORT, &w);
		if (run_xdp(&f, &out) == XDP_TX) {
			tx++;
			check_synack(&f, &w, &out, ALL_FLAGS, &cookie, "always");
		}
	}
	CHECK_EQ(tx, 5);
	/* The rule-wide bucket never saw them: still full. */
	CHECK_EQ(agg_get(&rs.rules[0].limits[0]).tat, 0);
}

/* Under the kill switch nothing is answered: the SYN passes (a would-drop). */
HARNESS_CASE(cookie_kill_switch_passes)
{
	struct frame f, out;
	struct where w;

	cookie_rule(1, WEIR_COOKIE_ALWAYS, 0, 0);
	commit();
	cookie_cfg(ALL_FLAGS);
	CFG_SET(disabled, 1);
	syn_frame(&f, K4, SRC_A, PORT, &w);
	CHECK_EQ(run_xdp(&f, &out), XDP_PASS);
	CHECK_EQ(run_xdp(&f, &out), XDP_PASS);
	CHECK_EQ(g(WEIR_G_COOKIE_SENT), 0);
}

/* At TC a cookie rule's refused SYN is dropped (no cookies there), and counted so. */
HARNESS_CASE(cookie_tc_drops)
{
	struct frame f;
	struct where w;
	int err;

	cookie_rule(1, WEIR_COOKIE_OVER, 0, 0);
	commit();
	cookie_cfg(ALL_FLAGS);
	syn_frame(&f, K4, SRC_A, PORT, &w);
	CHECK_EQ(run_frame(&f, 1, &err), 1);
	CHECK_EQ(run_frame(&f, 1, &err), 0);
	CHECK_EQ(g(WEIR_G_COOKIE_SENT), 0);
}

/*
 * Keeping the kernel willing: the first valid SYN to a port the rule has
 * not passed one of for WR_CK_PRIME_NS goes to the kernel (counted passed
 * by the rule), the rest are answered; a minute later one passes again.
 */
HARNESS_CASE(cookie_primes_the_kernel)
{
	struct frame f, out;
	struct where w;
	int v;

	cookie_rule(1, WEIR_COOKIE_ALWAYS, 0, 0);
	commit();
	CFG_SET(cookie_flags, ALL_FLAGS);	/* and nothing primed yet */
	syn_frame(&f, K4, SRC_A, PORT, &w);
	v = run_xdp(&f, &out);
	CHECK(v == XDP_PASS, "first SYN: verdict %d, want XDP_PASS (to the kernel)", v);
	v = run_xdp(&f, &out);
	CHECK(v == XDP_TX, "second SYN: verdict %d, want XDP_TX", v);
	syn_frame(&f, K6, SRC_A, PORT, &w);
	CHECK_EQ(run_xdp(&f, &out), XDP_PASS);	/* IPv6: a listener of its own */
	CHECK_EQ(run_xdp(&f, &out), XDP_TX);
	set_now(T0 + 59 * SEC);
	CHECK_EQ(run_xdp(&f, &out), XDP_TX);
	set_now(T0 + 60 * SEC);
	CHECK_EQ(run_xdp(&f, &out), XDP_PASS);
	CHECK_EQ(run_xdp(&f, &out), XDP_TX);
	CHECK_EQ(g(WEIR_G_COOKIE_PRIMED), 3);
	CHECK_EQ(g(WEIR_G_COOKIE_SENT), 4);
	CHECK_EQ(rstat(0).passed_pkts, 3);
	CHECK_EQ(rstat(0).dropped_pkts, 4);
}

/* ------------------------------------------------------------------------ */
/* Verified sources                                                         */
/* ------------------------------------------------------------------------ */

static void verify(__u32 src, __u64 at)
{
	verify4(src, at, 0);
}

/*
 * A rule of class 3 with verified-class 0, class 3 shed entirely: a
 * verified source passes as class 0, others are shed; one verified longer
 * ago than the TTL is shed too.
 */
HARNESS_CASE(verified_sources_spared)
{
	struct weir_shed sh;
	struct weir_rule *r;
	struct frame f;
	__u32 zero = 0;

	r = add_rule(WEIR_ACT_DROP);
	match_proto(r, WR_IPPROTO_TCP);
	r->class = 3;
	r->verified_class = 0 + 1;
	new_limit(r, WEIR_ALGO_GCRA, 1000000, 0, 1000000, WEIR_COST_PKT, WEIR_KEY_ALL, 0,
		  0);
	commit();
	memset(&sh, 0, sizeof(sh));
	sh.threshold[3] = 1ULL << 32;	/* class 3: shed everything */
	if (bpf_map__update_elem(skel->maps.wr_shed, &zero, 4, &sh, sizeof(sh), 0))
		CHECK_FAIL("writing wr_shed: %s", strerror(errno));
	CFG_SET(verified_ttl_ns, 60 * SEC);
	verify(SRC_A, T0 - 10 * SEC);
	verify(SRC_C, T0 - 61 * SEC);

	tcp4(&f, SRC_A, 80, WEIR_TCP_ACK);
	CHECK_EQ(xmit_n(&f, 20), 20);
	tcp4(&f, SRC_B, 80, WEIR_TCP_ACK);
	CHECK_EQ(xmit_n(&f, 20), 0);
	tcp4(&f, SRC_C, 80, WEIR_TCP_ACK);
	CHECK_EQ(xmit_n(&f, 20), 0);
	CHECK_EQ(g(WEIR_G_VERIFIED), 20);
	CHECK_EQ(g(WEIR_G_SHED), 40);
	/* Kept off (TTL 0), nobody is spared. */
	CFG_SET(verified_ttl_ns, 0);
	tcp4(&f, SRC_A, 80, WEIR_TCP_ACK);
	CHECK_EQ(xmit_n(&f, 5), 0);
}

/*
 * `spare verified` (every rule of weir auto): a verified source does not
 * match the rule and goes on to the rules after it; an unverified source,
 * and one verified longer ago than the TTL, meet the rule's limit (one
 * packet for the whole rule, auto's drop). The same through TC. With the
 * TTL 0 (nothing keeps verified sources) nobody goes by.
 */
HARNESS_CASE(spare_verified_unmatched)
{
	struct weir_rule *r;
	struct frame f;
	int err;

	r = add_rule(WEIR_ACT_DROP);
	match_proto(r, WR_IPPROTO_TCP);
	r->flags |= WEIR_RF_SPARE_VERIFIED;
	new_limit(r, WEIR_ALGO_GCRA, 1, 86400000, 1, WEIR_COST_PKT, WEIR_KEY_ALL, 0, 0);
	r = add_rule(WEIR_ACT_DROP);
	match_proto(r, WR_IPPROTO_TCP);
	new_limit(r, WEIR_ALGO_GCRA, 1000000, 0, 1000000, WEIR_COST_PKT, WEIR_KEY_ALL, 0,
		  0);
	commit();
	CFG_SET(verified_ttl_ns, 60 * SEC);
	verify(SRC_A, T0 - 10 * SEC);
	verify(SRC_C, T0 - 61 * SEC);
	/* SRC_B's slot fresh (another source of it verified), SRC_B itself never. */
	verify4(SRC_B, T0 - 5 * SEC, 1);

	tcp4(&f, SRC_A, 80, WEIR_TCP_ACK);
	CHECK_EQ(xmit_n(&f, 20), 20);
	CHECK_EQ(rstat(0).passed_pkts + rstat(0).dropped_pkts, 0);
	CHECK_EQ(rstat(1).passed_pkts, 20);
	CHECK_EQ(g(WEIR_G_VERIFIED_UNMATCHED), 20);
	tcp4(&f, SRC_B, 80, WEIR_TCP_ACK);
	CHECK_EQ(xmit_n(&f, 20), 1);
	tcp4(&f, SRC_C, 80, WEIR_TCP_ACK);
	CHECK_EQ(xmit_n(&f, 20), 0);
	CHECK_EQ(rstat(0).dropped_pkts, 39);
	CHECK_EQ(g(WEIR_G_VERIFIED_UNMATCHED), 20);
	/* TC's entry shares the matcher. */
	tcp4(&f, SRC_A, 80, WEIR_TCP_ACK);
	CHECK_EQ(run_frame(&f, 1, &err), 1);
	tcp4(&f, SRC_B, 80, WEIR_TCP_ACK);
	CHECK_EQ(run_frame(&f, 1, &err), 0);
	CHECK_EQ(g(WEIR_G_VERIFIED_UNMATCHED), 21);
	/* Kept off (TTL 0): the verified source meets the rule too. */
	CFG_SET(verified_ttl_ns, 0);
	tcp4(&f, SRC_A, 80, WEIR_TCP_ACK);
	CHECK_EQ(xmit_n(&f, 5), 0);
	CHECK_EQ(g(WEIR_G_VERIFIED_UNMATCHED), 21);
}

/*
 * Without the raw cookie helpers (a kernel before 6.0, or
 * WEIR_FEATURES_OFF=syncookie) the object loads with the cookie code
 * switched off: a cookie rule's refused SYN is dropped, never answered,
 * and ACKs pass unchecked. (The controller refuses such rules there; this
 * is what the data path does if one is there anyway.)
 */
static void cookie_off_falls_back(void)
{
	struct frame f, out, l;
	struct where w;

	if (setup())
		return;
	cookie_rule(1, WEIR_COOKIE_OVER, 0, 0);
	commit();
	cookie_cfg(ALL_FLAGS);
	syn_frame(&f, K4, SRC_A, PORT, &w);
	CHECK_EQ(run_xdp(&f, &out), XDP_PASS);
	CHECK_EQ(run_xdp(&f, &out), XDP_DROP);
	l4_tcp_full(&l, PORT, WEIR_TCP_ACK, CLIENT_ISN + 1, 12345, 0);
	tcp_frame(&f, K4, SRC_A, &l, &w);
	CHECK_EQ(run_xdp(&f, &out), XDP_PASS);
	CHECK_EQ(g(WEIR_G_COOKIE_SENT) + g(WEIR_G_COOKIE_INVALID), 0);
	check_balance();
	teardown();
}

/* ------------------------------------------------------------------------ */
/* Stale cookies (`bpf_cookie stale`: tests/soak.sh runs it, it waits)      */
/* ------------------------------------------------------------------------ */

/*
 * The kernel's cookie carries a counter of minutes (tcp_cookie_time():
 * jiffies / (60 * HZ)) in its top 8 bits, and the check takes it while the
 * counter has moved on by less than MAX_SYNCOOKIE_AGE = 2
 * (check_tcp_syn_cookie()): a cookie is good for at least 60 s and at most
 * 120 s after it was made. The counter is also hashed with the kernel's
 * secret into the low 24 bits, so no one can make a cookie with an old
 * counter, this test included: a changed counter is merely a forged cookie
 * (cookie_handshake_* drop those). The only honest stale cookie is a real
 * one that has aged: this case makes one for IPv4 and one for IPv6 through
 * the real object, checks that their ACKs pass at once and still pass
 * STALE_FRESH_S later (well inside the minimum), then waits until they are
 * more than 120 s old and checks that the same ACKs are dropped and counted
 * invalid. Nothing else changes in between (the object's own clock is
 * manual and stays at T0), so the verdict moved only because the kernel's
 * minute counter did. It takes STALE_WAIT_S seconds, hence not in the
 * suite's normal run.
 */
/* When the second look (still valid) is taken, after the SYN. */
#define STALE_FRESH_S	45
/* When the last (stale) is: 120 s, the longest a cookie lives, and a margin. */
#define STALE_WAIT_S	125

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleep until mono_s() reaches t. */
static void sleep_until(double t)
{
	double left;

	while ((left = t - mono_s()) > 0) {
		struct timespec ts = { .tv_sec = (time_t)left,
				       .tv_nsec = (long)((left - (time_t)left) * 1e9) };

		nanosleep(&ts, NULL);
	}
}

/* The ACK answering the SYN-ACK with this cookie, for kind k. */
static void stale_ack(struct frame *ack, enum kind k, __u32 cookie)
{
	struct frame l;
	struct where w;

	l4_tcp_full(&l, PORT, WEIR_TCP_ACK, CLIENT_ISN + 1, cookie + 1, 0);
	tcp_frame(ack, k, SRC_A, &l, &w);
}

static void cookie_stale_ack_dropped(void)
{
	static const enum kind kinds[] = { K4, K6 };
	struct frame syn, out, ack[2];
	int lfd[2] = { -1, -1 }, i, v;
	double made, made_end, t;
	__u32 cookie;
	struct where w;

	if (setup())
		return;
	cookie_rule(1, WEIR_COOKIE_OVER, 0, 0);
	commit();
	cookie_cfg(ALL_FLAGS);
	lfd[0] = listen_on(4, PORT);
	lfd[1] = listen_on(6, PORT);
	if (lfd[0] < 0 || lfd[1] < 0) {
		CHECK_FAIL("cannot listen on port %d: %s", PORT, strerror(errno));
		goto out;
	}
	made = mono_s();
	for (i = 0; i < 2; i++) {
		syn_frame(&syn, kinds[i], SRC_A, PORT, &w);
		if (i == 0)
			CHECK_EQ(run_xdp(&syn, &out), XDP_PASS);	/* the limit's one */
		v = run_xdp(&syn, &out);
		if (v != XDP_TX) {
			CHECK_FAIL("%s: SYN verdict %d, want XDP_TX", kind_names[kinds[i]], v);
			goto out;
		}
		check_synack(&syn, &w, &out, ALL_FLAGS, &cookie, kind_names[kinds[i]]);
		stale_ack(&ack[i], kinds[i], cookie);
	}
	made_end = mono_s();
	/* The control: the cookies are good now. */
	for (i = 0; i < 2; i++) {
		v = run_xdp(&ack[i], &out);
		CHECK(v == XDP_PASS, "%s: ACK right after the SYN: verdict %d, want XDP_PASS",
		      kind_names[kinds[i]], v);
	}
	CHECK_EQ(g(WEIR_G_COOKIE_VALID), 2);
	/* Still good well inside the minimum lifetime of 60 s. */
	sleep_until(made + STALE_FRESH_S);
	for (i = 0; i < 2; i++) {
		v = run_xdp(&ack[i], &out);
		CHECK(v == XDP_PASS, "%s: ACK %d s after the SYN: verdict %d, want XDP_PASS",
		      kind_names[kinds[i]], STALE_FRESH_S, v);
	}
	t = mono_s() - made;
	/* Only a look taken before 60 s is sure to find the cookie good. */
	if (t < 59)
		CHECK_EQ(g(WEIR_G_COOKIE_VALID), 4);
	printf("# cookies made; their ACKs passed at once and %.1f s later\n", t);
	fflush(stdout);
	/* Older than 120 s: stale, whatever the phase of the minute counter. */
	sleep_until(made_end + STALE_WAIT_S);
	for (i = 0; i < 2; i++) {
		v = run_xdp(&ack[i], &out);
		CHECK(v == XDP_DROP,
		      "%s: the same ACK %d s after the SYN: verdict %d, want XDP_DROP",
		      kind_names[kinds[i]], STALE_WAIT_S, v);
	}
	CHECK_EQ(g(WEIR_G_COOKIE_INVALID), 2);
	printf("# the same ACKs %.1f s after the SYNs: dropped, %llu counted invalid\n",
	       mono_s() - made, (unsigned long long)g(WEIR_G_COOKIE_INVALID));
	check_balance();
out:
	for (i = 0; i < 2; i++)
		if (lfd[i] >= 0)
			close(lfd[i]);
	teardown();
}

int main(int argc, char **argv)
{
	struct wr_features f;
	int stale = argc > 1 && !strcmp(argv[1], "stale"), err;

	if (argc > 2 || (argc == 2 && !stale)) {
		fprintf(stderr, "usage: %s [stale]\n", argv[0]);
		return 2;
	}
	addr6(src6, 0x00010001, 1);
	err = harness_start("bpf_cookie");
	if (err)
		return err > 0;
	teardown();
	wr_features_probe(&f);
	if (!f.has[WR_FEAT_SYNCOOKIE]) {
		if (stale) {
			SKIP("cookie_stale_ack_dropped",
			     "no raw SYN cookie helpers on this kernel");
			return 0;
		}
		/* The cases below need the helpers: only the fallback runs. */
		check_run_one("cookie_off_falls_back", cookie_off_falls_back);
		return check_total_failed != 0;
	}
	if (stale) {
		check_run_one("cookie_stale_ack_dropped", cookie_stale_ack_dropped);
		return check_total_failed != 0;
	}
	return check_run_all();
}
