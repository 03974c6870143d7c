// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wrlisten: a TCP listener that never accepts, so connections pile up in its
 * accept queue: the "workers not keeping up" case for the accept-queue
 * shedding signal. Exits after --duration seconds or on SIGINT/SIGTERM.
 *
 *   wrlisten --listen ADDR --port N [--backlog N] --duration SEC [--ready-file PATH]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int number(const char *opt, const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "wrlisten: invalid %s \"%s\" (%ld to %ld)\n", opt, s, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "port", required_argument, NULL, 'p' },
		{ "backlog", required_argument, NULL, 'b' },
		{ "duration", required_argument, NULL, 'd' },
		{ "ready-file", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct sockaddr_storage ss = {};
	const char *addr = NULL, *ready = NULL;
	long port = 0, backlog = 8, duration = 0;
	struct timespec start, now;
	socklen_t len;
	int c, fd, one = 1;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'l': addr = optarg; break;
		case 'p': if (number("--port", optarg, 1, 65535, &port)) return 2; break;
		case 'b': if (number("--backlog", optarg, 1, 65535, &backlog)) return 2; break;
		case 'd': if (number("--duration", optarg, 1, 3600, &duration)) return 2; break;
		case 'r': ready = optarg; break;
		default:
			fprintf(c == 'h' ? stdout : stderr,
				"Usage: wrlisten --listen ADDR --port N [--backlog N] --duration SEC "
				"[--ready-file PATH]\n"
				"A TCP listener that never accepts: its accept queue fills up.\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (!addr || !port || !duration) {
		fprintf(stderr, "wrlisten: --listen, --port and --duration are required\n");
		return 2;
	}
	if (inet_pton(AF_INET, addr, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		ss.ss_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons(port);
		len = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		ss.ss_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
		len = sizeof(struct sockaddr_in6);
	} else {
		fprintf(stderr, "wrlisten: invalid --listen \"%s\"\n", addr);
		return 2;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, len) || listen(fd, backlog)) {
		fprintf(stderr, "wrlisten: cannot listen on %s:%ld: %s\n", addr, port,
			strerror(errno));
		return 1;
	}
	if (ready) {
		int r = open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

		if (r >= 0)
			close(r);
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		struct timespec ts = { 0, 100000000 };

		nanosleep(&ts, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (!stop && now.tv_sec - start.tv_sec < duration);
	close(fd);
	return 0;
}
