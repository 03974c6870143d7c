// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir auto` in the daemon (docs/auto.md): the capture ring's samples and
 * the data path's totals into the sampler (auto/sampler.h), its classes'
 * counters into the detector (auto/baseline.h), the detector's onsets and
 * ends into the engine (auto/engine.h), and the engine's actions carried
 * out on the live rule set as `weir rule add|del` would, under the root
 * lock (auto_rules.c). Every AUTO_TICK_MS, on the daemon's loop (one
 * thread: nothing here is shared with the metrics or fleet threads; what
 * goes to and comes from the fleet's Redis, auto_fleet.c hands over
 * through fleet/fleet.h).
 *
 * The engine is the one record of which rules are installed: apply()
 * appends them to the config's rules (auto_append), so a reload keeps
 * them; stopping (mode off, a changed auto: section, the daemon's exit)
 * deletes them. The state `weir auto status` prints is a JSON file
 * (auto_state_path), replaced by rename, so a reader never sees half of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/libweir.h"
#include "auto/engine.h"
#include "daemon/daemon.h"
#include "daemon/daemon_int.h"
#include "daemon/metrics.h"

/* Bytes of each sampled frame: Ethernet, VLAN tags, IPv6, TCP and the first payload words. */
#define AUTO_SNAPLEN		128
/* How often the capture's 1-in-N is set again from the packet rate. */
#define AUTO_ONE_IN_NS		1000000000ULL
/* How often a capture held by another session is tried again. */
#define AUTO_RETRY_NS		1000000000ULL
/* The state file is written at least this often, and at every change. */
#define AUTO_STATE_NS		1000000000ULL
/* A class with no traffic for this long is forgotten. */
#define AUTO_IDLE_NS		(300 * 1000000000ULL)
/* Classes `weir auto status` shows: the busiest. */
#define AUTO_TOP		16
/* Detector events and engine actions taken per tick (the rest at the next). */
/* The shedding controller's u counts as the host's pressure this long after its step. */
#define AUTO_PRESSURE_STALE_NS	(5 * 1000000000ULL)
#define AUTO_EVENTS		64
#define AUTO_ACTIONS		16
/* Seconds of samples kept: the engine's before-sample (30 s) and a margin. */
#define AUTO_KEEP_S		40

/* The auto: mode's words, by enum wr_auto_mode. */
static const char *const mode_names[] = { "off", "advise", "on" };

struct wr_dauto {
	struct wr_cfg_auto cfg;		/* the auto: section it was started with */
	struct wr_sampler *smp;
	struct wr_detector *det;
	struct wr_auto *eng;
	struct wr_capture_sess cap;
	bool capturing;			/* cap is open and started */
	bool said_busy;			/* said that another capture holds the lease */
	__u64 retry_ns;			/* the capture is tried again at */
	__u64 one_in_ns, one_in_pkts;	/* the last 1-in-N setting: when, and the count then */
	__u64 state_ns;			/* the state file's last writing */
	bool changed;			/* something to write before AUTO_STATE_NS is up */
	__u64 samples_bad;		/* frames the fingerprint parser refused */
	struct wr_detect_class *classes;	/* the detector's listing, nr_classes of room */
	size_t nr_classes;			/* the detector's max_classes */
	struct wr_auto_mit mits[WR_AUTO_MAX];
	double pressure;	/* the last one fed to the detector; -1: no controller's */
	struct auto_fleet *fl;		/* auto_fleet.c: fingerprints shared with the fleet */
};

void wr_auto_path(char *buf, size_t len, const char *ext)
{
	size_t n;
	const char *p;

	if (!strcmp(opts.root, WEIR_DEFAULT_ROOT)) {
		snprintf(buf, len, "/run/weir/auto.%s", ext);
		return;
	}
	/* Another bpffs root, another daemon: named after the root, as its lock is. */
	n = snprintf(buf, len, "/run/weir/auto");
	for (p = opts.root; *p && n + strlen(ext) + 2 < len; p++)
		buf[n++] = *p == '/' ? '-' : *p;
	snprintf(buf + n, len - n, ".%s", ext);
}

/* ---- the rule set ---- */

/*
 * An installed rule is no longer live: one fewer in weir_auto_rules (the
 * engine sends REMOVE for installed rules only).
 */
static void rule_gone(struct daemon *d)
{
	__u64 n = __atomic_load_n(&d->au_rules, __ATOMIC_RELAXED);

	if (n)
		__atomic_store_n(&d->au_rules, n - 1, __ATOMIC_RELAXED);
}

void auto_append(struct daemon *d, struct weir_ruleset *rs)
{
	struct wr_dauto *a = d->au;
	char why[320];
	size_t n, i;

	if (!a)
		return;
	n = wr_auto_list(a->eng, a->mits, WR_AUTO_MAX);
	for (i = 0; i < n && i < WR_AUTO_MAX; i++) {
		const struct wr_auto_mit *m = &a->mits[i];

		if (!m->installed || (m->state != WR_AUTO_ACTIVE && m->state != WR_AUTO_LINGERING))
			continue;
		if (auto_put_rule(rs, m->rule, m->words, why, sizeof(why))) {
			dlog("auto: %s cannot stay in the new rule set: %s", m->rule, why);
			wr_auto_not_installed(a->eng, m->rule);
			rule_gone(d);
		}
	}
	auto_fleet_append(d, a->fl, rs);
}

/* ---- the samples and the totals ---- */

static int on_sample(void *ctx, const struct weir_capture_hdr *h, const __u8 *frame)
{
	struct wr_dauto *a = ctx;
	struct wr_fp_pkt p;

	if (wr_fp_from_snap(frame, h->caplen, h->len, &p)) {
		a->samples_bad++;
		return 0;
	}
	if (h->verdict == WEIR_CV_DROPPED)
		p.flags |= WR_FP_DROPPED;
	wr_sampler_add(a->smp, h->ts, h->len, &p);
	return 0;
}

/* Another session's lease holds (read without mapping, so no error is logged each second). */
static bool capture_held(const struct daemon *d)
{
	struct weir_capture c;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(d->maps.capture, &zero, &c))
		return false;
	return c.lease_ns > wr_mono_ns() && c.pid && c.pid != (__u32)getpid() &&
	       (kill((pid_t)c.pid, 0) == 0 || errno == EPERM);
}

/* The capture taken, or tried again each AUTO_RETRY_NS while another session holds it. */
static void capture_take(struct daemon *d, struct wr_dauto *a, __u64 now)
{
	struct wr_capture_opts o = {
		.budget = a->cfg.budget,
		.snaplen = AUTO_SNAPLEN,
		/* Dropped packets too: a live rule is re-checked against them. */
		.verdicts = 1u << WEIR_CV_PASSED | 1u << WEIR_CV_DROPPED,
		.rule_slot = WEIR_CAPTURE_ANY_RULE,
		.one_in = 0,	/* every packet, until set_one_in knows the rate */
	};

	if (a->capturing || now < a->retry_ns)
		return;
	a->retry_ns = now + AUTO_RETRY_NS;
	if (capture_held(d)) {
		if (!a->said_busy)
			dlog("auto: another capture holds the capture ring; retrying each second");
		a->said_busy = true;
		return;
	}
	if (wr_capture_open(&a->cap, &d->maps, on_sample, a))
		return;
	if (wr_capture_start(&a->cap, &o)) {
		wr_capture_close(&a->cap);
		return;
	}
	a->capturing = true;
	a->one_in_ns = 0;
	if (a->said_busy)
		dlog("auto: sampling again");
	a->said_busy = false;
}

/* The data path's totals: IP packets it judged, and bytes over its attachments. */
static int totals(const struct daemon *d, __u64 *pkts, __u64 *bytes)
{
	struct weir_globals g;
	struct weir_if_stats st;
	int links[256], n, i, err;

	err = wr_percpu_sum(d->maps.global, 0, g.count, WEIR_G_MAX);
	if (err)
		return err;
	*pkts = g.count[WEIR_G_PARSED] + g.count[WEIR_G_MALFORMED];
	*bytes = 0;
	n = wr_list_links(links, ARRAY_SIZE(links));
	for (i = 0; i < n; i++)
		if (!wr_if_read(&d->maps, links[i], &st))
			*bytes += st.passed_bytes + st.dropped_bytes;
	return 0;
}

/*
 * About once a second, the capture's 1-in-N from the packet rate: N is
 * the rate over half the budget, so a second's budget is seldom reached
 * and the samples are a fair draw over the whole second.
 */
static void set_one_in(struct wr_dauto *a, __u64 pkts, __u64 now)
{
	double rate;
	__u32 n;

	if (a->one_in_ns && now - a->one_in_ns < AUTO_ONE_IN_NS)
		return;
	if (a->one_in_ns && pkts >= a->one_in_pkts) {
		rate = (pkts - a->one_in_pkts) * 1e9 / (double)(now - a->one_in_ns);
		n = (__u32)fmin(rate / (a->cfg.budget / 2.0), UINT32_MAX);
		wr_capture_one_in(&a->cap, n < 1 ? 1 : n);
	}
	a->one_in_ns = now;
	a->one_in_pkts = pkts;
}

static void feed(void *ctx, uint64_t key, const char *name, uint64_t packets, uint64_t bytes,
		 uint64_t at_ns)
{
	struct wr_dauto *a = ctx;

	/* -ENOSPC (every class slot taken) is the detector's to count: the class waits. */
	wr_detect_feed(a->det, key, name, packets, bytes, at_ns);
}

/* ---- the engine's work ---- */

/* The histogram's upper bounds, seconds (the last is +Inf). */
static const double hist_le[AUTO_HIST_N - 1] = { 0.25, 0.5, 1, 2, 5, 10 };
static const char *const hist_le_text[AUTO_HIST_N] = { "0.25", "0.5", "1", "2", "5", "10",
							"+Inf" };

static void count_choice(struct daemon *d, double secs, int vector)
{
	int i;

	if (vector >= 0 && vector < WR_FP_NR_VECTORS)
		__atomic_add_fetch(&d->au_vec[vector], 1, __ATOMIC_RELAXED);
	for (i = 0; i < AUTO_HIST_N - 1 && secs > hist_le[i]; i++)
		;
	__atomic_add_fetch(&d->au_hist[i], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&d->au_sum_us, (__u64)(secs * 1e6), __ATOMIC_RELAXED);
}

void auto_metrics(struct daemon *d, FILE *out)
{
	__u64 cum = 0;
	int i;

	wr_metric_family(out, "weir_auto_rules", "gauge", "Rules weir auto has installed now.");
	wr_metric_value(out, "weir_auto_rules", __atomic_load_n(&d->au_rules, __ATOMIC_RELAXED));
	wr_metric_family(out, "weir_auto_onsets_total", "counter",
			 "Traffic classes weir auto saw depart from their baseline.");
	wr_metric_value(out, "weir_auto_onsets_total",
			__atomic_load_n(&d->au_onsets, __ATOMIC_RELAXED));
	wr_metric_family(out, "weir_auto_mitigations_total", "counter",
			 "Fingerprints weir auto chose, by what became of them.");
	wr_metric_labeled(out, "weir_auto_mitigations_total", "result", "installed",
			  __atomic_load_n(&d->au_installed, __ATOMIC_RELAXED));
	wr_metric_labeled(out, "weir_auto_mitigations_total", "result", "advised",
			  __atomic_load_n(&d->au_advised, __ATOMIC_RELAXED));
	wr_metric_labeled(out, "weir_auto_mitigations_total", "result", "failed",
			  __atomic_load_n(&d->au_failed, __ATOMIC_RELAXED));
	wr_metric_family(out, "weir_auto_attacks_total", "counter",
			 "Fingerprints weir auto chose (installed or advised), by the attack's vector.");
	for (i = 0; i < WR_FP_NR_VECTORS; i++)
		wr_metric_labeled(out, "weir_auto_attacks_total", "vector", wr_fp_vector_name(i),
				  __atomic_load_n(&d->au_vec[i], __ATOMIC_RELAXED));
	wr_metric_family(out, "weir_auto_onset_to_mitigation_seconds", "histogram",
			 "From an onset to its rule installed or advised.");
	for (i = 0; i < AUTO_HIST_N; i++) {
		cum += __atomic_load_n(&d->au_hist[i], __ATOMIC_RELAXED);
		fprintf(out, "weir_auto_onset_to_mitigation_seconds_bucket{le=\"%s\"} %llu\n",
			hist_le_text[i], (unsigned long long)cum);
	}
	fprintf(out, "weir_auto_onset_to_mitigation_seconds_sum %.6f\n",
		__atomic_load_n(&d->au_sum_us, __ATOMIC_RELAXED) / 1e6);
	fprintf(out, "weir_auto_onset_to_mitigation_seconds_count %llu\n",
		(unsigned long long)cum);
	auto_fleet_metrics(d, out);
}

/*
 * The host's pressure: the shedding controller's u (docs/shedding.md: the
 * largest of its signals), while a controller runs and its last step is
 * recent. Without one (none configured, stopped, or its signals unreadable)
 * the pressure reads 0: a host onset ends after its hold, not never.
 */
static void pressure(struct daemon *d, struct wr_dauto *a, __u64 now)
{
	struct weir_shed sh;
	double u = 0;

	a->pressure = -1;
	if (!wr_shed_read(d->maps.shed, &sh) && (sh.flags & WEIR_SHED_ACTIVE) &&
	    sh.u_micro >= 0 && sh.updated_ns && now - sh.updated_ns <= AUTO_PRESSURE_STALE_NS)
		a->pressure = u = sh.u_micro >= 1000000 ? 1 : sh.u_micro / 1e6;
	wr_detect_pressure(a->det, u, now);
}

static void log_event(const struct wr_detect_event *ev)
{
	const char *unit = ev->dim == WR_DETECT_BYTES ? "B/s" : "pps";
	int dim = ev->dim == WR_DETECT_BYTES ? WR_DETECT_BYTES : WR_DETECT_PKTS;

	if (ev->kind == WR_DETECT_PRESSURE_ON)
		dlog("auto: onset on the host: pressure %.2f (threshold %.2f); every class sampled",
		     ev->rate[0], ev->threshold[0]);
	else if (ev->kind == WR_DETECT_PRESSURE_OFF)
		dlog("auto: the host's pressure is back to normal: %.2f, after %.1f s", ev->rate[0],
		     (ev->at_ns - ev->since_ns) / 1e9);
	else if (ev->kind == WR_DETECT_ONSET)
		dlog("auto: onset on %s: %.0f %s (baseline %.0f, threshold %.0f)", ev->name,
		     ev->rate[dim], unit, ev->baseline[dim], ev->threshold[dim]);
	else if (ev->kind == WR_DETECT_END)
		dlog("auto: %s is back to normal: %.0f %s (baseline %.0f), after %.1f s", ev->name,
		     ev->rate[dim], unit, ev->baseline[dim], (ev->at_ns - ev->since_ns) / 1e9);
}

static void act(struct daemon *d, struct wr_dauto *a, const struct wr_auto_action *x,
		__u64 now)
{
	double ago = x->onset_ns && now > x->onset_ns ? (now - x->onset_ns) / 1e9 : 0;
	char why[320];

	switch (x->act) {
	case WR_AUTO_INSTALL:
	case WR_AUTO_REPLACE:
		if (auto_change_live(d, x->rule, x->words, why, sizeof(why))) {
			__atomic_add_fetch(&d->au_failed, 1, __ATOMIC_RELAXED);
			if (x->act == WR_AUTO_REPLACE)	/* its old words are gone with it */
				rule_gone(d);
			wr_auto_not_installed(a->eng, x->rule);
			dlog("auto: %s for %s not installed (advised only): %s", x->rule,
			     x->class_name, why);
			break;
		}
		if (x->act == WR_AUTO_INSTALL) {
			__atomic_add_fetch(&d->au_rules, 1, __ATOMIC_RELAXED);
			__atomic_add_fetch(&d->au_installed, 1, __ATOMIC_RELAXED);
			count_choice(d, ago, x->vector);
		}
		dlog("auto: %s %s for %s (onset %.1f s ago): %s -- %s", x->rule,
		     x->act == WR_AUTO_INSTALL ? "installed" : "replaced (the vector changed)",
		     x->class_name, ago, x->words, x->desc);
		break;
	case WR_AUTO_REMOVE:
		if (auto_change_live(d, x->rule, NULL, why, sizeof(why)))
			dlog("auto: cannot remove %s: %s", x->rule, why);
		else
			dlog("auto: %s removed: its attack ended", x->rule);
		rule_gone(d);
		break;
	case WR_AUTO_ADVICE:
		__atomic_add_fetch(&d->au_advised, 1, __ATOMIC_RELAXED);
		count_choice(d, ago, x->vector);
		dlog("auto: advice for %s (onset %.1f s ago%s): weir rule add %s %s -- %s",
		     x->class_name, ago, x->no_room ? ", no room for another auto rule" : "",
		     x->rule, x->words, x->desc);
		break;
	}
	a->changed = true;
}

/* ---- the state for `weir auto status` ---- */

/* A monotonic time as seconds since the epoch (0 stays 0). */
static double wall(__u64 mono, __u64 now)
{
	struct timespec ts;

	if (!mono)
		return 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9 - ((double)now - (double)mono) / 1e9;
}

static int by_rate(const void *x, const void *y)
{
	const struct wr_detect_class *p = x, *q = y;

	return p->rate[WR_DETECT_PKTS] < q->rate[WR_DETECT_PKTS] ? 1 :
	       p->rate[WR_DETECT_PKTS] > q->rate[WR_DETECT_PKTS] ? -1 : 0;
}

static void write_classes(FILE *f, struct wr_dauto *a)
{
	static const char *const states[] = { "learning", "watching", "attacked" };
	size_t n = wr_detect_list(a->det, a->classes, a->nr_classes), i;

	n = n < a->nr_classes ? n : a->nr_classes;
	qsort(a->classes, n, sizeof(a->classes[0]), by_rate);
	fprintf(f, "\"nr_classes\":%zu,\"classes\":[", n);
	for (i = 0; i < n && i < AUTO_TOP; i++) {
		const struct wr_detect_class *c = &a->classes[i];

		fprintf(f, "%s{\"class\":", i ? "," : "");
		auto_json_str(f, c->name);
		fprintf(f, ",\"state\":\"%s\",\"pps\":%.1f,\"bps\":%.1f,\"baseline_pps\":%.1f,"
			"\"baseline_bps\":%.1f,\"threshold_pps\":%.1f}", states[c->state % 3],
			c->rate[WR_DETECT_PKTS], c->rate[WR_DETECT_BYTES],
			c->baseline[WR_DETECT_PKTS], c->baseline[WR_DETECT_BYTES],
			c->threshold[WR_DETECT_PKTS]);
	}
	fputs("]", f);
}

static void write_mits(FILE *f, struct wr_dauto *a, __u64 now)
{
	static const char *const states[] = { "gone", "gathering", "active", "lingering" };
	size_t n = wr_auto_list(a->eng, a->mits, WR_AUTO_MAX), i, j;

	fputs(",\"mitigations\":[", f);
	for (i = 0; i < n && i < WR_AUTO_MAX; i++) {
		const struct wr_auto_mit *m = &a->mits[i];

		fprintf(f, "%s{\"rule\":", i ? "," : "");
		auto_json_str(f, m->rule);
		fprintf(f, ",\"state\":\"%s\",\"installed\":%s,\"classes\":[", states[m->state % 4],
			m->installed ? "true" : "false");
		for (j = 0; j < m->nr_classes && j < WR_AUTO_CLASSES; j++) {
			fputs(j ? "," : "", f);
			auto_json_str(f, m->names[j]);
		}
		fprintf(f, "],\"vector\":\"%s\",\"fingerprint\":",
			wr_fp_vector_name(wr_fp_vector(&m->choice)));
		auto_json_str(f, m->desc);
		fputs(",\"words\":", f);
		auto_json_str(f, m->words);
		fprintf(f, ",\"onset\":%.3f,\"chosen\":%.3f,\"onset_to_chosen_s\":%.3f,"
			"\"changes\":%u,\"expires\":%.3f}", wall(m->onset_ns, now),
			wall(m->chosen_ns, now),
			m->chosen_ns > m->onset_ns ? (m->chosen_ns - m->onset_ns) / 1e9 : 0,
			m->changes, m->state == WR_AUTO_LINGERING ? wall(m->expires_ns, now) : 0);
	}
	fputs("]", f);
}

/* The state file, written whole to a temporary name and renamed over the last one. */
static void write_state(struct daemon *d, struct wr_dauto *a, __u64 now, bool stopped)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	FILE *f;
	int fd;

	(void)d;
	wr_auto_path(path, sizeof(path), "json");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	fprintf(f, "{\"pid\":%d,\"mode\":\"%s\",\"updated\":%.3f,\"sampling\":%s,", getpid(),
		stopped ? "off" : mode_names[a->cfg.mode % 3], wall(now, now),
		a->capturing ? "true" : "false");
	fprintf(f, "\"warmup_s\":%u,\"max_rules\":%u,\"linger_s\":%u,\"samples\":%llu,",
		a->cfg.warmup_s, a->cfg.max_rules, a->cfg.linger_s,
		(unsigned long long)wr_sampler_added(a->smp));
	fprintf(f, "\"pressure\":%.3f,", stopped ? -1 : a->pressure);
	if (stopped)
		fputs("\"nr_classes\":0,\"classes\":[],\"mitigations\":[]", f);
	else {
		write_classes(f, a);
		write_mits(f, a, now);
		auto_fleet_json(f, a->fl);
	}
	fputs("}\n", f);
	if (fclose(f) || rename(tmp, path))
		unlink(tmp);
	a->state_ns = now;
	a->changed = false;
}

/* ---- the tick, start and stop ---- */

void auto_tick(struct daemon *d)
{
	struct wr_detect_event ev[AUTO_EVENTS];
	struct wr_auto_action x[AUTO_ACTIONS];
	struct wr_dauto *a = d->au;
	__u64 now, pkts, bytes;
	int n, i;

	if (!a)
		return;
	capture_take(d, a, wr_mono_ns());
	if (a->capturing && wr_capture_poll(&a->cap, 0) == -EBUSY) {
		wr_capture_close(&a->cap);
		a->capturing = false;
		dlog("auto: the capture was taken over; retrying each second");
	}
	/* After the samples: none of them is later than the totals' reading. */
	now = wr_mono_ns();
	if (!totals(d, &pkts, &bytes)) {
		if (a->capturing)
			set_one_in(a, pkts, now);
		wr_sampler_read(a->smp, pkts, bytes, now, feed, a);
	}
	pressure(d, a, now);
	while ((n = wr_detect_poll(a->det, now, ev, AUTO_EVENTS)) > 0) {
		for (i = 0; i < n; i++) {
			if (ev[i].kind == WR_DETECT_ONSET || ev[i].kind == WR_DETECT_PRESSURE_ON)
				__atomic_add_fetch(&d->au_onsets, 1, __ATOMIC_RELAXED);
			log_event(&ev[i]);
			wr_auto_event(a->eng, &ev[i]);
		}
		a->changed = true;
	}
	wr_detect_forget(a->det, now, AUTO_IDLE_NS);
	do {
		n = wr_auto_step(a->eng, a->smp, now, x, AUTO_ACTIONS);
		for (i = 0; i < n; i++)
			act(d, a, &x[i], now);
	} while (n == AUTO_ACTIONS);
	n = (int)wr_auto_list(a->eng, a->mits, WR_AUTO_MAX);
	if (auto_fleet_tick(d, a->fl, a->cfg.mode, a->cfg.max_rules, a->mits,
			    n < WR_AUTO_MAX ? n : WR_AUTO_MAX))
		a->changed = true;
	if (a->changed || now - a->state_ns >= AUTO_STATE_NS)
		write_state(d, a, now, false);
}

/* Everything a holds freed; its installed rules deleted first when remove says so. */
static void auto_free(struct daemon *d, struct wr_dauto *a, bool remove)
{
	char why[320];
	size_t n, i;

	if (a->capturing)
		wr_capture_close(&a->cap);
	if (remove && a->eng) {
		n = wr_auto_list(a->eng, a->mits, WR_AUTO_MAX);
		for (i = 0; i < n && i < WR_AUTO_MAX; i++) {
			if (!a->mits[i].installed)
				continue;
			if (auto_change_live(d, a->mits[i].rule, NULL, why, sizeof(why)))
				dlog("auto: cannot remove %s: %s", a->mits[i].rule, why);
			else
				dlog("auto: %s removed: auto stopped", a->mits[i].rule);
		}
	}
	auto_fleet_free(d, a->fl, remove);
	if (remove)
		__atomic_store_n(&d->au_rules, 0, __ATOMIC_RELAXED);
	wr_auto_free(a->eng);
	wr_detect_free(a->det);
	wr_sampler_free(a->smp);
	free(a->classes);
	free(a);
}

/* A started auto under the section c, or NULL after saying why. */
static struct wr_dauto *auto_new(const struct wr_cfg_auto *c)
{
	struct wr_detect_opts dop;
	struct wr_auto_opts eop;
	struct wr_dauto *a = calloc(1, sizeof(*a));
	size_t ring = 64;
	char why[256] = "";
	int err = -ENOMEM;

	if (!a)
		goto fail;
	a->pressure = -1;
	a->cfg = *c;
	/* AUTO_KEEP_S seconds at the full budget, as a power of two. */
	while (ring < (size_t)c->budget * AUTO_KEEP_S && ring < (1u << 20))
		ring <<= 1;
	wr_detect_opts_default(&dop);
	dop.warmup_ns = c->warmup_s * 1000000000ULL;
	dop.factor = c->factor;
	dop.floor_pps = c->floor_pps;
	dop.floor_bps = c->floor_bps;
	dop.hold_ns = c->hold_ms * 1000000ULL;
	dop.pressure_hold_ns = dop.hold_ns;
	wr_auto_opts_default(&eop);
	eop.mode = c->mode;
	eop.max_rules = c->max_rules;
	eop.linger_ns = c->linger_s * 1000000000ULL;
	eop.fp.cover = c->cover;
	eop.fp.false_max = c->false_max;
	a->nr_classes = dop.max_classes;
	a->classes = calloc(a->nr_classes, sizeof(*a->classes));
	a->fl = auto_fleet_new();
	if (!a->classes || !a->fl)
		goto fail;
	err = wr_sampler_new(ring, 1000000000ULL, &a->smp);
	if (!err)
		err = wr_detect_new(&dop, &a->det, why, sizeof(why));
	if (!err)
		err = wr_auto_new(&eop, &a->eng, why, sizeof(why));
	if (!err)
		return a;
fail:
	pr_err("auto: cannot start: %s", *why ? why : strerror(-err));
	if (a)
		auto_free(NULL, a, false);
	return NULL;
}

void auto_restart(struct daemon *d)
{
	struct wr_cfg_auto cc = d->cfg.au, *c = &cc;
	struct itimerspec its = {};

	if (d->au_mode >= 0)
		cc.mode = d->au_mode;
	if (d->au && !memcmp(&d->au->cfg, c, sizeof(*c)))
		return;
	if (d->au) {
		dlog("auto: stopping (%s)", c->mode ? "its config changed" : "mode off");
		write_state(d, d->au, wr_mono_ns(), true);
		auto_free(d, d->au, true);
		d->au = NULL;
	}
	if (c->mode) {
		wr_mkdir_p("/run/weir");
		d->au = auto_new(c);
		if (d->au)
			dlog("auto: %s: learning for %u s, then watching (budget %u samples/s, "
			     "at most %u rules)", c->mode == WR_AUTO_ON ? "on" : "advise",
			     c->warmup_s, c->budget, c->max_rules);
	}
	/* The tick runs only while auto does: nothing at all when it is off. */
	if (d->au) {
		its.it_value.tv_nsec = AUTO_TICK_MS * 1000000L;
		its.it_interval = its.it_value;
	}
	if (d->au_fd >= 0)
		timerfd_settime(d->au_fd, 0, &its, NULL);
}

void auto_configured(struct daemon *d)
{
	char path[PATH_MAX];

	wr_auto_path(path, sizeof(path), "mode");
	unlink(path);
	if (d->au_mode >= 0)
		dlog("auto: the config's mode again (%s)", mode_names[d->cfg.au.mode % 3]);
	d->au_mode = -1;
	auto_restart(d);
}

void auto_override(struct daemon *d)
{
	char path[PATH_MAX], word[16] = "";
	FILE *f;
	int i;

	wr_auto_path(path, sizeof(path), "mode");
	f = fopen(path, "re");
	if (!f || !fgets(word, sizeof(word), f))
		word[0] = '\0';
	if (f)
		fclose(f);
	word[strcspn(word, "\n")] = '\0';
	for (i = 0; i < 3 && strcmp(word, mode_names[i]); i++)
		;
	if (i == 3) {
		dlog("auto: SIGUSR1 without a mode in %s; nothing changed", path);
		return;
	}
	dlog("auto: mode %s until the next reload (weir auto %s)", mode_names[i], mode_names[i]);
	d->au_mode = i;
	auto_restart(d);
	/* Written now, so `weir auto MODE` sees the mode in force (or auto stopped). */
	if (d->au)
		write_state(d, d->au, wr_mono_ns(), false);
}

void auto_stop(struct daemon *d)
{
	char path[PATH_MAX];

	if (!d->au)
		return;
	auto_free(d, d->au, true);
	d->au = NULL;
	/* No daemon, no state: `weir auto status` says auto is not running. */
	wr_auto_path(path, sizeof(path), "json");
	unlink(path);
}
