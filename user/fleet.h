/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Fleet-wide limits: the daemon's sync of hot keys with Redis (fleet.c).
 */
#ifndef SLUICE_FLEET_H
#define SLUICE_FLEET_H

#include "config.h"

struct sl_fleet;

/*
 * Start syncing under cfg (copied) on the pinned maps of the current root,
 * in a thread of its own: the caller's loop never waits on Redis. When the
 * cost multiplier the fleet limits should carry changes (the safe fallback
 * starts or ends), notify_fd (an eventfd) is written and
 * sl_fleet_multiplier() says the new one. NULL with errno on failure.
 */
struct sl_fleet *sl_fleet_start(const struct sl_cfg_fleet *cfg, int notify_fd);
void sl_fleet_stop(struct sl_fleet *f);
unsigned int sl_fleet_multiplier(const struct sl_fleet *f);
/*
 * Whether f runs under exactly cfg (and reads no password): a reload that
 * keeps it keeps the sync.
 */
bool sl_fleet_same(const struct sl_fleet *f, const struct sl_cfg_fleet *cfg);

/*
 * The Redis key of a bucket, as every host names it:
 * sluice:FLEET:RULE:LIMIT:PARAMS:ADDR/PLEN (ADDR "all" for a rule-wide
 * bucket); PARAMS is a hash of the limit's rate, burst and key, so hosts
 * whose limits differ never share a bucket.
 */
int sl_fleet_key_name(const char *fleet, const char *rule, __u32 li, const struct sluice_limit *l,
		      const struct sluice_key *k, char *buf, size_t len);

/* `sluice fleet status` */
int do_fleet(int argc, char **argv);

#endif /* SLUICE_FLEET_H */
