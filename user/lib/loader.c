// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The BPF object: loading it (for this kernel), pinning it, and the
 * sock_ops connection counter. The bpffs root and its lock are pins.c, map
 * access maps.c, attachments links.c, the attach/detach/status commands
 * cmd/attach.c.
 *
 * Layout under the bpffs root (default /sys/fs/bpf/weir):
 *   wr_*            maps, pinned by name by libbpf
 *   prog_xdp        the XDP entry
 *   prog_tc         the TC ingress entry
 *   prog_egress     the TC egress program (the reflection preset's flows)
 *   link_<ifindex>  one bpf_link per attached interface
 * The links hold the programs on the interfaces after the CLI exits; only
 * `detach` unpins (and so destroys) them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/libweir.h"
#include "weir.skel.h"
#include "weir_limiter.h"
#include "lib/kernel_features.h"


/*
 * The BPF object's pinned maps against WR_MAPS, both ways: a map pinned by
 * name that the list lacks, or one whose shape differs, is a build error
 * that no test of a single command would see. Checked on every load.
 */
static int check_map_list(struct bpf_object *obj)
{
	const struct bpf_map *map;
	size_t i, seen = 0;

	bpf_object__for_each_map(map, obj) {
		if (!bpf_map__pin_path(map) && bpf_map__is_internal(map))
			continue;
		for (i = 0; i < WR_NR_MAPS; i++)
			if (!strcmp(bpf_map__name(map), wr_map_shapes[i].name))
				break;
		if (i == WR_NR_MAPS) {
			if (strncmp(bpf_map__name(map), "wr_", 3) || !bpf_map__pin_path(map))
				continue;	/* not pinned: not ours to open */
			pr_err("BUG: pinned map %s is missing from WR_MAPS", bpf_map__name(map));
			return -EINVAL;
		}
		seen++;
		if (bpf_map__type(map) != wr_map_shapes[i].type ||
		    bpf_map__key_size(map) != wr_map_shapes[i].key ||
		    (wr_map_shapes[i].type != BPF_MAP_TYPE_RINGBUF &&
		     bpf_map__value_size(map) != wr_map_shapes[i].value)) {
			pr_err("BUG: map %s is type %d, key %u, value %u in the BPF object but "
			       "WR_MAPS says %u, %u, %u", wr_map_shapes[i].name, bpf_map__type(map),
			       bpf_map__key_size(map), bpf_map__value_size(map), wr_map_shapes[i].type,
			       wr_map_shapes[i].key, wr_map_shapes[i].value);
			return -EINVAL;
		}
	}
	if (seen != WR_NR_MAPS) {
		pr_err("BUG: WR_MAPS names %zu maps the BPF object does not define",
		       (size_t)WR_NR_MAPS - seen);
		return -EINVAL;
	}
	return 0;
}

static int pin_prog(struct bpf_program *prog, const char *name)
{
	char path[PATH_MAX];
	int err = wr_pin_path(path, sizeof(path), name);

	if (err)
		return err;
	unlink(path);
	return bpf_program__pin(prog, path);
}

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

/* The cookie of the network namespace we run in (Linux 5.14+); 0 if unknown. */
static __u64 netns_cookie(void)
{
	__u64 cookie = 0;
	socklen_t len = sizeof(cookie);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd >= 0) {
		if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len))
			cookie = 0;
		close(fd);
	}
	return cookie;
}

/*
 * The cgroup v2 hierarchy's root, where the sock_ops program sees every TCP
 * connection: /sys/fs/cgroup on current systems, else a cgroup2 mount of
 * our own.
 */
static int cgroup2_root(char *buf, size_t len)
{
	static const char *const tries[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	struct statfs st;
	size_t i;
	int err;

	for (i = 0; i < ARRAY_SIZE(tries); i++) {
		if (!statfs(tries[i], &st) && st.f_type == CGROUP2_SUPER_MAGIC) {
			snprintf(buf, len, "%s", tries[i]);
			return 0;
		}
	}
	snprintf(buf, len, "/run/weir/cgroup2");
	if (!statfs(buf, &st) && st.f_type == CGROUP2_SUPER_MAGIC)
		return 0;
	err = wr_mkdir_p(buf);
	if (err)
		return err;
	pr_debug("mounting cgroup2 on %s", buf);
	return mount("cgroup2", buf, "cgroup2", 0, NULL) ? -errno : 0;
}

/*
 * Count connections for connection limits: sock_ops on the cgroup v2 root,
 * held by the pinned link cgroup_sockops. The host's cgroup root carries it
 * only while a rule has a connection limit (wr_conn_counter_sync).
 */
static int attach_sockops(int prog)
{
	char cg[PATH_MAX], path[PATH_MAX];
	int cgfd, link, err;

	err = wr_pin_path(path, sizeof(path), "cgroup_sockops");
	if (err)
		return err;
	if (!access(path, F_OK))
		return 0;
	err = cgroup2_root(cg, sizeof(cg));
	if (err) {
		pr_err("cannot find or mount a cgroup v2 hierarchy (connection limits need "
		       "one): %s", strerror(-err));
		return err;
	}
	cgfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgfd < 0)
		return -errno;
	link = bpf_link_create(prog, cgfd, BPF_CGROUP_SOCK_OPS, NULL);
	err = link < 0 ? -errno : 0;
	close(cgfd);
	if (err) {
		pr_err("cannot attach the connection counter to %s: %s", cg, strerror(-err));
		return err;
	}
	if (bpf_obj_pin(link, path))
		err = -errno;
	close(link);
	pr_debug("connection counter attached to %s", cg);
	return err;
}


/*
 * The sock_ops program counts connections for connection limits and keeps
 * verified sources for rules that answer cookies or spare them.
 */
static bool needs_conn_counter(const struct weir_ruleset *rs)
{
	__u32 i, j;

	for (i = 0; i < rs->nr_rules && i < WEIR_MAX_RULES; i++) {
		if (wr_rule_uses_verified(&rs->rules[i]))
			return true;
		for (j = 0; j < rs->rules[i].nr_limits && j < WEIR_MAX_LIMITS; j++)
			if (rs->rules[i].limits[j].algo == WEIR_ALGO_CONNS)
				return true;
	}
	return false;
}

/*
 * Attach the connection counter when rs has a connection limit, before rs
 * goes live (live false), so that a limit never runs uncounted; remove it
 * once an rs without one is live (live true). Counts start when it is attached (the daemon reconciles
 * them with the kernel's sockets); removed, it leaves no counts behind, so
 * connections that close while it is away cannot leak into later ones.
 * Caller holds the root lock.
 */
int wr_conn_counter_sync(const struct wr_maps *m, const struct weir_ruleset *rs, bool live)
{
	char lpath[PATH_MAX], ppath[PATH_MAX];
	bool attached, need = needs_conn_counter(rs);
	int prog, err;

	if (wr_pin_path(lpath, sizeof(lpath), "cgroup_sockops") ||
	    wr_pin_path(ppath, sizeof(ppath), "prog_sockops"))
		return -ENAMETOOLONG;
	attached = !access(lpath, F_OK);
	if (need == attached || (need && live) || (!need && !live))
		return 0;
	if (!need) {
		struct weir_key key, next;

		/* Pins of an older version attached at load, without prog_sockops: keep the program. */
		if (access(ppath, F_OK)) {
			struct bpf_link_info li = {};
			__u32 len = sizeof(li);
			int link = bpf_obj_get(lpath);

			if (link >= 0 && !bpf_obj_get_info_by_fd(link, &li, &len) &&
			    (prog = bpf_prog_get_fd_by_id(li.prog_id)) >= 0) {
				if (bpf_obj_pin(prog, ppath))
					pr_debug("cannot pin %s: %s", ppath, strerror(errno));
				close(prog);
			}
			if (link >= 0)
				close(link);
		}
		if (unlink(lpath))
			return -errno;
		while (!bpf_map_get_next_key(m->conns, NULL, &next)) {
			key = next;
			if (bpf_map_delete_elem(m->conns, &key))
				break;
		}
		pr_debug("connection counter removed: no rule has a connection limit");
		return 0;
	}
	prog = bpf_obj_get(ppath);
	if (prog < 0) {
		struct wr_features f;

		err = -errno;
		wr_features_probe(&f);
		if (err == -ENOENT && !f.has[WR_FEAT_SOCKOPS_NETNS]) {
			pr_err("connection limits need %s (Linux %s), which this kernel (%s) "
			       "lacks", wr_feature_descs[WR_FEAT_SOCKOPS_NETNS].what,
			       wr_feature_descs[WR_FEAT_SOCKOPS_NETNS].since, wr_kernel_release());
			return -EOPNOTSUPP;
		}
		pr_err("cannot open %s: %s (state of an older version: 'weir detach all' and "
		       "load again)", ppath, strerror(-err));
		return err;
	}
	err = wr_check_prog(prog, ppath, "weir_sockops", BPF_PROG_TYPE_SOCK_OPS);
	if (!err)
		err = attach_sockops(prog);
	close(prog);
	return err;
}

/* The seed of wr_state's set hash: random and nonzero (0 reads as "not set"). */
static int state_seed(__u64 *seed)
{
	ssize_t n;

	do {
		n = getrandom(seed, sizeof(*seed), 0);
		if (n < 0 && errno != EINTR)
			return -errno;
	} while (n != sizeof(*seed) || !*seed);
	return 0;
}

/*
 * What the kernel lacks, said once per load: a replacement under -d, one
 * that changes what weir does as a notice (user/kernel_features.h has
 * the list and the probes).
 */
static void say_features(const struct wr_features *f)
{
	int i;

	for (i = 0; i < WR_FEAT_NR; i++) {
		const struct wr_feature_desc *d = &wr_feature_descs[i];

		if (f->has[i] || !d->instead)
			continue;
		if (i == WR_FEAT_XDP_FRAGS || i == WR_FEAT_SOCKOPS_NETNS || i == WR_FEAT_SYNCOOKIE)
			pr_info("this kernel (%s) has no %s (Linux %s): %s", wr_kernel_release(),
				d->what, d->since, d->instead);
		else
			pr_debug("this kernel (%s) has no %s (Linux %s): %s", wr_kernel_release(),
				 d->what, d->since, d->instead);
	}
}

/* How long the loader samples the jiffies clock's offset: several 4 ms ticks. */
#define CLOCK_SYNC_NS (15ULL * 1000000ULL)

/*
 * Measure the offset of the jiffies clock from CLOCK_MONOTONIC: every run
 * of weir_clock_sync samples ktime - jiffies x tick and keeps the
 * smallest in wr_config, which is the offset once a sample has landed just
 * after a tick. Sampling for a few ticks gets within a few microseconds.
 * Without it the data path reads bpf_ktime_get_coarse_ns instead, which is
 * slower but just as correct, so a failure here is no reason to stop.
 */
static void clock_sync(struct bpf_program *prog)
{
	char frame[64] = {}, out[64];
	/*
	 * One run per call: a sample every microsecond or so. (A repeat count
	 * above 1 makes each XDP test run take milliseconds, not faster.) The
	 * frame comes back in out, which memory checkers want to see.
	 */
	LIBBPF_OPTS(bpf_test_run_opts, to, .data_in = frame, .data_size_in = sizeof(frame),
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
	__u64 end = wr_mono_ns() + CLOCK_SYNC_NS;
	int fd = bpf_program__fd(prog), runs = 0;

	do {
		if (bpf_prog_test_run_opts(fd, &to)) {
			pr_debug("cannot measure the jiffies clock's offset: %s (the data path "
				 "reads bpf_ktime_get_coarse_ns instead)", strerror(errno));
			return;
		}
		runs++;
	} while (wr_mono_ns() < end);
	pr_debug("measured the jiffies clock's offset over %d runs", runs);
}

const char *const wr_clock_names[4] = {
	[WEIR_CLOCK_PRECISE] = "precise", [WEIR_CLOCK_COARSE] = "coarse",
	[WEIR_CLOCK_MANUAL] = "manual", [WEIR_CLOCK_AUTO] = "auto",
};

/*
 * The clock the loaded programs were built with: clock_mode in the .rodata
 * map of the pinned XDP program, at its offset in the skeleton's layout.
 * -errno if it cannot be read.
 */
int wr_loaded_clock(void)
{
	char path[PATH_MAX];
	struct bpf_prog_info pi = {};
	__u32 ids[32] = {}, len = sizeof(pi), i, zero = 0;
	int prog, err = -ENOENT;

	if (wr_pin_path(path, sizeof(path), "prog_xdp"))
		return -ENAMETOOLONG;
	prog = bpf_obj_get(path);
	if (prog < 0)
		return -errno;
	pi.nr_map_ids = ARRAY_SIZE(ids);
	pi.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog, &pi, &len)) {
		err = -errno;
		goto out;
	}
	for (i = 0; i < pi.nr_map_ids && i < ARRAY_SIZE(ids) && err; i++) {
		struct bpf_map_info mi = {};
		__u32 mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);
		const char *dot;
		void *val;

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &mi, &mlen) && (dot = strrchr(mi.name, '.')) &&
		    !strcmp(dot, ".rodata") &&
		    mi.value_size >= sizeof(((struct weir *)0)->rodata[0]) &&
		    (val = calloc(1, mi.value_size))) {
			if (!bpf_map_lookup_elem(fd, &zero, val)) {
				__u32 c;

				memcpy(&c, (char *)val + offsetof(struct weir__rodata, clock_mode),
				       sizeof(c));
				err = c < ARRAY_SIZE(wr_clock_names) ? (int)c : -EINVAL;
			}
			free(val);
		}
		close(fd);
	}
out:
	close(prog);
	return err;
}

/*
 * Options that only a load sets (the table's size, the clock) against what
 * is loaded: given and different, the caller is told to start over, never
 * silently ignored. 0 if they agree or were not given.
 */
int wr_check_load_opts(const struct wr_load_opts *lo, bool keys_given, bool clock_given)
{
	char path[PATH_MAX];
	int fd, clock;

	if (keys_given && !wr_pin_path(path, sizeof(path), "wr_state") &&
	    (fd = bpf_obj_get(path)) >= 0) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		__u64 want = (lo->keys + WEIR_WAYS - 1) / WEIR_WAYS * WEIR_WAYS;
		int e = bpf_obj_get_info_by_fd(fd, &info, &len);

		close(fd);
		if (!e && (__u64)info.max_entries * WEIR_WAYS != want) {
			pr_err("weir is already loaded with %llu per-source buckets; keys %llu "
			       "takes effect only on a fresh load ('weir detach all' first, "
			       "which also removes rules and lists)",
			       (unsigned long long)info.max_entries * WEIR_WAYS,
			       (unsigned long long)lo->keys);
			return -EEXIST;
		}
	}
	if (clock_given) {
		clock = wr_loaded_clock();
		if (clock >= 0 && clock != lo->clock) {
			pr_err("weir is already loaded with clock %s; clock %s takes effect only "
			       "on a fresh load ('weir detach all' first, which also removes rules "
			       "and lists)", wr_clock_names[clock], wr_clock_names[lo->clock]);
			return -EEXIST;
		}
	}
	return 0;
}

/*
 * Load the programs and create (or reuse) the pinned maps, unless already
 * done. Called with the root lock held.
 */
int wr_ensure_loaded(const struct wr_load_opts *lo)
{
	struct weir *skel = NULL;
	struct weir_config cfg;
	struct wr_features feat;
	struct wr_maps m;
	__u32 zero = 0;
	char why[256];
	int err;

	if (wr_is_loaded())
		return 0;
	wr_features_probe(&feat);
	skel = wr_open_for_kernel(opts.root, &feat, why, sizeof(why));
	if (!skel) {
		err = -errno;
		pr_err("cannot load weir: %s", why);
		return err;
	}
	say_features(&feat);
	err = check_map_list(skel->obj);
	if (err)
		goto out;
	skel->rodata->clock_mode = lo ? lo->clock : WEIR_CLOCK_AUTO;
	if (lo && lo->keys) {
		/* wr_state holds sets of WEIR_WAYS buckets: round keys up to whole sets. */
		err = bpf_map__set_max_entries(skel->maps.wr_state,
					       (lo->keys + WEIR_WAYS - 1) / WEIR_WAYS);
		if (err)
			goto out;
	}
	err = weir__load(skel);
	if (err) {
		if (err == -EINVAL || err == -EEXIST)
			pr_err("cannot load weir: pinned maps under %s do not fit this build or "
			       "these options (run 'weir detach all' first): %s",
			       opts.root, strerror(-err));
		else
			pr_err("cannot load weir: %s%s", strerror(-err),
			       err == -EPERM ? " (needs root: CAP_BPF, CAP_NET_ADMIN, "
					       "CAP_SYS_ADMIN)" : "");
		goto out;
	}
	err = wr_cookie_progs_fill(skel);
	if (err) {
		pr_err("cannot fill wr_cookie_progs: %s", strerror(-err));
		goto out;
	}
	err = pin_prog(skel->progs.weir_xdp, "prog_xdp");
	if (!err)
		err = pin_prog(skel->progs.weir_tc, "prog_tc");
	if (!err)
		err = pin_prog(skel->progs.weir_egress, "prog_egress");
	if (err) {
		pr_err("cannot pin programs under %s: %s", opts.root, strerror(-err));
		goto out;
	}
	if (bpf_program__autoload(skel->progs.weir_sockops))
		err = pin_prog(skel->progs.weir_sockops, "prog_sockops");
	if (err) {
		pr_err("cannot pin programs under %s: %s", opts.root, strerror(-err));
		goto out;
	}
	/* A fresh config starts handing out uids at 1. */
	err = bpf_map_lookup_elem(bpf_map__fd(skel->maps.wr_config), &zero, &cfg) ? -errno : 0;
	if (!err && (cfg.next_uid == 0 || cfg.state_sets == 0)) {
		if (cfg.next_uid == 0) {
			cfg.next_uid = 1;
			/* Connection limits count this namespace's connections. */
			cfg.conn_netns = netns_cookie();
		}
		/*
		 * wr_state's hash seed and set count, once: every bucket lives
		 * where they say, so adopted pins keep theirs. Until state_sets
		 * is set the data path stores nothing, so there is nothing to
		 * move when it is set here.
		 */
		if (cfg.state_sets == 0) {
			struct bpf_map_info info = {};
			__u32 ilen = sizeof(info);

			err = state_seed(&cfg.state_seed);
			if (!err && bpf_obj_get_info_by_fd(bpf_map__fd(skel->maps.wr_state), &info,
							   &ilen))
				err = -errno;
			cfg.state_sets = info.max_entries;
		}
		if (!err && bpf_map_update_elem(bpf_map__fd(skel->maps.wr_config), &zero, &cfg, 0))
			err = -errno;
	}
	if (err) {
		pr_err("cannot initialise the config map: %s", strerror(-err));
		goto out;
	}
	clock_sync(skel->progs.weir_clock_sync);
	pr_debug("loaded and pinned under %s", opts.root);
	(void)m;
out:
	weir__destroy(skel);
	return err;
}

