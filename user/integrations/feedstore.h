/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Blocklist feeds on disk: each feed's definition, its last good list and
 * what its last fetch said, in a directory per bpffs root (feedstore.c).
 * The CLI (`weir list feed`) and the daemon (`lists:` in the config) share
 * it, so either can rebuild the data path's feed maps from it, and a
 * restarted daemon protects from the cached lists before any fetch.
 */
#ifndef WEIR_FEEDSTORE_H
#define WEIR_FEEDSTORE_H

#include <stdbool.h>
#include <stdio.h>
#include "lib/libweir.h"

#define WR_FEED_NAME_MAX	32	/* bytes of a name, its NUL included */
#define WR_FEED_SRC_MAX		1024	/* bytes of a URL or path, its NUL included */
#define WR_FEED_MAX		64	/* feeds per root */
#define WR_FEED_GEO_MAX		512	/* bytes of a country or ASN list, its NUL included */
/* Refresh bounds and default, in seconds. */
#define WR_FEED_REFRESH_MIN_S	10
#define WR_FEED_REFRESH_MAX_S	(7 * 86400)
#define WR_FEED_REFRESH_DEF_S	3600

struct wr_feed_def {
	char name[WR_FEED_NAME_MAX];	/* A-Z a-z 0-9 _ - . */
	char source[WR_FEED_SRC_MAX];	/* http:// or https:// URL, or an absolute path */
	bool url;			/* source is a URL */
	/*
	 * source is a MaxMind DB (integrations/geo.h): the feed is the
	 * networks of these countries and ASNs in it, again when it changes.
	 */
	bool geo;
	char countries[WR_FEED_GEO_MAX];	/* "DE,NL" as given, or empty */
	char asns[WR_FEED_GEO_MAX];		/* "64496,AS64497" as given, or empty */
	int action;			/* WEIR_FA_DENY, WEIR_FA_ALLOW, WEIR_FA_CLASS_OF(N) or WR_FEED_MATCH */
	__u32 refresh_s;
	bool config;			/* the daemon's config defines it (else the CLI) */
	/*
	 * When the feed ends by itself (epoch s; 0: never): a CrowdSec
	 * decision's. An expired feed is out of every rebuild, and the
	 * daemon and the bouncer remove it.
	 */
	long long expires;
};
/* The store's own feeds of CrowdSec's Country and AS decisions are named with this. */
#define WR_FEED_CS_PREFIX	"crowdsec-"

/* What the store knows of a feed's last fetches. */
struct wr_feed_state {
	char etag[256];			/* the server's ETag, sent back as If-None-Match */
	char last_modified[128];	/* its Last-Modified, sent back as If-Modified-Since */
	long long fetched;		/* when the list on disk was fetched (epoch s); 0: never */
	long long checked;		/* the last attempt, good or bad (epoch s) */
	long long mtime;		/* a file source's mtime at its last read */
	__u64 entries;			/* prefixes in the list on disk */
	char error[256];		/* the last attempt's failure; empty when it worked */
};

/* The store's directory for the current root, created (0700). 0 or -errno. */
int wr_feed_dir(char *buf, size_t len);
/* Every feed of the current root gone from the store (`weir detach all`). */
int wr_feed_store_clear(void);
/* "deny"/"allow"/"limit-class N"/"match" into WEIR_FA_* or WR_FEED_MATCH, -EINVAL
 * otherwise; and back. */
int wr_feed_action_parse(const char *s);
const char *wr_feed_action_name(int action);
bool wr_feed_name_ok(const char *s);
/* A source: sets d->source and d->url; -EINVAL with why. */
int wr_feed_source_set(struct wr_feed_def *d, const char *src, bool url, char *why, size_t len);
/* A geo feed's database, countries and ASNs (either may be NULL, not both); -EINVAL with why. */
int wr_feed_geo_set(struct wr_feed_def *d, const char *db, const char *countries, const char *asns,
		    char *why, size_t len);

int wr_feed_def_save(const char *dir, const struct wr_feed_def *d);
int wr_feed_def_load(const char *dir, const char *name, struct wr_feed_def *d);
/* Every definition, sorted by name; *n of them. */
int wr_feed_defs(const char *dir, struct wr_feed_def *v, int max, int *n);
/* Feeds whose expiry has passed at now removed; how many (or -errno). */
int wr_feed_expire(const char *dir, long long now);
/* The definition, its list and state go. */
int wr_feed_remove(const char *dir, const char *name);
int wr_feed_state_load(const char *dir, const char *name, struct wr_feed_state *s);

/*
 * Fetch d now (force: without If-None-Match/If-Modified-Since, and a file
 * even if unchanged): a list that parses whole replaces the one on disk.
 * 1 when the list on disk changed, 0 when not (not modified), -errno when
 * the fetch or the list failed (why in err, and in the state; the list on
 * disk stays as it was).
 */
int wr_feed_fetch(const char *dir, const struct wr_feed_def *d, bool force, char *err,
		  size_t errlen);
/* Whether d is due for a fetch at now (epoch s): never fetched, or refresh since the last try. */
bool wr_feed_due(const char *dir, const struct wr_feed_def *d, long long now);
/* d's list on disk parsed into *out: 0, -ENOENT (never fetched), or -errno with err. */
int wr_feed_list_load(const char *dir, const struct wr_feed_def *d, struct wr_feed_set *out,
		      char *err, size_t errlen);
/*
 * Every feed's list on disk into the data path, in one swap. Caller holds
 * the root lock. *st what was written.
 */
int wr_feed_rebuild(const struct wr_maps *m, const char *dir, struct wr_feed_stats *st,
		    char *err, size_t errlen);

/*
 * A feed that only rules use (`action match`): never in the feed maps'
 * flattening (it denies and allows nothing), read by `src feed:NAME`.
 * Userspace only: no data-path state.
 */
#define WR_FEED_MATCH		WEIR_FA_MATCH

/* Where `src country:..` and `src asn:..` find their database when none is configured. */
#define WR_GEO_DB_DEFAULT	"/var/lib/weir/geo.mmdb"
/* The environment variable that names it for the command line (the config's geo-db: wins). */
#define WR_GEO_DB_ENV		"WEIR_GEO_DB"

/* What a rule's source set is read from (wr_srcset_resolve's ctx). */
struct wr_srcset_src {
	const char *dir;	/* the feed store (wr_feed_dir) */
	const char *geo_db;	/* the MMDB of country: and asn: sets; NULL: none configured */
};
/* The database a command-line rule's country: and asn: sets read: $WEIR_GEO_DB or the default. */
const char *wr_geo_db_default(void);
/*
 * What source set `set` ("feed:NAME", "country:DE,NL", "asn:64496")
 * holds, into *out: the feed's stored list (any action), or the
 * database's networks. ctx is a struct wr_srcset_src. 0, or -errno with why
 * naming the set (an unknown feed, a feed never fetched, no database, a
 * file that is not an MMDB, a set that matches no network).
 */
int wr_srcset_resolve(void *ctx, const char *set, struct wr_feed_set *out, char *why,
		      size_t len);

/*
 * The live rules' source sets read anew: every feed: set (after a feed's
 * list changed), and with geo_db the country: and asn: sets too (after
 * the database changed). A set that cannot be read keeps what it held,
 * said once each (pr_err). Caller holds the root lock. How many were
 * refilled, or -errno with why.
 */
int wr_srcsets_refresh(const struct wr_maps *m, const char *dir, const char *geo_db, char *why,
		       size_t len);

#endif /* WEIR_FEEDSTORE_H */
