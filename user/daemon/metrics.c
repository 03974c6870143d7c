// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The Prometheus metrics endpoint.
 *
 * Rendering reads everything first (config, live rule set, per-CPU
 * counters summed, table occupancy, attachments) and only then writes the
 * text, so a scrape either shows one consistent snapshot or fails whole.
 * Counting the buckets in wr_state means reading the whole table (64 MiB
 * at the default size), so that count is cached for KEYS_CACHE_NS.
 *
 * The server is libmicrohttpd with one internal thread: scrapes run one at
 * a time in that thread, never in the caller's. It reads the maps through
 * duplicates of the caller's fds that it owns and closes only after the
 * thread has stopped, so the caller may close or reopen its own at any time.
 * It exposes no control: GET and HEAD of /metrics, nothing else.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <microhttpd.h>
#include "daemon/metrics.h"
#include "lib/snapshot.h"

/* Attachments reported at most (as many as `status` lists). */
#define WR_MAX_LINKS 256
/* Concurrent HTTP connections, and seconds an idle one is kept. */
#define HTTP_MAX_CONNS 16U
#define HTTP_TIMEOUT_S 10U
/* Pending connections the listening socket queues. */
#define LISTEN_BACKLOG 16

/* weir_shed.threshold of probability 1: a packet is shed if prandom_u32 < threshold. */
#define SHED_TH_ONE 4294967296.0

/* The text exposition format, version 0.0.4. */
#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/*
 * Every global counter of the data path (enum weir_global) and the family
 * it is exported in: one family of its own, or, with a result label named
 * by wr_global_names, one shared with others. The enum drives the
 * exposition: write_globals() walks it, and tests/metrics.sh checks that
 * each counter is in the scrape and each family in the docs
 * (metrics_serve --counters prints this table).
 */
const struct wr_global_metric wr_global_metrics[WEIR_G_MAX] = {
	[WEIR_G_PACKETS] = { "weir_frames_total", false },
	[WEIR_G_PARSED] = { "weir_packets_total", true },
	[WEIR_G_NON_IP] = { "weir_packets_total", true },
	[WEIR_G_MALFORMED] = { "weir_packets_total", true },
	[WEIR_G_ND] = { "weir_packets_total", true },
	[WEIR_G_DENIED] = { "weir_packets_total", true },
	[WEIR_G_ALLOWED] = { "weir_packets_total", true },
	[WEIR_G_NO_RULE] = { "weir_packets_total", true },
	[WEIR_G_PASSED] = { "weir_packets_total", true },
	[WEIR_G_DROPPED] = { "weir_packets_total", true },
	[WEIR_G_WOULD_DROP] = { "weir_packets_total", true },
	[WEIR_G_FAULT] = { "weir_faults_total", false },
	[WEIR_G_FAIL_OPEN] = { "weir_fail_open_total", false },
	[WEIR_G_EVENTS] = { "weir_events_total", false },
	[WEIR_G_EVENTS_LOST] = { "weir_events_lost_total", false },
	[WEIR_G_SHED] = { "weir_packets_total", true },
	[WEIR_G_CAPACITY] = { "weir_packets_total", true },
	[WEIR_G_COOKIE_SENT] = { "weir_cookies_total", true },
	[WEIR_G_COOKIE_BUDGET] = { "weir_cookies_total", true },
	[WEIR_G_COOKIE_BAD] = { "weir_cookies_total", true },
	[WEIR_G_COOKIE_VALID] = { "weir_cookies_total", true },
	[WEIR_G_COOKIE_INVALID] = { "weir_cookies_total", true },
	[WEIR_G_VERIFIED] = { "weir_verified_spared_total", false },
	[WEIR_G_COOKIE_PRIMED] = { "weir_cookies_total", true },
	[WEIR_G_CONTENDED] = { "weir_contended_total", false },
	[WEIR_G_OUT_OF_STATE] = { "weir_packets_total", true },
	[WEIR_G_TCP_LOOKUPS] = { "weir_tcp_state_lookups_total", false },
	[WEIR_G_FEED_DENIED] = { "weir_packets_total", true },
	[WEIR_G_FEED_ALLOWED] = { "weir_packets_total", true },
	[WEIR_G_CACHED] = { "weir_packets_total", true },
	[WEIR_G_FEED_CLASSED] = { "weir_packets_total", true },
	[WEIR_G_VERIFIED_UNMATCHED] = { "weir_verified_unmatched_total", false },
};

/* The families of the global counters, in the order they are written, with their help. */
static const struct {
	const char *name;
	const char *help;
} global_families[] = {
	{ "weir_frames_total", "Frames the data path saw, IP or not." },
	{ "weir_packets_total",
	  "Packets by what the data path found and did. Results overlap (parsed covers "
	  "denied, allowed, no_rule; passed includes would_drop): do not sum them." },
	{ "weir_faults_total",
	  "Internal faults of the data path (a bucket's map or set that is not there)." },
	{ "weir_fail_open_total", "Internal faults that passed the packet (fail open)." },
	{ "weir_contended_total",
	  "Packets refused because another CPU was changing their bucket beyond the "
	  "bounded retry (a new source's claim in progress): never admitted uncharged." },
	{ "weir_events_total",
	  "Events the data path sent when a bucket started limiting after a quiet spell." },
	{ "weir_events_lost_total", "Such events the ring buffer had no room for." },
	{ "weir_cookies_total",
	  "SYN cookies: SYN-ACKs sent, SYNs not answered (over a budget, bad), ACKs "
	  "checked (validated, invalid), SYNs passed to keep the kernel accepting cookies." },
	{ "weir_verified_spared_total",
	  "Packets of verified sources shed as their rule's verified-class." },
	{ "weir_verified_unmatched_total",
	  "Packets of verified sources a `spare verified` rule (every auto rule) let "
	  "by unmatched, once per such rule." },
	{ "weir_tcp_state_lookups_total",
	  "Socket lookups tcp-state made: segments its cache of verified flows did not "
	  "hold (an out-of-state flood's every segment is one)." },
};

/* One pinned link: where it is attached and how. */
struct link_row {
	int ifindex;			/* from the pin's name */
	char name[IF_NAMESIZE + 16];	/* interface name, as attached when gone */
	const char *mode;		/* native, generic, offload, tc; xdp if unknown */
	bool attached;			/* the link still holds an existing interface */
};

/* Everything one scrape shows, read before anything is written. */
struct snapshot {
	struct wr_snapshot s;	/* the counters (user/snapshot.c) */
	int nr_links;
	struct link_row links[WR_MAX_LINKS];
};

/* ---- attachments ---- */

static int cmp_links(const void *a, const void *b)
{
	const struct link_row *x = a, *y = b;

	return (x->ifindex > y->ifindex) - (x->ifindex < y->ifindex);
}

/*
 * Every link pin of this namespace, in ifindex order. A link whose
 * interface is gone shows under the name and mode it was attached with
 * (a link pinned by an older version: "ifindexN" and mode "unknown").
 */
static void read_links(struct snapshot *snap)
{
	int idx[WR_MAX_LINKS], n, i, mode, err;

	n = wr_list_links(idx, WR_MAX_LINKS);
	snap->nr_links = 0;
	for (i = 0; i < n; i++) {
		struct link_row *row = &snap->links[snap->nr_links];

		err = wr_link_describe(idx[i], row->name, sizeof(row->name), &mode);
		if (err == -ENOENT)
			continue;	/* detached since the directory was read */
		row->ifindex = idx[i];
		row->mode = mode >= 0 && mode < (int)ARRAY_SIZE(wr_mode_names) ? wr_mode_names[mode]
									     : "unknown";
		row->attached = err == 0;
		snap->nr_links++;
	}
	if (snap->nr_links)
		qsort(snap->links, snap->nr_links, sizeof(snap->links[0]), cmp_links);
}

/* ---- reading ---- */

static int read_snapshot(const struct wr_maps *m, struct snapshot *snap)
{
	int err = wr_snapshot_read(m, &snap->s, WR_SNAP_KEYS | WR_SNAP_CONNS | WR_SNAP_LISTS);

	if (!err)
		read_links(snap);
	return err;
}

/* ---- writing ---- */

/* Length of the valid UTF-8 sequence at s, or 0 if there is none. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)	/* the NUL terminator fails this too */
			return 0;
	/* Overlong forms, UTF-16 surrogates, beyond U+10FFFF. */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	return n;
}

/*
 * A label value, quoted: backslash, double quote and newline escaped as the
 * format requires; bytes that are not UTF-8 (interface names may hold any)
 * become U+FFFD so the exposition stays valid.
 */
static void put_label(FILE *out, const char *v, size_t max)
{
	char buf[WEIR_NAME_LEN + IF_NAMESIZE + 16];
	const unsigned char *s;
	size_t n = strnlen(v, max);

	/* Bounded copy: names read from a map need not be NUL-terminated. */
	if (n > sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	memcpy(buf, v, n);
	buf[n] = '\0';
	fputc('"', out);
	for (s = (const unsigned char *)buf; *s; s += n) {
		n = utf8_len(s);
		if (!n) {
			fputs("\xef\xbf\xbd", out);
			n = 1;
		} else if (*s == '\\') {
			fputs("\\\\", out);
		} else if (*s == '"') {
			fputs("\\\"", out);
		} else if (*s == '\n') {
			fputs("\\n", out);
		} else {
			fwrite(s, 1, n, out);
		}
	}
	fputc('"', out);
}

void wr_metric_family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void wr_metric_value(FILE *out, const char *name, __u64 v)
{
	fprintf(out, "%s %llu\n", name, (unsigned long long)v);
}

void wr_metric_labeled(FILE *out, const char *name, const char *label, const char *lv, __u64 v)
{
	fprintf(out, "%s{%s=", name, label);
	put_label(out, lv, strlen(lv));
	fprintf(out, "} %llu\n", (unsigned long long)v);
}

static void rule_verdicts(FILE *out, const struct snapshot *snap, const char *name, bool bytes)
{
	static const char *const verdicts[] = { "passed", "dropped", "would_drop" };
	__u32 i, v;

	for (i = 0; i < snap->s.rs.nr_rules; i++) {
		const struct weir_rule_stats *s = &snap->s.rule[i];
		__u64 vals[] = {
			bytes ? s->passed_bytes : s->passed_pkts,
			bytes ? s->dropped_bytes : s->dropped_pkts,
			bytes ? s->wdrop_bytes : s->wdrop_pkts,
		};

		for (v = 0; v < ARRAY_SIZE(verdicts); v++) {
			fprintf(out, "%s{rule=", name);
			put_label(out, snap->s.rs.names[i], WEIR_NAME_LEN);
			fprintf(out, ",verdict=\"%s\"} %llu\n", verdicts[v],
				(unsigned long long)vals[v]);
		}
	}
}

/* One per-class counter for every class: the field at offset off of weir_class_stats. */
/* One attachment's passed and dropped frames (or their bytes), labelled by its interface. */
static void put_if(FILE *out, const char *name, const struct wr_snap_if *f, bool bytes)
{
	static const char *const verdict[2] = { "passed", "dropped" };
	__u64 v[2] = { bytes ? f->st.passed_bytes : f->st.passed_pkts,
		       bytes ? f->st.dropped_bytes : f->st.dropped_pkts };
	int i;

	for (i = 0; i < 2; i++) {
		fprintf(out, "%s{interface=", name);
		put_label(out, f->name, sizeof(f->name));
		fprintf(out, ",verdict=\"%s\"} %llu\n", verdict[i], (unsigned long long)v[i]);
	}
}

static void class_counter(FILE *out, const struct snapshot *snap, const char *name,
			  const char *help, size_t off)
{
	__u32 c;

	wr_metric_family(out, name, "counter", help);
	for (c = 0; c <= WEIR_MAX_CLASS; c++)
		fprintf(out, "%s{class=\"%u\"} %llu\n", name, c,
			(unsigned long long)*(const __u64 *)((const char *)&snap->s.cls[c] + off));
}

/* Is signal i's name also an earlier signal's? (One series per label set.) */
static bool signal_dup(const struct weir_shed *sh, __u32 i)
{
	__u32 j;

	for (j = 0; j < i; j++)
		if (!strncmp(sh->signal_name[i], sh->signal_name[j], WEIR_SIGNAL_NAME_LEN))
			return true;
	return false;
}

static void write_shed(FILE *out, const struct snapshot *snap)
{
	static const char *const units[] = { [WEIR_COST_PKT] = "packets",
					     [WEIR_COST_BYTE] = "bytes" };
	const struct weir_shed *sh = &snap->s.shed;
	__u32 c, i, n = sh->nr_signals < WEIR_MAX_SIGNALS ? sh->nr_signals : WEIR_MAX_SIGNALS;
	bool live = (sh->flags & WEIR_SHED_ACTIVE) &&
		    (!sh->expires_ns || snap->s.at <= sh->expires_ns);

	wr_metric_family(out, "weir_shed_utilization", "gauge",
	       "Utilization u in [0, 1] at the shedding controller's last step: the highest of "
	       "its readable signals. Absent while none is readable.");
	if (sh->u_micro >= 0)
		fprintf(out, "weir_shed_utilization %.6f\n", sh->u_micro / 1e6);
	wr_metric_family(out, "weir_shed_amount", "gauge",
	       "Shedding amount S in [-delay/ramp, 1]: below 0 nothing is shed; class 3 sheds "
	       "from 0, class 2 from 1/3, class 1 from 2/3.");
	fprintf(out, "weir_shed_amount %.6f\n", sh->s_micro / 1e6);
	wr_metric_family(out, "weir_shed_probability", "gauge",
	       "Probability that the data path sheds a packet of each priority class (0 "
	       "critical, never shed .. 3).");
	for (c = 0; c <= WEIR_MAX_CLASS; c++) {
		double p = c ? sh->threshold[c] / SHED_TH_ONE : 0;

		fprintf(out, "weir_shed_probability{class=\"%u\"} %.9g\n", c, p < 1 ? p : 1);
	}
	wr_metric_family(out, "weir_shed_enabled", "gauge",
	       "1 unless the operator switched shedding off (weir shed off).");
	wr_metric_value(out, "weir_shed_enabled", !(sh->flags & WEIR_SHED_OFF));
	wr_metric_family(out, "weir_shed_active", "gauge",
	       "1 while a shedding controller is running and its thresholds have not expired.");
	wr_metric_value(out, "weir_shed_active", live);
	wr_metric_family(out, "weir_shed_signal", "gauge",
	       "Each utilization signal's value at the controller's last step; absent while "
	       "unreadable.");
	for (i = 0; i < n; i++) {
		if (sh->signal_micro[i] < 0 || signal_dup(sh, i))
			continue;
		fputs("weir_shed_signal{signal=", out);
		put_label(out, sh->signal_name[i], WEIR_SIGNAL_NAME_LEN);
		fprintf(out, "} %.6f\n", sh->signal_micro[i] / 1e6);
	}
	wr_metric_family(out, "weir_shed_signal_readable", "gauge",
	       "1 if the signal could be read at the controller's last step, else 0.");
	for (i = 0; i < n; i++) {
		if (signal_dup(sh, i))
			continue;
		fputs("weir_shed_signal_readable{signal=", out);
		put_label(out, sh->signal_name[i], WEIR_SIGNAL_NAME_LEN);
		fprintf(out, "} %d\n", sh->signal_micro[i] >= 0);
	}
	wr_metric_family(out, "weir_capacity_rate", "gauge",
	       "Reserved capacity per second: the host's (scope total) and what classes 1..3 "
	       "together may use (scope noncritical). Absent when not configured.");
	for (c = 0; c < ARRAY_SIZE(units); c++) {
		if (!sh->cap[c].total.interval_fp)
			continue;
		fprintf(out, "weir_capacity_rate{unit=\"%s\",scope=\"total\"} %llu\n", units[c],
			(unsigned long long)sh->cap[c].total.rate);
		if (!sh->cap[c].noncrit.interval_fp)
			continue;
		fprintf(out, "weir_capacity_rate{unit=\"%s\",scope=\"noncritical\"} %llu\n",
			units[c], (unsigned long long)sh->cap[c].noncrit.rate);
	}

	class_counter(out, snap, "weir_class_packets_total",
		      "IP packets of each priority class that reached shedding (neighbour "
		      "discovery no rule names never does).",
		      offsetof(struct weir_class_stats, pkts));
	class_counter(out, snap, "weir_class_bytes_total",
		      "IP bytes of those packets.", offsetof(struct weir_class_stats, bytes));
	class_counter(out, snap, "weir_class_shed_packets_total",
		      "Packets shed, by class (passed as would-drops under the kill switch).",
		      offsetof(struct weir_class_stats, shed_pkts));
	class_counter(out, snap, "weir_class_shed_bytes_total",
		      "IP bytes shed, by class.", offsetof(struct weir_class_stats, shed_bytes));
	class_counter(out, snap, "weir_class_over_capacity_packets_total",
		      "Packets refused by reserved capacity, by class.",
		      offsetof(struct weir_class_stats, cap_pkts));
	class_counter(out, snap, "weir_class_over_capacity_bytes_total",
		      "IP bytes refused by reserved capacity, by class.",
		      offsetof(struct weir_class_stats, cap_bytes));
}

/* The daemon's fleet sync (wr_fleet_status); up 0 and no samples when none runs. */
static void write_fleet(FILE *out, const struct snapshot *snap)
{
	static const char *const errs[] = { [WEIR_FE_CONNECT] = "connect",
					    [WEIR_FE_TIMEOUT] = "timeout",
					    [WEIR_FE_REPLY] = "reply" };
	static const char *const le[] = { "0.001", "0.002", "0.005", "0.01", "0.025", "0.05",
					  "0.1", "+Inf" };
	const struct weir_fleet_status *f = &snap->s.fleet;
	bool on = f->pid && !kill(f->pid, 0);
	__u32 i, j, n = on ? (f->nr_nodes < WEIR_FLEET_NODES ? f->nr_nodes : WEIR_FLEET_NODES)
			   : 0;
	__u64 cum = 0, total = 0;
	int e;

	wr_metric_family(out, "weir_fleet_up", "gauge",
	       "Per Redis server of the fleet: 1 if the last exchange worked.");
	for (i = 0; i < n; i++)
		wr_metric_labeled(out, "weir_fleet_up", "node", f->node[i].addr, f->node[i].up);
	wr_metric_family(out, "weir_fleet_sync_duration_seconds", "histogram",
	       "Syncs with every Redis server of the fleet that completed, by duration.");
	if (on) {
		for (i = 0; i < ARRAY_SIZE(le); i++) {
			cum += f->sync_hist[i];
			fprintf(out, "weir_fleet_sync_duration_seconds_bucket{le=\"%s\"} %llu\n",
				le[i], (unsigned long long)cum);
		}
		/* The sum is not kept: the last sync's duration times the count is not it. */
		for (i = 0; i < ARRAY_SIZE(le); i++)
			total += f->sync_hist[i];
		fprintf(out, "weir_fleet_sync_duration_seconds_count %llu\n",
			(unsigned long long)total);
	}
	wr_metric_family(out, "weir_fleet_keys_synced_total", "counter",
	       "Hot keys' charges sent to the fleet.");
	if (on)
		wr_metric_value(out, "weir_fleet_keys_synced_total", f->keys_synced);
	wr_metric_family(out, "weir_fleet_hot_keys", "gauge",
	       "Hot keys of fleet limits at the last sync.");
	if (on)
		wr_metric_value(out, "weir_fleet_hot_keys", f->hot_keys);
	wr_metric_family(out, "weir_fleet_errors_total", "counter",
	       "Failed exchanges with a Redis server of the fleet, by kind.");
	for (i = 0; i < n; i++)
		for (e = 0; e < WEIR_FE_MAX; e++)
			fprintf(out, "weir_fleet_errors_total{node=\"%s\",kind=\"%s\"} %llu\n",
				f->node[i].addr, errs[e], (unsigned long long)f->node[i].errors[e]);
	wr_metric_family(out, "weir_fleet_fallback_active", "gauge",
	       "1 while Redis is stale and the fleet's fallback is in force.");
	if (on)
		wr_metric_value(out, "weir_fleet_fallback_active", f->fallback_active);
	wr_metric_family(out, "weir_fleet_hosts", "gauge",
	       "Live hosts in the fleet's heartbeat set.");
	if (on)
		wr_metric_value(out, "weir_fleet_hosts", f->hosts);
	wr_metric_family(out, "weir_fleet_share", "gauge",
	       "This host's share of each fleet-wide limit's rate: 1, or 1/hosts under the safe "
	       "fallback.");
	for (i = 0; i < snap->s.rs.nr_rules && i < WEIR_MAX_RULES; i++)
		for (j = 0; j < snap->s.rs.rules[i].nr_limits && j < WEIR_MAX_LIMITS; j++) {
			const struct weir_limit *l = &snap->s.rs.rules[i].limits[j];

			if (!l->fleet)
				continue;
			fputs("weir_fleet_share{rule=", out);
			put_label(out, snap->s.rs.names[i], WEIR_NAME_LEN);
			fprintf(out, ",limit=\"%u\"} %.6f\n", j, 1.0 / l->fleet);
		}
}

/* Every global counter, family by family, as wr_global_metrics says. */
static void write_globals(FILE *out, const struct snapshot *snap)
{
	size_t f;
	int i;

	for (f = 0; f < ARRAY_SIZE(global_families); f++) {
		const char *name = global_families[f].name;

		wr_metric_family(out, name, "counter", global_families[f].help);
		for (i = 0; i < WEIR_G_MAX; i++) {
			const struct wr_global_metric *g = &wr_global_metrics[i];

			if (!g->family || strcmp(g->family, name))
				continue;
			if (g->result)
				fprintf(out, "%s{result=\"%s\"} %llu\n", name, wr_global_names[i],
					(unsigned long long)snap->s.global[i]);
			else
				wr_metric_value(out, name, snap->s.global[i]);
		}
	}
}

/* Verified sources (their counter is a global one). */
static void write_verified(FILE *out, const struct snapshot *snap)
{
	wr_metric_family(out, "weir_verified_sources", "gauge",
	       "Sources that completed a TCP handshake within the verified TTL.");
	wr_metric_value(out, "weir_verified_sources", snap->s.verified);
}

static void write_snapshot(FILE *out, const struct snapshot *snap)
{
	__u32 i;
	int l;

	wr_metric_family(out, "weir_rule_packets_total", "counter",
	       "Packets matched by each live rule, by verdict. passed includes would_drop: "
	       "dry-run rules and the kill switch pass what they would have dropped.");
	rule_verdicts(out, snap, "weir_rule_packets_total", false);
	wr_metric_family(out, "weir_rule_bytes_total", "counter",
	       "IP bytes (IPv4 total length, IPv6 40 + payload length) matched by each live "
	       "rule, by verdict, as weir_rule_packets_total.");
	rule_verdicts(out, snap, "weir_rule_bytes_total", true);

	write_globals(out, snap);
	write_shed(out, snap);
	write_fleet(out, snap);
	write_verified(out, snap);

	wr_metric_family(out, "weir_keys", "gauge",
	       "Per-source buckets in the table, counted at most every 5 seconds.");
	wr_metric_value(out, "weir_keys", snap->s.keys);
	wr_metric_family(out, "weir_keys_capacity", "gauge",
	       "Per-source buckets the table holds (sets x ways); a full set evicts.");
	wr_metric_value(out, "weir_keys_capacity", snap->s.capacity);
	wr_metric_family(out, "weir_rules", "gauge", "Rules in the live rule set.");
	wr_metric_value(out, "weir_rules", snap->s.rs.nr_rules);
	wr_metric_family(out, "weir_rule_limits", "gauge", "Limits each live rule carries.");
	for (i = 0; i < snap->s.rs.nr_rules; i++) {
		fputs("weir_rule_limits{rule=", out);
		put_label(out, snap->s.rs.names[i], WEIR_NAME_LEN);
		fprintf(out, "} %u\n", snap->s.rs.rules[i].nr_limits);
	}
	wr_metric_family(out, "weir_rule_connections", "gauge",
	       "Established TCP connections counted for each rule's connection limits.");
	for (i = 0; i < snap->s.rs.nr_rules; i++) {
		bool has = false;

		for (__u32 li = 0; li < snap->s.rs.rules[i].nr_limits && li < WEIR_MAX_LIMITS; li++)
			has |= snap->s.rs.rules[i].limits[li].algo == WEIR_ALGO_CONNS;
		if (!has)
			continue;
		fputs("weir_rule_connections{rule=", out);
		put_label(out, snap->s.rs.names[i], WEIR_NAME_LEN);
		fprintf(out, "} %llu\n", (unsigned long long)snap->s.conns[i]);
	}
	wr_metric_family(out, "weir_enabled", "gauge",
	       "1 unless the kill switch is on (then everything passes and would-drops are "
	       "counted).");
	wr_metric_value(out, "weir_enabled", !snap->s.cfg.disabled);
	wr_metric_family(out, "weir_tcp_state_on", "gauge",
	       "1 while tcp-state auto rules check segments (switched by weir run's "
	       "out-of-state watch).");
	wr_metric_value(out, "weir_tcp_state_on", !!snap->s.cfg.tcp_state_on);
	wr_metric_family(out, "weir_fail_closed", "gauge",
	       "1 if internal faults drop the packet, 0 if they pass it.");
	wr_metric_value(out, "weir_fail_closed", !!snap->s.cfg.fail_closed);
	wr_metric_family(out, "weir_ruleset_generation", "gauge",
	       "Generation of the live rule set, bumped by every commit.");
	wr_metric_value(out, "weir_ruleset_generation", snap->s.rs.gen);

	wr_metric_family(out, "weir_interface_attached", "gauge",
	       "1 for each attachment, 0 if its interface is gone (named as it was "
	       "attached). mode is native, generic or tc (unknown when it cannot be told).");
	for (l = 0; l < snap->nr_links; l++) {
		fputs("weir_interface_attached{interface=", out);
		put_label(out, snap->links[l].name, sizeof(snap->links[l].name));
		fprintf(out, ",mode=\"%s\"} %d\n", snap->links[l].mode, snap->links[l].attached);
	}
	wr_metric_family(out, "weir_interface_packets_total", "counter",
	       "Frames each attachment's hook judged, by verdict (passed, dropped); "
	       "named as the interface was attached if it is gone.");
	for (l = 0; l < snap->s.nr_ifs; l++)
		put_if(out, "weir_interface_packets_total", &snap->s.ifs[l], 0);
	wr_metric_family(out, "weir_interface_bytes_total", "counter",
	       "Their bytes, the frame as the hook sees it (Ethernet header included).");
	for (l = 0; l < snap->s.nr_ifs; l++)
		put_if(out, "weir_interface_bytes_total", &snap->s.ifs[l], 1);
	wr_metric_family(out, "weir_up", "gauge", "1: weir is loaded and its maps were read.");
	wr_metric_value(out, "weir_up", 1);

	wr_metric_family(out, "weir_deny_entries", "gauge", "Prefixes on the deny list.");
	fprintf(out, "weir_deny_entries{family=\"ipv4\"} %llu\n",
		(unsigned long long)snap->s.deny[0]);
	fprintf(out, "weir_deny_entries{family=\"ipv6\"} %llu\n",
		(unsigned long long)snap->s.deny[1]);
	wr_metric_family(out, "weir_allow_entries", "gauge", "Prefixes on the allow list.");
	fprintf(out, "weir_allow_entries{family=\"ipv4\"} %llu\n",
		(unsigned long long)snap->s.allow[0]);
	fprintf(out, "weir_allow_entries{family=\"ipv6\"} %llu\n",
		(unsigned long long)snap->s.allow[1]);
}

/* weir's metrics, then the extra ones, into a new buffer. */
static int render(const struct wr_maps *m, wr_metrics_extra_fn extra, void *arg, char **buf,
		  size_t *len)
{
	struct snapshot *snap = calloc(1, sizeof(*snap));
	FILE *out = NULL;
	int err;

	*buf = NULL;
	*len = 0;
	if (!snap)
		return -ENOMEM;
	err = read_snapshot(m, snap);
	if (err)
		goto out;
	out = open_memstream(buf, len);
	if (!out) {
		err = -errno;
		goto out;
	}
	write_snapshot(out, snap);
	if (extra)
		extra(out, arg);
	if (ferror(out))
		err = -ENOMEM;
	if (fclose(out) && !err)
		err = -errno;
out:
	free(snap);
	if (err) {
		free(*buf);
		*buf = NULL;
		*len = 0;
	}
	return err;
}

int wr_metrics_render(const struct wr_maps *m, char **buf, size_t *len)
{
	return render(m, NULL, NULL, buf, len);
}

/* ---- the server ---- */

struct wr_metrics {
	struct MHD_Daemon *mhd;
	struct wr_maps maps;	/* duplicates of the caller's fds, ours to close */
	wr_metrics_extra_fn extra;
	void *arg;
	bool failing;		/* the last scrape failed: warn once per outage */
};

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, void *body,
			     size_t len, enum MHD_ResponseMemoryMode mem, bool allow)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, mem);
	const char *type = status == MHD_HTTP_OK ? CONTENT_TYPE : "text/plain; charset=utf-8";
	enum MHD_Result ret;

	if (!resp) {
		if (mem == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;	/* closes the connection */
	}
	if (MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type) != MHD_YES ||
	    (allow && MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD") != MHD_YES))
		ret = MHD_NO;
	else
		ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned int status,
				  const char *text, bool allow)
{
	return reply(conn, status, (void *)text, strlen(text), MHD_RESPMEM_PERSISTENT, allow);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **req_cls)
{
	struct wr_metrics *s = cls;
	char *body, msg[128];
	size_t len;
	int err;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)req_cls;
	/* Answered on the first call: any request body is never read. */
	if (strcmp(url, "/metrics"))
		return reply_text(conn, MHD_HTTP_NOT_FOUND, "not found: metrics are at /metrics\n",
				  false);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "method not allowed: /metrics is read-only (GET, HEAD)\n", true);
	err = render(&s->maps, s->extra, s->arg, &body, &len);
	if (err) {
		if (!s->failing)
			pr_warn("metrics: cannot read weir's maps: %s", strerror(-err));
		s->failing = true;
		snprintf(msg, sizeof(msg), "cannot read weir's maps: %s\n", strerror(-err));
		body = strdup(msg);
		if (!body)
			return MHD_NO;
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, body, strlen(body),
			     MHD_RESPMEM_MUST_FREE, false);
	}
	if (s->failing)
		pr_info("metrics: reading weir's maps again");
	s->failing = false;
	return reply(conn, MHD_HTTP_OK, body, len, MHD_RESPMEM_MUST_FREE, false);
}

/* libmicrohttpd's own complaints (a failed accept, a broken client) as warnings. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[256];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	pr_warn("metrics: %s", msg);
}

/* "A.B.C.D:PORT" or "[IPV6]:PORT", numeric only: no name is ever resolved. */
static int parse_listen(const char *addr, struct sockaddr_storage *ss, socklen_t *slen)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	char host[INET6_ADDRSTRLEN];
	const char *port, *end;
	size_t hlen;
	uint64_t p;
	bool v6 = addr[0] == '[';

	if (v6) {
		end = strchr(addr, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		hlen = end - addr - 1;
		port = end + 2;
	} else {
		end = strrchr(addr, ':');
		if (!end)
			return -EINVAL;
		hlen = end - addr;
		port = end + 1;
	}
	if (!hlen || hlen >= sizeof(host) || parse_u64(port, 1, 65535, &p))
		return -EINVAL;
	memcpy(host, addr + v6, hlen);
	host[hlen] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (v6) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(p);
		*slen = sizeof(*sin6);
		return inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1 ? 0 : -EINVAL;
	}
	sin->sin_family = AF_INET;
	sin->sin_port = htons(p);
	*slen = sizeof(*sin);
	return inet_pton(AF_INET, host, &sin->sin_addr) == 1 ? 0 : -EINVAL;
}

/* A listening socket bound to exactly that address; -errno after saying why. */
static int listen_on(const char *addr)
{
	struct sockaddr_storage ss;
	socklen_t slen;
	int fd, one = 1, err;

	if (parse_listen(addr, &ss, &slen)) {
		pr_err("invalid metrics address \"%s\" (ADDR:PORT or [ADDR6]:PORT, numeric, "
		       "port 1-65535)", addr);
		return -EINVAL;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		err = -errno;
		pr_err("cannot create the metrics socket: %s", strerror(-err));
		return err;
	}
	/* Rebind at once after a restart (TIME_WAIT); never shares a live port on Linux. */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    (ss.ss_family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))) ||
	    bind(fd, (struct sockaddr *)&ss, slen) || listen(fd, LISTEN_BACKLOG)) {
		err = -errno;
		pr_err("cannot listen on %s for metrics: %s", addr, strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

#define MAP_FDS WR_MAP_FDS

static int dup_maps(struct wr_maps *dst, const struct wr_maps *src)
{
	int *to[] = MAP_FDS(dst);
	const int *from[] = MAP_FDS(src);
	size_t i;

	wr_maps_reset(dst);
	for (i = 0; i < ARRAY_SIZE(to); i++) {
		*to[i] = *from[i] < 0 ? -1 : fcntl(*from[i], F_DUPFD_CLOEXEC, 0);
		if (*to[i] < 0) {
			int err = *from[i] < 0 ? -EBADF : -errno;

			wr_maps_close(dst);
			return err;
		}
	}
	return 0;
}

struct wr_metrics *wr_metrics_start(const char *addr, const struct wr_maps *m,
				    wr_metrics_extra_fn extra, void *arg)
{
	struct wr_metrics *s;
	int fd = -1, err;

	if (!addr)
		addr = WR_METRICS_DEFAULT_LISTEN;
	s = calloc(1, sizeof(*s));
	if (!s) {
		err = -ENOMEM;
		pr_err("cannot start the metrics server: %s", strerror(-err));
		goto fail;
	}
	s->extra = extra;
	s->arg = arg;
	err = dup_maps(&s->maps, m);
	if (err) {
		pr_err("cannot start the metrics server: weir's maps: %s", strerror(-err));
		goto fail;
	}
	fd = listen_on(addr);
	if (fd < 0) {
		err = fd;
		goto fail;
	}
	/* One internal thread (epoll): scrapes are served one at a time. */
	errno = 0;
	s->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO |
				  MHD_USE_ERROR_LOG | (addr[0] == '[' ? MHD_USE_IPv6 : 0),
				  0, NULL, NULL, handle, s,
				  MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
				  MHD_OPTION_LISTEN_SOCKET, fd,
				  MHD_OPTION_CONNECTION_LIMIT, HTTP_MAX_CONNS,
				  MHD_OPTION_CONNECTION_TIMEOUT, HTTP_TIMEOUT_S,
				  MHD_OPTION_END);
	if (!s->mhd) {
		err = errno ? -errno : -EIO;
		pr_err("cannot start the metrics server on %s: %s", addr, strerror(-err));
		/* libmicrohttpd may have closed the socket it was given already. */
		if (fcntl(fd, F_GETFD) >= 0)
			close(fd);
		goto fail;
	}
	return s;	/* the socket is libmicrohttpd's now */
fail:
	if (s) {
		wr_maps_close(&s->maps);
		free(s);
	}
	errno = -err;
	return NULL;
}

void wr_metrics_stop(struct wr_metrics *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->mhd);	/* joins the thread, closes the socket */
	wr_maps_close(&s->maps);
	free(s);
}
