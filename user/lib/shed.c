// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Adaptive shedding: the utilization signals and the controller step that
 * the daemon runs every interval (`weir shed` is cmd/shed.c).
 *
 * The pinned wr_shed entry is the source of truth for S: the controller
 * reads it, steps it and writes it back with the per-class thresholds, so
 * `weir shed set S` and a restarted daemon both simply work on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include "lib/shed.h"
#include "lib/tcpdiag.h"

/* ---- signals ---- */

void wr_signal_name(const struct wr_cfg_signal *c, char *buf, size_t len)
{
	size_t off;
	int i;

	switch (c->type) {
	case WR_SIG_CPU:
		snprintf(buf, len, "cpu");
		break;
	case WR_SIG_PSI:
		snprintf(buf, len, "psi:%s", c->arg);
		break;
	case WR_SIG_FILE:
		snprintf(buf, len, "file:%s", c->arg);
		break;
	default:
		off = snprintf(buf, len, "accept-queue:");
		for (i = 0; i < c->nr_ports && off < len; i++)
			off += snprintf(buf + off, len - off, "%s%u", i ? "," : "", c->ports[i]);
	}
}

/* CPU busy share since the last reading: everything but idle and iowait. */
static int read_cpu(struct wr_signal *s, double *u)
{
	unsigned long long v[10] = {};
	unsigned long long busy, total = 0;
	char line[256];
	FILE *f = fopen("/proc/stat", "re");
	int n, i;

	if (!f)
		return -errno;
	n = fgets(line, sizeof(line), f) ? sscanf(line, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
						  &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
						  &v[8], &v[9]) : 0;
	fclose(f);
	if (n < 7)
		return -EINVAL;
	/* guest time is already in user/nice; count user..steal. */
	for (i = 0; i < 8 && i < n; i++)
		total += v[i];
	busy = total - v[3] - v[4];
	if (!s->primed || total <= s->prev_total) {
		s->primed = true;
		s->prev_a = busy;
		s->prev_total = total;
		return -EAGAIN;	/* a share needs two readings */
	}
	*u = (double)(busy - s->prev_a) / (double)(total - s->prev_total);
	s->prev_a = busy;
	s->prev_total = total;
	return 0;
}

/* Share of wall time some task stalled waiting for the resource (PSI "some"). */
static int read_psi(struct wr_signal *s, double *u)
{
	char path[320], line[256];
	unsigned long long total = 0;
	bool found = false;
	FILE *f;
	__u64 now = wr_mono_ns();

	snprintf(path, sizeof(path), "/proc/pressure/%s", s->cfg.arg);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "some avg10=%*f avg60=%*f avg300=%*f total=%llu", &total) == 1)
			found = true;
	fclose(f);
	if (!found)
		return -EINVAL;
	if (!s->primed || now <= s->prev_total) {
		s->primed = true;
		s->prev_a = total;
		s->prev_total = now;
		return -EAGAIN;
	}
	/* total is in microseconds */
	*u = (double)(total - s->prev_a) * 1000.0 / (double)(now - s->prev_total);
	s->prev_a = total;
	s->prev_total = now;
	return 0;
}

/* A number in [0, 1] written by the application. */
static int read_file(struct wr_signal *s, double *u)
{
	char buf[64], *end;
	ssize_t n;
	double v;
	int fd = open(s->cfg.arg, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	errno = 0;
	v = strtod(buf, &end);
	while (*end == '\n' || *end == ' ' || *end == '\t' || *end == '\r')
		end++;
	if (errno || end == buf || *end || !(v >= 0 && v <= 1))
		return -EINVAL;
	*u = v;
	return 0;
}

struct acceptq {
	const struct wr_cfg_signal *cfg;
	double fill;
	int listeners;
};

static int acceptq_cb(const struct inet_diag_msg *m, void *data)
{
	struct acceptq *a = data;
	__u16 port = ntohs(m->id.idiag_sport);
	int i;

	for (i = 0; i < a->cfg->nr_ports; i++) {
		if (a->cfg->ports[i] != port)
			continue;
		/* For a listener: rqueue is the accept queue, wqueue its backlog. */
		if (m->idiag_wqueue) {
			double f = (double)m->idiag_rqueue / m->idiag_wqueue;

			if (f > a->fill)
				a->fill = f;
		}
		a->listeners++;
	}
	return 0;
}

/* Fullest accept queue among the listening TCP sockets on the ports. */
static int read_acceptq(struct wr_signal *s, double *u)
{
	struct acceptq a = { .cfg = &s->cfg };
	int err = wr_tcp_dump(1 << TCP_LISTEN, acceptq_cb, &a);

	if (err)
		return err;
	if (!a.listeners)
		return -ENOENT;	/* nothing listens there: report, do not read as 0 */
	*u = a.fill > 1 ? 1 : a.fill;
	return 0;
}

int wr_signal_read(struct wr_signal *s, double *u)
{
	switch (s->cfg.type) {
	case WR_SIG_CPU:
		return read_cpu(s, u);
	case WR_SIG_PSI:
		return read_psi(s, u);
	case WR_SIG_FILE:
		return read_file(s, u);
	default:
		return read_acceptq(s, u);
	}
}

/* ---- the controller ---- */

__s64 wr_shed_micro(double v)
{
	return (__s64)llround(v * 1e6);
}

/* Derived thresholds for S under flags. */
void wr_shed_thresholds(struct weir_shed *sh, double s)
{
	unsigned int c;

	for (c = 0; c <= WEIR_MAX_CLASS; c++)
		sh->threshold[c] = (sh->flags & WEIR_SHED_OFF) ? 0
			: wr_shed_threshold(wr_shed_class_prob(s, c));
}

int wr_shed_read(int fd, struct weir_shed *sh)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(fd, &zero, sh) ? -errno : 0;
}

int wr_shed_write(int fd, const struct weir_shed *sh)
{
	__u32 zero = 0;

	return bpf_map_update_elem(fd, &zero, sh, BPF_ANY) ? -errno : 0;
}

/* Capacity for one cost kind: total at rate, classes 1..3 at (1 - reserve). */
static void capacity_limits(struct weir_capacity *c, __u64 rate, int cost, double reserve)
{
	struct weir_limit *ls[2] = { &c->total, &c->noncrit };
	__u64 rates[2];
	int i;

	memset(c, 0, sizeof(*c));
	if (!rate)
		return;
	rates[0] = rate;
	rates[1] = (__u64)((double)rate * (1 - reserve));
	for (i = 0; i < 2; i++) {
		struct weir_limit *l = ls[i];

		if (!rates[i])
			rates[i] = 1;
		l->rate = rates[i];
		l->cost = cost;
		l->key = WEIR_KEY_ALL;
		/*
		 * A tenth of a second of burst: capacity is a rate, not a
		 * reservoir. The data path meters it by the jiffies clock,
		 * which this keeps exact (at least two ticks of burst).
		 */
		l->burst = rates[i] / 10 ? rates[i] / 10 : 1;
		if (cost == WEIR_COST_BYTE && l->burst < 1500)
			l->burst = 1500;
		l->interval_fp = wr_gcra_interval(l->rate);
		l->tolerance = wr_gcra_tolerance(l->interval_fp, l->burst, cost);
	}
}

/*
 * Apply the config's part of wr_shed (default class, capacity, signal
 * names), keeping S and the operator's switches. Capacity buckets restart
 * when their rates change.
 */
int wr_shed_configure(const struct wr_maps *m, const struct wr_cfg_shed *shed,
		      const struct wr_cfg_capacity *capacity)
{
	struct weir_shed sh, old;
	struct weir_state empty = {};
	int err, k, i;

	err = wr_shed_read(m->shed, &sh);
	if (err)
		return err;
	old = sh;
	sh.default_class = shed->default_class;
	for (k = 0; k < 2; k++)
		capacity_limits(&sh.cap[k], capacity->rate[k], k, capacity->reserve);
	sh.nr_signals = shed->on ? shed->nr_signals : 0;
	for (i = 0; i < WEIR_MAX_SIGNALS; i++) {
		memset(sh.signal_name[i], 0, WEIR_SIGNAL_NAME_LEN);
		if (i < (int)sh.nr_signals)
			wr_signal_name(&shed->signals[i], sh.signal_name[i],
				       WEIR_SIGNAL_NAME_LEN);
	}
	if (!shed->on) {
		/* No controller: nothing is shed, and S rests. */
		sh.flags &= ~WEIR_SHED_ACTIVE;
		sh.s_micro = wr_shed_micro(wr_shed_floor(&shed->curve));
		sh.u_micro = 0;
		sh.expires_ns = 0;
	} else {
		sh.flags |= WEIR_SHED_ACTIVE;
		/* A fresh map reads S = 0; start from rest instead. */
		if (!old.updated_ns && !old.s_micro)
			sh.s_micro = wr_shed_micro(wr_shed_floor(&shed->curve));
	}
	wr_shed_thresholds(&sh, sh.s_micro / 1e6);
	for (k = 0; k < 2; k++) {
		if (old.cap[k].total.rate == sh.cap[k].total.rate &&
		    old.cap[k].noncrit.rate == sh.cap[k].noncrit.rate)
			continue;
		for (i = 0; i < 2; i++) {
			__u32 idx = 2 * k + i;

			bpf_map_update_elem(m->capacity, &idx, &empty, BPF_ANY);
		}
	}
	return wr_shed_write(m->shed, &sh);
}

int wr_shed_step_once(const struct wr_maps *m, const struct wr_cfg_shed *shed,
		      struct wr_signal *sigs, double *s_before, double *s_after)
{
	struct weir_shed sh;
	__u64 now = wr_mono_ns();
	double u = 0, s, dt;
	bool any = false;
	int err, i;

	err = wr_shed_read(m->shed, &sh);
	if (err)
		return err;
	for (i = 0; i < shed->nr_signals && i < WEIR_MAX_SIGNALS; i++) {
		double v = 0;
		int e = wr_signal_read(&sigs[i], &v);

		if (e) {
			/* Missing or unreadable: reported, and ignored, never read as 0 or 1. */
			sh.signal_micro[i] = -1;
			if (e != -EAGAIN && !sigs[i].warned) {
				char name[WEIR_SIGNAL_NAME_LEN];

				wr_signal_name(&shed->signals[i], name, sizeof(name));
				pr_warn("shedding signal %s unreadable (%s); ignored while it is",
					name, strerror(-e));
				sigs[i].warned = true;
			}
			continue;
		}
		if (sigs[i].warned) {
			char name[WEIR_SIGNAL_NAME_LEN];

			wr_signal_name(&shed->signals[i], name, sizeof(name));
			pr_warn("shedding signal %s readable again", name);
			sigs[i].warned = false;
		}
		sh.signal_micro[i] = wr_shed_micro(v);
		if (v > u)
			u = v;
		any = true;
	}
	s = sh.s_micro / 1e6;
	*s_before = s;
	/* Without any readable signal S stays where it is. */
	if (any && sh.updated_ns) {
		dt = now > sh.updated_ns ? (now - sh.updated_ns) / 1e9 : 0;
		s = wr_shed_step(&shed->curve, s, u, dt);
	}
	*s_after = s;
	sh.s_micro = wr_shed_micro(s);
	sh.u_micro = any ? wr_shed_micro(u) : -1;
	sh.updated_ns = now;
	/* Trust these thresholds for a few steps, at least 5 s, and no longer. */
	sh.expires_ns = now + (5 * shed->interval_ms > 5000 ? 5 * shed->interval_ms : 5000) *
				      1000000ULL;
	wr_shed_thresholds(&sh, s);
	return wr_shed_write(m->shed, &sh);
}
