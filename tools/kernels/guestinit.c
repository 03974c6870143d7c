// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * guestinit: /init of the initramfs tools/kernels/guest.sh boots a Debian
 * kernel with. It loads the modules in /modules (virtio, 9p, veth, ...;
 * in any order: a module whose dependencies are not in yet is retried on
 * the next pass), mounts the host's root filesystem read-only over
 * virtio-9p (tag "root") with tmpfs where the guest writes, the scratch
 * directory read-write (tag "scratch") at /tmp/guest, the kernel's own
 * config at /boot, and runs /tmp/guest/run.sh under bash. Its exit
 * status is printed as "guest-exit: N" and written to /tmp/guest/rc; then
 * the guest powers off. Built static: the initramfs holds nothing else.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define NEWROOT "/newroot"
#define MAX_PASSES 8

static void say(const char *fmt, const char *arg, int err)
{
	fprintf(stderr, "guestinit: ");
	fprintf(stderr, fmt, arg);
	if (err)
		fprintf(stderr, ": %s", strerror(err));
	fputc('\n', stderr);
}

static void power_off(void)
{
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

static int load_modules(void)
{
	char done[128] = {}, path[300];
	int pass, loaded = 1, total = 0;

	for (pass = 0; pass < MAX_PASSES && loaded; pass++) {
		struct dirent *de;
		DIR *d = opendir("/modules");
		int i = 0;

		loaded = 0;
		if (!d)
			return 0;
		while ((de = readdir(d)) && i < (int)sizeof(done)) {
			int fd;

			if (de->d_name[0] == '.')
				continue;
			if (done[i++])
				continue;
			snprintf(path, sizeof(path), "/modules/%s", de->d_name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			if (!syscall(SYS_finit_module, fd, "", 0) || errno == EEXIST) {
				done[i - 1] = 1;
				loaded++;
				total++;
			}
			close(fd);
		}
		closedir(d);
	}
	return total;
}

static void must_mount(const char *src, const char *dst, const char *type, unsigned long flags,
		       const char *data)
{
	mkdir(dst, 0755);
	if (mount(src, dst, type, flags, data))
		say("cannot mount %s", dst, errno);
}

/*
 * The checkout, when it lies where the guest mounts tmpfs of its own (/tmp,
 * /run, /var/tmp): guest.sh names it on the command line (weir.repo=PATH).
 * It is held aside before those mounts hide it and put back at its path
 * after, so a checkout made in a mktemp -d directory runs in the guest as
 * any other. 0 and the path in buf, or -1 when there is none to keep.
 */
static int hidden_repo(char *buf, size_t len)
{
	static const char *const hidden[] = { "/tmp/", "/run/", "/var/tmp/" };
	char line[4096], *p;
	size_t i, n;
	FILE *f = fopen("/proc/cmdline", "r");

	if (!f)
		return -1;
	p = fgets(line, sizeof(line), f) ? strstr(line, "weir.repo=") : NULL;
	fclose(f);
	if (!p)
		return -1;
	p += strlen("weir.repo=");
	n = strcspn(p, " \n");
	if (!n || n >= len)
		return -1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	for (i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++)
		if (!strncmp(buf, hidden[i], strlen(hidden[i])))
			return 0;
	return -1;
}

static void mkdir_p(char *path)
{
	char *p;

	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	mkdir(path, 0755);
}

int main(void)
{
	char repo[1024], src[1200];
	int held = 0;
	struct utsname u;
	char mods[256];
	pid_t pid;
	int st = 0, rc, n;
	FILE *f;

	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	n = load_modules();
	fprintf(stderr, "guestinit: %d modules loaded\n", n);
	mkdir(NEWROOT, 0755);
	if (mount("root", NEWROOT, "9p", MS_RDONLY,
		  "trans=virtio,version=9p2000.L,msize=262144,cache=loose")) {
		say("cannot mount the host's root over 9p%s", "", errno);
		power_off();
	}
	if (!hidden_repo(repo, sizeof(repo))) {
		snprintf(src, sizeof(src), NEWROOT "%s", repo);
		mkdir("/repo", 0755);
		if (mount(src, "/repo", NULL, MS_BIND, NULL))
			say("cannot hold %s aside", src, errno);
		else
			held = 1;
	}
	/* Where the guest writes: everything else is the host's, read-only. */
	must_mount("tmpfs", NEWROOT "/tmp", "tmpfs", 0, "mode=1777");
	must_mount("tmpfs", NEWROOT "/run", "tmpfs", 0, "mode=0755");
	must_mount("tmpfs", NEWROOT "/var/tmp", "tmpfs", 0, "mode=1777");
	if (held) {
		mkdir_p(src);
		if (mount("/repo", src, NULL, MS_MOVE, NULL))
			say("cannot put the checkout back at %s", src, errno);
	}
	must_mount("scratch", NEWROOT "/tmp/guest", "9p", 0,
		   "trans=virtio,version=9p2000.L,msize=262144");
	/*
	 * The guest kernel's package, unpacked on the host: its modules at
	 * /lib/modules and its config at /boot, as an installed kernel has them.
	 */
	uname(&u);
	f = fopen(NEWROOT "/tmp/guest/kdir", "r");
	if (f && fgets(mods, sizeof(mods), f)) {
		/* (its modules are loaded from the initramfs already) */
		static const char *const sub[][2] = { { "boot", "/boot" } };
		char src[512], dst[512];
		size_t i;

		mods[strcspn(mods, "\n")] = '\0';
		for (i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
			snprintf(src, sizeof(src), NEWROOT "%s/%s", mods, sub[i][0]);
			snprintf(dst, sizeof(dst), NEWROOT "%s", sub[i][1]);
			if (mount(src, dst, NULL, MS_BIND, NULL))
				say("cannot bind %s", src, errno);
		}
	}
	if (f)
		fclose(f);
	if (chdir(NEWROOT) || mount(".", "/", NULL, MS_MOVE, NULL) || chroot(".") || chdir("/")) {
		say("cannot switch to the new root%s", "", errno);
		power_off();
	}
	must_mount("proc", "/proc", "proc", 0, NULL);
	must_mount("sysfs", "/sys", "sysfs", 0, NULL);
	must_mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	must_mount("devpts", "/dev/pts", "devpts", 0, NULL);
	must_mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700");
	must_mount("cgroup2", "/sys/fs/cgroup", "cgroup2", 0, NULL);
	fprintf(stderr, "guestinit: running /tmp/guest/run.sh on %s\n", u.release);
	pid = fork();
	if (pid == 0) {
		setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 1);
		setenv("HOME", "/root", 1);
		execl("/bin/bash", "bash", "/tmp/guest/run.sh", (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	f = fopen("/tmp/guest/rc", "w");
	if (f) {
		fprintf(f, "%d\n", rc);
		fclose(f);
	}
	fprintf(stderr, "guest-exit: %d\n", rc);
	power_off();
	return 0;
}
