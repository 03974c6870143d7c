// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Per-interface counters: each attachment's slot in wr_if_slot and
 * wr_if_stats (include/weir.h: WEIR_IF_SLOTS), claimed when weir attaches
 * to an interface (links.c) and freed when it detaches. The data path
 * counts each frame's verdict there (bpf/count.h: wr_if_count), finding
 * the slot in at most WEIR_IF_PROBES array lookups from the ifindex's low
 * bits. A detach marks its slot freed (WEIR_IF_FREED), not never used, so
 * that a search goes on past it. A slot whose interface is gone (deleted,
 * which detaches no pin) is taken again by the next claim that needs it.
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/libweir.h"

/* The pinned slot map (and the stats map when st is not NULL); -errno if not loaded. */
static int open_maps(int *st)
{
	char path[PATH_MAX];
	int fd, err;

	err = wr_pin_path(path, sizeof(path), "wr_if_slot");
	if (err)
		return err;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (!st)
		return fd;
	err = wr_pin_path(path, sizeof(path), "wr_if_stats");
	*st = err ? -1 : bpf_obj_get(path);
	if (*st < 0) {
		close(fd);
		return err ? err : -errno;
	}
	return fd;
}

/* Zero slot h's counters on every CPU. */
static int zero_slot(int st, __u32 h)
{
	int ncpu = libbpf_num_possible_cpus();
	void *z;
	int err = 0;

	if (ncpu <= 0)
		return -EINVAL;
	z = calloc(ncpu, sizeof(struct weir_if_stats));
	if (!z)
		return -ENOMEM;
	if (bpf_map_update_elem(st, &h, z, BPF_ANY))
		err = -errno;
	free(z);
	return err;
}

int wr_if_claim(int ifindex)
{
	__u32 i, h, owner, want = ifindex, pick = UINT32_MAX;
	char name[IF_NAMESIZE];
	int fd, st, err = 0;

	if (ifindex <= 0)
		return -EINVAL;
	fd = open_maps(&st);
	if (fd < 0)
		return fd;
	for (i = 0; i < WEIR_IF_PROBES; i++) {
		h = (want + i) & (WEIR_IF_SLOTS - 1);
		if (bpf_map_lookup_elem(fd, &h, &owner)) {
			err = -errno;
			goto out;
		}
		/* Its own slot already: keep its counts (a second attach after a failed one). */
		if (owner == want)
			goto out;
		/*
		 * Free, or held by an interface that is gone (deleted: no
		 * detach freed its slot).
		 */
		if (pick == UINT32_MAX && (!owner || owner == WEIR_IF_FREED ||
					   !if_indextoname(owner, name)))
			pick = h;
		/* Never used: no later slot holds want (they fill from h on). */
		if (!owner)
			break;
	}
	if (pick == UINT32_MAX) {
		pr_warn("no counter slot for ifindex %d: the %d slots its low bits may take hold "
			"other attachments (its traffic is judged as ever, not counted per "
			"interface)", ifindex, WEIR_IF_PROBES);
		goto out;
	}
	/* Counts first, then the owner: the data path never adds to a stale count. */
	err = zero_slot(st, pick);
	if (!err && bpf_map_update_elem(fd, &pick, &want, BPF_ANY))
		err = -errno;
out:
	close(st);
	close(fd);
	return err;
}

int wr_if_release(int ifindex)
{
	__u32 i, h, owner, want = ifindex, freed = WEIR_IF_FREED;
	int fd = open_maps(NULL);

	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	for (i = 0; i < WEIR_IF_PROBES; i++) {
		h = (want + i) & (WEIR_IF_SLOTS - 1);
		if (!bpf_map_lookup_elem(fd, &h, &owner) && owner == want)
			bpf_map_update_elem(fd, &h, &freed, BPF_ANY);
	}
	close(fd);
	return 0;
}

int wr_if_read(const struct wr_maps *m, int ifindex, struct weir_if_stats *out)
{
	__u32 i, h, owner, want = ifindex;

	memset(out, 0, sizeof(*out));
	for (i = 0; ifindex > 0 && i < WEIR_IF_PROBES; i++) {
		h = (want + i) & (WEIR_IF_SLOTS - 1);
		if (bpf_map_lookup_elem(m->if_slot, &h, &owner))
			return -errno;
		if (!owner)
			break;
		if (owner == want)
			return wr_percpu_sum(m->if_stats, h, (__u64 *)out,
					     sizeof(*out) / sizeof(__u64));
	}
	return -ENOENT;
}
