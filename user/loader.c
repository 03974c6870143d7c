// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Pinned state and attachment.
 *
 * Layout under the bpffs root (default /sys/fs/bpf/sluice):
 *   sl_*            maps, pinned by name by libbpf
 *   prog_xdp        the XDP entry
 *   prog_tc         the TC ingress entry
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
#include "sluice_user.h"
#include "sluice.skel.h"
#include "kernel_features.h"

/* Not in the UAPI headers libbpf 1.1 ships with: tcx links (Linux 6.6). */
#ifndef BPF_TCX_INGRESS
#define BPF_TCX_INGRESS 46
#endif
#ifndef BPF_LINK_TYPE_TCX
#define BPF_LINK_TYPE_TCX 11
#endif

/*
 * What each pinned map must be, in SL_MAPS order. Values are read into
 * these structs, so a map of another shape under our name (tampered with,
 * or left by another version) is refused, not trusted.
 */
static const struct {
	const char *name;
	__u32 type, key, value;
} map_shapes[SL_NR_MAPS] = {
#define SHAPE(arg, f, t, k, v) { "sl_" #f, t, k, v },
	SL_MAPS(SHAPE, )
#undef SHAPE
};

/*
 * The BPF object's pinned maps against SL_MAPS, both ways: a map pinned by
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
		for (i = 0; i < SL_NR_MAPS; i++)
			if (!strcmp(bpf_map__name(map), map_shapes[i].name))
				break;
		if (i == SL_NR_MAPS) {
			if (strncmp(bpf_map__name(map), "sl_", 3) || !bpf_map__pin_path(map))
				continue;	/* not pinned: not ours to open */
			pr_err("BUG: pinned map %s is missing from SL_MAPS", bpf_map__name(map));
			return -EINVAL;
		}
		seen++;
		if (bpf_map__type(map) != map_shapes[i].type ||
		    bpf_map__key_size(map) != map_shapes[i].key ||
		    (map_shapes[i].type != BPF_MAP_TYPE_RINGBUF &&
		     bpf_map__value_size(map) != map_shapes[i].value)) {
			pr_err("BUG: map %s is type %d, key %u, value %u in the BPF object but "
			       "SL_MAPS says %u, %u, %u", map_shapes[i].name, bpf_map__type(map),
			       bpf_map__key_size(map), bpf_map__value_size(map), map_shapes[i].type,
			       map_shapes[i].key, map_shapes[i].value);
			return -EINVAL;
		}
	}
	if (seen != SL_NR_MAPS) {
		pr_err("BUG: SL_MAPS names %zu maps the BPF object does not define",
		       (size_t)SL_NR_MAPS - seen);
		return -EINVAL;
	}
	return 0;
}

int sl_pin_path(char *buf, size_t len, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", opts.root, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static bool on_bpffs(const char *path)
{
	struct statfs st;

	return statfs(path, &st) == 0 && st.f_type == BPF_FS_MAGIC;
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	char *p;

	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * Make root a directory on a bpffs. If neither it nor its parent is on one,
 * mount a bpffs: on /sys/fs/bpf for the default root, else on root itself.
 */
int sl_bpffs_ensure(const char *root)
{
	char parent[PATH_MAX];
	const char *mnt;
	int err;

	if (on_bpffs(root))
		return 0;
	if (strlen(root) >= sizeof(parent))
		return -ENAMETOOLONG;
	strcpy(parent, root);
	dirname(parent);
	if (!on_bpffs(parent)) {
		mnt = strcmp(parent, "/sys/fs/bpf") == 0 ? parent : root;
		err = mkdir_p(mnt);
		if (err)
			return err;
		pr_debug("mounting bpffs on %s", mnt);
		if (mount("bpf", mnt, "bpf", 0, "mode=0700"))
			return -errno;
	}
	if (mkdir(root, 0700) && errno != EEXIST)
		return -errno;
	return on_bpffs(root) ? 0 : -ENOTDIR;
}

int sl_lock(void)
{
	int fd = open(opts.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* A bpffs at the root, and the root's writer lock on it; -errno after saying why. */
int sl_lock_root(void)
{
	int lock, err = sl_bpffs_ensure(opts.root);

	if (err) {
		pr_err("cannot prepare bpffs at %s: %s", opts.root, strerror(-err));
		return err;
	}
	lock = sl_lock();
	if (lock < 0)
		pr_err("cannot lock %s: %s", opts.root, strerror(-lock));
	return lock;
}

void sl_unlock(int fd)
{
	if (fd >= 0)
		close(fd);	/* drops the flock */
}

/*
 * Is path there? 0 if so, -ENOENT if not, -EACCES (after saying so) if we
 * may not look: a bpffs mounted 0700 (as systemd and sluice mount it)
 * hides everything under it from an unprivileged user, who must hear
 * "permission denied", never "nothing there".
 */
static int probe_path(const char *path)
{
	if (!access(path, F_OK))
		return 0;
	if (errno == EACCES || errno == EPERM)
		return sl_denied();
	return -ENOENT;
}

int sl_denied(void)
{
	pr_err("permission denied under %s: sluice needs root (CAP_BPF, CAP_NET_ADMIN, "
	       "CAP_SYS_ADMIN)", opts.root);
	return -EACCES;
}

bool sl_is_loaded(void)
{
	char path[PATH_MAX];

	return !sl_pin_path(path, sizeof(path), "prog_xdp") && access(path, F_OK) == 0;
}

int sl_not_loaded(void)
{
	char path[PATH_MAX];

	/* Tell "nothing there" from "not allowed to look". */
	if (!sl_pin_path(path, sizeof(path), "prog_xdp") && access(path, F_OK) &&
	    (errno == EACCES || errno == EPERM))
		return sl_denied();
	pr_err("sluice is not loaded under %s (attach an interface or add a rule first)",
	       opts.root);
	return -ENOENT;
}

static int pin_prog(struct bpf_program *prog, const char *name)
{
	char path[PATH_MAX];
	int err = sl_pin_path(path, sizeof(path), name);

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
	snprintf(buf, len, "/run/sluice/cgroup2");
	if (!statfs(buf, &st) && st.f_type == CGROUP2_SUPER_MAGIC)
		return 0;
	err = mkdir_p(buf);
	if (err)
		return err;
	pr_debug("mounting cgroup2 on %s", buf);
	return mount("cgroup2", buf, "cgroup2", 0, NULL) ? -errno : 0;
}

/*
 * Count connections for connection limits: sock_ops on the cgroup v2 root,
 * held by the pinned link cgroup_sockops. The host's cgroup root carries it
 * only while a rule has a connection limit (sl_conn_counter_sync).
 */
static int attach_sockops(int prog)
{
	char cg[PATH_MAX], path[PATH_MAX];
	int cgfd, link, err;

	err = sl_pin_path(path, sizeof(path), "cgroup_sockops");
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

static int check_prog(int fd, const char *path, const char *name, __u32 type);

static bool needs_conn_counter(const struct sluice_ruleset *rs)
{
	__u32 i, j;

	for (i = 0; i < rs->nr_rules && i < SLUICE_MAX_RULES; i++)
		for (j = 0; j < rs->rules[i].nr_limits && j < SLUICE_MAX_LIMITS; j++)
			if (rs->rules[i].limits[j].algo == SLUICE_ALGO_CONNS)
				return true;
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
int sl_conn_counter_sync(const struct sl_maps *m, const struct sluice_ruleset *rs, bool live)
{
	char lpath[PATH_MAX], ppath[PATH_MAX];
	bool attached, need = needs_conn_counter(rs);
	int prog, err;

	if (sl_pin_path(lpath, sizeof(lpath), "cgroup_sockops") ||
	    sl_pin_path(ppath, sizeof(ppath), "prog_sockops"))
		return -ENAMETOOLONG;
	attached = !access(lpath, F_OK);
	if (need == attached || (need && live) || (!need && !live))
		return 0;
	if (!need) {
		struct sluice_key key, next;

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
		err = -errno;
		pr_err("cannot open %s: %s (state of an older version: 'sluice detach all' and "
		       "load again)", ppath, strerror(-err));
		return err;
	}
	err = check_prog(prog, ppath, "sluice_sockops", BPF_PROG_TYPE_SOCK_OPS);
	if (!err)
		err = attach_sockops(prog);
	close(prog);
	return err;
}

/* The seed of sl_state's set hash: random and nonzero (0 reads as "not set"). */
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
 * that changes what sluice does as a notice (user/kernel_features.h has
 * the list and the probes).
 */
static void say_features(const struct sl_features *f)
{
	int i;

	for (i = 0; i < SL_FEAT_NR; i++) {
		const struct sl_feature_desc *d = &sl_feature_descs[i];

		if (f->has[i] || !d->instead)
			continue;
		if (i == SL_FEAT_XDP_FRAGS)
			pr_info("this kernel (%s) has no %s (Linux %s): %s", sl_kernel_release(),
				d->what, d->since, d->instead);
		else
			pr_debug("this kernel (%s) has no %s (Linux %s): %s", sl_kernel_release(),
				 d->what, d->since, d->instead);
	}
}

/* How long the loader samples the jiffies clock's offset: several 4 ms ticks. */
#define CLOCK_SYNC_NS (15ULL * 1000000ULL)

/*
 * Measure the offset of the jiffies clock from CLOCK_MONOTONIC: every run
 * of sluice_clock_sync samples ktime - jiffies x tick and keeps the
 * smallest in sl_config, which is the offset once a sample has landed just
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
	__u64 end = sl_now_ns() + CLOCK_SYNC_NS;
	int fd = bpf_program__fd(prog), runs = 0;

	do {
		if (bpf_prog_test_run_opts(fd, &to)) {
			pr_debug("cannot measure the jiffies clock's offset: %s (the data path "
				 "reads bpf_ktime_get_coarse_ns instead)", strerror(errno));
			return;
		}
		runs++;
	} while (sl_now_ns() < end);
	pr_debug("measured the jiffies clock's offset over %d runs", runs);
}

const char *const sl_clock_names[4] = {
	[SLUICE_CLOCK_PRECISE] = "precise", [SLUICE_CLOCK_COARSE] = "coarse",
	[SLUICE_CLOCK_MANUAL] = "manual", [SLUICE_CLOCK_AUTO] = "auto",
};

/*
 * The clock the loaded programs were built with: clock_mode in the .rodata
 * map of the pinned XDP program, at its offset in the skeleton's layout.
 * -errno if it cannot be read.
 */
int sl_loaded_clock(void)
{
	char path[PATH_MAX];
	struct bpf_prog_info pi = {};
	__u32 ids[32] = {}, len = sizeof(pi), i, zero = 0;
	int prog, err = -ENOENT;

	if (sl_pin_path(path, sizeof(path), "prog_xdp"))
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
		    mi.value_size >= sizeof(((struct sluice *)0)->rodata[0]) &&
		    (val = calloc(1, mi.value_size))) {
			if (!bpf_map_lookup_elem(fd, &zero, val)) {
				__u32 c;

				memcpy(&c, (char *)val + offsetof(struct sluice__rodata, clock_mode),
				       sizeof(c));
				err = c < ARRAY_SIZE(sl_clock_names) ? (int)c : -EINVAL;
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
static int check_load_opts(const struct sl_load_opts *lo, bool keys_given, bool clock_given)
{
	char path[PATH_MAX];
	int fd, clock;

	if (keys_given && !sl_pin_path(path, sizeof(path), "sl_state") &&
	    (fd = bpf_obj_get(path)) >= 0) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		__u64 want = (lo->keys + SLUICE_WAYS - 1) / SLUICE_WAYS * SLUICE_WAYS;
		int e = bpf_obj_get_info_by_fd(fd, &info, &len);

		close(fd);
		if (!e && (__u64)info.max_entries * SLUICE_WAYS != want) {
			pr_err("sluice is already loaded with %llu per-source buckets; keys %llu "
			       "takes effect only on a fresh load ('sluice detach all' first, "
			       "which also removes rules and lists)",
			       (unsigned long long)info.max_entries * SLUICE_WAYS,
			       (unsigned long long)lo->keys);
			return -EEXIST;
		}
	}
	if (clock_given) {
		clock = sl_loaded_clock();
		if (clock >= 0 && clock != lo->clock) {
			pr_err("sluice is already loaded with clock %s; clock %s takes effect only "
			       "on a fresh load ('sluice detach all' first, which also removes rules "
			       "and lists)", sl_clock_names[clock], sl_clock_names[lo->clock]);
			return -EEXIST;
		}
	}
	return 0;
}

/*
 * Load the programs and create (or reuse) the pinned maps, unless already
 * done. Called with the root lock held.
 */
int sl_ensure_loaded(const struct sl_load_opts *lo)
{
	struct sluice *skel = NULL;
	struct sluice_config cfg;
	struct sl_features feat;
	struct sl_maps m;
	__u32 zero = 0;
	char why[256];
	int err;

	if (sl_is_loaded())
		return 0;
	sl_features_probe(&feat);
	skel = sl_open_for_kernel(opts.root, &feat, why, sizeof(why));
	if (!skel) {
		err = -errno;
		pr_err("cannot load sluice: %s", why);
		return err;
	}
	say_features(&feat);
	err = check_map_list(skel->obj);
	if (err)
		goto out;
	skel->rodata->clock_mode = lo ? lo->clock : SLUICE_CLOCK_AUTO;
	if (lo && lo->keys) {
		/* sl_state holds sets of SLUICE_WAYS buckets: round keys up to whole sets. */
		err = bpf_map__set_max_entries(skel->maps.sl_state,
					       (lo->keys + SLUICE_WAYS - 1) / SLUICE_WAYS);
		if (err)
			goto out;
	}
	err = sluice__load(skel);
	if (err) {
		if (err == -EINVAL || err == -EEXIST)
			pr_err("cannot load sluice: pinned maps under %s do not fit this build or "
			       "these options (run 'sluice detach all' first): %s",
			       opts.root, strerror(-err));
		else
			pr_err("cannot load sluice: %s%s", strerror(-err),
			       err == -EPERM ? " (needs root: CAP_BPF, CAP_NET_ADMIN, "
					       "CAP_SYS_ADMIN)" : "");
		goto out;
	}
	err = pin_prog(skel->progs.sluice_xdp, "prog_xdp");
	if (!err)
		err = pin_prog(skel->progs.sluice_tc, "prog_tc");
	if (err) {
		pr_err("cannot pin programs under %s: %s", opts.root, strerror(-err));
		goto out;
	}
	err = pin_prog(skel->progs.sluice_sockops, "prog_sockops");
	if (err) {
		pr_err("cannot pin programs under %s: %s", opts.root, strerror(-err));
		goto out;
	}
	/* A fresh config starts handing out uids at 1. */
	err = bpf_map_lookup_elem(bpf_map__fd(skel->maps.sl_config), &zero, &cfg) ? -errno : 0;
	if (!err && (cfg.next_uid == 0 || cfg.state_sets == 0)) {
		if (cfg.next_uid == 0) {
			cfg.next_uid = 1;
			/* Connection limits count this namespace's connections. */
			cfg.conn_netns = netns_cookie();
		}
		/*
		 * sl_state's hash seed and set count, once: every bucket lives
		 * where they say, so adopted pins keep theirs. Until state_sets
		 * is set the data path stores nothing, so there is nothing to
		 * move when it is set here.
		 */
		if (cfg.state_sets == 0) {
			struct bpf_map_info info = {};
			__u32 ilen = sizeof(info);

			err = state_seed(&cfg.state_seed);
			if (!err && bpf_obj_get_info_by_fd(bpf_map__fd(skel->maps.sl_state), &info,
							   &ilen))
				err = -errno;
			cfg.state_sets = info.max_entries;
		}
		if (!err && bpf_map_update_elem(bpf_map__fd(skel->maps.sl_config), &zero, &cfg, 0))
			err = -errno;
	}
	if (err) {
		pr_err("cannot initialise the config map: %s", strerror(-err));
		goto out;
	}
	clock_sync(skel->progs.sluice_clock_sync);
	pr_debug("loaded and pinned under %s", opts.root);
	(void)m;
out:
	sluice__destroy(skel);
	return err;
}

/*
 * Begin a change to pinned state: a bpffs at the root, the root locked,
 * sluice loaded if load is set, the maps open. Returns the lock (>= 0) or
 * -errno after saying why; end with sl_write_end() either way.
 */
int sl_write_begin(struct sl_maps *m, bool load)
{
	int lock, err;

	sl_maps_reset(m);
	if (!load && !sl_is_loaded())
		return sl_not_loaded();
	lock = sl_lock_root();
	if (lock < 0)
		return lock;
	err = load ? sl_ensure_loaded(NULL) : 0;
	if (!err)
		err = sl_maps_open(m);
	if (err) {
		sl_unlock(lock);
		return err;
	}
	return lock;
}

void sl_write_end(struct sl_maps *m, int lock)
{
	sl_maps_close(m);
	if (lock >= 0)
		sl_unlock(lock);
}

void sl_maps_reset(struct sl_maps *m)
{
	int *fds[] = SL_MAP_FDS(m);
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fds); i++)
		*fds[i] = -1;
}

int sl_maps_open(struct sl_maps *m)
{
	int *fds[] = SL_MAP_FDS(m);
	char path[PATH_MAX];
	size_t i;
	int err;

	sl_maps_reset(m);
	if (!sl_is_loaded())
		return sl_not_loaded();
	for (i = 0; i < ARRAY_SIZE(fds); i++) {
		err = sl_pin_path(path, sizeof(path), map_shapes[i].name);
		if (err)
			goto fail;
		*fds[i] = bpf_obj_get(path);
		if (*fds[i] < 0) {
			err = -errno;
			pr_err("cannot open pinned map %s: %s%s", path, strerror(-err),
			       err == -EPERM || err == -EACCES ? " (needs root)" : "");
			goto fail;
		}
		{
			struct bpf_map_info info = {};
			__u32 len = sizeof(info);

			if (bpf_obj_get_info_by_fd(*fds[i], &info, &len) ||
			    info.type != map_shapes[i].type || info.key_size != map_shapes[i].key ||
			    (info.type != BPF_MAP_TYPE_RINGBUF &&
			     info.value_size != map_shapes[i].value)) {
				pr_err("pinned %s is not sluice's %s (type %u, key %u, value %u "
				       "bytes); refusing to use it: 'sluice detach all' removes "
				       "sluice's state", path, map_shapes[i].name, info.type, info.key_size,
				       info.value_size);
				err = -EINVAL;
				goto fail;
			}
		}
	}
	return 0;
fail:
	sl_maps_close(m);
	return err;
}

void sl_maps_close(struct sl_maps *m)
{
	int *fds[] = SL_MAP_FDS(m);
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fds); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int sl_config_read(const struct sl_maps *m, struct sluice_config *cfg)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(m->config, &zero, cfg) ? -errno : 0;
}

int sl_config_write(const struct sl_maps *m, const struct sluice_config *cfg)
{
	__u32 zero = 0;

	return bpf_map_update_elem(m->config, &zero, cfg, BPF_ANY) ? -errno : 0;
}

/* The live rule set in a new allocation (free it), or NULL after saying why. */
struct sluice_ruleset *sl_live_get(const struct sl_maps *m)
{
	struct sluice_ruleset *rs = calloc(1, sizeof(*rs));
	int err = rs ? sl_read_live(m, rs) : -ENOMEM;

	if (err) {
		pr_err("cannot read the rule set: %s", strerror(-err));
		free(rs);
		return NULL;
	}
	return rs;
}

int sl_read_live(const struct sl_maps *m, struct sluice_ruleset *rs)
{
	struct sluice_config cfg;
	__u32 idx;
	int err = sl_config_read(m, &cfg);

	if (err)
		return err;
	idx = cfg.active & 1;
	return bpf_map_lookup_elem(m->rulesets, &idx, rs) ? -errno : 0;
}

__u64 sl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int sl_percpu_sum(int map_fd, __u32 key, __u64 *out, size_t words)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *vals;
	size_t i;
	int c;

	if (ncpu <= 0)
		return -EINVAL;
	vals = calloc((size_t)ncpu * words, sizeof(__u64));
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(map_fd, &key, vals)) {
		int err = -errno;

		free(vals);
		return err;
	}
	memset(out, 0, words * sizeof(__u64));
	for (c = 0; c < ncpu; c++)
		for (i = 0; i < words; i++)
			out[i] += vals[(size_t)c * words + i];
	free(vals);
	return 0;
}

/* ---- attach / detach / status ---- */

const char *const sl_mode_names[3] = { "native", "generic", "tc" };

/*
 * The network namespace we run in, by inode. Interface indexes mean
 * something only within one namespace, and one bpffs root may serve
 * several, so link pins carry both, and the mode and the interface's name
 * as attached, so that a link whose interface is gone can still be named
 * (`detach NAME`) and shown as what it was:
 *   link_<netns>_<ifindex>_<mode>_<name>
 * Pins of earlier versions, link_<netns>_<ifindex>, are still read.
 */
static unsigned long netns_ino(void)
{
	static unsigned long ino;
	struct stat st;

	if (!ino && !stat("/proc/self/ns/net", &st))
		ino = st.st_ino;
	return ino;
}

static const char *xdp_mode(int ifindex);

/*
 * TC mode on kernels without tcx links (before 6.6) attaches a classic tc
 * filter to the clsact qdisc's ingress hook instead. A filter is no BPF
 * object and cannot be pinned, so the program is pinned a second time as
 * its record, tcf_<netns>_<ifindex>_<q>_<name>, q being 1 if sluice
 * created the clsact qdisc (and so removes it again). The filter has
 * sluice's own handle and priority, so it never replaces another's.
 */
#define SL_TC_HANDLE	0x51c3
#define SL_TC_PRIO	0xc1

struct link_pin {
	int ifindex;
	int mode;			/* enum sl_attach_mode; -1: not recorded */
	bool tcf;			/* a clsact filter, not a bpf_link */
	bool qdisc_ours;		/* tcf: sluice created the clsact qdisc */
	char name[IF_NAMESIZE];		/* as attached; "" if not recorded */
	char pin[NAME_MAX + 1];		/* the file under the root */
};

/* A link (or clsact filter) pin of this network namespace? Fills lp if so. */
static bool parse_link_pin(const char *file, struct link_pin *lp)
{
	unsigned long ns;
	int idx, off = 0, m, q;
	char mode[16];

	if (sscanf(file, "tcf_%lu_%d_%d_%n", &ns, &idx, &q, &off) == 3 && off) {
		if (ns != netns_ino() || idx <= 0)
			return false;
		memset(lp, 0, sizeof(*lp));
		lp->ifindex = idx;
		lp->mode = SL_MODE_TC;
		lp->tcf = true;
		lp->qdisc_ours = q == 1;
		snprintf(lp->pin, sizeof(lp->pin), "%s", file);
		snprintf(lp->name, sizeof(lp->name), "%s", file + off);
		return true;
	}
	off = 0;
	if (sscanf(file, "link_%lu_%d%n", &ns, &idx, &off) != 2 || ns != netns_ino() || idx <= 0)
		return false;
	memset(lp, 0, sizeof(*lp));
	lp->ifindex = idx;
	lp->mode = -1;
	snprintf(lp->pin, sizeof(lp->pin), "%s", file);
	if (!file[off])
		return true;			/* the older form */
	if (sscanf(file + off, "_%15[a-z]_%n", mode, &m) != 1 || !m)
		return false;
	for (lp->mode = 0; lp->mode < (int)ARRAY_SIZE(sl_mode_names); lp->mode++)
		if (!strcmp(mode, sl_mode_names[lp->mode]))
			break;
	if (lp->mode == (int)ARRAY_SIZE(sl_mode_names))
		return false;
	snprintf(lp->name, sizeof(lp->name), "%s", file + off + m);
	return true;
}

/* The pin of ifindex (or, if ifindex is 0, of the interface once called name). */
static int find_link(int ifindex, const char *name, struct link_pin *lp)
{
	struct dirent *de;
	DIR *d = opendir(opts.root);
	int err = -ENOENT;

	if (!d)
		return errno == EACCES || errno == EPERM ? -EACCES : -ENOENT;
	while ((de = readdir(d))) {
		if (!parse_link_pin(de->d_name, lp))
			continue;
		if (ifindex ? lp->ifindex == ifindex : !strcmp(lp->name, name)) {
			err = 0;
			break;
		}
	}
	closedir(d);
	return err;
}

static int link_pin_path(char *buf, size_t len, const struct link_pin *lp)
{
	return sl_pin_path(buf, len, lp->pin);
}

/*
 * Is the pinned link still on its interface? The kernel clears a link's
 * ifindex when its interface goes away (the first word of both the xdp and
 * the tcx link info).
 */
static bool link_alive(const struct link_pin *lp, struct bpf_link_info *li)
{
	char path[PATH_MAX], now[IF_NAMESIZE];
	__u32 len = sizeof(*li);
	bool alive = false;
	int fd;

	memset(li, 0, sizeof(*li));
	if (link_pin_path(path, sizeof(path), lp))
		return false;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return false;
	if (lp->tcf) {
		/* A clsact filter: ours while our handle holds the pinned program. */
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = lp->ifindex,
			    .attach_point = BPF_TC_INGRESS);
		LIBBPF_OPTS(bpf_tc_opts, to, .handle = SL_TC_HANDLE, .priority = SL_TC_PRIO);
		struct bpf_prog_info pi = {};
		__u32 plen = sizeof(pi);

		if (!bpf_obj_get_info_by_fd(fd, &pi, &plen) && !bpf_tc_query(&hook, &to))
			alive = to.prog_id == pi.id;
		li->prog_id = pi.id;
	} else if (!bpf_obj_get_info_by_fd(fd, li, &len)) {
		alive = li->xdp.ifindex != 0;
	}
	close(fd);
	/* The index now names another interface: ours went and another took it. */
	if (alive && lp->name[0] && (!if_indextoname(lp->ifindex, now) || strcmp(now, lp->name)))
		alive = false;
	return alive;
}

static int explain_busy(const char *dev, int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (!bpf_xdp_query(ifindex, 0, &q) && q.prog_id) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(q.prog_id);

		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			pr_err("%s already has an XDP program (id %u, \"%s\"); sluice leaves it "
			       "alone: remove it first or use mode tc", dev, q.prog_id, info.name);
		else
			pr_err("%s already has an XDP program (id %u); sluice leaves it alone: "
			       "remove it first or use mode tc", dev, q.prog_id);
		if (fd >= 0)
			close(fd);
	} else {
		pr_err("%s already has a program on that hook; sluice leaves it alone", dev);
	}
	return -EBUSY;
}

/* Is the pinned program sluice's? Never attach whatever sits under our name. */
static int check_prog(int fd, const char *path, const char *name, __u32 type)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.type != type || strncmp(info.name, name, sizeof(info.name))) {
		pr_err("pinned %s is not sluice's program (\"%s\", type %u); refusing to attach "
		       "it: 'sluice detach all' removes sluice's state", path, info.name, info.type);
		return -EINVAL;
	}
	return 0;
}

/*
 * Attach the pinned program to dev and pin the link, so the attachment
 * outlives this process. Caller holds the root lock; sluice is loaded.
 */
/* How TC mode hooks in: tcx where the kernel has it, else clsact (auto). */
int tc_hook = SL_TC_HOOK_AUTO;

/*
 * TC mode through the clsact qdisc: create it unless it is there (-EEXIST:
 * someone else's, left alone on detach), add sluice's filter, and pin the
 * program again as the record of it (see SL_TC_HANDLE).
 */
static int attach_clsact(const char *dev, int ifindex, int prog)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, to, .prog_fd = prog, .handle = SL_TC_HANDLE,
		    .priority = SL_TC_PRIO);
	char pin[NAME_MAX + 1], path[PATH_MAX];
	bool created;
	int err;

	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		pr_err("cannot add a clsact qdisc to %s: %s", dev, strerror(-err));
		return err;
	}
	created = !err;
	if ((size_t)snprintf(pin, sizeof(pin), "tcf_%lu_%d_%d_%s", netns_ino(), ifindex,
			     created, dev) >= sizeof(pin) ||
	    sl_pin_path(path, sizeof(path), pin)) {
		err = -ENAMETOOLONG;
		goto fail;
	}
	err = bpf_tc_attach(&hook, &to);
	if (err) {
		if (err == -EEXIST)
			pr_err("%s already has a tc filter with sluice's handle %#x and priority "
			       "%#x on its ingress hook; sluice leaves it alone", dev,
			       SL_TC_HANDLE, SL_TC_PRIO);
		else
			pr_err("cannot attach to %s through clsact: %s", dev, strerror(-err));
		goto fail;
	}
	if (bpf_obj_pin(prog, path)) {
		err = -errno;
		pr_err("cannot pin the record of the tc filter at %s: %s", path, strerror(-err));
		to.prog_fd = 0;
		to.prog_id = 0;
		to.flags = 0;
		bpf_tc_detach(&hook, &to);
		goto fail;
	}
	pr_debug("attached to %s through clsact%s", dev, created ? " (qdisc created)" : "");
	return 0;
fail:
	if (created) {
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&hook);
	}
	return err;
}

int sl_attach_locked(const char *dev, int ifindex, int mode)
{
	LIBBPF_OPTS(bpf_link_create_opts, lco);
	char path[PATH_MAX];
	int prog = -1, link = -1, err;

	{
		struct link_pin lp;
		struct bpf_link_info li;

		if (!find_link(ifindex, NULL, &lp)) {
			if (link_alive(&lp, &li)) {
				pr_err("sluice is already attached to %s; detach it first", dev);
				err = -EEXIST;
				goto out;
			}
			/* The link of an interface that is gone, whose index dev now has. */
			if (!link_pin_path(path, sizeof(path), &lp))
				unlink(path);
		}
		memset(&lp, 0, sizeof(lp));
		lp.ifindex = ifindex;
		if ((size_t)snprintf(lp.pin, sizeof(lp.pin), "link_%lu_%d_%s_%s", netns_ino(),
				     ifindex, sl_mode_names[mode], dev) >= sizeof(lp.pin)) {
			err = -ENAMETOOLONG;
			goto out;
		}
		err = link_pin_path(path, sizeof(path), &lp);
		if (err)
			goto out;
	}
	{
		char ppath[PATH_MAX];

		err = sl_pin_path(ppath, sizeof(ppath), mode == SL_MODE_TC ? "prog_tc" : "prog_xdp");
		if (err)
			goto out;
		prog = bpf_obj_get(ppath);
		if (prog < 0) {
			err = -errno;
			pr_err("cannot open pinned program %s: %s", ppath, strerror(-err));
			goto out;
		}
		err = check_prog(prog, ppath, mode == SL_MODE_TC ? "sluice_tc" : "sluice_xdp",
				 mode == SL_MODE_TC ? BPF_PROG_TYPE_SCHED_CLS : BPF_PROG_TYPE_XDP);
		if (err)
			goto out;
	}
	if (mode == SL_MODE_TC) {
		link = tc_hook == SL_TC_HOOK_CLSACT ? -1 : bpf_link_create(prog, ifindex,
									   BPF_TCX_INGRESS, NULL);
		/* No tcx links (before Linux 6.6), or asked for: a clsact filter. */
		if (tc_hook == SL_TC_HOOK_CLSACT ||
		    (link < 0 && tc_hook == SL_TC_HOOK_AUTO && errno == EINVAL)) {
			err = attach_clsact(dev, ifindex, prog);
			goto out;
		}
	} else {
		lco.flags = mode == SL_MODE_NATIVE ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
		link = bpf_link_create(prog, ifindex, BPF_XDP, &lco);
	}
	if (link < 0) {
		err = -errno;
		if (err == -EBUSY || err == -EEXIST)
			err = explain_busy(dev, ifindex);
		else if (mode == SL_MODE_NATIVE && (err == -EOPNOTSUPP || err == -EINVAL))
			pr_err("%s has no native XDP support (%s); try mode generic or tc", dev,
			       strerror(-err));
		else if (mode == SL_MODE_TC && err == -EINVAL)
			pr_err("cannot attach to %s in tc mode: this kernel lacks tcx links "
			       "(Linux 6.6+; tc-hook auto or clsact attaches to clsact instead)", dev);
		else
			pr_err("cannot attach to %s in %s mode: %s", dev, sl_mode_names[mode],
			       strerror(-err));
		goto out;
	}
	if (bpf_obj_pin(link, path)) {
		err = -errno;
		pr_err("cannot pin the link at %s: %s", path, strerror(-err));
		goto out;	/* closing the only fd detaches again */
	}
	err = 0;
out:
	if (link >= 0)
		close(link);
	if (prog >= 0)
		close(prog);
	return err;
}

/* Help asked for goes to stdout; usage after a mistake to stderr. */
static void usage_attach(FILE *f)
{
	fprintf(f,
		"Usage: sluice attach DEV [mode native|generic|tc] [tc-hook auto|tcx|clsact]\n"
		"                         [keys N] [clock auto|precise|coarse]\n"
		"  mode   native: XDP in the driver (default); generic: XDP in the stack;\n"
		"         tc: TC ingress\n"
		"  tc-hook  for mode tc: a tcx link (Linux 6.6+) or a filter on the clsact\n"
		"         qdisc; auto (default) takes tcx where the kernel has it\n"
		"  keys   per-source buckets to track (default %d), set when first loaded;\n"
		"         rounded up to a multiple of %d, 64 bytes each, preallocated\n"
		"  clock  data-path clock, set when first loaded: auto (default) reads the\n"
		"         jiffies clock, which costs no call, except for rules with a limit\n"
		"         whose burst spans under %d ticks (or a window under %d ticks), which\n"
		"         read the precise one; precise: always bpf_ktime_get_ns; coarse:\n"
		"         always the jiffies clock\n",
		SLUICE_DEFAULT_KEYS, SLUICE_WAYS, SLUICE_COARSE_TICKS, SLUICE_COARSE_WINDOW_TICKS);
}

int do_attach(int argc, char **argv)
{
	struct sl_load_opts lo = { .clock = SLUICE_CLOCK_AUTO };
	bool keys_given = false, clock_given = false;
	int mode = SL_MODE_NATIVE;
	const char *dev;
	int ifindex, lock = -1, err, i;
	uint64_t v;

	if (argc < 1 || !strcmp(argv[0], "help")) {
		usage_attach(argc < 1 ? stderr : stdout);
		return argc < 1 ? -EINVAL : 0;
	}
	dev = argv[0];
	for (i = 1; i < argc; i += 2) {
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!val) {
			pr_err("\"%s\" needs a value", argv[i]);
			return -EINVAL;
		}
		if (!strcmp(argv[i], "mode")) {
			for (mode = 0; mode < (int)ARRAY_SIZE(sl_mode_names); mode++)
				if (!strcmp(val, sl_mode_names[mode]))
					break;
			if (mode == (int)ARRAY_SIZE(sl_mode_names)) {
				pr_err("invalid mode \"%s\" (native, generic or tc)", val);
				return -EINVAL;
			}
		} else if (!strcmp(argv[i], "tc-hook")) {
			static const char *const hooks[] = { "auto", "tcx", "clsact" };

			for (tc_hook = 0; tc_hook < (int)ARRAY_SIZE(hooks); tc_hook++)
				if (!strcmp(val, hooks[tc_hook]))
					break;
			if (tc_hook == (int)ARRAY_SIZE(hooks)) {
				pr_err("invalid tc-hook \"%s\" (auto, tcx or clsact)", val);
				return -EINVAL;
			}
		} else if (!strcmp(argv[i], "keys")) {
			if (parse_u64(val, 1, 1ULL << 28, &v)) {
				pr_err("invalid keys \"%s\" (1 to %llu)", val, 1ULL << 28);
				return -EINVAL;
			}
			lo.keys = v;
			keys_given = true;
		} else if (!strcmp(argv[i], "clock")) {
			clock_given = true;
			if (!strcmp(val, "auto"))
				lo.clock = SLUICE_CLOCK_AUTO;
			else if (!strcmp(val, "precise"))
				lo.clock = SLUICE_CLOCK_PRECISE;
			else if (!strcmp(val, "coarse"))
				lo.clock = SLUICE_CLOCK_COARSE;
			else {
				pr_err("invalid clock \"%s\" (auto, precise or coarse)", val);
				return -EINVAL;
			}
		} else {
			pr_err("unknown attach option \"%s\"", argv[i]);
			usage_attach(stderr);
			return -EINVAL;
		}
	}
	ifindex = if_nametoindex(dev);
	if (!ifindex) {
		pr_err("unknown interface \"%s\"", dev);
		return -ENODEV;
	}
	lock = sl_lock_root();
	if (lock < 0)
		return lock;
	err = sl_is_loaded() ? check_load_opts(&lo, keys_given, clock_given) : 0;
	if (!err)
		err = sl_ensure_loaded(&lo);
	if (!err)
		err = sl_attach_locked(dev, ifindex, mode);
	if (err)
		goto out;
	out_begin();
	print_str("attached", "attached to %s", dev);
	print_str("mode", " in %s mode\n", sl_mode_names[mode]);
	out_end();
out:
	sl_unlock(lock);
	return err;
}

/* Every link pin under the root, by ifindex. */
/* Link pins of every namespace. */
static int count_all_links(void)
{
	struct dirent *de;
	DIR *d = opendir(opts.root);
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, "link_", 5) || !strncmp(de->d_name, "tcf_", 4);
	closedir(d);
	return n;
}

int sl_list_links(int *ifindexes, int max)
{
	struct link_pin lp;
	struct dirent *de;
	DIR *d = opendir(opts.root);
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max)
		if (parse_link_pin(de->d_name, &lp))
			ifindexes[n++] = lp.ifindex;
	closedir(d);
	return n;
}

/*
 * Remove one attachment: unpinning a link destroys it; a clsact filter is
 * detached (and the qdisc removed if sluice created it) before its record
 * goes. A filter whose interface is gone went with it.
 */
static int unpin_link(const struct link_pin *lp)
{
	char path[PATH_MAX];
	int err = link_pin_path(path, sizeof(path), lp);

	if (err)
		return err;
	if (lp->tcf) {
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = lp->ifindex,
			    .attach_point = BPF_TC_INGRESS);
		LIBBPF_OPTS(bpf_tc_opts, to, .handle = SL_TC_HANDLE, .priority = SL_TC_PRIO);
		struct bpf_link_info li;

		if (link_alive(lp, &li)) {
			err = bpf_tc_detach(&hook, &to);
			if (err && err != -ENOENT && err != -ENODEV) {
				pr_err("cannot remove sluice's tc filter from %s: %s", lp->name,
				       strerror(-err));
				return err;
			}
			if (lp->qdisc_ours) {
				hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
				bpf_tc_hook_destroy(&hook);	/* the clsact qdisc sluice made */
			}
		}
	}
	return unlink(path) ? -errno : 0;
}

/* Unpin (and so destroy) the link of ifindex. Caller holds the root lock. */
int sl_detach_ifindex(int ifindex)
{
	struct link_pin lp;
	int err = find_link(ifindex, NULL, &lp);

	return err ? err : unpin_link(&lp);
}

int sl_link_describe(int ifindex, char *name, size_t len, int *mode)
{
	struct bpf_link_info li;
	struct link_pin lp;
	bool alive;

	if (find_link(ifindex, NULL, &lp))
		return -ENOENT;
	alive = link_alive(&lp, &li);
	*mode = lp.mode;
	if (lp.mode < 0 && alive && li.type == BPF_LINK_TYPE_TCX)
		*mode = SL_MODE_TC;
	else if (lp.mode < 0 && alive)
		*mode = strcmp(xdp_mode(ifindex), "generic") ? SL_MODE_NATIVE : SL_MODE_GENERIC;
	if (alive && if_indextoname(ifindex, name))
		return 0;
	if (lp.name[0])
		snprintf(name, len, "%s", lp.name);
	else
		snprintf(name, len, "ifindex%d", ifindex);
	return -ENODEV;
}

static int remove_all(void)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(opts.root);
	int err = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		struct link_pin lp;

		if (de->d_name[0] == '.')
			continue;
		/* A clsact filter of this namespace goes first; its record with it. */
		if (parse_link_pin(de->d_name, &lp) && lp.tcf) {
			int e = unpin_link(&lp);

			err = err ? err : e;
			continue;
		}
		/*
		 * One of another namespace cannot be reached from here: its
		 * record stays, so that `detach all` there removes it.
		 */
		if (!strncmp(de->d_name, "tcf_", 4)) {
			pr_err("a tc filter of sluice's in another network namespace stays until "
			       "'sluice detach all' runs there (%s)", de->d_name);
			continue;
		}
		if (strncmp(de->d_name, "link_", 5) && strncmp(de->d_name, "prog_", 5) &&
		    strncmp(de->d_name, "sl_", 3) && strncmp(de->d_name, "cgroup_", 7))
			continue;	/* not ours: leave it */
		if (sl_pin_path(path, sizeof(path), de->d_name) || unlink(path))
			err = -errno;
	}
	closedir(d);
	if (rmdir(opts.root) && errno != ENOTEMPTY && errno != ENOENT && errno != EBUSY)
		err = -errno;
	return err;
}

int do_detach(int argc, char **argv)
{
	char name[IF_NAMESIZE + 16];
	int links[256], n, i, lock, ifindex, err = 0;

	if (argc != 1 || !strcmp(argv[0], "help")) {
		fprintf(argc == 1 ? stdout : stderr, "Usage: sluice detach DEV | all\n"
				"  DEV  remove sluice from one interface (rules and state stay)\n"
				"  all  remove it everywhere, with its rules, lists and state\n");
		return argc == 1 ? 0 : -EINVAL;
	}
	err = probe_path(opts.root);
	if (err == -EACCES)
		return err;
	if (err) {
		if (!strcmp(argv[0], "all"))
			return 0;	/* nothing to remove */
		pr_err("sluice is not attached to \"%s\" (nothing under %s)", argv[0], opts.root);
		return -ENOENT;
	}
	lock = sl_lock();
	if (lock < 0) {
		pr_err("cannot lock %s: %s", opts.root, strerror(-lock));
		return lock;
	}
	if (!strcmp(argv[0], "all")) {
		int others = count_all_links();

		n = sl_list_links(links, ARRAY_SIZE(links));
		for (i = 0; i < n; i++) {
			int mode;

			sl_link_describe(links[i], name, sizeof(name), &mode);
			print_text("detached from %s\n", name);
		}
		if (others > n)
			print_text("detached %d attachments in other network namespaces\n",
				   others - n);
		err = remove_all();
		if (err)
			pr_err("cannot remove everything under %s: %s", opts.root, strerror(-err));
		goto out;
	}
	ifindex = if_nametoindex(argv[0]);
	if (!ifindex) {
		struct link_pin lp;
		int idx;
		char tail;

		/* An interface that is gone: by the name it was attached as, or as status shows it. */
		if (!find_link(0, argv[0], &lp) ||
		    (sscanf(argv[0], "ifindex%d%c", &idx, &tail) == 1 && !find_link(idx, NULL, &lp)))
			ifindex = lp.ifindex;
	}
	if (!ifindex) {
		pr_err("unknown interface \"%s\"", argv[0]);
		err = -ENODEV;
		goto out;
	}
	err = sl_detach_ifindex(ifindex);
	if (err) {
		if (err == -ENOENT)
			pr_err("sluice is not attached to %s", argv[0]);
		else
			pr_err("cannot detach from %s: %s", argv[0], strerror(-err));
		goto out;
	}
	print_text("detached from %s\n", argv[0]);
out:
	sl_unlock(lock);
	return err;
}

static const char *xdp_mode(int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (bpf_xdp_query(ifindex, 0, &q))
		return "xdp";
	switch (q.attach_mode) {
	case XDP_ATTACHED_DRV: return "native";
	case XDP_ATTACHED_SKB: return "generic";
	case XDP_ATTACHED_HW: return "offload";
	case XDP_ATTACHED_MULTI:
		return q.drv_prog_id ? "native" : "generic";
	default: return "xdp";
	}
}

int sl_link_mode(int ifindex)
{
	char name[IF_NAMESIZE + 16];
	int mode, err = sl_link_describe(ifindex, name, sizeof(name), &mode);

	return err ? err : mode;
}

int do_status(int argc, char **argv)
{
	int clock;
	struct sluice_ruleset *rs = NULL;
	struct sluice_config cfg = {};
	struct sl_maps m;
	char name[IF_NAMESIZE + 16];
	int links[256], n, i, err;
	struct bpf_map_info minfo = {};
	__u32 ilen = sizeof(minfo);

	if (argc > 0) {
		bool help = argc == 1 && !strcmp(argv[0], "help");

		fprintf(help ? stdout : stderr, "Usage: sluice status\n"
			"  what is loaded and where: attachments and their modes, switches,\n"
			"  rules, the per-source table and the clock\n");
		return help ? 0 : -EINVAL;
	}
	if (!sl_is_loaded()) {
		char path[PATH_MAX];

		/* "Not loaded" only when we could have seen it: else say why not. */
		if (!sl_pin_path(path, sizeof(path), "prog_xdp") && access(path, F_OK) &&
		    (errno == EACCES || errno == EPERM))
			return sl_not_loaded();
		out_begin();
		print_bool("loaded", "loaded: %s\n", false);
		print_str("bpffs", "bpffs: %s\n", opts.root);
		open_array("interfaces");
		close_array();
		out_end();
		return 0;
	}
	err = sl_maps_open(&m);
	if (err)
		return err;
	rs = sl_live_get(&m);
	err = rs ? sl_config_read(&m, &cfg) : -ENOENT;
	if (err) {
		if (rs)
			pr_err("cannot read the config: %s", strerror(-err));
		goto out;
	}
	bpf_obj_get_info_by_fd(m.state, &minfo, &ilen);
	out_begin();
	print_bool("loaded", "loaded: %s\n", true);
	print_str("bpffs", "bpffs: %s\n", opts.root);
	print_bool("enabled", "enabled: %s", !cfg.disabled);
	print_text("%s\n", cfg.disabled ? " (kill switch on: everything passes, would-drops "
					  "counted)" : "");
	print_str("fail", "on internal faults: fail %s\n", cfg.fail_closed ? "closed" : "open");
	print_str("malformed", "malformed IP: %s\n", cfg.malformed_pass ? "pass" : "drop");
	print_u64("rules", "rules: %llu\n", rs->nr_rules);
	print_u64("generation", "rule set generation: %llu\n", rs->gen);
	open_object("keys");
	print_u64("capacity", "per-source buckets: capacity %llu", (__u64)minfo.max_entries * SLUICE_WAYS);
	print_u64("sets", " (%llu sets", minfo.max_entries);
	print_u64("ways", " of %llu ways)\n", SLUICE_WAYS);
	close_object();
	clock = sl_loaded_clock();
	print_str("clock", "clock: %s\n", clock >= 0 ? sl_clock_names[clock] : "unknown");
	open_array("interfaces");
	n = sl_list_links(links, ARRAY_SIZE(links));
	if (!n)
		print_text("attached: nowhere\n");
	for (i = 0; i < n; i++) {
		struct bpf_link_info li;
		struct link_pin lp;
		int mode = -1;
		bool gone;

		if (find_link(links[i], NULL, &lp))
			continue;	/* detached since the directory was read */
		gone = sl_link_describe(links[i], name, sizeof(name), &mode) == -ENODEV;
		link_alive(&lp, &li);
		open_object(NULL);
		print_text("attached: ");
		print_str("interface", "%s", name);
		print_u64("ifindex", NULL, links[i]);
		/* As attach names it; a link of an older version whose interface is gone says "unknown". */
		print_str("mode", " mode %s", mode >= 0 ? sl_mode_names[mode] : "unknown");
		if (mode == SL_MODE_TC)
			print_str("tc_hook", " hook %s", lp.tcf ? "clsact" : "tcx");
		print_u64("link_id", " link %llu", li.id);
		print_u64("prog_id", " prog %llu", li.prog_id);
		print_bool("interface_gone", NULL, gone);
		if (gone)
			print_text(" (interface gone: 'sluice detach %s' removes the link)", name);
		print_text("\n");
		close_object();
	}
	close_array();
	i = count_all_links() - n;
	print_u64("other_netns_attachments", i ? "attached in other network namespaces: %llu\n"
						: NULL, i);
	out_end();
	err = 0;
out:
	free(rs);
	sl_maps_close(&m);
	return err;
}
