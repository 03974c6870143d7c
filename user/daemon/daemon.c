// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir run --config FILE`: the daemon.
 *
 * Applies the config (rules, lists, switches, interfaces), then stays in the
 * foreground: reloads on SIGHUP and when the file changes, turns the data
 * path's "started limiting" events into a bounded number of log lines, and
 * serves metrics. Everything it enforces is pinned, so when it exits, is
 * killed or crashes, enforcement goes on with the last rule set; the next
 * daemon adopts the pinned state without resetting buckets or counters.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "weir_limiter.h"
#include "daemon/daemon.h"
#include "daemon/daemon_int.h"

/* ---- systemd readiness, without libsystemd ---- */

static void sd_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd;

	if (!path || !*path || strlen(path) >= sizeof(sa.sun_path))
		return;
	strcpy(sa.sun_path, path);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';	/* abstract namespace */
	len = offsetof(struct sockaddr_un, sun_path) + strlen(path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, len) < 0)
		pr_debug("sd_notify: %s", strerror(errno));
	close(fd);
}

/* ---- one daemon per bpffs root ---- */

/*
 * A lock file named after the root in /run. Held for the daemon's life;
 * the kernel drops it however the daemon ends, so a crash never wedges it.
 */
void wr_daemon_lock_path(char *path, size_t len)
{
	const char *p;
	size_t n;

	n = snprintf(path, len, "/run/weir");
	for (p = opts.root; *p && n + 6 < len; p++)
		path[n++] = *p == '/' ? '-' : *p;
	snprintf(path + n, len - n, ".lock");
}

static int instance_lock(void)
{
	char path[PATH_MAX], pid[32];
	int fd;

	wr_daemon_lock_path(path, sizeof(path));
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		pr_err("cannot open %s: %s", path, strerror(errno));
		return -errno;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		ssize_t r = pread(fd, pid, sizeof(pid) - 1, 0);

		pid[r > 0 ? r : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		pr_err("another weir daemon%s%s%s is already running on %s; refusing to start",
		       *pid ? " (pid " : "", pid, *pid ? ")" : "", opts.root);
		close(fd);
		return -EBUSY;
	}
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, strlen(pid), 0) < 0)
		pr_debug("cannot write the pid to %s", path);
	return fd;
}

/* ---- applying a config ---- */

static int apply_lists(const struct wr_maps *m, const struct wr_cfg *c)
{
	struct weir_config sc;
	int err;

	err = wr_list_sync(m, true, c->deny, c->nr_deny);
	if (!err)
		err = wr_list_sync(m, false, c->allow, c->nr_allow);
	if (!err)
		err = wr_config_read(m, &sc);
	if (err)
		return err;
	sc.fail_closed = c->fail_closed;
	sc.malformed_pass = c->malformed_pass;
	err = wr_first_stage_set(m, &sc, c->first_stage_off);	/* after the commit */
	return err ? err : wr_config_write(m, &sc);
}

/*
 * Attach what the config names, in the mode it names; detach what it does
 * not name. An interface that does not exist yet is retried every tick.
 */
/*
 * An XDP attachment that is not as the config asks: alone where it asks
 * for libxdp's dispatcher or at another priority there, or in one where it
 * says off; a TC one on the other hook than tc-hook names. (auto takes
 * either.)
 */
static bool dispatcher_differs(int ifindex, const struct wr_attach_opts *want)
{
	struct wr_xdpm_info xi;
	bool joined = !wr_link_xdpm(ifindex, &xi), clsact = false;
	__u32 link_id, prog_id;

	if (want->mode == WR_MODE_TC)
		return want->tc_hook != WR_TC_HOOK_AUTO &&
		       !wr_link_ids(ifindex, &link_id, &prog_id, &clsact) &&
		       clsact != (want->tc_hook == WR_TC_HOOK_CLSACT);
	if (want->dispatcher == WR_DISP_LIBXDP)
		return !joined || xi.prio != want->priority;
	return want->dispatcher == WR_DISP_OFF && joined;
}

static int apply_ifaces(struct daemon *d)
{
	int links[256], n, i, j, err = 0;
	char name[IF_NAMESIZE];
	struct wr_xdpm_info xi;

	bool all_there = true;

	d->missing_ifaces = false;
	for (j = 0; j < d->cfg.nr_ifaces; j++)
		all_there &= if_nametoindex(d->cfg.ifaces[j].name) != 0;
	n = wr_list_links(links, ARRAY_SIZE(links));
	for (i = 0; i < n; i++) {
		bool wanted = false, gone = !if_indextoname(links[i], name);

		for (j = 0; !gone && j < d->cfg.nr_ifaces; j++)
			wanted |= !strcmp(d->cfg.ifaces[j].name, name);
		/*
		 * The link of a removed interface stays while a configured one is
		 * missing, so status shows it gone; once they are all back it goes.
		 */
		if (wanted || (gone && !all_there))
			continue;
		dlog("detaching from %s: %s", gone ? "a removed interface" : name,
		     gone ? "it is gone" : "not in the config");
		wr_detach_ifindex(links[i]);
	}
	for (j = 0; j < d->cfg.nr_ifaces; j++) {
		const struct wr_cfg_iface *want = &d->cfg.ifaces[j];
		int ifindex = if_nametoindex(want->name), cur, e;
		char why[320];

		if (!ifindex) {
			if (!d->missing_ifaces)
				dlog("interface %s does not exist; will retry", want->name);
			d->missing_ifaces = true;
			continue;
		}
		cur = wr_link_mode(ifindex);
		if (cur == want->attach.mode && !dispatcher_differs(ifindex, &want->attach))
			continue;
		if (cur == want->attach.mode && cur == WR_MODE_TC) {
			dlog("re-attaching %s: tc-hook %s", want->name,
			     wr_tc_hook_names[want->attach.tc_hook]);
			wr_detach_ifindex(ifindex);
		} else if (cur == want->attach.mode) {
			dlog("re-attaching %s: dispatcher %s, priority %u", want->name,
			     wr_dispatcher_names[want->attach.dispatcher], want->attach.priority);
			wr_detach_ifindex(ifindex);
		} else if (cur >= 0 || cur == -ENODEV) {
			dlog("re-attaching %s: mode %s -> %s", want->name,
			     cur >= 0 ? wr_mode_names[cur] : "gone",
			     wr_mode_names[want->attach.mode]);
			wr_detach_ifindex(ifindex);
		}
		e = wr_cookie_guard(d->cfg.rules, want->attach.mode == WR_MODE_TC ? WR_CK_TC
									 : WR_CK_XDP,
				    want->name, WR_CK_CONFIG, why, sizeof(why));
		if (e) {
			dlog("%s", why);
			err = err ? err : e;
			continue;
		}
		e = wr_attach_locked(want->name, ifindex, &want->attach);
		if (e) {
			err = err ? err : e;
			continue;
		}
		if (!wr_link_xdpm(ifindex, &xi))
			dlog("attached to %s in %s mode (libxdp dispatcher, priority %u)", want->name,
			     wr_mode_names[want->attach.mode], xi.prio);
		else
			dlog("attached to %s in %s mode", want->name,
			     wr_mode_names[want->attach.mode]);
	}
	return err;
}

/* (Re)start the shedding controller for the config: fresh signals, its interval. */
static void shed_arm(struct daemon *d)
{
	struct itimerspec its = {};
	struct weir_shed sh;
	int i;

	memset(d->sigs, 0, sizeof(d->sigs));
	for (i = 0; i < d->cfg.shed.nr_signals; i++)
		d->sigs[i].cfg = d->cfg.shed.signals[i];
	if (!wr_shed_read(d->maps.shed, &sh))
		d->s_logged = sh.s_micro / 1e6;
	if (d->shed_fd < 0)
		return;
	if (d->cfg.shed.on) {
		its.it_value.tv_sec = d->cfg.shed.interval_ms / 1000;
		its.it_value.tv_nsec = (d->cfg.shed.interval_ms % 1000) * 1000000L;
		its.it_interval = its.it_value;
	}
	timerfd_settime(d->shed_fd, 0, &its, NULL);	/* all zero: disarmed */
}

/* One controller step; the log notes every change of S larger than 0.05. */
static void shed_tick(struct daemon *d)
{
	double before, after;
	struct weir_shed sh;
	int err;

	err = wr_shed_step_once(&d->maps, &d->cfg.shed, d->sigs, &before, &after);
	if (err) {
		pr_warn("shedding step failed: %s", strerror(-err));
		return;
	}
	/* Also note when shedding starts or stops, however small the step. */
	if (fabs(after - d->s_logged) <= 0.05 && (after > 0) == (d->s_logged > 0))
		return;
	wr_shed_read(d->maps.shed, &sh);
	dlog("shedding amount S %.3f -> %.3f (u %.3f): drop probability class 3 %.2f, "
	     "class 2 %.2f, class 1 %.2f", d->s_logged, after, sh.u_micro / 1e6,
	     wr_shed_class_prob(after, 3), wr_shed_class_prob(after, 2),
	     wr_shed_class_prob(after, 1));
	d->s_logged = after;
}

/*
 * Fleet limits carry the fleet sync's cost multiplier: 1, or each host's
 * share under the safe fallback. Only the multiplier changes, so the
 * commit keeps the rules' buckets.
 */
static void stamp_fleet(struct daemon *d, struct weir_ruleset *rs)
{
	__u32 i, j;

	d->fleet_mult = d->fleet ? wr_fleet_multiplier(d->fleet) : 1;
	for (i = 0; i < rs->nr_rules && i < WEIR_MAX_RULES; i++)
		for (j = 0; j < rs->rules[i].nr_limits && j < WEIR_MAX_LIMITS; j++)
			if (rs->rules[i].limits[j].fleet)
				rs->rules[i].limits[j].fleet = d->fleet_mult;
}

/* The fleet's multiplier changed: the rule set again, with it. */
static void fleet_recommit(struct daemon *d)
{
	struct weir_ruleset *rs;
	int lock, err;

	if (wr_fleet_multiplier(d->fleet) == d->fleet_mult)
		return;
	rs = malloc(sizeof(*rs));
	lock = rs ? wr_lock() : -ENOMEM;
	if (lock < 0) {
		free(rs);
		pr_warn("fleet: cannot apply the fallback share: %s", strerror(-lock));
		return;
	}
	memcpy(rs, d->cfg.rules, sizeof(*rs));
	stamp_fleet(d, rs);
	auto_append(d, rs);
	err = wr_ruleset_commit(&d->maps, rs);
	wr_unlock(lock);
	free(rs);
	if (err)
		pr_warn("fleet: cannot apply the fallback share: %s", strerror(-err));
	else
		dlog("fleet limits: each packet counts %ux (this host's share 1/%u)", d->fleet_mult,
		     d->fleet_mult);
}

/* (Re)start the fleet sync under the config in force, or stop it without one. */
static void fleet_restart(struct daemon *d)
{
	if (d->cfg.fleet.on && wr_fleet_same(d->fleet, &d->cfg.fleet)) {
		fleet_recommit(d);
		return;
	}
	wr_fleet_stop(d->fleet);
	d->fleet = NULL;
	if (d->cfg.fleet.on) {
		d->fleet = wr_fleet_start(&d->cfg.fleet, d->fleet_fd);
		if (!d->fleet)
			pr_err("fleet: cannot start the sync: %s; fleet limits are enforced on this "
			       "host alone", strerror(errno));
		else
			dlog("fleet %s: syncing with %d Redis server%s every %u ms", d->cfg.fleet.name,
			     d->cfg.fleet.nr_nodes, d->cfg.fleet.nr_nodes == 1 ? "" : "s",
			     d->cfg.fleet.interval_ms);
	}
	fleet_recommit(d);
}

/* Rules (atomically, keeping unchanged rules' state), lists, switches, interfaces. */
static int apply(struct daemon *d)
{
	struct wr_load_opts lo = { .keys = d->cfg.keys, .clock = WEIR_CLOCK_AUTO };
	struct weir_ruleset *rs;
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);
	int lock, err, ferr;

	/* State that vanished under us: our caps no longer allow loading it anew. */
	if (d->maps.config >= 0 && !wr_is_loaded()) {
		pr_err("the pinned state under %s is gone (removed while the daemon ran); "
		       "restart the daemon to load weir again", opts.root);
		return -ENOENT;
	}
	lock = wr_lock_root();
	if (lock < 0)
		return lock;
	err = wr_ensure_loaded(&lo);
	if (err)
		goto out;
	if (d->maps.config < 0) {
		err = wr_maps_open(&d->maps);
		if (err)
			goto out;
	}
	/* The table holds whole sets: keys as the loader rounds them up. */
	if (d->cfg.keys && !bpf_obj_get_info_by_fd(d->maps.state, &info, &ilen) &&
	    (__u64)info.max_entries * WEIR_WAYS !=
		    (d->cfg.keys + WEIR_WAYS - 1) / WEIR_WAYS * WEIR_WAYS)
		dlog("tables.keys is %llu but the pinned table holds %llu; "
		     "'weir detach all' and a restart resize it",
		     (unsigned long long)d->cfg.keys,
		     (unsigned long long)info.max_entries * WEIR_WAYS);
	rs = malloc(sizeof(*rs));
	if (!rs) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(rs, d->cfg.rules, sizeof(*rs));
	stamp_fleet(d, rs);
	auto_append(d, rs);	/* the rules auto installed stay */
	/* Source sets filled before the rules that name them go live. */
	err = feeds_srcsets(d, &d->maps, rs);
	if (!err)
		err = wr_ruleset_commit(&d->maps, rs);
	if (!err) {
		dlog("rule set %u in force: %u rules", rs->gen, rs->nr_rules);
		feeds_srcsets_done(d, &d->maps, rs);
	}
	free(rs);
	if (err) {
		pr_err("cannot commit the rule set: %s", strerror(-err));
		goto out;
	}
	err = apply_lists(&d->maps, &d->cfg);
	if (err) {
		pr_err("cannot apply the deny/allow lists: %s", strerror(-err));
		goto out;
	}
	err = wr_shed_configure(&d->maps, &d->cfg.shed, &d->cfg.capacity);
	if (err) {
		pr_err("cannot apply shedding and capacity: %s", strerror(-err));
		goto out;
	}
	shed_arm(d);
	err = apply_ifaces(d);
	ferr = feeds_apply(d, &d->maps);
	err = err ? err : ferr;
out:
	wr_unlock(lock);
	return err;
}

/* ---- metrics ---- */

static void metrics_extra(FILE *out, void *arg)
{
	struct daemon *d = arg;

	wr_metric_family(out, "weir_config_reloads_total", "counter", "Config reloads by result.");
	wr_metric_labeled(out, "weir_config_reloads_total", "result", "ok",
			  __atomic_load_n(&d->reloads_ok, __ATOMIC_RELAXED));
	wr_metric_labeled(out, "weir_config_reloads_total", "result", "error",
			  __atomic_load_n(&d->reloads_failed, __ATOMIC_RELAXED));
	wr_metric_family(out, "weir_limited_sources", "gauge",
			 "Sources being limited this event interval.");
	wr_metric_value(out, "weir_limited_sources", __atomic_load_n(&d->limited, __ATOMIC_RELAXED));
	feeds_metrics(out);
	bans_metrics(d, out);
	auto_metrics(d, out);
}

static void metrics_restart(struct daemon *d)
{
	if (d->metrics && (!d->cfg.metrics || strcmp(d->metrics_listen, d->cfg.metrics_listen))) {
		wr_metrics_stop(d->metrics);
		d->metrics = NULL;
	}
	if (!d->cfg.metrics || d->metrics)
		return;
	d->metrics = wr_metrics_start(d->cfg.metrics_listen, &d->maps, metrics_extra, d);
	if (d->metrics) {
		snprintf(d->metrics_listen, sizeof(d->metrics_listen), "%s", d->cfg.metrics_listen);
		dlog("metrics on http://%s/metrics", d->metrics_listen);
	}
}

/* Every event interval: connection counts against the kernel's own sockets. */
static void conns_reconcile(struct daemon *d)
{
	struct weir_ruleset *rs = wr_live_get(&d->maps);
	int fixed = 0, err;

	if (!rs)
		return;
	err = wr_conns_reconcile(&d->maps, rs, d->recon, &fixed);
	if (err)
		pr_warn("cannot reconcile connection counts: %s", strerror(-err));
	else if (fixed)
		dlog("corrected %d connection count%s to the kernel's sockets", fixed,
		     fixed == 1 ? "" : "s");
	free(rs);
}

/*
 * Whoever can write the config controls what weir enforces. Refuse a
 * file (or its directory, or a deny file) that another user may write.
 */
static int untrusted(const char *path, bool dir)
{
	struct stat st;

	if (stat(path, &st))
		return 0;	/* not there: the loader says so */
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		pr_err("%s is owned by uid %u: only root (or the daemon's user) may own what "
		       "configures weir", path, st.st_uid);
		return -EPERM;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(dir && (st.st_mode & S_ISVTX))) {
		pr_err("%s is writable by %s: anyone who can write it controls weir (chmod "
		       "go-w)", path, st.st_mode & S_IWOTH ? "everyone" : "its group");
		return -EPERM;
	}
	return 0;
}

static int trust_config(const struct wr_cfg *cfg, const char *path)
{
	char *dup = strdup(path);
	int err, i;

	if (!dup)
		return -ENOMEM;
	err = untrusted(path, false);
	if (!err)
		err = untrusted(dirname(dup), true);
	free(dup);
	for (i = 0; !err && i < cfg->nr_deny_files; i++)
		err = untrusted(cfg->deny_files[i], false);
	return err;
}

/* ---- reload ---- */

static void reload(struct daemon *d, const char *why)
{
	struct wr_cfg next = {};
	__u32 old_interval;
	struct wr_cfg old;
	int n;

	sd_notify("RELOADING=1");
	n = wr_cfg_load(d->cfg_path, &next, stderr);
	if (n) {
		__atomic_add_fetch(&d->reloads_failed, 1, __ATOMIC_RELAXED);
		if (n > 0)
			dlog("%s: reload (%s) rejected: %d error%s; the running rule set stays",
			     d->cfg_path, why, n, n == 1 ? "" : "s");
		else
			dlog("%s: reload (%s) failed: %s; the running rule set stays", d->cfg_path,
			     why, strerror(-n));
		sd_notify("READY=1");
		return;
	}
	if (trust_config(&next, d->cfg_path)) {
		__atomic_add_fetch(&d->reloads_failed, 1, __ATOMIC_RELAXED);
		dlog("%s: reload (%s) rejected; the running rule set stays", d->cfg_path, why);
		wr_cfg_free(&next);
		sd_notify("READY=1");
		return;
	}
	old = d->cfg;
	old_interval = old.event_interval_s;
	d->cfg = next;
	if (apply(d)) {
		__atomic_add_fetch(&d->reloads_failed, 1, __ATOMIC_RELAXED);
		dlog("reload (%s) applied partly; see above", why);
	} else {
		__atomic_add_fetch(&d->reloads_ok, 1, __ATOMIC_RELAXED);
		dlog("reloaded %s (%s)", d->cfg_path, why);
	}
	wr_cfg_free(&old);
	fleet_restart(d);
	auto_configured(d);
	metrics_restart(d);
	if (old_interval != d->cfg.event_interval_s)
		events_arm(d);
	sd_notify("READY=1");
}

/* Watch the config's directory: editors replace files by rename. */
static int watch_config(struct daemon *d)
{
	char *dup1 = strdup(d->cfg_path), *dup2 = strdup(d->cfg_path);

	if (!dup1 || !dup2) {
		free(dup1);
		free(dup2);
		return -ENOMEM;
	}
	d->cfg_dir = strdup(dirname(dup1));
	d->cfg_base = strdup(basename(dup2));
	free(dup1);
	free(dup2);
	if (!d->cfg_dir || !d->cfg_base)
		return -ENOMEM;
	d->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (d->ino_fd < 0)
		return -errno;
	if (inotify_add_watch(d->ino_fd, d->cfg_dir, IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE) < 0)
		return -errno;
	return 0;
}

/* Did the config file (by name) change? Drains the inotify queue. */
static bool config_changed(struct daemon *d)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool hit = false;
	ssize_t len;

	while ((len = read(d->ino_fd, buf, sizeof(buf))) > 0) {
		const struct inotify_event *ev;
		char *p;

		for (p = buf; p < buf + len; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			if (ev->len && !strcmp(ev->name, d->cfg_base) &&
			    (ev->mask & (IN_CLOSE_WRITE | IN_MOVED_TO)))
				hit = true;
		}
	}
	return hit;
}

/*
 * Everything the loop waits on, set up in order: the config loaded and
 * trusted, the instance lock, the signals, the timers, the config applied,
 * metrics, the event ring, the watch on the file, the capabilities dropped
 * and the fleet's thread. 0, or -errno after saying why (d is then torn
 * down by daemon_free alone).
 */
static int daemon_start(struct daemon *d)
{
	sigset_t mask;
	int n, err;

	n = wr_cfg_load(d->cfg_path, &d->cfg, stderr);
	if (n) {
		if (n > 0)
			pr_err("%s: %d error%s; nothing applied", d->cfg_path, n, n == 1 ? "" : "s");
		else
			pr_err("cannot read %s: %s", d->cfg_path, strerror(-n));
		return n > 0 ? -EINVAL : n;
	}
	err = trust_config(&d->cfg, d->cfg_path);
	if (err)
		return err;
	d->lock_fd = instance_lock();
	if (d->lock_fd < 0) {
		err = d->lock_fd;
		return err;
	}
	d->tracked = calloc(EV_TRACK_MAX, sizeof(*d->tracked));
	d->recon = calloc(1, sizeof(*d->recon));
	if (!d->tracked || !d->recon) {
		err = -ENOMEM;
		return err;
	}
	/* Signals through a signalfd, so the loop sees them in order. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGUSR1);	/* `weir auto on|advise|off` */
	sigprocmask(SIG_BLOCK, &mask, NULL);
	d->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->sig_fd < 0) {
		err = -errno;
		return err;
	}
	d->shed_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	d->fleet_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	d->au_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->shed_fd < 0 || d->fleet_fd < 0 || d->au_fd < 0) {
		err = -errno;
		return err;
	}
	err = apply(d);
	if (err && d->maps.config < 0)
		return err;	/* nothing loaded: nothing to run */
	if (err)
		dlog("started with errors (see above); what could be applied is in force");
	metrics_restart(d);
	{
		char path[PATH_MAX];
		int fd;

		err = wr_pin_path(path, sizeof(path), "wr_events");
		fd = err ? -1 : bpf_obj_get(path);
		d->events = fd >= 0 ? ring_buffer__new(fd, events_on, d, NULL) : NULL;
		if (fd >= 0)
			close(fd);	/* the ring buffer holds its own mapping */
		if (!d->events) {
			err = -errno;
			pr_err("cannot open the event ring buffer: %s", strerror(-err));
			return err;
		}
	}
	err = watch_config(d);
	if (err) {
		pr_err("cannot watch %s: %s", d->cfg_path, strerror(-err));
		return err;
	}
	d->tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->tick_fd < 0) {
		err = -errno;
		return err;
	}
	events_arm(d);
	/* tcp-state auto's watch: a tick a second, cheap when no rule is auto. */
	d->ts_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->ts_fd < 0)
		return -errno;
	{
		struct itimerspec its = { .it_value = { 1, 0 }, .it_interval = { 1, 0 } };

		timerfd_settime(d->ts_fd, 0, &its, NULL);
	}
	err = drop_caps(uses_dispatcher(d));
	if (err) {
		pr_err("cannot drop capabilities: %s", strerror(-err));
		return err;
	}
	/* After the capabilities are dropped: the thread has none either. */
	fleet_restart(d);
	auto_configured(d);
	err = feeds_start(d);
	if (err)
		dlog("cannot start the feed thread: %s; feeds are not refreshed", strerror(-err));
	dlog("running on %s with %s (pid %d)", opts.root, d->cfg_path, getpid());
	sd_notify("READY=1");
	return 0;
}

/* The loop, until SIGTERM or SIGINT (0) or a failed poll (-errno). */
static int daemon_loop(struct daemon *d)
{
	struct pollfd pfd[8];
	int err = 0;

	pfd[0] = (struct pollfd){ .fd = d->sig_fd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = d->ino_fd, .events = POLLIN };
	pfd[2] = (struct pollfd){ .fd = d->tick_fd, .events = POLLIN };
	pfd[3] = (struct pollfd){ .fd = ring_buffer__epoll_fd(d->events), .events = POLLIN };
	pfd[4] = (struct pollfd){ .fd = d->shed_fd, .events = POLLIN };
	pfd[5] = (struct pollfd){ .fd = d->fleet_fd, .events = POLLIN };
	pfd[6] = (struct pollfd){ .fd = d->ts_fd, .events = POLLIN };
	pfd[7] = (struct pollfd){ .fd = d->au_fd, .events = POLLIN };
	for (;;) {
		if (poll(pfd, ARRAY_SIZE(pfd), -1) < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (pfd[0].revents) {
			struct signalfd_siginfo si;
			bool stop = false;

			while (read(d->sig_fd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGHUP)
					reload(d, "SIGHUP");
				else if (si.ssi_signo == SIGUSR1)
					auto_override(d);
				else
					stop = true;
			}
			if (stop)
				break;
		}
		if (pfd[1].revents && config_changed(d))
			reload(d, "file changed");
		if (pfd[3].revents)
			ring_buffer__consume(d->events);
		if (pfd[5].revents) {
			__u64 n;

			if (read(d->fleet_fd, &n, sizeof(n)) > 0)
				fleet_recommit(d);
		}
		if (pfd[6].revents) {
			__u64 ticks;

			if (read(d->ts_fd, &ticks, sizeof(ticks)) > 0) {
				tcpstate_tick(d);
				bans_tick(d);
			}
		}
		if (pfd[7].revents) {
			__u64 ticks;

			if (read(d->au_fd, &ticks, sizeof(ticks)) > 0)
				auto_tick(d);
		}
		if (pfd[4].revents) {
			__u64 ticks;

			if (read(d->shed_fd, &ticks, sizeof(ticks)) > 0)
				shed_tick(d);
		}
		if (pfd[2].revents) {
			__u64 ticks;

			if (read(d->tick_fd, &ticks, sizeof(ticks)) < 0)
				pr_debug("timerfd: %s", strerror(errno));
			ring_buffer__consume(d->events);
			events_flush(d);
			conns_reconcile(d);
			/*
			 * Interfaces that appeared, or came back under a new
			 * index; deny/allow entries past their ttl.
			 */
			{
				int lock = wr_lock();
				__u64 n;

				if (lock >= 0) {
					apply_ifaces(d);
					n = wr_list_expire(&d->maps);
					wr_unlock(lock);
					if (n)
						dlog("removed %llu expired deny/allow entr%s",
						     (unsigned long long)n, n == 1 ? "y" : "ies");
				}
			}
		}
	}
	return err;
}

/* What daemon_start made, whatever it got to. */
static void daemon_free(struct daemon *d)
{
	auto_stop(d);	/* its rules go with it: nobody would remove them */
	if (d->au_fd >= 0)
		close(d->au_fd);
	feeds_stop(d);
	wr_fleet_stop(d->fleet);
	if (d->fleet_fd >= 0)
		close(d->fleet_fd);
	if (d->metrics)
		wr_metrics_stop(d->metrics);
	ring_buffer__free(d->events);
	wr_maps_close(&d->maps);
	if (d->sig_fd >= 0)
		close(d->sig_fd);
	if (d->ino_fd >= 0)
		close(d->ino_fd);
	if (d->tick_fd >= 0)
		close(d->tick_fd);
	if (d->shed_fd >= 0)
		close(d->shed_fd);
	if (d->ts_fd >= 0)
		close(d->ts_fd);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	free(d->tracked);
	free(d->ban_hist);
	free(d->recon);
	free(d->cfg_dir);
	free(d->cfg_base);
	wr_cfg_free(&d->cfg);
}

int wr_daemon_run(const char *path)
{
	struct daemon d = { .sig_fd = -1, .ino_fd = -1, .tick_fd = -1, .lock_fd = -1, .shed_fd = -1,
			    .fleet_fd = -1, .fleet_mult = 1, .ts_fd = -1, .au_fd = -1,
			    .au_mode = -1, .cfg_path = (char *)path };
	int err;

	wr_maps_reset(&d.maps);
	err = daemon_start(&d);
	if (!err)
		err = daemon_loop(&d);
	if (!err) {
		sd_notify("STOPPING=1");
		dlog("stopping; protection stays in place ('weir detach' removes it)");
	}
	daemon_free(&d);
	return err;
}
