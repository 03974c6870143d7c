/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The CrowdSec bouncer: CrowdSec's ban decisions as expiring deny entries. */
#ifndef WEIR_CROWDSEC_H
#define WEIR_CROWDSEC_H

#include "lib/libweir.h"

/* Polling interval bounds and default, in ns. */
#define WR_CS_INTERVAL_MIN_NS 1000000000ULL
#define WR_CS_INTERVAL_MAX_NS (3600ULL * 1000000000ULL)
#define WR_CS_INTERVAL_DEF_NS (10ULL * 1000000000ULL)

struct wr_cs_opts {
	char url[512];		/* the stream's URL without its query */
	char key[256];
	uint64_t interval_ns;
	bool once;
	/*
	 * A MaxMind DB: ban decisions on a Country or an AS become geo feeds
	 * of the store (integrations/feedstore.h) that end with the decision.
	 * Empty: such decisions are skipped.
	 */
	char geo_db[1024];
};

/*
 * Follow the local API's decision stream at o->url with o->key every
 * o->interval_ns until SIGINT or SIGTERM (o->once: one pull, then return).
 * 0, or -errno after saying why.
 */
int wr_crowdsec_run(const struct wr_cs_opts *o);

#endif /* WEIR_CROWDSEC_H */
