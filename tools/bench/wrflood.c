// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wrflood: a fixed number of packets, as fast as one CPU can make them or
 * at a paced rate, out of one end of a veth pair into whatever is attached
 * to the other end. The benchmark's flood generator.
 *
 * It runs wrflood.bpf.c through BPF_PROG_RUN in live-frames mode: the
 * kernel makes the frames from a page pool and the program rewrites and
 * sends each one (XDP_TX, a redirect out of --dev). There is no socket and
 * no skb on the sending side, so the generator's own cost per packet is
 * small and the peer sees xdp_frames, as XDP sees packets from a NIC.
 * --rate paces in the BPF program itself (frames that are not due yet are
 * dropped unsent), so a paced run keeps its CPU busy; a paced run may send
 * a little more than --count (what one call's worth of runs sent).
 *
 *   wrflood --dev DEV --dmac MAC --dst ADDR --src ADDR --count N
 *           [--sources N | --spoof-bits B] [--proto udp|syn|mix] [--dport N]
 *           [--rate PPS [--catch-up]] [--cpu N] [--json]
 *
 * Sources: --src is the first; --sources N (a power of two) cycles through
 * N of them in a scattered order (consecutive packets land far apart in a
 * limiter's table), --spoof-bits B picks one of 2^B at random per packet.
 * IPv4 varies the low bits of the address; IPv6 varies bits 32..63, so each
 * source is a /64 of its own. Everything stays in 198.18.0.0/15 and
 * 2001:db8::/32 (checked).
 */
#define TOOL_NAME "wrflood"
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "../toolutil.h"
#include "wrflood.skel.h"

/* Frame: Ethernet, IP, and the 24 L4 bytes the BPF side writes. */
#define L4_LEN		24
/* Frames the kernel makes per batch in live mode (its maximum is 256). */
#define BATCH		64
/*
 * Runs per BPF_PROG_RUN call. Each call sets up and tears down a page pool,
 * which takes milliseconds here, so calls are long; a signal still ends one
 * at once (the kernel checks between batches).
 */
#define CHUNK_MAX	(1u << 24)

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: wrflood --dev DEV --dmac MAC --dst ADDR --src ADDR --count N\n"
		"               [--sources N | --spoof-bits B] [--proto udp|syn|mix|ack]\n"
		"               [--dport N] [--rate PPS [--catch-up]] [--cpu N] [--json]\n"
		"  Sends N packets out of DEV (one end of a veth pair) to MAC/ADDR through\n"
		"  BPF_PROG_RUN live frames. --rate 0 (default): as fast as one CPU can.\n"
		"  A paced run that falls behind drops the late packets, or with\n"
		"  --catch-up sends them at once. first_ns/last_ns: paced runs only.\n");
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char tail;
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++) {
		if (b[i] > 255)
			return -EINVAL;
		mac[i] = b[i];
	}
	return 0;
}

/* Is [a, a + 2^bits) inside the benchmarking ranges? */
static bool in_test_range(const struct addr *a, unsigned int bits)
{
	if (a->family == AF_INET) {
		uint32_t v = ntohl(a->v4.s_addr), lo = 0xc6120000, hi = 0xc613ffff;

		return bits <= 17 && v >= lo && (uint64_t)v + (1ULL << bits) - 1 <= hi;
	}
	/* IPv6: 2001:db8::/32; the varying bits sit in word 1, inside it. */
	return a->b[0] == 0x20 && a->b[1] == 0x01 && a->b[2] == 0x0d && a->b[3] == 0xb8 &&
	       bits <= 32 &&
	       (uint64_t)ntohl(((const uint32_t *)a->b)[1]) + (1ULL << bits) - 1 <= 0xffffffffULL;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev", required_argument, NULL, 'i' },
		{ "dmac", required_argument, NULL, 'm' },
		{ "dst", required_argument, NULL, 'd' },
		{ "src", required_argument, NULL, 's' },
		{ "sources", required_argument, NULL, 'n' },
		{ "spoof-bits", required_argument, NULL, 'b' },
		{ "proto", required_argument, NULL, 'p' },
		{ "dport", required_argument, NULL, 'P' },
		{ "count", required_argument, NULL, 'c' },
		{ "rate", required_argument, NULL, 'r' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "catch-up", no_argument, NULL, 'u' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	bool seen[256] = {};
	const char *dev = NULL, *proto_s = "udp";
	uint64_t count = 0, sources = 1, spoof_bits = 0, dport = 9000, rate = 0, cpu = 0;
	bool have_mac = false, have_cpu = false, json = false;
	struct addr dst = {}, src = {};
	uint8_t dmac[6], smac[6], frame[14 + 40 + L4_LEN] = {};
	unsigned int bits = 0, frame_len, ifindex;
	uint64_t sent = 0, calls = 0, start, t_end;
	struct wrflood *skel;
	struct ifreq ifr = {};
	struct timespec cpu0, cpu1;
	int c, fd, err, proto;

	while ((c = getopt_long(argc, argv, ":hV", lo, NULL)) != -1) {
		for (int k = 0; lo[k].name; k++)
			if (lo[k].val == c && c != 'h' && c != 'V')
				option_once(seen, c, lo[k].name);
		switch (c) {
		case 'i':
			dev = optarg;
			break;
		case 'm':
			if (parse_mac(optarg, dmac))
				invarg("invalid --dmac \"%s\"", optarg);
			have_mac = true;
			break;
		case 'd':
			if (parse_addr(optarg, &dst))
				invarg("invalid --dst \"%s\"", optarg);
			break;
		case 's':
			if (parse_addr(optarg, &src))
				invarg("invalid --src \"%s\"", optarg);
			break;
		case 'n':
			if (parse_u64(optarg, 1, 1ULL << 32, &sources) || (sources & (sources - 1)))
				invarg("invalid --sources \"%s\" (a power of two)", optarg);
			break;
		case 'b':
			if (parse_u64(optarg, 0, 32, &spoof_bits))
				invarg("invalid --spoof-bits \"%s\" (0 to 32)", optarg);
			break;
		case 'p':
			proto_s = optarg;
			break;
		case 'P':
			if (parse_u64(optarg, 1, 65535, &dport))
				invarg("invalid --dport \"%s\"", optarg);
			break;
		case 'c':
			if (parse_u64(optarg, 1, 1ULL << 40, &count))
				invarg("invalid --count \"%s\"", optarg);
			break;
		case 'r':
			if (parse_u64(optarg, 0, 100000000, &rate))
				invarg("invalid --rate \"%s\" (packets/s, 0: unpaced)", optarg);
			break;
		case 'C':
			if (parse_u64(optarg, 0, CPU_SETSIZE - 1, &cpu))
				invarg("invalid --cpu \"%s\"", optarg);
			have_cpu = true;
			break;
		case 'u':
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
	if (!dev || !have_mac || !dst.family || !src.family || !count)
		invarg("--dev, --dmac, --dst, --src and --count are required (see --help)");
	if (dst.family != src.family)
		invarg("--src and --dst must be the same family");
	if (seen['n'] && seen['b'])
		invarg("--sources and --spoof-bits exclude each other");
	if (!strcmp(proto_s, "udp"))
		proto = 0;
	else if (!strcmp(proto_s, "syn"))
		proto = 1;
	else if (!strcmp(proto_s, "mix"))
		proto = 2;
	else if (!strcmp(proto_s, "ack"))
		proto = 3;
	else
		invarg("invalid --proto \"%s\" (udp, syn, mix or ack)", proto_s);
	bits = seen['b'] ? (unsigned int)spoof_bits : (unsigned int)__builtin_ctzll(sources);
	if (!in_test_range(&dst, 0) || !in_test_range(&src, bits))
		invarg("addresses must stay in 198.18.0.0/15 or 2001:db8::/32");

	ifindex = if_nametoindex(dev);
	if (!ifindex)
		fail("no device \"%s\": %s", dev, strerror(errno));
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr))
		fail("cannot read the address of %s: %s", dev, strerror(errno));
	close(fd);
	memcpy(smac, ifr.ifr_hwaddr.sa_data, 6);

	/* The template: everything the BPF side does not rewrite. */
	memcpy(frame, dmac, 6);
	memcpy(frame + 6, smac, 6);
	if (dst.family == AF_INET) {
		uint8_t *ip = frame + 14;

		frame[12] = 0x08;
		ip[0] = 0x45;
		*(uint16_t *)(ip + 2) = htons(20 + L4_LEN);
		ip[8] = 64;
		memcpy(ip + 16, &dst.v4, 4);
		memcpy(ip + 12, &src.v4, 4);
		frame_len = 14 + 20 + L4_LEN;
	} else {
		uint8_t *ip = frame + 14;

		frame[12] = 0x86;
		frame[13] = 0xdd;
		ip[0] = 0x60;
		*(uint16_t *)(ip + 4) = htons(L4_LEN);
		ip[7] = 64;
		memcpy(ip + 8, src.b, 16);
		memcpy(ip + 24, dst.b, 16);
		frame_len = 14 + 40 + L4_LEN;
	}

	if (have_cpu) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			fail("cannot run on CPU %llu: %s", (unsigned long long)cpu, strerror(errno));
	}
	skel = wrflood__open();
	if (!skel)
		fail("cannot open the BPF object: %s", strerror(errno));
	skel->rodata->family = dst.family == AF_INET ? 4 : 6;
	skel->rodata->proto = proto;
	skel->rodata->src_bits = bits;
	skel->rodata->src_random = seen['b'];
	skel->rodata->src_base = dst.family == AF_INET ? ntohl(src.v4.s_addr)
						       : ntohl(((uint32_t *)src.b)[1]);
	skel->rodata->dport = dport;
	skel->rodata->interval_ns = rate ? NSEC_PER_SEC / rate : 0;
	skel->rodata->max_seq = count;
	skel->rodata->catch_up = seen['u'];
	err = wrflood__load(skel);
	if (err)
		fail("cannot load the BPF object: %s (root?)", strerror(-err));
	catch_stop_signals();

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
	start = mono_ns();
	while (sent < count && !stop) {
		struct xdp_md ctx = { .data_end = frame_len, .ingress_ifindex = ifindex };
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = frame_len,
			    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = CHUNK_MAX,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = BATCH);

		/* Unpaced, every run sends: never run more than what is left. */
		if (!rate && count - sent < CHUNK_MAX)
			o.repeat = count - sent;
		/* Paced: the program stops sending at count; the rest of the call idles. */
		err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.wrflood), &o);
		/* A signal cuts a run short; seq still counts what went out. */
		if (err && err != -EINTR)
			fail("BPF_PROG_RUN: %s", strerror(-err));
		sent = skel->bss->seq;
		calls++;
	}
	t_end = mono_ns();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
	/*
	 * cpu_ns: this thread's CPU time, which holds the receiving side's
	 * softirq work too whenever it ran in this thread's context (the
	 * kernel here does not account softirq time separately).
	 */
	if (json)
		printf("{\"sent\": %llu, \"elapsed_s\": %.6f, \"pps\": %.0f, \"cpu_ns\": %.0f, "
		       "\"first_ns\": %llu, \"last_ns\": %llu, \"calls\": %llu, "
		       "\"interrupted\": %s}\n",
		       (unsigned long long)sent, (t_end - start) / 1e9,
		       sent / ((t_end - start) / 1e9),
		       (cpu1.tv_sec - cpu0.tv_sec) * 1e9 + (cpu1.tv_nsec - cpu0.tv_nsec),
		       (unsigned long long)skel->bss->first_ns,
		       (unsigned long long)skel->bss->last_ns, (unsigned long long)calls,
		       stop ? "true" : "false");
	else
		printf("sent %llu packets in %.3f s (%.0f pps)\n", (unsigned long long)sent,
		       (t_end - start) / 1e9, sent / ((t_end - start) / 1e9));
	wrflood__destroy(skel);
	return 0;
}
