// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir capture`: samples of the packets weir judged, copied by the
 * data path (bpf/capture.h) into the wr_capture_ring ring buffer at a
 * bounded rate, written as pcap (libpcap's writer) or printed a line each.
 *
 * The switch, the lease and the ring are a capture session's (lib/capture.c,
 * shared with `weir auto`): one capture at a time, a dead one's lease
 * running out by itself within seconds, a live one refused by name.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/libweir.h"
#include "weir.skel.h"
#include "lib/kernel_features.h"
#include "integrations/pcapout.h"
#include "cmd/cmd.h"

/* Packets one capture may be asked for. */
#define CAP_COUNT_MAX	1000000000ULL

static const char *const verdict_names[] = {
	[WEIR_CV_PASSED] = "passed",
	[WEIR_CV_DROPPED] = "dropped",
};

static const char *const reason_names[WEIR_CR_MAX] = {
	[WEIR_CR_NO_RULE] = "no-rule",
	[WEIR_CR_RULE] = "rule",
	[WEIR_CR_DENY] = "deny",
	[WEIR_CR_ALLOW] = "allow",
	[WEIR_CR_SHED] = "shed",
	[WEIR_CR_CAPACITY] = "capacity",
	[WEIR_CR_MALFORMED] = "malformed",
	[WEIR_CR_COOKIE] = "cookie",
	[WEIR_CR_FAULT] = "fault",
	[WEIR_CR_TCP_STATE] = "tcp-state",
	[WEIR_CR_FEED] = "feed",
};

struct cap {
	/* What was asked for. */
	const char *rule;	/* NULL: every rule */
	__u32 verdicts;		/* 1 << enum weir_capture_verdict */
	uint64_t count;		/* 0: until interrupted */
	uint64_t budget;
	uint64_t snaplen;
	const char *file;	/* -w: pcap to this file, "-" stdout */
	__u16 rule_slot;	/* the rule's slot, or WEIR_CAPTURE_ANY_RULE */
	/* While it runs. */
	struct wr_maps m;
	struct wr_capture_sess sess;
	struct weir_ruleset *rs;	/* the live set, for rule names */
	__u64 rs_read_ns;
	struct wr_pcap *dumper;
	__s64 wall_off_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	__u64 written;
	bool failed;
};

static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	stop_sig = sig;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: weir capture [rule NAME] [dropped|passed|all] [count N] [rate N/s] "
		"[snaplen N] [-w FILE|-]\n"
		"  samples of the packets weir judged, copied by the data path at most\n"
		"  rate a second (default %u, at most %u; shared by all CPUs)\n"
		"  rule NAME   only packets that rule decided (a passed packet belongs to\n"
		"              the first rule it matched)\n"
		"  dropped     only dropped packets (the default); passed: only passed\n"
		"              ones (would-drops of dry-run rules included); all: both\n"
		"  count N     stop after N packets (default: until interrupted)\n"
		"  rate N/s    the data path's budget, packets a second\n"
		"  snaplen N   bytes of each frame kept (default and at most %u)\n"
		"  -w FILE     write pcap (Ethernet) to FILE, '-' for stdout; without it\n"
		"              one line per packet (-j: one JSON object per line)\n"
		"  A summary ends it: captured, lost to the budget, lost to a full ring.\n",
		WEIR_CAPTURE_BUDGET_DEF, WEIR_CAPTURE_BUDGET_MAX, WEIR_CAPTURE_SNAPLEN_MAX);
}

static int bad(const char *what, const char *word, const char *why)
{
	pr_err("invalid %s \"%s\"%s%s", what, word, why ? ": " : "", why ? why : "");
	usage(stderr);
	return -EINVAL;
}

static int parse_args(int argc, char **argv, struct cap *c)
{
	bool seen_verdict = false, seen_rule = false, seen_count = false, seen_rate = false,
	     seen_snap = false, seen_w = false;
	char buf[64];
	int i;

	for (i = 0; i < argc; i++) {
		const char *w = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool *seen = NULL;

		if (!strcmp(w, "dropped") || !strcmp(w, "passed") || !strcmp(w, "all")) {
			if (seen_verdict)
				return bad("argument", w, "a verdict is given once");
			seen_verdict = true;
			c->verdicts = !strcmp(w, "dropped") ? 1U << WEIR_CV_DROPPED :
				      !strcmp(w, "passed") ? 1U << WEIR_CV_PASSED :
				      (1U << WEIR_CV_DROPPED) | (1U << WEIR_CV_PASSED);
			continue;
		}
		if (!strcmp(w, "rule"))
			seen = &seen_rule;
		else if (!strcmp(w, "count"))
			seen = &seen_count;
		else if (!strcmp(w, "rate"))
			seen = &seen_rate;
		else if (!strcmp(w, "snaplen"))
			seen = &seen_snap;
		else if (!strcmp(w, "-w"))
			seen = &seen_w;
		else
			return bad("argument", w, NULL);
		if (*seen)
			return bad("argument", w, "given twice");
		*seen = true;
		if (!v) {
			pr_err("\"%s\" needs a value", w);
			usage(stderr);
			return -EINVAL;
		}
		i++;
		if (seen == &seen_rule) {
			struct wr_perr pe;

			if (wr_rule_name(v, &pe))
				return bad("rule name", v, pe.msg);
			c->rule = v;
		} else if (seen == &seen_count) {
			if (parse_u64(v, 1, CAP_COUNT_MAX, &c->count))
				return bad("count", v, "1 to 1000000000 packets");
		} else if (seen == &seen_rate) {
			size_t n = strlen(v);

			/* N or N/s: packets a second. */
			if (n >= sizeof(buf))
				return bad("rate", v, NULL);
			memcpy(buf, v, n + 1);
			if (n > 2 && !strcmp(buf + n - 2, "/s"))
				buf[n - 2] = 0;
			if (parse_u64(buf, 1, WEIR_CAPTURE_BUDGET_MAX, &c->budget)) {
				snprintf(buf, sizeof(buf), "1/s to %u/s", WEIR_CAPTURE_BUDGET_MAX);
				return bad("rate", v, buf);
			}
		} else if (seen == &seen_snap) {
			if (parse_u64(v, 1, WEIR_CAPTURE_SNAPLEN_MAX, &c->snaplen)) {
				snprintf(buf, sizeof(buf), "1 to %u bytes", WEIR_CAPTURE_SNAPLEN_MAX);
				return bad("snaplen", v, buf);
			}
		} else {
			if (!v[0])
				return bad("file", v, NULL);
			c->file = v;
		}
	}
	return 0;
}

/* The live rule set, read again at most once a second when a uid is not in it. */
static const char *rule_name(struct cap *c, __u32 uid)
{
	__u32 i;
	int pass;

	if (!uid)
		return NULL;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; c->rs && i < c->rs->nr_rules && i < WEIR_MAX_RULES; i++)
			if (c->rs->rules[i].uid == uid)
				return c->rs->names[i];
		if (pass || wr_mono_ns() - c->rs_read_ns < 1000000000ULL)
			break;
		c->rs_read_ns = wr_mono_ns();
		if (wr_read_live(&c->m, c->rs))
			break;
	}
	return NULL;
}

/* Addresses and ports of a frame, as far as its captured bytes go. */
struct decoded {
	int family;		/* 0: not IP (or cut short) */
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	__u8 proto;
	bool ports;
	__u16 sport, dport;
	int icmp_type;		/* -1: none */
};

static void decode(const __u8 *p, __u32 n, struct decoded *d)
{
	__u32 off = 12, l4, i;
	__u16 type;

	memset(d, 0, sizeof(*d));
	d->icmp_type = -1;
	if (n < 14)
		return;
	type = p[12] << 8 | p[13];
	/* Up to two VLAN tags, as the data path reads them. */
	for (i = 0; i < 2 && (type == 0x8100 || type == 0x88a8) && off + 6 <= n; i++) {
		off += 4;
		type = p[off] << 8 | p[off + 1];
	}
	off += 2;
	if (type == 0x0800) {
		if (off + 20 > n || (p[off] >> 4) != 4 || (p[off] & 0xf) < 5)
			return;
		d->family = 4;
		inet_ntop(AF_INET, p + off + 12, d->src, sizeof(d->src));
		inet_ntop(AF_INET, p + off + 16, d->dst, sizeof(d->dst));
		d->proto = p[off + 9];
		/* Only a first fragment carries the ports. */
		if ((p[off + 6] << 8 | p[off + 7]) & 0x1fff)
			return;
		l4 = off + (p[off] & 0xf) * 4;
	} else if (type == 0x86dd) {
		__u8 nh;

		if (off + 40 > n)
			return;
		d->family = 6;
		inet_ntop(AF_INET6, p + off + 8, d->src, sizeof(d->src));
		inet_ntop(AF_INET6, p + off + 24, d->dst, sizeof(d->dst));
		nh = p[off + 6];
		l4 = off + 40;
		/* Hop-by-hop, routing, destination options: a few, bounded. */
		for (i = 0; i < 4 && (nh == 0 || nh == 43 || nh == 60) && l4 + 8 <= n; i++) {
			nh = p[l4];
			l4 += (p[l4 + 1] + 1) * 8;
		}
		d->proto = nh;
	} else {
		return;
	}
	if ((d->proto == 6 || d->proto == 17) && l4 + 4 <= n) {
		d->ports = true;
		d->sport = p[l4] << 8 | p[l4 + 1];
		d->dport = p[l4 + 2] << 8 | p[l4 + 3];
	} else if ((d->proto == 1 || d->proto == 58) && l4 + 1 <= n) {
		d->icmp_type = p[l4];
	}
}

/* One record as a line of text or a JSON object. */
static void print_record(struct cap *c, const struct weir_capture_hdr *h, const __u8 *data)
{
	char ifname[IF_NAMESIZE] = "", when[64], pbuf[16], by[WEIR_NAME_LEN + 16];
	const char *proto;
	__s64 wall = (__s64)h->ts + c->wall_off_ns;
	const char *name = rule_name(c, h->rule_uid);
	const char *reason = h->reason < WEIR_CR_MAX ? reason_names[h->reason] : "?";
	const char *verdict = h->verdict <= WEIR_CV_DROPPED ? verdict_names[h->verdict] : "?";
	struct decoded d;
	struct tm tm;
	time_t sec = wall / 1000000000LL;

	decode(data, h->caplen, &d);
	if (!if_indextoname(h->ifindex, ifname))
		snprintf(ifname, sizeof(ifname), "if%u", h->ifindex);
	localtime_r(&sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	proto = proto_name(d.proto, pbuf, sizeof(pbuf));
	out_begin();
	if (opts.json) {
		char iso[64];
		struct tm utc;

		gmtime_r(&sec, &utc);
		strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%S", &utc);
		snprintf(iso + strlen(iso), sizeof(iso) - strlen(iso), ".%06lldZ",
			 (long long)(wall % 1000000000LL) / 1000);
		print_str("time", NULL, iso);
		print_u64("time_ns", NULL, wall);
		print_str("interface", NULL, ifname);
		print_str("verdict", NULL, verdict);
		print_bool("would_drop", NULL, h->flags & WEIR_CF_WOULD_DROP);
		print_str("reason", NULL, reason);
		if (name)
			print_str("rule", NULL, name);
		else
			print_null("rule", NULL);
		print_u64("rule_uid", NULL, h->rule_uid);
		print_u64("family", NULL, d.family);
		if (d.family) {
			print_str("src", NULL, d.src);
			print_str("dst", NULL, d.dst);
			print_str("proto", NULL, proto);
			if (d.ports) {
				print_u64("sport", NULL, d.sport);
				print_u64("dport", NULL, d.dport);
			}
			if (d.icmp_type >= 0)
				print_u64("icmp_type", NULL, d.icmp_type);
		}
		print_u64("len", NULL, h->len);
		print_u64("caplen", NULL, h->caplen);
		out_end();
		return;
	}
	if (h->reason == WEIR_CR_RULE || h->reason == WEIR_CR_COOKIE) {
		if (name)
			snprintf(by, sizeof(by), "%s%s", h->reason == WEIR_CR_COOKIE ? "cookie " : "",
				 name);
		else
			snprintf(by, sizeof(by), "rule-uid-%u", h->rule_uid);
	} else {
		snprintf(by, sizeof(by), "%s", reason);
	}
	printf("%s.%06lld %s %s%s by %s: ", when, (long long)(wall % 1000000000LL) / 1000, ifname,
	       verdict, h->flags & WEIR_CF_WOULD_DROP ? " (would-drop)" : "", by);
	if (!d.family)
		printf("non-IP");
	else if (d.ports && d.family == 6)
		printf("[%s].%u > [%s].%u %s", d.src, d.sport, d.dst, d.dport, proto);
	else if (d.ports)
		printf("%s.%u > %s.%u %s", d.src, d.sport, d.dst, d.dport, proto);
	else
		printf("%s > %s %s", d.src, d.dst, proto);
	if (d.icmp_type >= 0)
		printf(" type %d", d.icmp_type);
	printf(", length %u\n", h->len);
}

static int on_record(void *ctx, const struct weir_capture_hdr *h, const __u8 *data)
{
	struct cap *c = ctx;

	/* Past the count: not ours to show. */
	if (c->count && c->written >= c->count)
		return 0;
	if (c->dumper)
		wr_pcap_write(c->dumper, (__s64)h->ts + c->wall_off_ns, data, h->caplen, h->len);
	else
		print_record(c, h, data);
	c->written++;
	return 0;
}

/* The process that holds the lease is alive. */
static bool pid_alive(__u32 pid)
{
	return pid && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

static void summary(const struct cap *c, const struct weir_capture_stats *s)
{
	if (opts.json && !(c->file && !strcmp(c->file, "-"))) {
		out_begin();
		open_object("summary");
		print_u64("captured", NULL, c->written);
		print_u64("copied", NULL, s->captured);
		print_u64("lost_budget", NULL, s->lost_budget);
		print_u64("lost_ring", NULL, s->lost_ring);
		close_object();
		out_end();
		return;
	}
	fflush(stdout);
	fprintf(stderr, "%llu packets captured\n%llu lost to the budget\n"
		"%llu lost to a full ring\n", (unsigned long long)c->written,
		(unsigned long long)s->lost_budget, (unsigned long long)s->lost_ring);
}

static int run(struct cap *c)
{
	struct weir_capture_stats st = {};
	struct wr_capture_opts o = {
		.budget = c->budget,
		.snaplen = c->snaplen,
		.verdicts = c->verdicts,
		.rule_slot = c->rule_slot,
	};
	struct sigaction sa = {};
	struct timespec rt, mono;
	bool started = false;
	int err;

	/* From here on a signal ends the capture the orderly way. */
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);

	/* Refused (a live capture) before the file is opened and truncated. */
	err = wr_capture_open(&c->sess, &c->m, on_record, c);
	if (err)
		return err;
	if (c->file) {
		char why[256];

		c->dumper = wr_pcap_open(c->file, (int)c->snaplen, why, sizeof(why));
		if (!c->dumper) {
			pr_err("cannot write %s: %s", c->file, why);
			err = -EIO;
			goto out;
		}
	}
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	c->wall_off_ns = ((__s64)rt.tv_sec - mono.tv_sec) * 1000000000LL + rt.tv_nsec - mono.tv_nsec;

	err = wr_capture_start(&c->sess, &o);
	if (err)
		goto out;
	started = true;
	if (!c->file && !opts.json)
		fprintf(stderr, "capturing %s packets%s%s, at most %llu a second\n",
			c->verdicts == 3 ? "passed and dropped" :
			c->verdicts & (1U << WEIR_CV_DROPPED) ? "dropped" : "passed",
			c->rule ? " of rule " : "", c->rule ? c->rule : "",
			(unsigned long long)c->budget);

	while (!stop_sig && !(c->count && c->written >= c->count)) {
		err = wr_capture_poll(&c->sess, 200);
		if (err)
			goto out;
		if (c->dumper ? wr_pcap_flush(c->dumper) != 0 : fflush(stdout) || ferror(stdout)) {
			/* A reader that went away (| head, | tcpdump -c) ends it quietly. */
			if (errno == EPIPE || stop_sig == SIGPIPE)
				break;
			pr_err("cannot write %s: %s", c->file ? c->file : "the output",
			       strerror(errno));
			err = -EIO;
			goto out;
		}
	}
out:
	if (started) {
		/* Ends it, and reads what was copied before, up to the count. */
		if (wr_capture_stop(&c->sess) && !err)
			err = -EIO;
		if (!wr_capture_stats_read(&c->m, &st))
			summary(c, &st);
		else
			pr_warn("cannot read the capture's counters");
	}
	wr_capture_close(&c->sess);
	return err;
}

/*
 * For `weir status`: whether a capture runs. The switch may outlive a
 * capture killed by SIGKILL until its lease runs out and a packet clears it.
 */
void wr_capture_status(const struct wr_maps *m, const struct weir_config *cfg)
{
	struct weir_capture ctl = {};
	__u32 zero = 0;
	bool live;

	bpf_map_lookup_elem(m->capture, &zero, &ctl);
	live = cfg->capture && ctl.lease_ns > wr_mono_ns() && pid_alive(ctl.pid);
	open_object("capture");
	print_bool("switch", NULL, cfg->capture);
	print_bool("running", NULL, live);
	if (live) {
		print_u64("pid", "capture: running (pid %llu", ctl.pid);
		print_u64("rate", ", at most %llu a second)\n", ctl.budget);
	} else if (cfg->capture) {
		print_text("capture: not running (its switch is still on until the lease of "
			   "pid %u runs out and a packet clears it)\n", ctl.pid);
	} else {
		print_text("capture: not running\n");
	}
	close_object();
}

int do_capture(int argc, char **argv)
{
	struct cap c = {
		.verdicts = 1U << WEIR_CV_DROPPED,
		.budget = WEIR_CAPTURE_BUDGET_DEF,
		.snaplen = WEIR_CAPTURE_SNAPLEN_MAX,
		.rule_slot = WEIR_CAPTURE_ANY_RULE,
	};
	int err;

	if (opts.help) {
		usage(stdout);
		return 0;
	}
	err = parse_args(argc, argv, &c);
	if (err)
		return err;
	if (c.file && !strcmp(c.file, "-") && isatty(STDOUT_FILENO)) {
		pr_err("not writing pcap to a terminal (-w - wants a pipe or a file)");
		return -EINVAL;
	}
	wr_maps_reset(&c.m);
	if (!wr_is_loaded())
		return wr_not_loaded();
	err = wr_maps_open(&c.m);
	if (err)
		return err;
	c.rs = wr_live_get(&c.m);
	if (!c.rs) {
		err = -EIO;
		goto out;
	}
	c.rs_read_ns = wr_mono_ns();
	err = wr_capture_kernel_ok();
	if (err)
		goto out;
	if (c.rule) {
		__u32 i;

		for (i = 0; i < c.rs->nr_rules && i < WEIR_MAX_RULES; i++)
			if (!strcmp(c.rs->names[i], c.rule))
				break;
		if (i >= c.rs->nr_rules || i >= WEIR_MAX_RULES) {
			pr_err("no rule named \"%s\"", c.rule);
			err = -ENOENT;
			goto out;
		}
		/* The slot follows the name across reloads that change its limits. */
		c.rule_slot = c.rs->rules[i].slot;
	}
	err = run(&c);
out:
	wr_pcap_close(c.dumper);
	free(c.rs);
	wr_maps_close(&c.m);
	return err;
}
