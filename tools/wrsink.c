// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wrsink: count UDP datagrams and bytes per source address, for weir's
 * end-to-end tests and the demo.
 *
 * Binds one UDP socket (IPv4, IPv6, or dual-stack on "::"), touches a ready
 * file once bound, and counts until --duration has passed since binding, or
 * until nothing arrived for --idle seconds after the first datagram, or until
 * SIGINT / SIGTERM. Whatever is still queued then is counted too. Results go
 * to stdout sorted by address, as text or one JSON object.
 *
 * The socket gets a large receive buffer (SO_RCVBUFFORCE) so the sink does
 * not drop at tens of thousands of packets per second; the drops it still
 * has are reported from SO_RXQ_OVFL and SO_MEMINFO.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TOOL_NAME "wrsink"
#include "toolutil.h"

/* Longest --duration / --idle accepted, seconds. */
#define MAX_DURATION		86400.0
/* Default --idle, seconds. */
#define DEFAULT_IDLE		2.0
/* Default receive buffer: ~100k small datagrams at their true size. */
#define DEFAULT_RCVBUF		(8 << 20)
/* Receive buffer limits accepted by --rcvbuf. */
#define MIN_RCVBUF		4096
#define MAX_RCVBUF		(1 << 30)
/* Default and largest number of distinct sources tracked; more are lumped. */
#define DEFAULT_MAX_SOURCES	(1 << 20)
#define MAX_MAX_SOURCES		(1 << 24)
/* Datagrams taken per recvmmsg() call. */
#define BATCH			64
/* recvmmsg() calls per poll wakeup, so timers are checked now and then. */
#define BATCHES_PER_WAKE	256
/* Calls to drain what is queued at the end: bounds it against a live sender. */
#define FINAL_DRAIN_BATCHES	4096
/* Bytes of each datagram copied; MSG_TRUNC still reports the full length. */
#define COPY_BYTES		64
/* First hash table size (power of two). */
#define INITIAL_SLOTS		1024

struct entry {
	struct addr addr;		/* IPv4 also when it came v4-mapped */
	bool used;
	uint64_t packets;
	uint64_t bytes;
	uint64_t first_ns;
	uint64_t last_ns;
};

struct table {
	struct entry *slots;
	size_t size;			/* power of two */
	size_t used;
	size_t max;			/* most entries before lumping */
	uint64_t untracked_packets;
	uint64_t untracked_bytes;
};

struct opts {
	struct addr listen;
	bool dual_stack;
	unsigned int port;
	double duration;
	double idle;
	bool json;
	const char *ready_file;
	uint64_t rcvbuf;
	uint64_t max_sources;
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s --listen ADDR --port N --duration SEC [--proto udp] [--idle SEC]\n"
"              [--json] [--ready-file PATH] [--rcvbuf BYTES] [--max-sources N]\n"
"\n"
"Count UDP datagrams and payload bytes per source address.\n"
"\n"
"  --listen ADDR       local address, IPv4 or IPv6; \"::\" is dual-stack\n"
"  --port N            UDP port, 1-65535\n"
"  --proto udp         the only protocol (default)\n"
"  --duration SEC      stop this long after binding (decimal, > 0)\n"
"  --idle SEC          stop when nothing arrived for SEC after the first\n"
"                      datagram (decimal; default %.0f, 0 never)\n"
"  --json              print the result as one JSON object\n"
"  --ready-file PATH   create PATH once the socket is bound\n"
"  --rcvbuf BYTES      receive buffer (default %d, SO_RCVBUFFORCE)\n"
"  --max-sources N     distinct sources tracked (default %d); datagrams\n"
"                      from further sources count as \"untracked\"\n"
"  -h, --help          this text\n"
"  -V, --version       print the version\n"
"\n"
"SIGINT and SIGTERM stop it early; the result is printed either way.\n"
"Exit status: 0 done, 1 runtime error, 2 bad arguments.\n",
		prog, DEFAULT_IDLE, DEFAULT_RCVBUF, DEFAULT_MAX_SOURCES);
}

enum {
	OPT_LISTEN = 256, OPT_PORT, OPT_PROTO, OPT_DURATION, OPT_IDLE, OPT_JSON,
	OPT_READY, OPT_RCVBUF, OPT_MAX_SOURCES,
};

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "port", required_argument, NULL, OPT_PORT },
		{ "proto", required_argument, NULL, OPT_PROTO },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "idle", required_argument, NULL, OPT_IDLE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "ready-file", required_argument, NULL, OPT_READY },
		{ "rcvbuf", required_argument, NULL, OPT_RCVBUF },
		{ "max-sources", required_argument, NULL, OPT_MAX_SOURCES },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	/* Which options were given, to refuse repeats. */
	bool seen[OPT_MAX_SOURCES + 1] = { false };
	struct in6_addr any6 = IN6ADDR_ANY_INIT;
	uint64_t v;
	int c, idx;

	o->idle = DEFAULT_IDLE;
	o->rcvbuf = DEFAULT_RCVBUF;
	o->max_sources = DEFAULT_MAX_SOURCES;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hV", longopts, &idx)) != -1) {
		if (c >= OPT_LISTEN)
			option_once(seen, c, longopts[idx].name);
		switch (c) {
		case OPT_LISTEN:
			if (parse_addr(optarg, &o->listen))
				invarg("invalid --listen \"%s\"", optarg);
			break;
		case OPT_PORT:
			if (parse_u64(optarg, 1, 65535, &v))
				invarg("invalid --port \"%s\" (1-65535)", optarg);
			o->port = v;
			break;
		case OPT_PROTO:
			if (strcmp(optarg, "udp"))
				invarg("invalid --proto \"%s\" (only udp)", optarg);
			break;
		case OPT_DURATION:
			o->duration = duration_arg(optarg, MAX_DURATION);
			break;
		case OPT_IDLE:
			if (parse_decimal(optarg, 0, MAX_DURATION, &o->idle))
				invarg("invalid --idle \"%s\" (seconds, 0 to %.0f)",
				       optarg, MAX_DURATION);
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_READY:
			if (!*optarg)
				invarg("invalid --ready-file \"\"");
			o->ready_file = optarg;
			break;
		case OPT_RCVBUF:
			if (parse_u64(optarg, MIN_RCVBUF, MAX_RCVBUF, &o->rcvbuf))
				invarg("invalid --rcvbuf \"%s\" (%d-%d bytes)", optarg,
				       MIN_RCVBUF, MAX_RCVBUF);
			break;
		case OPT_MAX_SOURCES:
			if (parse_u64(optarg, 1, MAX_MAX_SOURCES, &o->max_sources))
				invarg("invalid --max-sources \"%s\" (1-%d)", optarg,
				       MAX_MAX_SOURCES);
			break;
		default:
			common_opt(c, argv, usage);
		}
	}
	if (optind < argc)
		invarg("unexpected argument \"%s\"", argv[optind]);
	if (!o->listen.family)
		invarg("--listen is required");
	if (!o->port)
		invarg("--port is required");
	if (!o->duration)
		invarg("--duration is required");
	o->dual_stack = o->listen.family == AF_INET6 && !memcmp(o->listen.b, &any6, 16);
}

/* FNV-1a over family and address. */
static size_t addr_hash(const struct addr *a)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	h = (h ^ a->family) * 0x100000001b3ULL;
	for (i = 0; i < addr_len(a); i++)
		h = (h ^ a->b[i]) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

static int table_grow(struct table *t)
{
	size_t size = t->size ? t->size * 2 : INITIAL_SLOTS, i;
	struct entry *slots = calloc(size, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->size; i++) {
		size_t j;

		if (!t->slots[i].used)
			continue;
		/* Linear probing always finds a free slot: load stays at most 1/2. */
		for (j = addr_hash(&t->slots[i].addr) & (size - 1); slots[j].used;
		     j = (j + 1) & (size - 1))
			;
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->size = size;
	return 0;
}

/* The entry for @a, created if there is room; NULL means "untracked". */
static struct entry *table_get(struct table *t, const struct addr *a)
{
	size_t j;

	for (j = addr_hash(a) & (t->size - 1); t->slots[j].used; j = (j + 1) & (t->size - 1))
		if (addr_eq(&t->slots[j].addr, a))
			return &t->slots[j];
	if (t->used >= t->max)
		return NULL;
	if ((t->used + 1) * 2 > t->size) {
		if (table_grow(t))
			return NULL;
		return table_get(t, a);	/* one level deep: the new table has room */
	}
	t->slots[j].used = true;
	t->slots[j].addr = *a;
	t->used++;
	return &t->slots[j];
}

static void from_sockaddr(const struct sockaddr_storage *ss, struct addr *a)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	const uint8_t *b6 = ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;

	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		a->family = AF_INET;
		memcpy(a->b, &((const struct sockaddr_in *)ss)->sin_addr, 4);
		return;
	}
	if (!memcmp(b6, mapped, sizeof(mapped))) {
		a->family = AF_INET;
		memcpy(a->b, b6 + 12, 4);
	} else {
		a->family = AF_INET6;
		memcpy(a->b, b6, 16);
	}
}

static int open_socket(const struct opts *o, int *rcvbuf)
{
	struct sockaddr_storage ss = { 0 };
	int fd, one = 1, zero = 0, size = o->rcvbuf;
	socklen_t len, optlen = sizeof(*rcvbuf);

	fd = socket(o->listen.family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		fail("UDP socket: %s", strerror(errno));
	/* The kernel doubles the value for bookkeeping; FORCE ignores rmem_max. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size))) {
		fprintf(stderr, "%s: SO_RCVBUFFORCE: %s, trying SO_RCVBUF (capped by "
			"net.core.rmem_max)\n", prog, strerror(errno));
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)))
			fail("SO_RCVBUF: %s", strerror(errno));
	}
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, rcvbuf, &optlen))
		fail("getsockopt SO_RCVBUF: %s", strerror(errno));
	/* Every datagram then carries the socket's drop count so far. */
	if (setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one)))
		fail("SO_RXQ_OVFL: %s", strerror(errno));
	if (o->listen.family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		/* Bind even before the address has finished appearing. */
		if (setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one)))
			fail("IP_FREEBIND: %s", strerror(errno));
		sin->sin_family = AF_INET;
		sin->sin_port = htons(o->port);
		memcpy(&sin->sin_addr, o->listen.b, 4);
		len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		if (setsockopt(fd, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof(one)))
			fail("IPV6_FREEBIND: %s", strerror(errno));
		if (o->dual_stack &&
		    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)))
			fail("IPV6_V6ONLY: %s", strerror(errno));
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(o->port);
		memcpy(&sin6->sin6_addr, o->listen.b, 16);
		len = sizeof(*sin6);
	}
	if (bind(fd, (struct sockaddr *)&ss, len))
		fail("bind to port %u: %s", o->port, strerror(errno));
	return fd;
}

struct rx {
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_storage names[BATCH];
	uint8_t data[BATCH][COPY_BYTES];
	/* Control buffers, aligned for cmsghdr. */
	union {
		char buf[CMSG_SPACE(sizeof(uint32_t))];
		struct cmsghdr align;
	} ctl[BATCH];
};

struct counts {
	uint64_t packets;
	uint64_t bytes;
	uint64_t last_rx_ns;
	uint32_t ovfl;		/* latest SO_RXQ_OVFL count */
};

/* One recvmmsg() without waiting; returns datagrams taken, 0 if none, -errno. */
static int take_batch(int fd, struct rx *rx, struct table *t, struct counts *c)
{
	uint64_t now;
	int n, i;

	for (i = 0; i < BATCH; i++) {
		struct msghdr *h = &rx->msgs[i].msg_hdr;

		rx->iov[i].iov_base = rx->data[i];
		rx->iov[i].iov_len = COPY_BYTES;
		h->msg_name = &rx->names[i];
		h->msg_namelen = sizeof(rx->names[i]);
		h->msg_iov = &rx->iov[i];
		h->msg_iovlen = 1;
		h->msg_control = rx->ctl[i].buf;
		h->msg_controllen = sizeof(rx->ctl[i].buf);
		h->msg_flags = 0;
	}
	/* MSG_TRUNC: msg_len is the datagram's full length, not what was copied. */
	n = recvmmsg(fd, rx->msgs, BATCH, MSG_DONTWAIT | MSG_TRUNC, NULL);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
	now = mono_ns();
	for (i = 0; i < n; i++) {
		struct msghdr *h = &rx->msgs[i].msg_hdr;
		uint64_t bytes = rx->msgs[i].msg_len;
		struct cmsghdr *cm;
		struct entry *e;
		struct addr a;

		for (cm = CMSG_FIRSTHDR(h); cm; cm = CMSG_NXTHDR(h, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_RXQ_OVFL)
				memcpy(&c->ovfl, CMSG_DATA(cm), sizeof(c->ovfl));
		from_sockaddr(&rx->names[i], &a);
		e = table_get(t, &a);
		if (!e) {
			t->untracked_packets++;
			t->untracked_bytes += bytes;
		} else {
			if (!e->packets)
				e->first_ns = now;
			e->last_ns = now;
			e->packets++;
			e->bytes += bytes;
		}
		c->packets++;
		c->bytes += bytes;
	}
	if (n)
		c->last_rx_ns = now;
	return n;
}

static int cmp_entry(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	if (a->addr.family != b->addr.family)
		return a->addr.family == AF_INET ? -1 : 1;
	return memcmp(a->addr.b, b->addr.b, addr_len(&a->addr));
}

static void print_result(const struct opts *o, struct table *t, const struct counts *c,
			 uint64_t drops, int rcvbuf, double elapsed, const char *why)
{
	struct entry *list = malloc((t->used ? t->used : 1) * sizeof(*list));
	char name[INET6_ADDRSTRLEN];
	size_t i, n = 0;

	if (!list)
		fail("out of memory");
	for (i = 0; i < t->size; i++)
		if (t->slots[i].used)
			list[n++] = t->slots[i];
	qsort(list, n, sizeof(*list), cmp_entry);

	if (o->json) {
		printf("{\"sources\":[");
		for (i = 0; i < n; i++) {
			inet_ntop(list[i].addr.family, list[i].addr.b, name, sizeof(name));
			printf("%s{\"src\":\"%s\",\"packets\":%" PRIu64 ",\"bytes\":%" PRIu64
			       ",\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64 "}",
			       i ? "," : "", name, list[i].packets, list[i].bytes,
			       list[i].first_ns, list[i].last_ns);
		}
		printf("],\"total\":%" PRIu64 ",\"total_bytes\":%" PRIu64
		       ",\"untracked_packets\":%" PRIu64 ",\"untracked_bytes\":%" PRIu64
		       ",\"rcvbuf_drops\":%" PRIu64 ",\"rcvbuf\":%d,\"elapsed_s\":%.6f"
		       ",\"stopped\":\"%s\"}\n",
		       c->packets, c->bytes, t->untracked_packets, t->untracked_bytes, drops,
		       rcvbuf, elapsed, why);
	} else {
		printf("%-40s %12s %14s\n", "source", "packets", "bytes");
		for (i = 0; i < n; i++) {
			inet_ntop(list[i].addr.family, list[i].addr.b, name, sizeof(name));
			printf("%-40s %12" PRIu64 " %14" PRIu64 "\n", name, list[i].packets,
			       list[i].bytes);
		}
		if (t->untracked_packets)
			printf("%-40s %12" PRIu64 " %14" PRIu64 "\n", "(untracked)",
			       t->untracked_packets, t->untracked_bytes);
		printf("total %" PRIu64 " packets, %" PRIu64 " bytes from %zu sources in "
		       "%.6f s (stopped: %s), rcvbuf_drops %" PRIu64 "\n",
		       c->packets, c->bytes, n, elapsed, why, drops);
	}
	free(list);
}

int main(int argc, char **argv)
{
	static struct rx rx;
	struct table t = { 0 };
	struct counts c = { 0 };
	sigset_t block, orig;
	uint64_t start, deadline, idle_ns, drops;
	uint32_t meminfo[SK_MEMINFO_VARS] = { 0 };
	socklen_t mlen = sizeof(meminfo);
	const char *why = "duration";
	struct opts o = { 0 };
	int fd, rcvbuf, i, err;

	parse_args(argc, argv, &o);
	json_errors = o.json;
	t.max = o.max_sources;
	if (table_grow(&t))
		fail("out of memory");

	/* Signals stay blocked except inside ppoll(): no lost wakeups. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &orig);
	sigdelset(&orig, SIGINT);
	sigdelset(&orig, SIGTERM);
	catch_stop_signals();

	fd = open_socket(&o, &rcvbuf);
	start = mono_ns();
	deadline = start + (uint64_t)(o.duration * NSEC_PER_SEC);
	idle_ns = (uint64_t)(o.idle * NSEC_PER_SEC);
	if (o.ready_file) {
		int rf = open(o.ready_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (rf < 0)
			fail("ready file \"%s\": %s", o.ready_file, strerror(errno));
		close(rf);
	}

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now = mono_ns(), wake = deadline;
		struct timespec ts;
		int ret;

		if (stop) {
			why = "signal";
			break;
		}
		if (now >= deadline)
			break;
		if (idle_ns && c.packets) {
			if (now >= c.last_rx_ns + idle_ns) {
				why = "idle";
				break;
			}
			if (c.last_rx_ns + idle_ns < wake)
				wake = c.last_rx_ns + idle_ns;
		}
		ts.tv_sec = (wake - now) / NSEC_PER_SEC;
		ts.tv_nsec = (wake - now) % NSEC_PER_SEC;
		ret = ppoll(&pfd, 1, &ts, &orig);
		if (ret < 0 && errno != EINTR)
			fail("ppoll: %s", strerror(errno));
		if (ret <= 0)
			continue;
		for (i = 0; i < BATCHES_PER_WAKE; i++) {
			err = take_batch(fd, &rx, &t, &c);
			if (err < 0)
				fail("recvmmsg: %s", strerror(-err));
			if (err < BATCH)
				break;
		}
	}
	/* Count what is already queued; bounded in case a sender keeps going. */
	for (i = 0; i < FINAL_DRAIN_BATCHES; i++) {
		err = take_batch(fd, &rx, &t, &c);
		if (err < 0)
			fail("recvmmsg: %s", strerror(-err));
		if (!err)
			break;
	}
	/* SO_MEMINFO also sees drops after the last datagram that got through. */
	drops = c.ovfl;
	if (!getsockopt(fd, SOL_SOCKET, SO_MEMINFO, meminfo, &mlen) &&
	    mlen > SK_MEMINFO_DROPS * sizeof(uint32_t) && meminfo[SK_MEMINFO_DROPS] > drops)
		drops = meminfo[SK_MEMINFO_DROPS];
	print_result(&o, &t, &c, drops, rcvbuf, (double)(mono_ns() - start) / NSEC_PER_SEC,
		     why);
	close(fd);
	free(t.slots);
	return 0;
}
