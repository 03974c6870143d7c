// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `tcp-state` in the real BPF object, through bpf_prog_test_run_opts,
 * against real sockets: a TCP segment other than a pure SYN that a
 * tcp-state rule matches passes only if the kernel's socket lookup finds
 * its connection (bpf/tcpstate.h).
 *
 * The suite runs in a network namespace of its own (unshare at start, lo
 * up, and a veth pair whose far end answers nothing), where test_run's
 * socket lookups happen too: they look in the namespace of the process
 * that runs the program, on its loopback device. There it opens a
 * listener on 127.0.0.1 and [::1], an established pair to each, and a
 * connect to 198.18.5.2 and 2001:db8:5::2 (over the veth) whose SYN is
 * never answered, so its socket stays in SYN_SENT (and ts_time_wait closes
 * a connection of its own into TIME_WAIT). Frames are built from
 * those sockets' own addresses and ports; random tuples from 198.18.9.0/24
 * and 2001:db8:9::/64 belong to no connection.
 *
 * Most cases run at XDP and at TC (name_xdp, name_tc).
 */
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "bpf_harness.h"
#include "weir_cookie.h"

/* The listeners' port, on 127.0.0.1 and [::1]. */
#define LPORT		45501
/* A port nothing listens on. */
#define CLOSED_PORT	45502
/* The SYN_SENT sockets' destination port (on the veth's silent far side). */
#define FAR_PORT	45503
/* The source port of random tuples. */
#define RAND_PORT	50123
/* The veth pair of the SYN_SENT sockets, inside this suite's namespace only. */
#define VETH		"wrts0"
#define VETH_PEER	"wrts1"
/* What the cookie case's client SYN carries. */
#define CLIENT_ISN	0x11223344u
#define CLIENT_MSS	1460

static void check_balance(void)
{
	__u64 pk = g(WEIR_G_PACKETS), non = g(WEIR_G_NON_IP), pas = g(WEIR_G_PASSED),
	      dro = g(WEIR_G_DROPPED);

	CHECK(pk == non + pas + dro, "PACKETS %llu != NON_IP %llu + PASSED %llu + DROPPED %llu",
	      (unsigned long long)pk, (unsigned long long)non, (unsigned long long)pas,
	      (unsigned long long)dro);
}

/* ------------------------------------------------------------------------ */
/* Sockets                                                                  */
/* ------------------------------------------------------------------------ */

/* A TCP 4-tuple as a frame arriving at this host carries it. */
struct tuple {
	int family;		/* 4 or 6 */
	__u8 src[16], dst[16];	/* network order; IPv4 in the first 4 bytes */
	__u16 sport, dport;	/* host order */
};

/* Index 0: IPv4, 1: IPv6. */
static int lfd[2] = { -1, -1 }, cfd[2] = { -1, -1 }, afd[2] = { -1, -1 }, sfd[2] = { -1, -1 };
/*
 * est[f]: a segment from the client of the established pair to the
 * accepted side; sent[f]: a SYN-ACK's tuple, from the far side to the
 * SYN_SENT socket.
 */
static struct tuple est[2], sent[2];
/*
 * The raw SYN cookie helpers (6.0 on, unless WEIR_FEATURES_OFF says
 * syncookie): tcp-state checks a pure ACK to a listener for a cookie.
 */
static int has_cookie_helpers;

static socklen_t sa_of(int family, const char *addr, __u16 port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == 4) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		inet_pton(AF_INET, addr, &s->sin_addr);
		return sizeof(*s);
	}
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(port);
	inet_pton(AF_INET6, addr, &s6->sin6_addr);
	return sizeof(*s6);
}

/* Address and port (host order) of a sockaddr. */
static void sa_get(const struct sockaddr_storage *ss, __u8 *addr, __u16 *port)
{
	memset(addr, 0, 16);
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)ss;

		memcpy(addr, &s->sin_addr, 4);
		*port = ntohs(s->sin_port);
	} else {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		memcpy(addr, &s6->sin6_addr, 16);
		*port = ntohs(s6->sin6_port);
	}
}

/* The tuple of a segment from fd's peer to fd. 0 or -1. */
static int tuple_to(int fd, int family, struct tuple *t)
{
	struct sockaddr_storage me, peer;
	socklen_t ml = sizeof(me), pl = sizeof(peer);

	if (getsockname(fd, (void *)&me, &ml) || getpeername(fd, (void *)&peer, &pl))
		return -1;
	t->family = family;
	sa_get(&peer, t->src, &t->sport);
	sa_get(&me, t->dst, &t->dport);
	return 0;
}

/*
 * lo up, and VETH (198.18.5.1/24, 2001:db8:5::1/64) up with its peer, so
 * connects to .2 and ::2 go out and are never answered: they stay in
 * SYN_SENT. Without ARP and neighbour discovery: a neighbour that failed
 * to resolve would end such a connect (a host-unreachable error) within
 * seconds.
 */
static int net_setup(const char **why)
{
	if (own_netns(why))
		return -1;
	/* The namespace is this process's alone: its devices go with it. */
	if (system("ip link add " VETH " type veth peer name " VETH_PEER " && "
		   "ip link set " VETH " arp off && "
		   "ip link set " VETH_PEER " up && ip link set " VETH " up && "
		   "ip addr add 198.18.5.1/24 dev " VETH " && "
		   "ip -6 addr add 2001:db8:5::1/64 dev " VETH " nodad")) {
		*why = "cannot set up the veth pair (ip link add ... type veth)";
		return -1;
	}
	return 0;
}

/* The listener, established pair and SYN_SENT socket of one family (4 or 6). 0 or -1. */
static int sockets_setup(int family, const char **why)
{
	const char *lo = family == 4 ? "127.0.0.1" : "::1";
	const char *far = family == 4 ? "198.18.5.2" : "2001:db8:5::2";
	int af = family == 4 ? AF_INET : AF_INET6, i = family == 6, one = 1, syncnt = 127;
	struct sockaddr_storage ss;
	socklen_t len;

	lfd[i] = socket(af, SOCK_STREAM, 0);
	cfd[i] = socket(af, SOCK_STREAM, 0);
	sfd[i] = socket(af, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (lfd[i] < 0 || cfd[i] < 0 || sfd[i] < 0) {
		*why = "socket()";
		return -1;
	}
	setsockopt(lfd[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	len = sa_of(family, lo, LPORT, &ss);
	if (bind(lfd[i], (void *)&ss, len) || listen(lfd[i], 16)) {
		*why = "cannot listen on the loopback address";
		return -1;
	}
	if (connect(cfd[i], (void *)&ss, len)) {
		*why = "cannot connect to the listener";
		return -1;
	}
	afd[i] = accept(lfd[i], NULL, NULL);
	if (afd[i] < 0 || tuple_to(afd[i], family, &est[i])) {
		*why = "cannot accept the connection";
		return -1;
	}
	/* SYN retransmissions for minutes, longer than the suite runs. */
	setsockopt(sfd[i], IPPROTO_TCP, TCP_SYNCNT, &syncnt, sizeof(syncnt));
	len = sa_of(family, far, FAR_PORT, &ss);
	if (!connect(sfd[i], (void *)&ss, len) || errno != EINPROGRESS) {
		*why = "a connect over the veth did not stay in progress";
		return -1;
	}
	/* Not connected yet, so no getpeername(): the far side is what connect() was given. */
	sent[i].family = family;
	sa_get(&ss, sent[i].src, &sent[i].sport);
	len = sizeof(ss);
	if (getsockname(sfd[i], (void *)&ss, &len)) {
		*why = "cannot read the SYN_SENT socket's address";
		return -1;
	}
	sa_get(&ss, sent[i].dst, &sent[i].dport);
	return 0;
}

/* The TCP state of socket fd (TCP_ESTABLISHED, TCP_SYN_SENT, ...); -1 if unreadable. */
static int tcp_state_of(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return -1;
	return ti.tcpi_state;
}

/* A tuple from a random source (198.18.9.N or 2001:db8:9::N) to port dport of lo. */
static struct tuple rand_tuple(int family, __u16 dport)
{
	static __u32 n;
	struct tuple t = { .family = family, .sport = RAND_PORT + (n % 1000), .dport = dport };

	n++;
	if (family == 4) {
		__u32 s = htonl(IP4(198, 18, 9, 1 + n % 250)), d = htonl(IP4(127, 0, 0, 1));

		memcpy(t.src, &s, 4);
		memcpy(t.dst, &d, 4);
	} else {
		addr6(t.src, 0x00090000, n);
		t.dst[15] = 1;		/* ::1 */
	}
	return t;
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                   */
/* ------------------------------------------------------------------------ */

/* Fill in the IPv4 header checksum and the TCP checksum (headers at l3, l4). */
static void fix_csums(struct frame *f, int family, size_t l3, size_t l4)
{
	size_t seglen = f->n - l4;
	__u32 sum;
	__u16 c;

	if (family == 4) {
		f->b[l3 + 10] = f->b[l3 + 11] = 0;
		c = ~wr_csum_fold(wr_csum_add(0, f->b + l3, 20));
		f->b[l3 + 10] = c >> 8;
		f->b[l3 + 11] = c;
		sum = wr_pseudo4(f->b + l3 + 12, seglen);
	} else {
		sum = wr_pseudo6(f->b + l3 + 8, seglen);
	}
	f->b[l4 + 16] = f->b[l4 + 17] = 0;
	c = ~wr_csum_fold(wr_csum_add(sum, f->b + l4, seglen));
	f->b[l4 + 16] = c >> 8;
	f->b[l4 + 17] = c;
}

/*
 * A TCP segment of tuple t with these flags, seq and ack (no options, no
 * payload; with syn_opts a SYN's MSS option), in one 802.1Q tag if vlan;
 * checksums right.
 */
static void seg_full(struct frame *f, const struct tuple *t, __u8 flags, __u32 seq, __u32 ack,
		     int vlan, int syn_opts)
{
	size_t l3, l4;

	eth(f, t->family == 4 ? WR_ETH_P_IP : WR_ETH_P_IPV6, vlan, TAG_Q);
	l3 = f->n;
	if (t->family == 4) {
		put8(f, 0x45);
		put8(f, 0);
		put16(f, 20 + 20 + (syn_opts ? 4 : 0));
		put16(f, 0x1234);
		put16(f, 0x4000);	/* DF */
		put8(f, 64);
		put8(f, WR_IPPROTO_TCP);
		put16(f, 0);
		putn(f, t->src, 4);
		putn(f, t->dst, 4);
	} else {
		put32(f, 0x60000000);
		put16(f, 20 + (syn_opts ? 4 : 0));
		put8(f, WR_IPPROTO_TCP);
		put8(f, 64);
		putn(f, t->src, 16);
		putn(f, t->dst, 16);
	}
	l4 = f->n;
	put16(f, t->sport);
	put16(f, t->dport);
	put32(f, seq);
	put32(f, ack);
	put8(f, (syn_opts ? 6 : 5) << 4);
	put8(f, flags);
	put16(f, 65535);	/* window */
	put16(f, 0);		/* checksum */
	put16(f, 0);		/* urgent */
	if (syn_opts) {
		put8(f, WR_TCPOPT_MSS);
		put8(f, 4);
		put16(f, CLIENT_MSS);
	}
	fix_csums(f, t->family, l3, l4);
}

/* seg_full() untagged, no options; any seq and ack (only a cookie's ack is ever checked). */
static void seg(struct frame *f, const struct tuple *t, __u8 flags)
{
	seg_full(f, t, flags, 1000, 2000, 0, 0);
}

static const char *fam_name(int family)
{
	return family == 4 ? "ipv4" : "ipv6";
}

/* Send f; check the verdict (1 passed, 0 dropped) and what it did to the lookup count. */
#define EXPECT(f, verdict, lookups, what, ...)                                                \
	do {                                                                              \
		__u64 l0_ = g(WEIR_G_TCP_LOOKUPS);                                        \
		int v_ = xmit(f);                                                         \
		__u64 dl_ = g(WEIR_G_TCP_LOOKUPS) - l0_;                                  \
		char w_[96];                                                              \
                                                                                          \
		snprintf(w_, sizeof(w_), what, ##__VA_ARGS__);                            \
		CHECK(v_ == (verdict), "%s: %s, want %s", w_,                             \
		      v_ == 1 ? "passed" : v_ == 0 ? "dropped" : "error",                  \
		      (verdict) ? "passed" : "dropped");                                   \
		CHECK(dl_ == (lookups), "%s: %llu socket lookups, want %d", w_,            \
		      (unsigned long long)dl_, (lookups));                                 \
	} while (0)

/* ------------------------------------------------------------------------ */
/* Rules                                                                    */
/* ------------------------------------------------------------------------ */

/* `proto tcp tcp-state on` (flags: more of enum weir_rule_flags), action as given. */
static struct weir_rule *ts_rule(__u8 action, __u32 flags)
{
	struct weir_rule *r = add_rule(action);

	match_proto(r, WR_IPPROTO_TCP);
	r->flags |= WEIR_RF_TCP_STATE | flags;
	return r;
}

/*
 * TS_CASE(name) { body } defines name_xdp and name_tc, the body run
 * through the XDP and then the TC entry, each on a fresh load.
 */
#define TS_CASE(name)                        \
	static void name##_run(void);        \
	HARNESS_CASE(name##_xdp)             \
	{                                    \
		use_tc = 0;                  \
		name##_run();                \
	}                                    \
	HARNESS_CASE(name##_tc)              \
	{                                    \
		use_tc = 1;                  \
		name##_run();                \
	}                                    \
	static void name##_run(void)

/* ------------------------------------------------------------------------ */
/* Cases                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * The established flow's ACK passes after one lookup and is cached: the
 * next passes without one, until the cache's time is up; then it is
 * looked up (and cached) again. Each family its own slot; the same in a
 * VLAN.
 */
TS_CASE(ts_established_cached)
{
	struct frame f;
	int i;

	ts_rule(WEIR_ACT_DROP, 0);
	commit();
	for (i = 0; i < 2; i++) {
		const char *fn = fam_name(est[i].family);

		set_now(T0);
		seg(&f, &est[i], WEIR_TCP_ACK);
		EXPECT(&f, 1, 1, "%s: established ACK, first", fn);
		EXPECT(&f, 1, 0, "%s: established ACK, cached", fn);
		seg(&f, &est[i], WEIR_TCP_ACK | WEIR_TCP_PSH);
		EXPECT(&f, 1, 0, "%s: established PSH ACK, cached", fn);
		set_now(T0 + WEIR_TCP_SEEN_TTL_NS - 1);
		EXPECT(&f, 1, 0, "%s: established ACK, cache's last ns", fn);
		set_now(T0 + WEIR_TCP_SEEN_TTL_NS);
		EXPECT(&f, 1, 1, "%s: established ACK, cache expired", fn);
		EXPECT(&f, 1, 0, "%s: established ACK, cached again", fn);
	}
	/* In an 802.1Q tag: the same flow, the same slot (cached above). */
	seg_full(&f, &est[0], WEIR_TCP_ACK, 1000, 2000, 1, 0);
	EXPECT(&f, 1, 0, "vlan: established ACK, cached");
	set_now(T0 + 3 * WEIR_TCP_SEEN_TTL_NS);
	EXPECT(&f, 1, 1, "vlan: established ACK, cache expired");
	CHECK_EQ(g(WEIR_G_OUT_OF_STATE), 0);
	CHECK_EQ(rstat(0).dropped_pkts, 0);
	CHECK_EQ(rstat(0).passed_pkts, 14);
}

/*
 * A random-tuple ACK to the listener's port (no cookie) and an ACK to a
 * closed port: dropped, counted out of state and as the rule's drops.
 * In a VLAN too. Nothing of them cached: sent again, looked up again.
 * (Without the raw SYN cookie helpers, before 6.0, a pure ACK to a
 * listener passes: the kernel's own cookie check decides.)
 */
TS_CASE(ts_out_of_state_ack_dropped)
{
	/* A pure ACK to the listener: dropped (1) or passed (0). */
	int ld = has_cookie_helpers, fam, n = 0, p = 0;
	struct frame f;
	struct tuple t;

	ts_rule(WEIR_ACT_DROP, 0);
	commit();
	for (fam = 4; fam <= 6; fam += 2) {
		t = rand_tuple(fam, LPORT);
		seg(&f, &t, WEIR_TCP_ACK);
		EXPECT(&f, !ld, 1, "%s: random ACK to the listener", fam_name(fam));
		EXPECT(&f, !ld, 1, "%s: the same again (no negative cache)", fam_name(fam));
		seg(&f, &t, WEIR_TCP_ACK | WEIR_TCP_PSH);
		EXPECT(&f, !ld, 1, "%s: random PSH ACK to the listener", fam_name(fam));
		t = rand_tuple(fam, CLOSED_PORT);
		seg(&f, &t, WEIR_TCP_ACK);
		EXPECT(&f, 0, 1, "%s: ACK to a closed port", fam_name(fam));
		n += 1 + 3 * ld;
		p += 3 * !ld;
		CHECK_EQ(g(WEIR_G_OUT_OF_STATE), n);
		CHECK_EQ(rstat(0).dropped_pkts, n);
	}
	t = rand_tuple(4, LPORT);
	seg_full(&f, &t, WEIR_TCP_ACK, 1, 2, 1, 0);
	EXPECT(&f, !ld, 1, "vlan: random ACK to the listener");
	t = rand_tuple(4, CLOSED_PORT);
	seg_full(&f, &t, WEIR_TCP_ACK, 1, 2, 1, 0);
	EXPECT(&f, 0, 1, "vlan: ACK to a closed port");
	n += 1 + ld;
	p += !ld;
	CHECK_EQ(g(WEIR_G_OUT_OF_STATE), n);
	CHECK_EQ(rstat(0).dropped_pkts, n);
	CHECK_EQ(g(WEIR_G_DROPPED), n);
	CHECK_EQ(rstat(0).passed_pkts, p);
	CHECK_EQ(g(WEIR_G_WOULD_DROP), 0);
}

/*
 * RST and FIN of no connection (to a closed port, or from a random tuple
 * to the listener) are dropped; those of the established flow pass.
 */
TS_CASE(ts_rst_fin)
{
	static const __u8 fl[] = { WEIR_TCP_RST, WEIR_TCP_RST | WEIR_TCP_ACK,
				   WEIR_TCP_FIN | WEIR_TCP_ACK };
	struct frame f;
	struct tuple t;
	unsigned int k;
	int fam, drops = 0, passes = 0;

	ts_rule(WEIR_ACT_DROP, 0);
	commit();
	for (fam = 4; fam <= 6; fam += 2) {
		const char *fn = fam_name(fam);

		for (k = 0; k < sizeof(fl); k++) {
			t = rand_tuple(fam, CLOSED_PORT);
			seg(&f, &t, fl[k]);
			EXPECT(&f, 0, 1, "%s: flags %02x to a closed port", fn, fl[k]);
			t = rand_tuple(fam, LPORT);
			seg(&f, &t, fl[k]);
			EXPECT(&f, 0, 1, "%s: flags %02x of no connection to the listener", fn,
			       fl[k]);
			drops += 2;
		}
		/* Fresh clock each family: the flow looked up, not cached from before. */
		set_now(T0 + (fam == 6) * 10 * WEIR_TCP_SEEN_TTL_NS);
		seg(&f, &est[fam == 6], WEIR_TCP_FIN | WEIR_TCP_ACK);
		EXPECT(&f, 1, 1, "%s: FIN of the established flow", fn);
		seg(&f, &est[fam == 6], WEIR_TCP_RST | WEIR_TCP_ACK);
		/* The FIN found the connection and cached it. */
		EXPECT(&f, 1, 0, "%s: RST of the established flow", fn);
		set_now(T0 + (fam == 6) * 10 * WEIR_TCP_SEEN_TTL_NS + WEIR_TCP_SEEN_TTL_NS);
		seg(&f, &est[fam == 6], WEIR_TCP_RST);
		EXPECT(&f, 1, 1, "%s: RST of the established flow, looked up", fn);
		passes += 3;
	}
	CHECK_EQ(g(WEIR_G_OUT_OF_STATE), drops);
	CHECK_EQ(rstat(0).dropped_pkts, drops);
	CHECK_EQ(rstat(0).passed_pkts, passes);
}

/*
 * A SYN-ACK answering the SYN_SENT socket passes, and is looked up each
 * time (never cached, never answered from the cache); one of the
 * established flow passes (a retransmission), also looked up though the
 * flow is cached; one from a random tuple, to a closed port or to the
 * listener, is dropped.
 */
TS_CASE(ts_synack)
{
	const __u8 sa = WEIR_TCP_SYN | WEIR_TCP_ACK;
	struct frame f;
	struct tuple t;
	int fam;

	ts_rule(WEIR_ACT_DROP, 0);
	commit();
	for (fam = 4; fam <= 6; fam += 2) {
		const char *fn = fam_name(fam);
		int i = fam == 6;

		CHECK(tcp_state_of(sfd[i]) == TCP_SYN_SENT,
		      "%s: the connect over the veth is no longer in SYN_SENT (state %d)", fn,
		      tcp_state_of(sfd[i]));
		seg(&f, &sent[i], sa);
		EXPECT(&f, 1, 1, "%s: SYN-ACK to the SYN_SENT socket", fn);
		EXPECT(&f, 1, 1, "%s: the same again (not cached)", fn);
		seg(&f, &sent[i], WEIR_TCP_ACK);
		/* An ACK of a SYN_SENT socket's tuple passes, uncached, too. */
		EXPECT(&f, 1, 1, "%s: ACK to the SYN_SENT socket", fn);
		EXPECT(&f, 1, 1, "%s: the same again (not cached)", fn);
		seg(&f, &est[i], WEIR_TCP_ACK);
		EXPECT(&f, 1, 1, "%s: established ACK", fn);
		EXPECT(&f, 1, 0, "%s: established ACK, cached", fn);
		seg(&f, &est[i], sa);
		EXPECT(&f, 1, 1, "%s: SYN-ACK of the established flow, cached or not", fn);
		t = rand_tuple(fam, CLOSED_PORT);
		seg(&f, &t, sa);
		EXPECT(&f, 0, 1, "%s: SYN-ACK of no connection", fn);
		t = rand_tuple(fam, LPORT);
		seg(&f, &t, sa);
		EXPECT(&f, 0, 1, "%s: SYN-ACK to the listener", fn);
	}
	CHECK_EQ(g(WEIR_G_OUT_OF_STATE), 4);
	CHECK_EQ(rstat(0).dropped_pkts, 4);
}

/*
 * A connection to the listener closed by its client first, which leaves
 * the client's end in TIME_WAIT (for 60 s: made here, not at the start,
 * as a slow guest's cases take longer). *t to the tuple of a segment from
 * the server's end to it. 0 or -1, the case failed.
 */
static int time_wait(int family, struct tuple *t)
{
	int i = family == 6, c, a = -1, ok = -1;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char b;

	c = socket(family == 4 ? AF_INET : AF_INET6, SOCK_STREAM, 0);
	if (c < 0 || getsockname(lfd[i], (void *)&ss, &len) || connect(c, (void *)&ss, len))
		CHECK_FAIL("%s: cannot connect to the listener: %s", fam_name(family),
			   strerror(errno));
	/* To the client's end: from its peer, the accepted one. */
	else if ((a = accept(lfd[i], NULL, NULL)) < 0 || tuple_to(c, family, t))
		CHECK_FAIL("%s: cannot accept: %s", fam_name(family), strerror(errno));
	/* The client's FIN, read by the server; the server's, read by the client. */
	else if (shutdown(c, SHUT_WR) || read(a, &b, 1) != 0 || close(a) || read(c, &b, 1) != 0)
		CHECK_FAIL("%s: cannot close the connection: %s", fam_name(family),
			   strerror(errno));
	else
		ok = 0;
	if (ok && a >= 0)
		close(a);
	if (c >= 0)
		close(c);
	return ok;
}

/*
 * A segment of a connection in TIME_WAIT passes (the lookup finds the
 * timewait socket) and is never cached; its SYN-ACK is dropped.
 */
TS_CASE(ts_time_wait)
{
	struct frame f;
	struct tuple t;
	int fam;

	ts_rule(WEIR_ACT_DROP, 0);
	commit();
	for (fam = 4; fam <= 6; fam += 2) {
		const char *fn = fam_name(fam);

		if (time_wait(fam, &t))
			return;
		seg(&f, &t, WEIR_TCP_ACK);
		EXPECT(&f, 1, 1, "%s: ACK to a TIME_WAIT socket", fn);
		EXPECT(&f, 1, 1, "%s: the same again (not cached)", fn);
		seg(&f, &t, WEIR_TCP_FIN | WEIR_TCP_ACK);
		EXPECT(&f, 1, 1, "%s: FIN (retransmitted) to a TIME_WAIT socket", fn);
		seg(&f, &t, WEIR_TCP_SYN | WEIR_TCP_ACK);
		EXPECT(&f, 0, 1, "%s: SYN-ACK to a TIME_WAIT socket", fn);
	}
	CHECK_EQ(g(WEIR_G_OUT_OF_STATE), 2);
}

/*
 * A pure SYN is never checked: it goes on to the rule's limits (one per
 * source: the first passes, the second is refused by the limit, not by
 * tcp-state), with no lookup. SYN+FIN and SYN+RST are not pure SYNs.
 */
TS_CASE(ts_pure_syn_unchecked)
{
	struct weir_rule *r;
	struct frame f;
	struct tuple t;
	int fam;

	r = ts_rule(WEIR_ACT_DROP, 0);
	new_limit(r, WEIR_ALGO_GCRA, 1, 0, 1, WEIR_COST_PKT, WEIR_KEY_SRC, 32, 128);
	commit();
	for (fam = 4; fam <= 6; fam += 2) {
		t = rand_tuple(fam, CLOSED_PORT);
		seg(&f, &t, WEIR_TCP_SYN);
		EXPECT(&f, 1, 0, "%s: SYN to a closed port, within the limit", fam_name(fam));
		EXPECT(&f, 0, 0, "%s: SYN to a closed port, over the limit", fam_name(fam));
		t = rand_tuple(fam, LPORT);
		seg(&f, &t, WEIR_TCP_SYN | WEIR_TCP_ECE | WEIR_TCP_CWR);
		EXPECT(&f, 1, 0, "%s: SYN (ECN) to the listener", fam_name(fam));
	}
	CHECK_EQ(g(WEIR_G_OUT_OF_STATE), 0);
	CHECK_EQ(rstat(0).dropped_pkts, 2);
	t = rand_tuple(4, LPORT);
	seg(&f, &t, WEIR_TCP_SYN | WEIR_TCP_FIN);
	EXPECT(&f, 0, 1, "SYN+FIN of no connection");
	t = rand_tuple(4, LPORT);
	seg(&f, &t, WEIR_TCP_SYN | WEIR_TCP_RST);
	EXPECT(&f, 0, 1, "SYN+RST of no connection");
	CHECK_EQ(g(WEIR_G_OUT_OF_STATE), 2);
}

/*
 * A dry-run tcp-state rule, and a drop rule under the kill switch: the
 * out-of-state segment is counted (out of state, would-drop, the rule's
 * would-drops) and passes.
 */
TS_CASE(ts_dry_run)
{
	struct weir_rule_stats s;
	struct frame f;
	struct tuple t;

	ts_rule(WEIR_ACT_DRYRUN, 0);
	commit();
	t = rand_tuple(4, CLOSED_PORT);
	seg(&f, &t, WEIR_TCP_ACK);
	EXPECT(&f, 1, 1, "dry-run: ACK to a closed port");
	t = rand_tuple(6, CLOSED_PORT);
	seg(&f, &t, WEIR_TCP_RST);
	EXPECT(&f, 1, 1, "dry-run: RST to a closed port");
	seg(&f, &est[0], WEIR_TCP_ACK);
	EXPECT(&f, 1, 1, "dry-run: established ACK");
	s = rstat(0);
	CHECK_EQ(g(WEIR_G_OUT_OF_STATE), 2);
	CHECK_EQ(g(WEIR_G_WOULD_DROP), 2);
	CHECK_EQ(s.wdrop_pkts, 2);
	CHECK_EQ(s.dropped_pkts, 0);
	CHECK_EQ(g(WEIR_G_DROPPED), 0);

	/* A drop rule with the kill switch on: the same, as a would-drop. */
	memset(&rs.rules, 0, sizeof(rs.rules));
	rs.nr_rules = 0;
	ts_rule(WEIR_ACT_DROP, 0);
	commit();
	CFG_SET(disabled, 1);
	t = rand_tuple(4, CLOSED_PORT);
	seg(&f, &t, WEIR_TCP_ACK);
	EXPECT(&f, 1, 1, "kill switch: ACK to a closed port");
	CHECK_EQ(g(WEIR_G_OUT_OF_STATE), 3);
	CHECK_EQ(g(WEIR_G_WOULD_DROP), 3);
	CHECK_EQ(rstat(0).wdrop_pkts, 1);
	CHECK_EQ(g(WEIR_G_DROPPED), 0);
	CFG_SET(disabled, 0);
	EXPECT(&f, 0, 1, "kill switch off: ACK to a closed port");
	CHECK_EQ(g(WEIR_G_DROPPED), 1);
}

/* `tcp-state auto`: nothing (no lookup) while tcp_state_on is 0; checked while it is 1. */
TS_CASE(ts_auto)
{
	struct frame f, e;
	struct tuple t;

	ts_rule(WEIR_ACT_DROP, WEIR_RF_TCP_AUTO);
	commit();
	CHECK_EQ(cfg_get().tcp_state_on, 0);
	t = rand_tuple(4, CLOSED_PORT);
	seg(&f, &t, WEIR_TCP_ACK);
	seg(&e, &est[1], WEIR_TCP_ACK);
	EXPECT(&f, 1, 0, "auto, off: ACK to a closed port");
	EXPECT(&e, 1, 0, "auto, off: established ACK");
	CHECK_EQ(g(WEIR_G_OUT_OF_STATE), 0);
	CFG_SET(tcp_state_on, 1);
	EXPECT(&f, 0, 1, "auto, on: ACK to a closed port");
	EXPECT(&e, 1, 1, "auto, on: established ACK");
	EXPECT(&e, 1, 0, "auto, on: established ACK, cached");
	CHECK_EQ(g(WEIR_G_OUT_OF_STATE), 1);
	CHECK_EQ(rstat(0).dropped_pkts, 1);
	CFG_SET(tcp_state_on, 0);
	EXPECT(&f, 1, 0, "auto, off again: ACK to a closed port");
	CHECK_EQ(g(WEIR_G_OUT_OF_STATE), 1);
	/* `tcp-state on` beside it does not care for the switch. */
	memset(&rs.rules, 0, sizeof(rs.rules));
	rs.nr_rules = 0;
	ts_rule(WEIR_ACT_DROP, 0);
	commit();
	EXPECT(&f, 0, 1, "on, switch off: ACK to a closed port");
}

/*
 * What tcp-state never looks at, under a rule that matches all IP with
 * tcp-state set (the grammar requires proto tcp; the data path checks
 * anyway): UDP and ICMP to the listener's port, and a later fragment of
 * TCP, which has no TCP header. They match the rule (its passed count)
 * and pass with no lookup. The same rule drops a random TCP ACK.
 */
TS_CASE(ts_untouched)
{
	struct frame f, l;
	struct tuple t;

	add_rule(WEIR_ACT_DROP)->flags |= WEIR_RF_TCP_STATE;
	commit();
	l4_udp(&l, LPORT, 16);
	frame4(&f, SRC_A, WR_IPPROTO_UDP, &l);
	EXPECT(&f, 1, 0, "UDP to the listener's port");
	l4_icmp(&l, 8, 8);
	frame4(&f, SRC_A, WR_IPPROTO_ICMP, &l);
	EXPECT(&f, 1, 0, "ICMP echo");
	/* Offset 8 bytes, more fragments: bytes of a TCP segment's middle. */
	l4_tcp(&l, LPORT, WEIR_TCP_ACK, 5);
	eth_ip4(&f, SRC_A, WR_IPPROTO_TCP, 5, 0x2001, 0, &l);
	EXPECT(&f, 1, 0, "later fragment of TCP");
	CHECK_EQ(rstat(0).passed_pkts, 3);
	t = rand_tuple(4, CLOSED_PORT);
	seg(&f, &t, WEIR_TCP_ACK);
	EXPECT(&f, 0, 1, "TCP ACK to a closed port under the same rule");
	CHECK_EQ(g(WEIR_G_OUT_OF_STATE), 1);
}

/*
 * Cost nothing when unused: the same rule without tcp-state passes an
 * out-of-state ACK, RST and SYN-ACK with no lookup; so does a packet that
 * no rule matches beside a tcp-state rule on another port.
 */
TS_CASE(ts_unused_no_lookup)
{
	struct weir_rule *r;
	struct frame f;
	struct tuple t;

	r = add_rule(WEIR_ACT_DROP);
	match_proto(r, WR_IPPROTO_TCP);
	new_limit(r, WEIR_ALGO_GCRA, 1000, 0, 1000, WEIR_COST_PKT, WEIR_KEY_SRC, 32, 128);
	r = ts_rule(WEIR_ACT_DROP, 0);
	r->match |= WEIR_M_DPORT;
	r->dport_lo = r->dport_hi = FAR_PORT;
	commit();
	t = rand_tuple(4, LPORT);
	seg(&f, &t, WEIR_TCP_ACK);
	EXPECT(&f, 1, 0, "random ACK, rule without tcp-state");
	t = rand_tuple(6, CLOSED_PORT);
	seg(&f, &t, WEIR_TCP_RST);
	EXPECT(&f, 1, 0, "random RST, rule without tcp-state");
	t = rand_tuple(4, CLOSED_PORT);
	seg(&f, &t, WEIR_TCP_SYN | WEIR_TCP_ACK);
	EXPECT(&f, 1, 0, "random SYN-ACK, rule without tcp-state");
	CHECK_EQ(rstat(0).passed_pkts, 3);
	CHECK_EQ(g(WEIR_G_OUT_OF_STATE), 0);
	/* The tcp-state rule's port: checked. */
	t = rand_tuple(4, FAR_PORT);
	seg(&f, &t, WEIR_TCP_ACK);
	EXPECT(&f, 0, 1, "random ACK to the tcp-state rule's port");
}

/* ------------------------------------------------------------------------ */
/* A SYN cookie's answer (XDP: the SYN-ACK is XDP_TX)                       */
/* ------------------------------------------------------------------------ */

/* f through the XDP entry: the verdict, the frame after it in *out. -1 on error. */
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

/*
 * `proto tcp dport LPORT tcp-flags syn limit 1 per all action cookie` and
 * after it `proto tcp tcp-state on`: the second SYN is answered with a
 * cookie (weir's SYN-ACK, the kernel's secret); the ACK that carries it
 * reaches the listener and passes tcp-state's cookie check, one with the
 * cookie changed is dropped by it.
 */
static void cookie_case(int family)
{
	struct weir_ck_dst k;
	struct frame syn, out, ack;
	struct tuple t = rand_tuple(family, LPORT);
	struct weir_rule *r;
	__u32 cookie;
	size_t th;
	int v, fam;
	__u64 at = T0;

	r = add_rule(WEIR_ACT_COOKIE);
	match_proto(r, WR_IPPROTO_TCP);
	r->match |= WEIR_M_DPORT | WEIR_M_TCPFLAGS;
	r->dport_lo = r->dport_hi = LPORT;
	r->tcp_mask = WEIR_TCP_SYN | WEIR_TCP_ACK;
	r->tcp_value = WEIR_TCP_SYN;
	r->cookie = WEIR_COOKIE_OVER;
	new_limit(r, WEIR_ALGO_GCRA, 1, 0, 1, WEIR_COST_PKT, WEIR_KEY_ALL, 0, 0);
	rs.cookie_rules++;
	ts_rule(WEIR_ACT_DROP, 0);
	commit();
	CFG_SET(cookie_flags, 0);
	/* The kernel primed for the rule's port just now: SYNs answered, not passed on. */
	for (fam = 4; fam <= 6; fam += 2) {
		memset(&k, 0, sizeof(k));
		k.addr[0] = LPORT;
		k.slot = rs.rules[0].slot;
		k.family = 0x80 | fam;
		if (bpf_map__update_elem(skel->maps.wr_cookie_dst, &k, sizeof(k), &at,
					 sizeof(at), 0))
			CHECK_FAIL("writing wr_cookie_dst: %s", strerror(errno));
	}
	seg_full(&syn, &t, WEIR_TCP_SYN, CLIENT_ISN, 0, 0, 1);
	CHECK_EQ(run_xdp(&syn, &out), XDP_PASS);
	v = run_xdp(&syn, &out);
	CHECK(v == XDP_TX, "%s: SYN over the limit: verdict %d, want XDP_TX", fam_name(family), v);
	if (v != XDP_TX)
		return;
	th = 14 + (family == 4 ? 20 : 40);
	cookie = (__u32)out.b[th + 4] << 24 | (__u32)out.b[th + 5] << 16 |
		 (__u32)out.b[th + 6] << 8 | out.b[th + 7];
	CHECK_EQ(g(WEIR_G_TCP_LOOKUPS), 0);
	seg_full(&ack, &t, WEIR_TCP_ACK, CLIENT_ISN + 1, cookie + 1, 0, 0);
	EXPECT(&ack, 1, 1, "%s: ACK with the cookie", fam_name(family));
	CHECK_EQ(g(WEIR_G_OUT_OF_STATE), 0);
	/* Its counter bits changed (its low bits, the MSS index, could still be valid). */
	seg_full(&ack, &t, WEIR_TCP_ACK, CLIENT_ISN + 1, (cookie ^ 0xa5000000) + 1, 0, 0);
	EXPECT(&ack, 0, 1, "%s: ACK with a forged cookie", fam_name(family));
	CHECK_EQ(g(WEIR_G_OUT_OF_STATE), 1);
	CHECK_EQ(rstat(1).dropped_pkts, 1);
}

HARNESS_CASE(ts_cookie_ack_ipv4)
{
	if (!has_cookie_helpers) {
		CHECK_SKIP("no raw SYN cookie helpers (before 6.0, or WEIR_FEATURES_OFF)");
		return;
	}
	cookie_case(4);
}

HARNESS_CASE(ts_cookie_ack_ipv6)
{
	if (!has_cookie_helpers) {
		CHECK_SKIP("no raw SYN cookie helpers (before 6.0, or WEIR_FEATURES_OFF)");
		return;
	}
	cookie_case(6);
}

int main(void)
{
	struct wr_features feat;
	const char *why = NULL;
	int err;

	if (geteuid() != 0) {
		printf("skip - bpf_tcpstate: needs root (a network namespace, BPF)\n");
		return 0;
	}
	if (net_setup(&why) || sockets_setup(4, &why) || sockets_setup(6, &why)) {
		printf("not ok - bpf_tcpstate: %s: %s\n", why, strerror(errno));
		return 1;
	}
	err = harness_start("bpf_tcpstate");
	if (err)
		return err > 0;
	teardown();
	wr_features_probe(&feat);
	has_cookie_helpers = feat.has[WR_FEAT_SYNCOOKIE];
	return check_run_all();
}
