// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A writer's session on the pinned state: the root locked, weir loaded if
 * asked, the maps open, and the housekeeping every writer owes: whoever
 * writes removes the deny/allow entries past their ttl. Above the owners
 * it calls (pins.c, loader.c, maps.c, lists.c), so none of them calls up.
 */
#include <errno.h>
#include "lib/libweir.h"

/*
 * Begin a change to pinned state: a bpffs at the root, the root locked,
 * weir loaded if load is set, the maps open. Returns the lock (>= 0) or
 * -errno after saying why; end with wr_write_end() either way.
 */
int wr_write_begin(struct wr_maps *m, bool load)
{
	int lock, err;

	wr_maps_reset(m);
	if (!load && !wr_is_loaded())
		return wr_not_loaded();
	lock = wr_lock_root();
	if (lock < 0)
		return lock;
	err = load ? wr_ensure_loaded(NULL) : 0;
	if (!err)
		err = wr_maps_open(m);
	if (err) {
		wr_unlock(lock);
		return err;
	}
	/* Whoever writes next removes deny/allow entries past their ttl. */
	wr_list_expire(m);
	return lock;
}

void wr_write_end(struct wr_maps *m, int lock)
{
	wr_maps_close(m);
	if (lock >= 0)
		wr_unlock(lock);
}
