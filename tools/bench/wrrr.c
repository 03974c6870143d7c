// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wrrr: TCP request/response, the legitimate service of the benchmark's
 * "service under attack" stage.
 *
 *   wrrr server --listen ADDR --port N --duration SEC [--ready-file PATH]
 *   wrrr client --connect ADDR --port N --duration SEC [--conns N] [--size BYTES]
 *               [--settle SEC] [--ready-file PATH] [--json]
 *
 * The server echoes every request back (same size). The client opens
 * --conns connections, creates --ready-file once all are established,
 * waits --settle seconds (the driver starts the flood then), and for
 * --duration seconds keeps one request in flight per connection, counting
 * completed requests. A connection that breaks is counted and not reopened.
 * Both stop early on SIGINT / SIGTERM.
 */
#define TOOL_NAME "wrrr"
#include <fcntl.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "../toolutil.h"

/* Connections and request size the client can be given at most. */
#define MAX_CONNS	256
#define MAX_SIZE	4096
/* epoll events handled per wait. */
#define EVENTS		64

struct conn {
	int fd;
	size_t done;		/* bytes of the current response received */
	bool broken;
	uint64_t sent_at;	/* mono_ns when the request in flight was written */
};

/* Request latencies in microseconds, one bucket each; the last holds everything longer. */
#define LAT_BUCKETS	200000
static uint32_t lat_hist[LAT_BUCKETS];

/* The latency (us) under which a share q of the n recorded requests completed. */
static unsigned int lat_quantile(uint64_t n, double q)
{
	uint64_t want = (uint64_t)(q * (double)n + 0.999999), seen = 0;
	unsigned int b;

	if (!n)
		return 0;
	for (b = 0; b < LAT_BUCKETS; b++) {
		seen += lat_hist[b];
		if (seen >= want)
			return b;
	}
	return LAT_BUCKETS - 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: wrrr server --listen ADDR --port N --duration SEC [--ready-file PATH]\n"
		"       wrrr client --connect ADDR --port N --duration SEC [--conns N]\n"
		"                   [--size BYTES] [--settle SEC] [--ready-file PATH] [--json]\n");
}

static socklen_t sockaddr_of(const struct addr *a, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *s = (void *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		s->sin_addr = a->v4;
		return sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (void *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(port);
		s->sin6_addr = a->v6;
		return sizeof(*s);
	}
}

static void touch(const char *path)
{
	int fd;

	if (!path)
		return;
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0)
		fail("cannot create %s: %s", path, strerror(errno));
	close(fd);
}

static int server(const struct addr *a, uint16_t port, double duration, const char *ready)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(a, port, &ss);
	struct epoll_event ev, evs[EVENTS];
	uint64_t end = mono_ns() + (uint64_t)(duration * NSEC_PER_SEC);
	char buf[MAX_SIZE];
	int lfd, ep, one = 1, i, n;

	lfd = socket(a->family, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (lfd < 0)
		fail("socket: %s", strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(lfd, SOL_IP, IP_FREEBIND, &one, sizeof(one));
	if (bind(lfd, (void *)&ss, len) || listen(lfd, 1024))
		fail("cannot listen: %s", strerror(errno));
	ep = epoll_create1(0);
	ev.events = EPOLLIN;
	ev.data.fd = lfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	touch(ready);
	while (!stop && mono_ns() < end) {
		n = epoll_wait(ep, evs, EVENTS, 100);
		for (i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			ssize_t r;

			if (fd == lfd) {
				int c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);

				if (c < 0)
					continue;
				setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
				ev.events = EPOLLIN;
				ev.data.fd = c;
				epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
				continue;
			}
			r = read(fd, buf, sizeof(buf));
			if (r <= 0) {
				if (r == 0 || (errno != EAGAIN && errno != EINTR))
					close(fd);
				continue;
			}
			/* Responses are small and the socket buffer is empty: one write. */
			if (write(fd, buf, r) != r)
				close(fd);
		}
	}
	return 0;
}

static int client(const struct addr *a, uint16_t port, double duration, unsigned int nconns,
		  size_t size, double settle, const char *ready, bool json)
{
	static struct conn conns[MAX_CONNS];
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(a, port, &ss);
	struct epoll_event ev, evs[EVENTS];
	char req[MAX_SIZE], buf[MAX_SIZE];
	uint64_t completed = 0, start, end, t;
	unsigned int i, broken = 0;
	int ep, one = 1, n, k;

	memset(req, 'r', size);
	ep = epoll_create1(0);
	for (i = 0; i < nconns; i++) {
		int fd = socket(a->family, SOCK_STREAM, 0);
		/* A setup that drops the client fails in seconds, not after SYN retries. */
		struct timeval tmo = { .tv_sec = 5 };

		if (fd >= 0)
			setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tmo, sizeof(tmo));
		if (fd < 0 || connect(fd, (void *)&ss, len))
			fail("cannot connect: %s", strerror(errno));
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		fcntl(fd, F_SETFL, O_NONBLOCK);
		conns[i].fd = fd;
		ev.events = EPOLLIN;
		ev.data.u32 = i;
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	}
	touch(ready);
	if (settle > 0) {
		struct timespec ts = { (time_t)settle,
				       (long)((settle - (time_t)settle) * NSEC_PER_SEC) };

		nanosleep(&ts, NULL);
	}
	start = mono_ns();
	end = start + (uint64_t)(duration * NSEC_PER_SEC);
	for (i = 0; i < nconns; i++) {
		conns[i].sent_at = mono_ns();
		if (write(conns[i].fd, req, size) != (ssize_t)size)
			conns[i].broken = true;
	}
	while (!stop && (t = mono_ns()) < end) {
		int wait_ms = (end - t) / 1000000 + 1;

		n = epoll_wait(ep, evs, EVENTS, wait_ms < 100 ? wait_ms : 100);
		for (k = 0; k < n; k++) {
			struct conn *c = &conns[evs[k].data.u32];
			ssize_t r;

			if (c->broken)
				continue;
			r = read(c->fd, buf, size - c->done);
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (r <= 0) {
				c->broken = true;
				epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
				continue;
			}
			c->done += r;
			if (c->done < size)
				continue;
			c->done = 0;
			t = mono_ns();
			if (t < end) {
				uint64_t us = (t - c->sent_at) / 1000;

				completed++;
				lat_hist[us < LAT_BUCKETS ? us : LAT_BUCKETS - 1]++;
			}
			c->sent_at = t;
			if (write(c->fd, req, size) != (ssize_t)size) {
				c->broken = true;
				epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
			}
		}
	}
	t = mono_ns();
	for (i = 0; i < nconns; i++) {
		broken += conns[i].broken;
		close(conns[i].fd);
	}
	if (json)
		printf("{\"completed\": %llu, \"elapsed_s\": %.6f, \"rps\": %.1f, "
		       "\"p50_us\": %u, \"p99_us\": %u, "
		       "\"conns\": %u, \"broken\": %u, \"interrupted\": %s}\n",
		       (unsigned long long)completed, (t - start) / 1e9,
		       completed / ((t - start) / 1e9), lat_quantile(completed, 0.5),
		       lat_quantile(completed, 0.99), nconns, broken, stop ? "true" : "false");
	else
		printf("%llu requests in %.3f s (%.1f/s, p50 %u us, p99 %u us) over %u "
		       "connections, %u broken\n",
		       (unsigned long long)completed, (t - start) / 1e9,
		       completed / ((t - start) / 1e9), lat_quantile(completed, 0.5),
		       lat_quantile(completed, 0.99), nconns, broken);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "connect", required_argument, NULL, 'c' },
		{ "port", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "conns", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 's' },
		{ "settle", required_argument, NULL, 'S' },
		{ "ready-file", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	const char *mode, *ready = NULL;
	struct addr a = {};
	uint64_t port = 0, conns = 8, size = 64;
	double duration = 0, settle = 0;
	bool json = false, is_server;
	int c;

	if (argc < 2 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
			usage(stdout);
			return 0;
		}
		usage(stderr);
		return 2;
	}
	mode = argv[1];
	is_server = !strcmp(mode, "server");
	optind = 2;
	while ((c = getopt_long(argc, argv, ":hV", lo, NULL)) != -1) {
		switch (c) {
		case 'l':
		case 'c':
			if ((c == 'l') != is_server)
				invarg("--%s is for the %s", c == 'l' ? "listen" : "connect",
				       c == 'l' ? "server" : "client");
			if (parse_addr(optarg, &a))
				invarg("invalid address \"%s\"", optarg);
			break;
		case 'p':
			if (parse_u64(optarg, 1, 65535, &port))
				invarg("invalid --port \"%s\"", optarg);
			break;
		case 'd':
			duration = duration_arg(optarg, 3600);
			break;
		case 'n':
			if (parse_u64(optarg, 1, MAX_CONNS, &conns))
				invarg("invalid --conns \"%s\" (1 to %d)", optarg, MAX_CONNS);
			break;
		case 's':
			if (parse_u64(optarg, 1, MAX_SIZE, &size))
				invarg("invalid --size \"%s\" (1 to %d)", optarg, MAX_SIZE);
			break;
		case 'S':
			if (parse_decimal(optarg, 0, 60, &settle))
				invarg("invalid --settle \"%s\" (seconds, 0 to 60)", optarg);
			break;
		case 'r':
			ready = optarg;
			break;
		case 'j':
			json = json_errors = true;
			break;
		default:
			common_opt(c, argv, usage);
		}
	}
	if (optind < argc)
		invarg("unexpected argument \"%s\"", argv[optind]);
	if (!a.family || !port || duration <= 0)
		invarg("%s needs an address, --port and --duration", mode);
	catch_stop_signals();
	signal(SIGPIPE, SIG_IGN);
	if (is_server)
		return server(&a, port, duration, ready);
	return client(&a, port, duration, conns, size, settle, ready, json);
}
