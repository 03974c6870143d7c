// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The bpffs root and what is pinned under it, at the bottom of libweir:
 * pin paths, mounting a bpffs where none is, the writers' lock on the root,
 * telling "nothing there" from "may not look", and checking that a pinned
 * program is weir's. Everything else in lib/ that touches a pin goes
 * through these; they call nothing of lib/ themselves.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/libweir.h"

int wr_pin_path(char *buf, size_t len, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", opts.root, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static bool on_bpffs(const char *path)
{
	struct statfs st;

	return statfs(path, &st) == 0 && st.f_type == BPF_FS_MAGIC;
}

int wr_mkdir_p(const char *path)
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
int wr_bpffs_ensure(const char *root)
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
		err = wr_mkdir_p(mnt);
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

int wr_lock(void)
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
int wr_lock_root(void)
{
	int lock, err = wr_bpffs_ensure(opts.root);

	if (err) {
		pr_err("cannot prepare bpffs at %s: %s", opts.root, strerror(-err));
		return err;
	}
	lock = wr_lock();
	if (lock < 0)
		pr_err("cannot lock %s: %s", opts.root, strerror(-lock));
	return lock;
}

void wr_unlock(int fd)
{
	if (fd >= 0)
		close(fd);	/* drops the flock */
}

/*
 * Is path there? 0 if so, -ENOENT if not, -EACCES (after saying so) if we
 * may not look: a bpffs mounted 0700 (as systemd and weir mount it)
 * hides everything under it from an unprivileged user, who must hear
 * "permission denied", never "nothing there".
 */
int wr_probe_path(const char *path)
{
	if (!access(path, F_OK))
		return 0;
	if (errno == EACCES || errno == EPERM)
		return wr_denied();
	return -ENOENT;
}

int wr_denied(void)
{
	pr_err("permission denied under %s: weir needs root (CAP_BPF, CAP_NET_ADMIN, "
	       "CAP_SYS_ADMIN)", opts.root);
	return -EACCES;
}

bool wr_is_loaded(void)
{
	char path[PATH_MAX];

	return !wr_pin_path(path, sizeof(path), "prog_xdp") && access(path, F_OK) == 0;
}

int wr_not_loaded(void)
{
	char path[PATH_MAX];

	/* Tell "nothing there" from "not allowed to look". */
	if (!wr_pin_path(path, sizeof(path), "prog_xdp") && access(path, F_OK) &&
	    (errno == EACCES || errno == EPERM))
		return wr_denied();
	pr_err("weir is not loaded under %s (attach an interface or add a rule first)",
	       opts.root);
	return -ENOENT;
}

/* Is the pinned program weir's? Never attach whatever sits under our name. */
int wr_check_prog(int fd, const char *path, const char *name, __u32 type)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.type != type || strncmp(info.name, name, sizeof(info.name))) {
		pr_err("pinned %s is not weir's program (\"%s\", type %u); refusing to attach "
		       "it: 'weir detach all' removes weir's state", path, info.name, info.type);
		return -EINVAL;
	}
	return 0;
}
