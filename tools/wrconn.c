// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wrconn: one TCP connection from a chosen source address (and port),
 * opened with a time limit and held, for the connection-limit tests.
 *
 * Prints one line as soon as the connection is up or has failed:
 *   connected SRC PORT in MS ms, N retransmissions   (exit 0 when the hold ends)
 *   failed: REASON              (exit 1; "timed out" when no SYN-ACK came)
 * MS is the time to connect, from the first SYN (the connect() call) to the
 * connection being up, in milliseconds; N how many times the SYN was sent
 * again before a SYN-ACK came (the kernel's count, tcpi_total_retrans: no
 * other segment can have been retransmitted yet), 0 for a connection made
 * on its first SYN.
 * then holds the connection for --hold seconds, or until SIGINT / SIGTERM,
 * and closes it normally (FIN). If the peer ends it first, it prints
 * "ended: REASON" and exits 3. Sends nothing.
 *
 * Addresses must lie in 198.18.0.0/15 or 2001:db8::/32, as for wrgen.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>
#include <netinet/tcp.h>

#define TOOL_NAME "wrconn"
#include "toolutil.h"

#define MAX_SECS	3600.0

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s --dst ADDR --port N --hold SEC [--src ADDR] [--sport N] [--timeout SEC]\n"
"\n"
"Open one TCP connection within --timeout, print \"connected SRC PORT in MS ms,\n"
"N retransmissions\" (the time from the first SYN, and how often the SYN was\n"
"sent again) or \"failed: REASON\", and hold it for --hold seconds or until\n"
"SIGTERM, then close it (FIN).\n"
"\n"
"  --dst ADDR          server address, in 198.18.0.0/15 or 2001:db8::/32\n"
"  --port N            server port, 1-65535\n"
"  --hold SEC          how long to hold the connection (decimal, > 0)\n"
"  --src ADDR          source address (same family as --dst)\n"
"  --sport N           source port (default: the kernel's choice)\n"
"  --timeout SEC       give up connecting after this long (default 2)\n"
"  -h, --help          this text\n"
"  -V, --version       print the version\n"
"\n"
"Exit status: 0 held and closed, 1 connecting failed, 2 bad arguments,\n"
"3 the peer ended the connection first.\n",
		prog);
}

struct opts {
	struct addr dst, src;
	uint64_t port, sport;
	double hold, timeout;
};

/* 198.18.0.0/15 and 2001:db8::/32, the ranges test traffic may use (as wrgen). */
static bool in_test_range(const struct addr *a)
{
	if (a->family == AF_INET)
		return (ntohl(a->v4.s_addr) & 0xfffe0000U) == 0xc6120000U;
	return a->b[0] == 0x20 && a->b[1] == 0x01 && a->b[2] == 0x0d && a->b[3] == 0xb8;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	enum { OPT_DST = 256, OPT_PORT, OPT_HOLD, OPT_SRC, OPT_SPORT, OPT_TIMEOUT, OPT_MAX };
	static const struct option longopts[] = {
		{ "dst", required_argument, NULL, OPT_DST },
		{ "port", required_argument, NULL, OPT_PORT },
		{ "hold", required_argument, NULL, OPT_HOLD },
		{ "src", required_argument, NULL, OPT_SRC },
		{ "sport", required_argument, NULL, OPT_SPORT },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	bool seen[OPT_MAX] = {};
	int c, idx;

	memset(o, 0, sizeof(*o));
	o->timeout = 2;
	while ((c = getopt_long(argc, argv, ":hV", longopts, &idx)) != -1) {
		if (c >= OPT_DST && c < OPT_MAX)
			option_once(seen, c, longopts[idx].name);
		switch (c) {
		case OPT_DST:
			if (parse_addr(optarg, &o->dst) || !in_test_range(&o->dst))
				invarg("invalid --dst \"%s\" (an address in 198.18.0.0/15 or "
				       "2001:db8::/32)", optarg);
			break;
		case OPT_SRC:
			if (parse_addr(optarg, &o->src) || !in_test_range(&o->src))
				invarg("invalid --src \"%s\" (an address in 198.18.0.0/15 or "
				       "2001:db8::/32)", optarg);
			break;
		case OPT_PORT:
			if (parse_u64(optarg, 1, 65535, &o->port))
				invarg("invalid --port \"%s\" (1-65535)", optarg);
			break;
		case OPT_SPORT:
			if (parse_u64(optarg, 1, 65535, &o->sport))
				invarg("invalid --sport \"%s\" (1-65535)", optarg);
			break;
		case OPT_HOLD:
			if (parse_decimal(optarg, 0, MAX_SECS, &o->hold) || o->hold <= 0)
				invarg("invalid --hold \"%s\" (seconds, > 0, at most %.0f)", optarg,
				       MAX_SECS);
			break;
		case OPT_TIMEOUT:
			if (parse_decimal(optarg, 0, MAX_SECS, &o->timeout) || o->timeout <= 0)
				invarg("invalid --timeout \"%s\" (seconds, > 0, at most %.0f)",
				       optarg, MAX_SECS);
			break;
		default:
			common_opt(c, argv, usage);
		}
	}
	if (optind < argc)
		invarg("unexpected argument \"%s\"", argv[optind]);
	if (!o->dst.family || !o->port || !o->hold)
		invarg("--dst, --port and --hold are required");
	if (o->src.family && o->src.family != o->dst.family)
		invarg("--src and --dst must be the same family");
	if (o->sport && !o->src.family)
		invarg("--sport needs --src");
}

static socklen_t sockaddr_of(const struct addr *a, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		s->sin_addr = a->v4;
		return sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(port);
		s->sin6_addr = a->v6;
		return sizeof(*s);
	}
}

/* Wait until fd has events, for at most ms (-1: until stop). The poll result. */
static int wait_for(int fd, short events, int ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	uint64_t end = mono_ns() + (uint64_t)ms * 1000000;
	int r;

	do {
		int left = (end - mono_ns()) / 1000000;

		r = poll(&p, 1, left < 0 ? 0 : left > 100 ? 100 : left);
		if (r > 0)
			return p.revents;
	} while (!stop && (r == 0 || errno == EINTR) && mono_ns() < end);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	char host[INET6_ADDRSTRLEN];
	struct tcp_info ti;
	socklen_t len;
	struct opts o;
	int fd, err = 0, one = 1;
	uint64_t t0, t1;

	parse_opts(argc, argv, &o);
	setvbuf(stdout, NULL, _IOLBF, 0);
	catch_stop_signals();
	fd = socket(o.dst.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		fail("socket: %s", strerror(errno));
	if (o.src.family) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		len = sockaddr_of(&o.src, o.sport, &ss);
		if (bind(fd, (struct sockaddr *)&ss, len))
			fail("bind: %s", strerror(errno));
	}
	len = sockaddr_of(&o.dst, o.port, &ss);
	/* The first SYN leaves in connect(): the time to connect counts from here. */
	t0 = mono_ns();
	if (connect(fd, (struct sockaddr *)&ss, len) && errno != EINPROGRESS) {
		printf("failed: %s\n", strerror(errno));
		return 1;
	}
	if (!(wait_for(fd, POLLOUT, o.timeout * 1000) & (POLLOUT | POLLERR | POLLHUP))) {
		printf("failed: %s\n", stop ? "interrupted" : "timed out");
		return 1;
	}
	t1 = mono_ns();
	len = sizeof(err);
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
	if (err) {
		printf("failed: %s\n", strerror(err));
		return 1;
	}
	len = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &len);
	if (ss.ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host));
	else
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof(host));
	/* Before the connection is up only the SYN can have been sent again. */
	memset(&ti, 0, sizeof(ti));
	len = sizeof(ti);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		fail("TCP_INFO: %s", strerror(errno));
	printf("connected %s %u in %.3f ms, %u retransmission%s\n", host,
	       ntohs(((struct sockaddr_in *)&ss)->sin_port), (t1 - t0) / 1e6, ti.tcpi_total_retrans,
	       ti.tcpi_total_retrans == 1 ? "" : "s");

	/* Hold: only the peer ending it, a signal or the time wakes us. */
	if (wait_for(fd, POLLIN | POLLRDHUP, o.hold * 1000)) {
		char b;
		ssize_t r = recv(fd, &b, 1, MSG_DONTWAIT);

		if (r <= 0 && (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))) {
			printf("ended: %s\n", r == 0 ? "closed by peer" : strerror(errno));
			return 3;
		}
	}
	close(fd);
	return 0;
}
