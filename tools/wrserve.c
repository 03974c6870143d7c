// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wrserve: a TCP server that accepts every connection and holds it open
 * until the peer goes away, for the connection-limit tests. It never sends
 * a byte and discards what it reads.
 *
 * Each accepted socket gets TCP keepalive probing after --keepalive IDLE
 * seconds idle, every INTVL seconds, giving up after CNT unanswered probes
 * (default 1,1,2): a client that vanished without FIN or RST is noticed and
 * its socket closed by the kernel within about IDLE + INTVL x CNT seconds.
 *
 * Touches --ready-file once listening; stops after --duration seconds or
 * on SIGINT / SIGTERM, then prints what it saw:
 *   accepted N, open N, closed by peer N, by error N (first error: ...)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#define TOOL_NAME "wrserve"
#include "toolutil.h"

/* Connections held at once; more are accepted and closed at once. */
#define MAX_CONNS	1024
#define MAX_DURATION	3600.0

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s --listen ADDR --port N --duration SEC [--backlog N]\n"
"               [--keepalive IDLE,INTVL,CNT] [--ready-file PATH] [--json]\n"
"\n"
"Accept TCP connections and hold each open until its peer closes it or\n"
"keepalive gives up on it. Sends nothing.\n"
"\n"
"  --listen ADDR       local address, IPv4 or IPv6; \"::\" is dual-stack\n"
"  --port N            TCP port, 1-65535\n"
"  --duration SEC      stop this long after listening (decimal, > 0)\n"
"  --backlog N         listen backlog (default 128)\n"
"  --keepalive I,V,C   probe after I s idle, every V s, give up after C\n"
"                      unanswered probes (default 1,1,2; 0 turns it off)\n"
"  --ready-file PATH   create PATH once listening\n"
"  --json              print the result as one JSON object\n"
"  -h, --help          this text\n"
"  -V, --version       print the version\n"
"\n"
"Exit status: 0 done, 1 runtime error, 2 bad arguments.\n",
		prog);
}

struct opts {
	struct addr listen;
	uint64_t port, backlog;
	double duration;
	int ka_idle, ka_intvl, ka_cnt;	/* ka_idle 0: no keepalive */
	const char *ready_file;
	bool json;
};

struct counts {
	uint64_t accepted, eof, error, refused;
	char first_error[128];
};

static void parse_keepalive(const char *s, struct opts *o)
{
	unsigned int i, v, c;
	char end;

	if (!strcmp(s, "0")) {
		o->ka_idle = 0;
		return;
	}
	if (sscanf(s, "%u,%u,%u%c", &i, &v, &c, &end) != 3 || !i || !v || !c || i > 32767 ||
	    v > 32767 || c > 127)
		invarg("invalid --keepalive \"%s\" (IDLE,INTVL,CNT: 1-32767,1-32767,1-127, or 0)",
		       s);
	o->ka_idle = i;
	o->ka_intvl = v;
	o->ka_cnt = c;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	enum { OPT_LISTEN = 256, OPT_PORT, OPT_DURATION, OPT_BACKLOG, OPT_KEEPALIVE, OPT_READY,
	       OPT_JSON, OPT_MAX };
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "port", required_argument, NULL, OPT_PORT },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "backlog", required_argument, NULL, OPT_BACKLOG },
		{ "keepalive", required_argument, NULL, OPT_KEEPALIVE },
		{ "ready-file", required_argument, NULL, OPT_READY },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	bool seen[OPT_MAX] = {};
	int c, idx;

	memset(o, 0, sizeof(*o));
	o->backlog = 128;
	o->ka_idle = 1;
	o->ka_intvl = 1;
	o->ka_cnt = 2;
	while ((c = getopt_long(argc, argv, ":hV", longopts, &idx)) != -1) {
		if (c >= OPT_LISTEN && c < OPT_MAX)
			option_once(seen, c, longopts[idx].name);
		switch (c) {
		case OPT_LISTEN:
			if (parse_addr(optarg, &o->listen))
				invarg("invalid --listen \"%s\"", optarg);
			break;
		case OPT_PORT:
			if (parse_u64(optarg, 1, 65535, &o->port))
				invarg("invalid --port \"%s\" (1-65535)", optarg);
			break;
		case OPT_DURATION:
			o->duration = duration_arg(optarg, MAX_DURATION);
			break;
		case OPT_BACKLOG:
			if (parse_u64(optarg, 1, 65535, &o->backlog))
				invarg("invalid --backlog \"%s\" (1-65535)", optarg);
			break;
		case OPT_KEEPALIVE:
			parse_keepalive(optarg, o);
			break;
		case OPT_READY:
			if (!*optarg)
				invarg("invalid --ready-file \"\"");
			o->ready_file = optarg;
			break;
		case OPT_JSON:
			o->json = json_errors = true;
			break;
		default:
			common_opt(c, argv, usage);
		}
	}
	if (optind < argc)
		invarg("unexpected argument \"%s\"", argv[optind]);
	if (!o->listen.family || !o->port || !o->duration)
		invarg("--listen, --port and --duration are required");
}

static int listen_socket(const struct opts *o)
{
	struct sockaddr_storage ss = {};
	socklen_t len;
	int fd, one = 1;

	if (o->listen.family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(o->port);
		s->sin_addr = o->listen.v4;
		len = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(o->port);
		s->sin6_addr = o->listen.v6;
		len = sizeof(*s);
	}
	fd = socket(o->listen.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		fail("socket: %s", strerror(errno));
	/* "::" takes IPv4 too, whatever net.ipv6.bindv6only says. */
	if (o->listen.family == AF_INET6) {
		int off = 0;

		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, len) || listen(fd, o->backlog))
		fail("cannot listen on port %" PRIu64 ": %s", o->port, strerror(errno));
	return fd;
}

static void set_keepalive(int fd, const struct opts *o)
{
	int one = 1;

	if (!o->ka_idle)
		return;
	if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &o->ka_idle, sizeof(o->ka_idle)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &o->ka_intvl, sizeof(o->ka_intvl)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &o->ka_cnt, sizeof(o->ka_cnt)))
		fail("keepalive: %s", strerror(errno));
}

/* A held connection has something to say: data (read and dropped), EOF or an error. */
static bool conn_done(int fd, struct counts *n)
{
	char buf[4096];
	ssize_t r;

	for (;;) {
		r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r > 0)
			continue;
		if (r == 0) {
			n->eof++;
			return true;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return false;
		if (errno == EINTR)
			continue;
		if (!n->error++)
			snprintf(n->first_error, sizeof(n->first_error), "%s", strerror(errno));
		return true;
	}
}

int main(int argc, char **argv)
{
	static struct pollfd pfd[MAX_CONNS + 1];
	struct counts n = {};
	uint64_t end;
	struct opts o;
	int nfd = 1, i;

	parse_opts(argc, argv, &o);
	pfd[0].fd = listen_socket(&o);
	pfd[0].events = POLLIN;
	if (o.ready_file) {
		int rf = open(o.ready_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (rf < 0)
			fail("ready file \"%s\": %s", o.ready_file, strerror(errno));
		close(rf);
	}
	catch_stop_signals();
	end = mono_ns() + (uint64_t)(o.duration * NSEC_PER_SEC);
	while (!stop) {
		uint64_t now = mono_ns();
		int ms, fd;

		if (now >= end)
			break;
		ms = (end - now) / 1000000 + 1;
		if (poll(pfd, nfd, ms > 100 ? 100 : ms) < 0) {
			if (errno == EINTR)
				continue;
			fail("poll: %s", strerror(errno));
		}
		/* New connections. */
		while ((fd = accept4(pfd[0].fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
			n.accepted++;
			if (nfd == MAX_CONNS + 1) {
				n.refused++;
				close(fd);
				continue;
			}
			set_keepalive(fd, &o);
			pfd[nfd].fd = fd;
			pfd[nfd].events = POLLIN;
			pfd[nfd++].revents = 0;
		}
		/* Connections that ended: closed here too, compacting the table. */
		for (i = 1; i < nfd;) {
			if (pfd[i].revents && conn_done(pfd[i].fd, &n)) {
				close(pfd[i].fd);
				pfd[i] = pfd[--nfd];
				continue;
			}
			pfd[i++].revents = 0;
		}
	}
	if (o.json) {
		printf("{\"accepted\": %" PRIu64 ", \"open\": %d, \"closed_by_peer\": %" PRIu64
		       ", \"closed_by_error\": %" PRIu64 ", \"refused\": %" PRIu64,
		       n.accepted, nfd - 1, n.eof, n.error, n.refused);
		if (n.error) {
			fputs(", \"first_error\": ", stdout);
			json_string(stdout, n.first_error);
		}
		puts("}");
	} else {
		printf("accepted %" PRIu64 ", open %d, closed by peer %" PRIu64 ", by error %" PRIu64,
		       n.accepted, nfd - 1, n.eof, n.error);
		if (n.error)
			printf(" (first error: %s)", n.first_error);
		if (n.refused)
			printf(", %" PRIu64 " over %d closed at once", n.refused, MAX_CONNS);
		putchar('\n');
	}
	for (i = 0; i < nfd; i++)
		close(pfd[i].fd);
	return 0;
}
