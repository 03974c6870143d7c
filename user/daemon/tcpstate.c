// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `tcp-state auto`: the daemon's watch over out-of-state TCP, once a
 * second, which switches the check of `tcp-state auto` rules on
 * (weir_config.tcp_state_on) and off again.
 *
 * The out-of-state rate is what the host does with segments of no
 * connection: while the check is off, the kernel answers each spoofed
 * ACK, FIN or SYN-ACK with a RST (Tcp OutRsts in /proc/net/snmp, this
 * network namespace's); while it is on, weir drops them instead
 * (out_of_state). Their sum per second is the signal: the check goes on
 * in the first second it reaches tcp-state.on, and off once it has stayed
 * under tcp-state.off for tcp-state.hold. A RST flood alone draws no
 * RSTs back, so it does not switch the check on: `tcp-state on` covers
 * it (docs/tcp-state.md). Legitimate RSTs (a port scan of closed ports,
 * refused connections) count too; tcp-state.on is set above what the
 * host sees of them normally.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/libweir.h"
#include "daemon/daemon_int.h"

/* The kernel's count of RSTs sent, from /proc/net/snmp's Tcp lines; -errno. */
static int out_rsts(__u64 *n)
{
	char names[1024], vals[1024];
	char *sn, *sv, *tn, *tv;
	FILE *f = fopen("/proc/net/snmp", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(names, sizeof(names), f)) {
		if (strncmp(names, "Tcp: ", 5))
			continue;
		if (!fgets(vals, sizeof(vals), f) || strncmp(vals, "Tcp: ", 5))
			break;
		tn = strtok_r(names + 5, " \n", &sn);
		tv = strtok_r(vals + 5, " \n", &sv);
		while (tn && tv) {
			if (!strcmp(tn, "OutRsts")) {
				*n = strtoull(tv, NULL, 10);
				err = 0;
				break;
			}
			tn = strtok_r(NULL, " \n", &sn);
			tv = strtok_r(NULL, " \n", &sv);
		}
		break;
	}
	fclose(f);
	return err;
}

/* Does the live set have a `tcp-state auto` rule? */
static bool has_auto_rule(const struct daemon *d)
{
	struct weir_ruleset *rs = wr_live_get(&d->maps);
	bool has = false;
	__u32 i;

	if (!rs)
		return false;
	for (i = 0; i < rs->nr_rules && i < WEIR_MAX_RULES && !has; i++)
		has = (rs->rules[i].flags & WEIR_RF_TCP_AUTO) &&
		      (rs->rules[i].flags & WEIR_RF_TCP_STATE);
	free(rs);
	return has;
}

/* Switch the check, under the root lock (other writers change the config too). */
static int set_on(struct daemon *d, bool on)
{
	struct weir_config cfg;
	int lock = wr_lock();
	int err;

	if (lock < 0)
		return lock;
	err = wr_config_read(&d->maps, &cfg);
	if (!err) {
		cfg.tcp_state_on = on;
		err = wr_config_write(&d->maps, &cfg);
	}
	wr_unlock(lock);
	return err;
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

void tcpstate_tick(struct daemon *d)
{
	struct wr_tcpstate_watch *w = &d->ts;
	struct weir_config cfg;
	__u64 g[WEIR_G_MAX], rsts = 0, now = mono_ns(), dt;
	double rate;
	bool on;

	if (wr_config_read(&d->maps, &cfg))
		return;
	on = cfg.tcp_state_on;
	if (!has_auto_rule(d)) {
		w->primed = false;
		if (on && !set_on(d, false))
			dlog("tcp-state auto: off (no tcp-state auto rule is left)");
		return;
	}
	if (wr_percpu_sum(d->maps.global, 0, g, WEIR_G_MAX))
		return;
	if (out_rsts(&rsts) && !w->warned) {
		pr_warn("tcp-state auto: cannot read the RSTs sent from /proc/net/snmp; "
			"watching dropped segments only");
		w->warned = true;
	}
	if (!w->primed || now <= w->at) {
		w->primed = true;
		w->at = now;
		w->rsts = rsts;
		w->oos = g[WEIR_G_OUT_OF_STATE];
		return;
	}
	dt = now - w->at;
	rate = ((double)(rsts - w->rsts) + (double)(g[WEIR_G_OUT_OF_STATE] - w->oos)) * 1e9 /
	       (double)dt;
	w->at = now;
	w->rsts = rsts;
	w->oos = g[WEIR_G_OUT_OF_STATE];
	w->rate = rate;
	if (!on) {
		if (rate < d->cfg.tcp_state.on_pps)
			return;
		if (!set_on(d, true)) {
			w->quiet_ns = 0;
			w->switches++;
			dlog("tcp-state auto: on (out-of-state %.0f/s, at least %u/s switches it on)",
			     rate, d->cfg.tcp_state.on_pps);
		}
		return;
	}
	if (rate >= d->cfg.tcp_state.off_pps) {
		w->quiet_ns = 0;
		return;
	}
	w->quiet_ns += dt;
	if (w->quiet_ns < (__u64)d->cfg.tcp_state.hold_s * 1000000000ULL)
		return;
	if (!set_on(d, false)) {
		w->switches++;
		dlog("tcp-state auto: off (out-of-state under %u/s for %us)",
		     d->cfg.tcp_state.off_pps, d->cfg.tcp_state.hold_s);
	}
}
